#!/usr/bin/env bash
# Fresh-machine set-up: installs the Debian packages gpukit needs (only those missing), builds the
# release preset, then runs `gpukit demo` (./scripts/setup.sh demo) or the whole test suite
# (./scripts/setup.sh test). Idempotent: a second run installs nothing and rebuilds nothing.
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
          libopenmpi-dev openmpi-bin libfftw3-mpi-dev)
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
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"

if [ "$mode" = demo ]; then
  exec "./build/$preset/apps/gpukit/gpukit" demo
else
  exec ctest --preset "$preset" -j"$(nproc)"
fi
