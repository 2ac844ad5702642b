#!/usr/bin/env bash
# The Python check, run on the GPU machine through the device tool (no registry there: its python3
# already has nanobind, scikit-build-core, numpy, pytest, scipy, pandas, cupy-cuda13x and torch):
#   1. `pip install --no-build-isolation --no-deps .` with CUDA for sm_90, from a fresh build
#      folder, into build/python-gpu/site-packages (a --target folder: the machine's python3 is
#      left as it was);
#   2. the gpukit tool in the same CMake tree (the tests compare Monte Carlo and the sums with it);
#   3. the whole pytest suite with GPUKIT_REQUIRE_GPU=1: a GPU test that would skip (no GPU, no
#      CuPy, no PyTorch) fails instead;
#   4. the call-overhead benchmark (bench/python/reduce_overhead.py), against the C++ call and
#      cupy.sum.
# Logs go to $OUT (the device tool's output folder) or ./out/python-gpu-check; the exit status is
# 0 only when every step passed. The build folder is kept, so a second call rebuilds nothing:
# GPUKIT_PYTHON_CHECK_BUILD_ONLY=1 stops after the build (a first call within the device tool's
# 10 minutes), a second call without it runs the tests and the benchmark. GPUKIT_PYTEST_ARGS passes
# extra arguments to pytest (say `-k ctrl_c` to re-run a few tests) and skips the benchmark.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out/python-gpu-check}
mkdir -p "$out"
build=${GPUKIT_PYTHON_GPU_BUILD:-build/python-gpu}
site=$build/site-packages
python=${PYTHON:-python3}
declare -A status

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
"$python" -c "import sys, nanobind, scikit_build_core, numpy, pytest, scipy, pandas, cupy, torch
print(sys.version)
for m in (nanobind, scikit_build_core, numpy, pytest, scipy, pandas, cupy, torch):
    print(m.__name__, m.__version__)" >"$out/python-packages.txt" 2>&1
cat "$out/python-packages.txt"

rm -rf "$site"
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
step pip-install pip-install.log "$python" -m pip install -v --no-build-isolation --no-deps \
  --target "$site" --config-settings=build-dir="$build" \
  --config-settings=cmake.define.GPUKIT_CUDA=ON \
  --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=90 . ||
  { tail -40 "$out/pip-install.log"; exit 1; }
step cli cli-build.log bash -c "cmake -DGPUKIT_BUILD_PROGRAMS=ON $build >/dev/null && \
  cmake --build $build --target gpukit" || tail -40 "$out/cli-build.log"

if [ "${GPUKIT_PYTHON_CHECK_BUILD_ONLY:-0}" = 1 ]; then
  for k in "${!status[@]}"; do echo "$k exit ${status[$k]}"; done
  [ "${status[pip-install]}" = 0 ] && [ "${status[cli]}" = 0 ]
  exit $?
fi

export PYTHONPATH=$PWD/$site${PYTHONPATH:+:$PYTHONPATH}
export GPUKIT_REQUIRE_GPU=1 GPUKIT_REQUIRE_CLI=1 GPUKIT_CLI=$PWD/$build/apps/gpukit/gpukit
# From $out, so that nothing but the installed package can be imported as gpukit.
step pytest pytest.log bash -c "cd '$out' && '$python' -m pytest '$PWD/python/tests' -v \
  -p no:cacheprovider -rs ${GPUKIT_PYTEST_ARGS:-}"
[ -n "${GPUKIT_PYTEST_ARGS:-}" ] || step bench bench.txt "$python" bench/python/reduce_overhead.py --json "$out/reduce_overhead.json"

echo
echo "== summary"
tail -3 "$out/pytest.log"
grep -E "FAILED|ERROR" "$out/pytest.log" | head -30
cat "$out/bench.txt" 2>/dev/null
failed=0
for k in "${!status[@]}"; do
  printf '%-12s %s\n' "$k" "$([ "${status[$k]}" = 0 ] && echo PASS || echo "FAIL (${status[$k]})")"
  [ "${status[$k]}" = 0 ] || failed=1
done
exit $failed
