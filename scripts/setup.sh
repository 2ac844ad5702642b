#!/usr/bin/env bash
# Fresh-machine set-up: installs the Debian packages gpukit needs (only those missing), builds the
# release preset, installs the Python package into .venv (pip install ., built by the same CMake
# tree), then runs `gpukit demo` (./scripts/setup.sh demo) or the whole test suite, ctest and the
# Python tests against the package as pip installed it (./scripts/setup.sh test). Idempotent: a
# second run installs no package and recompiles nothing.
# GPUKIT_PRESET=ci builds the ci preset instead: release with warnings as errors.
set -euo pipefail
mode=${1:-demo}
case "$mode" in demo|test) ;; *) echo "usage: $0 demo|test" >&2; exit 2 ;; esac
preset=${GPUKIT_PRESET:-release}
case "$preset" in
  release|ci) ;;
  *) echo "$0: GPUKIT_PRESET must be release or ci" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

# libopenmpi-dev, openmpi-bin and libfftw3-mpi-dev: the distributed Poisson solver and its
# `mpirun` tests (FFTW's MPI interface on the CPU).
packages=(cmake ninja-build g++ libgtest-dev libcli11-dev libfmt-dev nlohmann-json3-dev
          libfftw3-dev libopenblas-dev clang libclang-rt-14-dev
          libopenmpi-dev openmpi-bin libfftw3-mpi-dev python3-dev python3-venv python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# nvcc is optional: with it the CUDA backend is built for sm_90, without it the CPU-only tool.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

# The Python side: a virtual environment in the repository with the build and test packages from
# PyPI (only when one is missing), Debian's python3 underneath.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv ($("$python" --version))"
  "$python" -m venv .venv
fi
# matplotlib draws the case studies' plots (scripts/results_plots.py, which names the same
# version): pinned, because a test compares the committed SVGs byte for byte with what it draws.
matplotlib_version=3.11.2
python_packages=(nanobind scikit-build-core numpy pytest scipy pandas
                 "matplotlib==$matplotlib_version")
if ! .venv/bin/python -c "import nanobind, scikit_build_core, numpy, pytest, scipy, pandas
import matplotlib; assert matplotlib.__version__ == '$matplotlib_version'" 2>/dev/null; then
  echo "setup: installing ${python_packages[*]} into .venv"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${python_packages[@]}"
fi

# One CMake tree builds the libraries, the tool, the tests and the Python module.
cmake --preset "$preset" -DGPUKIT_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python" \
  >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"
# `pip install .` into .venv, as a user installs the package: scikit-build-core configures and
# builds the same tree (already built: nothing is compiled again) and installs the module and
# python/gpukit. No build isolation: the build packages are the ones .venv has.
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps --config-settings=build-dir="build/$preset" .

if [ "$mode" = demo ]; then
  exec "./build/$preset/apps/gpukit/gpukit" demo
fi
status=0
ctest --preset "$preset" -j"$(nproc)" || status=$?
# The Python tests run on the installed package (python/tests imports gpukit from .venv's
# site-packages, never python/gpukit), and compare it with this build's tool.
GPUKIT_CLI="$PWD/build/$preset/apps/gpukit/gpukit" GPUKIT_REQUIRE_CLI=1 \
  .venv/bin/python -m pytest python/tests -q -p no:cacheprovider || status=$?
exit "$status"
