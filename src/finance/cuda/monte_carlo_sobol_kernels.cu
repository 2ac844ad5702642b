// The Sobol sampler's kernel: a warp computes a tile of a replicate (32 lanes accumulating their
// quads in registers, then the fixed shuffle-down tree), a grid-stride loop of warps over the
// (replicate, tile) pairs of a chunk; the host (monte_carlo_sobol.cpp) merges each replicate's
// tiles in the fixed tree with the device's fused rounding (FusedMulAdd), so the bits do not
// depend on the grid or the chunking. The CPU twin is cpu/monte_carlo_sobol_kernels.cpp.

#include <algorithm>

#include "core/cuda/check.hpp"
#include "finance/cuda/monte_carlo_warp_tiles.cuh"
#include "finance/monte_carlo_sobol.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"

namespace gpukit::finance::mc {

namespace {

constexpr int kThreadsPerBlock = 256;

template <class M, class Real>
__global__ void __launch_bounds__(kThreadsPerBlock)
    sobol_tile_kernel(const SobolRow<Real>* __restrict__ rows, const SobolTables<Real> tables,
                      std::int64_t samples, std::int64_t tiles, std::int64_t first,
                      std::int64_t count, Moments<double>* __restrict__ out) {
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / kLanes);
  for (std::int64_t j = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kLanes; j < count;
       j += warps) {
    const std::int64_t row = (first + j) / tiles, tile = (first + j) % tiles;
    const Moments<Real> m = sobol_lane_moments<M>(rows[row], tables, samples, tile, lane);
    const bool full = (tile + 1) * kMonteCarloTileSamples <= samples;
    const Moments<double> merged = reduce_tile<M>(m, lane, full);
    if (lane == 0) out[j] = merged;
  }
}

}  // namespace

template <class Real>
void launch_sobol_tiles(const SobolRow<Real>* device_rows, const SobolTables<Real>& device_tables,
                        std::int64_t samples, std::int64_t first, std::int64_t count,
                        bool antithetic, bool control, Moments<double>* device_tiles,
                        StreamHandle stream) {
  if (count <= 0) return;
  const std::int64_t tiles = tiles_for(samples);
  const std::int64_t blocks =
      std::min<std::int64_t>((count * kLanes + kThreadsPerBlock - 1) / kThreadsPerBlock, 1 << 16);
  const auto launch = [&](auto kernel) {
    kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(
        device_rows, device_tables, samples, tiles, first, count, device_tiles);
  };
  if (antithetic && control) launch(sobol_tile_kernel<Mode<true, true>, Real>);
  if (antithetic && !control) launch(sobol_tile_kernel<Mode<true, false>, Real>);
  if (!antithetic && control) launch(sobol_tile_kernel<Mode<false, true>, Real>);
  if (!antithetic && !control) launch(sobol_tile_kernel<Mode<false, false>, Real>);
  GPUKIT_CUDA_CHECK_LAUNCH("sobol_tile_kernel");
}

#define GPUKIT_MC_SOBOL_INSTANTIATE(Real)                                                      \
  template void launch_sobol_tiles<Real>(const SobolRow<Real>*, const SobolTables<Real>&,      \
                                         std::int64_t, std::int64_t, std::int64_t, bool, bool, \
                                         Moments<double>*, StreamHandle);
GPUKIT_MC_SOBOL_INSTANTIATE(float)
GPUKIT_MC_SOBOL_INSTANTIATE(double)
#undef GPUKIT_MC_SOBOL_INSTANTIATE

}  // namespace gpukit::finance::mc
