#!/usr/bin/env bash
# The distributed Poisson solver on a multi-GPU machine (issue 22; 2 or 4 H100s, no internet),
# in one device-tool call of at most 10 minutes, build included:
#   1. builds gpukit, the distributed solver's tests and its scale-out driver for sm_90;
#   2. the GPU tests (GPUKIT_REQUIRE_GPU=1): several parts on one GPU (peer-copy engine) and the
#      NCCL engine across every GPU, against the CPU solver, the device path against the host
#      path, NCCL against the copy engine bit for bit;
#   3. the scale-out timings (gpukit_tune_poisson_dist, which checks every configuration against
#      the exact solution of a manufactured problem and against the single GPU before timing):
#      3D float 1024^3 on 1, 2, 4 GPUs (NCCL and peer-copy engines) against one GPU, and 2048^3,
#      which one GPU refuses, on 2 and 4;
#   4. with Open MPI present: the same solver across MPI ranks (one GPU each: the driver under
#      mpirun, and `mpirun -np 1/2 gpukit poisson --device cuda` against the single-GPU command);
#      without it, says so (the one-process runs above cover the GPU path);
#   5. if time is left, the GPU tests under compute-sanitizer memcheck (small sizes);
# then prints the step table and the timing tables last. Logs under $OUT (or ./out/gpu-poisson-dist).
# NCCL_NVLS_ENABLE=0 stays set: NVLink multicast is off on the lent machines.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out/gpu-poisson-dist}
mkdir -p "$out"
build=${GPUKIT_GPU_BUILD:-build/gpu}
export NCCL_NVLS_ENABLE=0
export GPUKIT_REQUIRE_GPU=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
budget=${GPUKIT_DIST_BUDGET_S:-570}  # seconds this script may take in all
declare -A status
order=()

step() {  # step NAME LOGFILE COMMAND...
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  order+=("$name")
  echo "== $name: $*"
  "$@" >"$out/$log" 2>&1
  status[$name]=$?
  echo "   exit ${status[$name]} after $((SECONDS - t0)) s (log: $log)"
  return ${status[$name]}
}
left() { echo $((budget - SECONDS)); }
# A timeout for the next step: what is left minus `reserve` seconds (at least 30; `timeout 0`
# would mean no limit at all).
cap() { local t=$(( $(left) - $1 )); [ "$t" -lt 30 ] && t=30; echo "$t"; }

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
nvidia-smi topo -m >"$out/topology.txt" 2>&1 || true
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "== $gpus GPUs; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"

step configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 || { tail -30 "$out/configure.log"; exit 1; }
grep -E "distributed Poisson|CUDA backend" "$out/configure.log"
targets="gpukit poisson_distributed_gpu_tests poisson_distributed_multigpu_tests
         poisson_distributed_tests gpukit_tune_poisson_dist"
have_mpi=0
if command -v mpirun >/dev/null && ninja -C "$build" -t targets all 2>/dev/null |
   grep -q '^poisson_distributed_mpi_tests:'; then
  have_mpi=1
  targets="$targets poisson_distributed_mpi_tests poisson_mpi_cli_tests"
fi
step build build.log cmake --build "$build" -j"$(nproc)" --target $targets || {
  tail -40 "$out/build.log"; exit 1; }
tune=$build/bench/tuning/gpukit_tune_poisson_dist

step gpu-tests gpu-tests.log "$build/tests/pde/poisson_distributed_gpu_tests"
step multigpu-tests multigpu-tests.log "$build/tests/pde/poisson_distributed_multigpu_tests"
step cpu-tests cpu-tests.log "$build/tests/pde/poisson_distributed_tests"

counts=1
for n in 2 4 8; do [ "$n" -le "$gpus" ] && counts="$counts,$n"; done
step time-1024 time-1024.log timeout "$(cap 60)" "$tune" --shape=1024x1024x1024 \
  --precision=float --gpus="$counts" --engines=cufft-nccl,cufft-copy --repeat=5 --host=1 \
  --host_repeat=2
