#!/usr/bin/env bash
# The GPU check, run on the GPU machine through the device tool. Its steps fit the tool's
# 10-minute calls when split (GPUKIT_CHECK_STEPS, default every step in this order; a warm machine
# keeps build/gpu between calls, so a later call builds nothing):
#   build      configure and build for sm_90 with every core (about 2.5 min on 32 cores)
#   cpu-tests  ctest -L cpu (with a GPU present: `--device auto` takes it)
#   gpu-tests  ctest -L gpu in lanes, one GPU a lane (CUDA_VISIBLE_DEVICES=k, ctest -I k+1,,N), so
#              that two H200s run the suite in about 5 minutes; then ctest -L multidevice on all
#   memcheck   compute-sanitizer memcheck of every *_gpu_tests binary and of the Cuda/ instances
#              of the scenarios written once for every backend, the binaries dealt out to the lanes
#              (GPUKIT_CHECK_MEMCHECK: a regex of the binaries to check, default all)
#   bench      `gpukit bench <case> --device cuda --json` for each case in GPUKIT_CHECK_BENCHES
# Logs go to $OUT (the device tool's output folder) or ./out/gpu-check: one log per step and lane,
# and memcheck's logs in one archive (the tool brings back at most 8 files).
# Every GPU test must run here: GPUKIT_REQUIRE_GPU=1 turns a GPU test's skip (no usable device, a
# missing feature) into a failure, and the check fails when ctest or memcheck still reports one
# skipped, so that a broken driver cannot pass as "skipped".
# Libraries missing on that machine can be carried unpacked under .deps/root (none are today).
# The Python package's GPU check is scripts/python-gpu-check.sh (its own build folder).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out/gpu-check}
mkdir -p "$out"
build=${GPUKIT_GPU_BUILD:-build/gpu}
steps=${GPUKIT_CHECK_STEPS:-build cpu-tests gpu-tests memcheck bench}
[ -d .deps/root/usr ] && export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
declare -A status
export GPUKIT_REQUIRE_GPU=1
# The device machine gets a copy of the tree without .git; before sending it, write the revision
# with `git describe --always --dirty > .deps/REVISION` so the benchmark records name it.
[ -f .deps/REVISION ] && export GPUKIT_GIT_REVISION=$(cat .deps/REVISION)
lanes=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$lanes" -ge 1 ] || lanes=1
wants() { [[ " $steps " == *" $1 "* ]]; }

