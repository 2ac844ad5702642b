#!/usr/bin/env bash
# The GPU check, run on the H200 machine through the device tool:
#   builds for sm_90 with all cores, runs the whole ctest (GPU tests included), runs the GPU
#   tests under compute-sanitizer memcheck (GPUKIT_QUICK_TESTS=1: the large sizes left out), runs
#   the benchmarks (`gpukit bench <case>` for each case in GPUKIT_CHECK_BENCHES), and ends with a
#   summary.
# Logs go to $OUT (the device tool's output folder) or ./out/gpu-check.
# Every GPU test must run here: GPUKIT_REQUIRE_GPU=1 turns a GPU test's skip (no usable device, a
# missing feature) into a failure, and the check fails when ctest or memcheck still reports one
# skipped, so that a broken driver cannot pass as "skipped".
# Libraries missing on that machine can be carried unpacked under .deps/root (none are today).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out/gpu-check}
mkdir -p "$out"
build=${GPUKIT_GPU_BUILD:-build/gpu}
[ -d .deps/root/usr ] && export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
declare -A status
export GPUKIT_REQUIRE_GPU=1
# The device machine gets a copy of the tree without .git; before sending it, write the revision
# with `git describe --always --dirty > .deps/REVISION` so the benchmark records name it.
[ -f .deps/REVISION ] && export GPUKIT_GIT_REVISION=$(cat .deps/REVISION)

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
step build build.log bash -c "cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $build -j$(nproc)" || {
  tail -40 "$out/build.log"; exit 1; }
gpukit=$build/apps/gpukit/gpukit
# CPU tests in parallel; GPU tests one at a time so they do not share the device.
# GPUKIT_CHECK_TESTS=0 leaves out the tests and memcheck (a second, benchmark-only call).
if [ "${GPUKIT_CHECK_TESTS:-1}" != 0 ]; then
  step ctest-cpu ctest-cpu.log ctest --test-dir "$build" -L cpu -j8 --output-on-failure
  step ctest-gpu ctest-gpu.log ctest --test-dir "$build" -L gpu -j1 --output-on-failure
  # ctest lists skipped tests as "(Skipped)" / "Not Run"; a GPU test may do neither here.
  if grep -qE '\(Skipped\)|Not Run' "$out/ctest-gpu.log"; then
    echo "   GPU tests skipped:"; grep -E '\(Skipped\)|Not Run' "$out/ctest-gpu.log"
    status[gpu-skipped]=1
  else
    status[gpu-skipped]=0
  fi
  gpu_tests=$(find "$build/tests" -name '*_gpu_tests' -type f -executable | sort)
  : >"$out/memcheck.log"
  status[memcheck]=0
  for t in $gpu_tests; do
    echo "== memcheck $(basename "$t")"
    # The out-of-memory test provokes a failing cudaMalloc on purpose; memcheck would count it.
    # The 2^31-element test would take hours under memcheck; the same kernels run there at
    # smaller sizes.
    GPUKIT_QUICK_TESTS=1 compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full "$t" \
      --gtest_filter='-*ImpossibleAllocation*:*MoreThan2To31*' >>"$out/memcheck.log" 2>&1 ||
      status[memcheck]=1
  done
  # Scenarios written once for every backend (tests/every_backend_test_support.hpp) live in the
  # CPU tests' executables; their Cuda/ instances run under memcheck too.
  # Not mpi_cli_tests: memcheck follows its mpirun into every rank (about 90 s a test);
  # scripts/gpu-scale-check.sh runs mc and bs under mpirun and memcheck instead.
  for t in $(find "$build/tests" -name '*_tests' ! -name '*_gpu_tests' ! -name mpi_cli_tests -type f \
      -executable | sort); do
    "$t" --gtest_list_tests 2>/dev/null | grep -q '^Cuda/' || continue
    echo "== memcheck $(basename "$t") (Cuda/ instances)"
    GPUKIT_QUICK_TESTS=1 compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full "$t" \
      --gtest_filter='Cuda/*-*ImpossibleAllocation*:*MoreThan2To31*' >>"$out/memcheck.log" 2>&1 ||
      status[memcheck]=1
  done
  grep -q '\[  SKIPPED \]' "$out/memcheck.log" && status[memcheck]=1
fi
step info info.txt "$gpukit" info --measure
step demo demo.txt "$gpukit" demo --device cuda
if [ "${GPUKIT_CHECK_TESTS:-1}" != 0 ]; then
  step demo-poisson demo-poisson.txt "$gpukit" poisson --demo 64 --device cuda
  step demo-mc demo-mc.txt "$gpukit" mc --demo --device cuda
fi
# GPUKIT_CHECK_BENCHES picks the benchmarks (unset: all; empty: none), so a long check can be split
# in two calls.
benches=${GPUKIT_CHECK_BENCHES-bs reduce scan rng poisson mc saxpy}
for b in $benches; do
  step "bench-$b" "bench-$b.txt" "$gpukit" bench "$b" --device cuda --json "$out/bench-$b.json"
done

echo
echo "== summary"
grep -E "tests passed|tests failed" "$out"/ctest-*.log 2>/dev/null
[ -f "$out/memcheck.log" ] && grep -E "ERROR SUMMARY" "$out/memcheck.log" | sort | uniq -c
cat "$out/info.txt"
for d in demo-poisson demo-mc; do [ -f "$out/$d.txt" ] && cat "$out/$d.txt"; done
for b in $benches; do cat "$out/bench-$b.txt"; done
failed=0
for k in "${!status[@]}"; do
  printf '%-10s %s\n' "$k" "$([ "${status[$k]}" = 0 ] && echo PASS || echo "FAIL (${status[$k]})")"
  [ "${status[$k]}" = 0 ] || failed=1
done
exit $failed
