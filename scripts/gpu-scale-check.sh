#!/usr/bin/env bash
# The scale-out check (docs/scale-out.md), run on a machine with several GPUs (nvidia-h100-x2 or
# -x4 through the device tool; it also runs on one GPU, where the cuda:all and multi-GPU rows
# reduce to one GPU and the GPU-count-dependent tests skip):
#   1. builds the release tree for sm_90 with all cores: the tool, the distributed/scale_out/MPI/
#      block tests and the scale driver (bench/tuning/scale_out.cu);
#   2. runs the GPU instances of the scale-out tests with GPUKIT_REQUIRE_GPU=1 (and
#      GPUKIT_REQUIRE_GPUS=<the GPU count>, so a cuda:all test cannot skip): cuda:0,0 and cuda:all
#      against cuda:0 (distributed_cli_gpu_tests, and distributed_cli_multidevice_tests, label
#      multidevice: mc, bs and reduce bit for bit, poisson within its bound), the blocks of Monte
#      Carlo and reductions (monte_carlo_blocks_tests, reduce_partials_tests), the scale-out calls
#      on two and three workers of GPU 0 (scale_out_spread_tests: bit for bit cuda:0, the workers'
#      lanes reused, shared by concurrent callers and failing on one worker), Black-Scholes'
#      host pipeline (black_scholes_tests' Cuda/ instances: chunks of any size), the distributed
#      Poisson solver (scale_out_poisson_gpu_tests: several slabs on one GPU, the copy engine;
#      scale_out_poisson_multigpu_tests, multidevice: NCCL across the GPUs, bit for bit the copy
#      engine), and, when OpenMPI is installed, mc, bs and reduce under mpirun on 1-3 ranks
#      sharing the GPUs against one GPU (mpi_cli_tests), `mpirun -np 1/2 gpukit poisson --device
#      cuda` against the single-GPU command (poisson_mpi_cli_tests) and the FFTW MPI engine's tests;
#   3. runs mc, bs and reduce on cuda:all (and under mpirun, one rank a GPU) under
#      compute-sanitizer memcheck, each compared with cuda:0, poisson on cuda:all with --check,
#      and the distributed Poisson solver's GPU tests (small sizes);
#   4. measures the speed bars with gpukit_tune_scale (1, 2 and all GPUs): mc, bs and reduce, and
#      the distributed Poisson solver at 1024^3 float (its all-to-all timed alone beside it; the
#      same driver under mpirun, a GPU a rank, at 512^3).
# Logs go to $OUT (at most 8 files come back from the device tool) or ./out/gpu-scale-check; the
# last things printed are the scaling tables. About 3 minutes of build and 5 of runs on an
# nvidia-h100-x2. GPUKIT_SCALE_STEPS (default "tests memcheck bench") picks the steps, so that a
# run cut by the 10-minute limit can be finished by a second call on the same warm machine (the
# build is then a no-op); GPUKIT_SCALE_ARGS adds knobs to gpukit_tune_scale.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): a program that uses it can take the host's
# shared GPUs out of service (the distributed Poisson solver's transposes use NCCL).
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
out=${OUT:-$PWD/out/gpu-scale-check}
mkdir -p "$out"
build=${GPUKIT_GPU_BUILD:-build/gpu}
[ -d .deps/root/usr ] && export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
[ -f .deps/REVISION ] && export GPUKIT_GIT_REVISION=$(cat .deps/REVISION)
declare -A status
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

step() {  # step NAME LOGFILE COMMAND... (the log is appended to)
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  echo "== $name: $*" | tee -a "$out/$log"
  "$@" >>"$out/$log" 2>&1
  status[$name]=$?
  say "   $name: exit ${status[$name]} after $((SECONDS - t0)) s (log: $log)"
  return ${status[$name]}
}

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
nvidia-smi -L >"$out/summary-gpus.txt" 2>&1 || true
nvidia-smi topo -m >>"$out/summary-gpus.txt" 2>&1 || true
say "gpu-scale-check: $gpus GPU(s), $(nproc) cores, $(git describe --always --dirty 2>/dev/null || cat .deps/REVISION 2>/dev/null)"

# OpenMPI: built and tested where it is installed; otherwise the single-process part only.
mpi=0
if command -v mpicxx >/dev/null && command -v mpirun >/dev/null; then
  mpi=1
  say "MPI: $(mpirun --version 2>&1 | head -1)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
  say "MPI: not installed here (no mpicxx/mpirun): the MPI runs are skipped; the one-process"
  say "     multi-GPU part runs regardless"
fi

targets="gpukit distributed_tests distributed_cli_tests distributed_cli_gpu_tests
         distributed_cli_multidevice_tests monte_carlo_blocks_tests reduce_partials_tests
         scale_out_spread_tests black_scholes_tests scale_out_poisson_tests
         scale_out_poisson_gpu_tests scale_out_poisson_multigpu_tests gpukit_tune_scale"
