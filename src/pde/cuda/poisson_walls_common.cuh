#pragma once
// Internal to the walls solver's two pipelines (poisson_walls.cu, poisson_walls_grid.cu): the
// launch shape of their element-wise kernels and the grid-stride loop they share.

#include <algorithm>
#include <cstdint>

#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_walls.hpp"

namespace gpukit::pde::cuda_detail::walls_kernels {

using walls::AxisKind;
template <class Real>
using Complex = typename Cufft<Real>::Complex;

inline constexpr int kThreads = 256;

/// Blocks of kThreads for `count` elements, at most 2^20 (the grid-stride loop does the rest).
inline unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, std::int64_t{1} << 20));
}

}  // namespace gpukit::pde::cuda_detail::walls_kernels

/// The grid-stride loop over `count` elements, idx of type Index.
#define GPUKIT_WALLS_GRID_STRIDE(Index, count)                                             \
  for (Index idx = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; \
       idx += static_cast<Index>(gridDim.x) * blockDim.x)
