#!/usr/bin/env bash
# compute-sanitizer memcheck over every GPU test binary (and the Cuda/ instances of the scenarios
# written once for every backend), as scripts/gpu-check.sh runs it, but resumable: a run stops
# starting binaries after BUDGET seconds (the device tool allows 600 s a call), stops one that
# runs past BUDGET + 60 s (it is run again whole by the next call), and a second call on the same
# warm machine continues where it stopped (build/gpu/memcheck-done lists what ran).
# Usage: scripts/gpu-memcheck.sh [BUDGET] [REGEX]   Logs: $OUT/memcheck-summary.txt, memcheck-logs.tgz
# (REGEX: only the binaries whose name matches it, e.g. 'gemm|blas'; the rest on a later call.)
# (three files in $OUT however many binaries: the device tool brings back at most 8, and a call
# cut by its limit still brings back the logs of every binary that finished).
set -uo pipefail
budget=${1:-520}
only=${2:-.}
out=${OUT:-/tmp/out}; mkdir -p $out
b=build/gpu
t0=$SECONDS
if [ ! -f $b/build.ninja ]; then
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $out/configure.log 2>&1
fi
cmake --build $b -j16 > $out/build.log 2>&1 || { tail -40 $out/build.log; exit 1; }
echo "build done at $((SECONDS-t0)) s"
touch $b/memcheck-done
logs=$b/memcheck-logs; mkdir -p $logs
export GPUKIT_REQUIRE_GPU=1 GPUKIT_QUICK_TESTS=1
run() {  # run BINARY FILTER
  local t=$1 f=$2 key="$(basename $1) $2" log=$logs/mc-$(basename $1).log
  [[ $(basename $t) =~ $only ]] || return
  grep -qxF "$key" $b/memcheck-done && return
  [ $((SECONDS-t0)) -gt $budget ] && { echo "not started: $key"; return; }
  local s=$SECONDS
  timeout $((budget + 60 - (SECONDS-t0))) compute-sanitizer --tool memcheck --error-exitcode 99 \
    --leak-check full "$t" --gtest_filter="$f" > $log 2>&1
  local rc=$?
  echo "$key: rc=$rc $((SECONDS-s)) s $(grep -E 'ERROR SUMMARY' $log | tail -1) $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $log | tr '\n' ' ')" | tee -a $out/memcheck-summary.txt
  [ $rc = 124 ] && { echo "   stopped at the time limit: runs again whole next call"; return; }
  echo "$key" >> $b/memcheck-done
  tar czf $out/memcheck-logs.tgz -C $logs .
}
for t in $(find $b/tests -name '*_gpu_tests' -type f -executable | sort); do
  run $t '-*ImpossibleAllocation*:*MoreThan2To31*'
done
# mpi_cli_tests is left out: under memcheck every rank of its mpirun runs is sanitized (about 90 s
# a test); scripts/gpu-scale-check.sh runs mc and bs under mpirun and memcheck instead.
for t in $(find $b/tests -name '*_tests' ! -name '*_gpu_tests' ! -name mpi_cli_tests -type f -executable | sort); do
  $t --gtest_list_tests 2>/dev/null | grep -q '^Cuda/' || continue
  run $t 'Cuda/*-*ImpossibleAllocation*:*MoreThan2To31*'
done
tar czf $out/memcheck-logs.tgz -C $logs .
echo "total $((SECONDS-t0)) s"