[ $mpi = 1 ] && targets="$targets mpi_cli_tests poisson_mpi_cli_tests scale_out_poisson_mpi_tests"
# The MPI Poisson tests exist only where FFTW's MPI interface is installed: build what exists.
step configure build.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUKIT_MPI=$([ $mpi = 1 ] && echo ON || echo OFF) ||
  { tail -40 "$out/build.log"; exit 1; }
known=$(ninja -C "$build" -t targets all | cut -d: -f1)
buildable=$(for t in $targets; do grep -qx "$t" <<<"$known" && echo "$t"; done)
for t in $targets; do grep -qx "$t" <<<"$buildable" || say "   not in this build: $t"; done
step build build.log cmake --build "$build" -j"$(nproc)" --target $buildable ||
  { tail -40 "$out/build.log"; exit 1; }
gpukit=$build/apps/gpukit/gpukit
tests=$build/tests

steps=${GPUKIT_SCALE_STEPS:-tests memcheck bench}
wants() { [[ " $steps " == *" $1 "* ]]; }

# 2. The scale-out tests' GPU instances (and their CPU ones where quick; the MPI tests' CPU
#    instances run in CI), one binary at a time.
export GPUKIT_REQUIRE_GPU=1 GPUKIT_REQUIRE_GPUS=$gpus
if wants tests; then
  step tests-distributed tests.log "$tests/distributed/distributed_tests"
  step tests-distributed-cli tests.log "$tests/distributed/distributed_cli_tests"
  step tests-distributed-cli-gpu tests.log "$tests/distributed/distributed_cli_gpu_tests"
  step tests-distributed-cli-multi tests.log "$tests/distributed/distributed_cli_multidevice_tests"
  step tests-mc-blocks tests.log "$tests/finance/monte_carlo_blocks_tests"
  step tests-reduce-partials tests.log "$tests/primitives/reduce_partials_tests"
  step tests-spread tests.log "$tests/scale_out/scale_out_spread_tests"
  # The host-memory Black-Scholes pipeline each GPU's worker streams through: any chunk, the bits
  # of the default.
  step tests-bs-pipeline tests.log "$tests/finance/black_scholes_tests" --gtest_filter='Cuda/*'
  step tests-poisson-slabs tests.log "$tests/scale_out/scale_out_poisson_tests"
  step tests-poisson-gpu tests.log "$tests/scale_out/scale_out_poisson_gpu_tests"
  step tests-poisson-multi tests.log "$tests/scale_out/scale_out_poisson_multigpu_tests"
  if [ $mpi = 1 ]; then
    step tests-mpi tests.log "$tests/distributed/mpi_cli_tests" --gtest_filter='Cuda/*'
    [ -x "$tests/scale_out/scale_out_poisson_mpi_tests" ] && step tests-poisson-mpi tests.log timeout 120 mpirun --oversubscribe -np 3 \
      "$tests/scale_out/scale_out_poisson_mpi_tests"
    # NCCL takes a GPU once in a job: no more ranks than GPUs.
    [ "$gpus" -ge 2 ] && [ -x "$tests/cli/poisson_mpi_cli_tests" ] && step tests-poisson-mpi-cli tests.log env GPUKIT_MPI_CLI_DEVICE=cuda \
      GPUKIT_MPI_CLI_RANKS=1,2 timeout 180 "$tests/cli/poisson_mpi_cli_tests" \
      --gtest_filter='*MatchesTheSingleProcessSolve*'
  fi
  # No test may skip here, but those that need two GPUs on a machine of one.
  skipped=$(grep '\[  SKIPPED \]' "$out/tests.log" | grep -v ' tests\?, listed below' |
            { [ "$gpus" -ge 2 ] && cat || grep -vE 'MultiGpu\.|NcclEngineAcrossGpus'; } | sort -u)
  if [ -n "$skipped" ]; then
    say "   skipped tests (none may skip here):"; say "$skipped"
    status[tests-skipped]=1
  fi
fi