big_counts=1
for n in 2 4 8; do [ "$n" -le "$gpus" ] && big_counts="$big_counts,$n"; done
# 2048^3 float: 32 GiB of data; one GPU's solver refuses it (the driver prints why), 2 and 4 GPUs
# hold it. Host data is left out (each host solve would move 64 GiB through pageable memory).
step time-2048 time-2048.log timeout "$(cap 30)" "$tune" --shape=2048x2048x2048 \
  --precision=float --gpus="$big_counts" --engines=cufft-nccl --repeat=3 --host=0 --compare=0

if [ "$have_mpi" = 1 ] && [ "$gpus" -ge 2 ]; then
  ranks=$(( gpus >= 4 ? 4 : 2 ))
  step mpi-tune mpi-tune.log timeout 120 mpirun --oversubscribe -np "$ranks" "$tune" \
    --shape=512x512x512 --precision=float --repeat=3 --host=1 --host_repeat=1
  step mpi-cli mpi-cli.log env GPUKIT_MPI_CLI_DEVICE=cuda GPUKIT_MPI_CLI_RANKS=1,2 timeout 120 \
    "$build/tests/cli/poisson_mpi_cli_tests" --gtest_filter='*MatchesTheSingleProcessSolve*'
  step mpi-cpu-tests mpi-cpu-tests.log timeout 60 mpirun --oversubscribe -np 3 \
    "$build/tests/pde/poisson_distributed_mpi_tests"
else
  echo "== MPI+GPU runs not made: $( [ "$have_mpi" = 1 ] && echo "one GPU" || echo "Open MPI (mpirun and its CMake package) absent")"
  order+=("mpi (not run)"); status["mpi (not run)"]=-
fi

if [ "$(left)" -gt 90 ]; then
  step memcheck memcheck.log env GPUKIT_QUICK_TESTS=1 timeout "$(cap 20)" \
    compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full \
    "$build/tests/pde/poisson_distributed_gpu_tests"
  # NCCL's own CUDA API errors are not reported: it probes kernels built for other architectures
  # (cudaErrorNoKernelImageForDevice) and meets the peer access the copy engine enabled
  # (cudaErrorPeerAccessAlreadyEnabled), thousands of reports on 4 H100s (2026-11-27) that hid
  # any other. gpukit's own API calls are checked by the code, which throws on any error.
  [ "$(left)" -gt 60 ] && step memcheck-multigpu memcheck-multigpu.log env GPUKIT_QUICK_TESTS=1 \
    timeout "$(cap 15)" compute-sanitizer --tool memcheck --report-api-errors no \
    --error-exitcode 99 "$build/tests/pde/poisson_distributed_multigpu_tests"
else
  echo "== memcheck left out: $(left) s left"
  order+=("memcheck (no time)"); status["memcheck (no time)"]=-
fi

echo
echo "== steps ($SECONDS s)"
for name in "${order[@]}"; do printf '  %-22s %s\n' "$name" "${status[$name]}"; done
grep -HE '^\[  (PASSED|FAILED|SKIPPED) ' "$out"/gpu-tests.log "$out"/multigpu-tests.log \
  "$out"/memcheck.log 2>/dev/null | sed "s|^$out/|  |"
grep -h "ERROR SUMMARY" "$out/memcheck.log" 2>/dev/null | sed 's/^/  memcheck: /'
for log in time-1024.log time-2048.log mpi-tune.log; do
  [ -f "$out/$log" ] || continue
  echo
  echo "== $log"
  sed -n '/^gpukit_tune_poisson_dist/,$p' "$out/$log"
  grep -E '^error:' "$out/$log"
done
failed=0
for name in "${order[@]}"; do [ "${status[$name]}" = 0 ] || [ "${status[$name]}" = - ] || failed=1; done
exit $failed
