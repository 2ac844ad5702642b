// The cuRAND device-API reference kernel (see monte_carlo_curand_reference.hpp). This file is
// compiled with --use_fast_math, so curand_normal4's logf / sqrtf and the expf below are the
// hardware approximations, as a vendor sample would use them.

#include "finance/cuda/monte_carlo_curand_reference.hpp"

#include <curand_kernel.h>

#include <algorithm>
#include <cmath>

#include "core/cuda/check.hpp"

namespace gpukit::finance::mc {

namespace {

constexpr int kThreads = 256;

template <bool kBarrier>
__global__ void __launch_bounds__(kThreads)
    curand_reference_kernel(const CurandReferenceProblem p, std::int64_t quads,
                            double* __restrict__ sums) {
  const std::int64_t thread = std::int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const std::int64_t threads = std::int64_t{gridDim.x} * kThreads;
  curandStatePhilox4_32_10_t state;
  curand_init(p.seed, static_cast<unsigned long long>(thread), 0, &state);
  float sum = 0, sum2 = 0;
  for (std::int64_t q = thread; q < quads; q += threads) {
    float y[4] = {0, 0, 0, 0};
    float lowest[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
    for (std::uint32_t step = 0; step < (kBarrier ? p.steps : 1u); ++step) {
      const float4 z = curand_normal4(&state);
      y[0] += p.drift_dt + p.vol_sqrt_dt * z.x;
      y[1] += p.drift_dt + p.vol_sqrt_dt * z.y;
      y[2] += p.drift_dt + p.vol_sqrt_dt * z.z;
      y[3] += p.drift_dt + p.vol_sqrt_dt * z.w;
      if constexpr (kBarrier) {
        for (int j = 0; j < 4; ++j) lowest[j] = fminf(lowest[j], y[j]);
      }
    }
    for (int j = 0; j < 4; ++j) {
      float payoff = fmaxf(expf(y[j]) - p.strike_over_spot, 0.0f);
      if constexpr (kBarrier) payoff = lowest[j] > p.log_barrier ? payoff : 0.0f;
      sum += payoff;
      sum2 += payoff * payoff;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_down_sync(0xFFFFFFFFu, sum, offset);
    sum2 += __shfl_down_sync(0xFFFFFFFFu, sum2, offset);
  }
  __shared__ float warp_sums[2][kThreads / 32];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  if (lane == 0) warp_sums[0][warp] = sum, warp_sums[1][warp] = sum2;
  __syncthreads();
  if (threadIdx.x == 0) {
    double block_sum = 0, block_sum2 = 0;
    for (int w = 0; w < kThreads / 32; ++w)
      block_sum += warp_sums[0][w], block_sum2 += warp_sums[1][w];
    atomicAdd(&sums[0], block_sum);
    atomicAdd(&sums[1], block_sum2);
  }
}

}  // namespace

void launch_curand_reference(const CurandReferenceProblem& problem, double* sums,
                             StreamHandle stream) {
  const std::int64_t quads = problem.paths / 4;
  if (quads <= 0) return;
  int device = 0, sms = 0, resident = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto kernel =
      problem.down_and_out ? curand_reference_kernel<true> : curand_reference_kernel<false>;
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, 0));
  const std::int64_t blocks = std::min<std::int64_t>(std::int64_t{sms} * std::max(resident, 1),
                                                     (quads + kThreads - 1) / kThreads);
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(problem, quads, sums);
  GPUKIT_CUDA_CHECK_LAUNCH("monte carlo curand_reference_kernel");
}

}  // namespace gpukit::finance::mc