# 3. cuda:all (cuda:0,0 on one GPU) and the ranks of mpirun (one a GPU; two sharing one GPU on a
#    machine of one) under memcheck, each output against cuda:0 alone.
work=$(mktemp -d)
list=$([ "$gpus" -ge 2 ] && echo cuda:all || echo cuda:0,0)
ranks=$((gpus >= 2 ? gpus : 2))
memcheck=(compute-sanitizer --tool memcheck --error-exitcode 99)
ranks_run=(mpirun --oversubscribe --bind-to none -np "$ranks")
# compare NAME OUTPUT ARGS...: the command on cuda:0 alone, then on $list and under mpirun, each
# under memcheck; OUTPUT is "file" (its -o file is compared) or "stdout".
compare() {
  local name=$1 output=$2; shift 2
  run_on() {  # run_on TAG DEVICE PREFIX...
    local tag=$1 device=$2; shift 2
    if [ "$output" = file ]; then
      "$@" "$gpukit" "${args[@]}" --device "$device" -o "$work/$name.$tag" >>"$out/memcheck.log" 2>&1
    else
      # compute-sanitizer writes its own lines (its banner, its summary) to stdout: they go to
      # the log, and only the tool's output is compared.
      "$@" "$gpukit" "${args[@]}" --device "$device" >"$work/$name.$tag.raw" 2>>"$out/memcheck.log"
      local rc=$?
      grep '^=========' "$work/$name.$tag.raw" >>"$out/memcheck.log"
      grep -v '^=========' "$work/$name.$tag.raw" >"$work/$name.$tag"
      return $rc
    fi
  }
  local args=("$@")
  run_on one cuda:0 || return 1
  run_on list "$list" "${memcheck[@]}" || return 2
  cmp "$work/$name.one" "$work/$name.list" >>"$out/memcheck.log" 2>&1 || return 3
  if [ $mpi = 1 ]; then
    run_on ranks cuda "${ranks_run[@]}" "${memcheck[@]}" || return 4
    cmp "$work/$name.one" "$work/$name.ranks" >>"$out/memcheck.log" 2>&1 || return 5
  fi
}
if wants memcheck; then
  "$gpukit" bs --device cpu --generate 200003 --seed 4 -o "$work/bs.csv" >/dev/null 2>&1
  printf 'type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n' >"$work/mc.csv"
  for i in 0 1 2 3 4 5; do
    printf 'call,100,%d,1,0.03,0.25,%s\n' $((90 + 4 * i)) \
      "$([ $((i % 2)) = 0 ] && echo ',none,' || echo '85,down-out,24')" >>"$work/mc.csv"
  done
  step memcheck-mc memcheck.log compare mc file mc -i "$work/mc.csv" --paths 4194322 \
    --antithetic --greeks
  step memcheck-bs memcheck.log compare bs file bs -i "$work/bs.csv" --greeks
  if python3 -c "import numpy as n; n.save('$work/x.npy', n.random.default_rng(7).standard_normal(3*2**20+12345).astype('f4'))" 2>/dev/null; then
    step memcheck-reduce memcheck.log compare reduce stdout reduce -i "$work/x.npy"
  else
    say "   numpy missing: the reduce memcheck row is skipped"
  fi
  # poisson on the list (several slabs: NCCL across GPUs, the copy engine on one), checked
  # against its long double reference (its bits differ from cuda:0's within the bound).
  if python3 -c "import numpy as n; f=n.random.default_rng(8).standard_normal((96,80,64)); n.save('$work/f.npy', f-f.mean())" 2>/dev/null; then
    step memcheck-poisson memcheck.log "${memcheck[@]}" "$gpukit" poisson -i "$work/f.npy" \
      -o "$work/u.npy" --device "$list" --check
  fi
  step memcheck-poisson-gpu memcheck.log env GPUKIT_QUICK_TESTS=1 "${memcheck[@]}" \
    --leak-check full "$tests/scale_out/scale_out_poisson_gpu_tests"
  # NCCL's own CUDA API errors are not reported: it probes kernels built for other architectures
  # (cudaErrorNoKernelImageForDevice) and meets the peer access the copy engine enabled
  # (cudaErrorPeerAccessAlreadyEnabled), thousands of reports on 4 H100s (2026-11-27) that hid
  # any other. gpukit's own API calls are checked by the code, which throws on any error.
  [ "$gpus" -ge 2 ] && step memcheck-poisson-multi memcheck.log env GPUKIT_QUICK_TESTS=1 \
    "${memcheck[@]}" --report-api-errors no "$tests/scale_out/scale_out_poisson_multigpu_tests"
  grep -E "ERROR SUMMARY" "$out/memcheck.log" | sort | uniq -c | tee -a "$summary"
fi

# 4. The speed bars: 1, 2 and every GPU; the distributed Poisson solver at 1024^3 float (NCCL
#    and copy engines; its all-to-all timed alone), and under mpirun a GPU a rank at 512^3.
if wants bench; then
  step scale scale.txt "$build/bench/tuning/gpukit_tune_scale" --gpus=1,2,all \
    --cases=european,barrier,bs,reduce,poisson ${GPUKIT_SCALE_ARGS:-}
  if [ $mpi = 1 ] && [ "$gpus" -ge 2 ]; then
    step scale-mpi scale-mpi.txt timeout 180 mpirun --oversubscribe -np "$gpus" \
      "$build/bench/tuning/gpukit_tune_scale" --cases=poisson --poisson-shape=512x512x512 \
      --repeat=3 --poisson-host-repeat=1
  fi
fi

echo | tee -a "$summary"
failed=0
for k in "${!status[@]}"; do
  printf '%-22s %s\n' "$k" "$([ "${status[$k]}" = 0 ] && echo PASS || echo "FAIL (${status[$k]})")" | tee -a "$summary"
  [ "${status[$k]}" = 0 ] || failed=1
done
rm -rf "$work"
echo
[ -f "$out/scale.txt" ] && sed -n '/^| workload/,$p' "$out/scale.txt"
# The Poisson table (the driver prints it before the other cases' table).
for log in scale.txt scale-mpi.txt; do
  [ -f "$out/$log" ] && sed -n '/^Poisson /,/^$/p' "$out/$log"
done
exit $failed