step() {  # step NAME LOGFILE COMMAND...
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  echo "== $name: $*"
  "$@" >"$out/$log" 2>&1
  status[$name]=$?
  echo "   exit ${status[$name]} after $((SECONDS - t0)) s (log: $log)"
  return ${status[$name]}
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
if wants build; then
  step build build.log bash -c "cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $build -j$(nproc)" || {
    tail -40 "$out/build.log"; exit 1; }
fi
gpukit=$build/apps/gpukit/gpukit

if wants cpu-tests; then
  step cpu-tests ctest-cpu.log ctest --test-dir "$build" -L cpu -j8 --output-on-failure
fi
if wants gpu-tests; then
  # Lane k runs every lanes-th GPU test from k + 1 on its own GPU, one test at a time per GPU.
  echo "== gpu-tests: $lanes lanes"
  t0=$SECONDS
  for ((k = 0; k < lanes; ++k)); do
    CUDA_VISIBLE_DEVICES=$k ctest --test-dir "$build" -L gpu -I "$((k + 1)),,$lanes" -j1 \
      --output-on-failure >"$out/ctest-gpu-$k.log" 2>&1 &
  done
  status[gpu-tests]=0
  for job in $(jobs -p); do wait "$job" || status[gpu-tests]=1; done
  echo "   exit ${status[gpu-tests]} after $((SECONDS - t0)) s (logs: ctest-gpu-*.log)"
  if [ "$lanes" -ge 2 ]; then
    step multidevice ctest-multidevice.log ctest --test-dir "$build" -L multidevice -j1 \
      --output-on-failure
  fi
  # ctest lists skipped tests as "(Skipped)" / "Not Run"; a GPU test may do neither here.
  if cat "$out"/ctest-gpu-*.log | grep -qE '\(Skipped\)|Not Run'; then
    echo "   GPU tests skipped:"; cat "$out"/ctest-gpu-*.log | grep -E '\(Skipped\)|Not Run'
    status[gpu-skipped]=1
  else
    status[gpu-skipped]=0
  fi
fi
if wants memcheck; then
  # The out-of-memory tests provoke a failing cudaMalloc on purpose; memcheck would count it. The
  # 2^31-element tests would take hours under memcheck; the same kernels run there at smaller
  # sizes. Not mpi_cli_tests: memcheck follows its mpirun into every rank (about 90 s a test);
  # scripts/gpu-scale-check.sh runs the commands under mpirun and memcheck instead.
  only=${GPUKIT_CHECK_MEMCHECK:-.}
  checks=()
  for t in $(find "$build/tests" -name '*_gpu_tests' -type f -executable | sort); do
    [[ $(basename "$t") =~ $only ]] && checks+=("$t|-*ImpossibleAllocation*:*MoreThan2To31*")
  done
  for t in $(find "$build/tests" -name '*_tests' ! -name '*_gpu_tests' ! -name mpi_cli_tests \
      -type f -executable | sort); do
    [[ $(basename "$t") =~ $only ]] || continue
    "$t" --gtest_list_tests 2>/dev/null | grep -q '^Cuda/' || continue
    checks+=("$t|Cuda/*-*ImpossibleAllocation*:*MoreThan2To31*")
  done
  logs=$build/memcheck-logs
  rm -rf "$logs"; mkdir -p "$logs"
  echo "== memcheck: ${#checks[@]} binaries in $lanes lanes"
  t0=$SECONDS
  for ((k = 0; k < lanes; ++k)); do
    (
      for ((i = k; i < ${#checks[@]}; i += lanes)); do
        t=${checks[i]%%|*} filter=${checks[i]#*|}
        CUDA_VISIBLE_DEVICES=$k GPUKIT_QUICK_TESTS=1 compute-sanitizer --tool memcheck \
          --error-exitcode 99 --leak-check full "$t" --gtest_filter="$filter" \
          >"$logs/$(basename "$t").log" 2>&1
        rc=$?
        log=$logs/$(basename "$t").log
        echo "$(basename "$t"): rc=$rc $(grep -E 'ERROR SUMMARY' "$log" | tail -1)" \
          "$(grep -cE '^\[  SKIPPED \]' "$log") skipped"
      done
    ) >"$out/memcheck-lane-$k.txt" &
  done
  wait
  cat "$out"/memcheck-lane-*.txt >"$out/memcheck-summary.txt"
  tar czf "$out/memcheck-logs.tgz" -C "$logs" .
  echo "   after $((SECONDS - t0)) s (summary: memcheck-summary.txt)"
  status[memcheck]=0
  grep -qv ' rc=0 .* 0 skipped$' "$out/memcheck-summary.txt" && status[memcheck]=1
fi
if wants bench; then
  step info info.txt "$gpukit" info --measure
  step demo demo.txt "$gpukit" demo --device cuda
  # GPUKIT_CHECK_BENCHES picks the benchmarks (unset: all; empty: none).
  benches=${GPUKIT_CHECK_BENCHES-bs reduce scan rng poisson mc saxpy gemm}
  for b in $benches; do
    step "bench-$b" "bench-$b.txt" "$gpukit" bench "$b" --device cuda --json "$out/bench-$b.json"
  done
fi

echo
echo "== summary"
grep -hE "tests passed|tests failed" "$out"/ctest-*.log 2>/dev/null
[ -f "$out/memcheck-summary.txt" ] && cat "$out/memcheck-summary.txt"
failed=0
for k in "${!status[@]}"; do
  printf '%-12s %s\n' "$k" "$([ "${status[$k]}" = 0 ] && echo PASS || echo "FAIL (${status[$k]})")"
  [ "${status[$k]}" = 0 ] || failed=1
done
exit $failed
