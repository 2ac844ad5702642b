#!/usr/bin/env bash
# compute-sanitizer memcheck over every GPU test binary (and the Cuda/ instances of the scenarios
# written once for every backend), as scripts/gpu-check.sh runs it, but resumable: a run stops
# starting binaries after BUDGET seconds (the device tool allows 600 s a call) and a second call on
# the same warm machine continues where it stopped (build/gpu/memcheck-done lists what ran).
# Usage: scripts/gpu-memcheck.sh [BUDGET]   Logs: $OUT/memcheck-summary.txt, memcheck-logs.tgz
set -uo pipefail
budget=${1:-520}
out=${OUT:-/tmp/out}; mkdir -p $out
b=build/gpu
t0=$SECONDS
if [ ! -f $b/build.ninja ]; then
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $out/configure.log 2>&1
fi
cmake --build $b -j16 > $out/build.log 2>&1 || { tail -40 $out/build.log; exit 1; }
echo "build done at $((SECONDS-t0)) s"
touch $b/memcheck-done
export GPUKIT_REQUIRE_GPU=1 GPUKIT_QUICK_TESTS=1
run() {  # run BINARY FILTER
  local t=$1 f=$2 key="$(basename $1) $2"
  grep -qxF "$key" $b/memcheck-done && return
  [ $((SECONDS-t0)) -gt $budget ] && { echo "not started: $key"; return; }
  local s=$SECONDS
  compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full "$t" --gtest_filter="$f" > $out/mc-$(basename $t).log 2>&1
  local rc=$?
  echo "$key: rc=$rc $((SECONDS-s)) s $(grep -E 'ERROR SUMMARY' $out/mc-$(basename $t).log | tail -1) $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $out/mc-$(basename $t).log | tr '\n' ' ')" | tee -a $out/memcheck-summary.txt
  echo "$key" >> $b/memcheck-done
}
for t in $(find $b/tests -name '*_gpu_tests' -type f -executable | sort); do
  run $t '-*ImpossibleAllocation*:*MoreThan2To31*'
done
for t in $(find $b/tests -name '*_tests' ! -name '*_gpu_tests' -type f -executable | sort); do
  $t --gtest_list_tests 2>/dev/null | grep -q '^Cuda/' || continue
  run $t 'Cuda/*-*ImpossibleAllocation*:*MoreThan2To31*'
done
cd $out && tar czf memcheck-logs.tgz mc-*.log && rm -f mc-*.log
echo "total $((SECONDS-t0)) s"
