#pragma once
// Internal: a warp's fixed shuffle-down tree over its 32 lanes' Monte Carlo moments (lane l
// absorbs lane l + offset for offsets 16, 8, 4, 2, 1), shared by the Philox kernels
// (monte_carlo_kernels.cu) and the Sobol kernel (monte_carlo_sobol_kernels.cu). The CPU backends
// run the same tree in a loop.

#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_statistics.hpp"

namespace gpukit::finance::mc {

template <class T>
__device__ __forceinline__ T shuffle_down(T value, int offset) {
  return __shfl_down_sync(0xFFFFFFFFu, value, offset);
}

template <class M, class T>
__device__ __forceinline__ Moments<T> shuffle_down(const Moments<T>& m, int offset) {
  Moments<T> r;
  r.count = shuffle_down(m.count, offset);
  r.mean_x = shuffle_down(m.mean_x, offset);
  r.m2_x = shuffle_down(m.m2_x, offset);
  if constexpr (M::control) {
    r.mean_c = shuffle_down(m.mean_c, offset);
    r.m2_c = shuffle_down(m.m2_c, offset);
    r.co_xc = shuffle_down(m.co_xc, offset);
  }
  if constexpr (M::antithetic) {
    r.mean_d = shuffle_down(m.mean_d, offset);
    r.m2_d = shuffle_down(m.m2_d, offset);
  }
  return r;
}

// The warp's fixed shuffle-down tree over its lanes' moments; lane 0 returns the tile's.
// `full`: every lane holds kQuadsPerLane quads (merge_equal, the same bits as merge).
template <class M, class Real>
__device__ __forceinline__ Moments<double> reduce_tile(Moments<Real> m, int lane, bool full) {
  if (full) {
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      const Moments<Real> other = shuffle_down<M>(m, offset);
      if (lane < offset) m = merge_equal<M>(m, other);
    }
  } else {
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      const Moments<Real> other = shuffle_down<M>(m, offset);
      if (lane < offset) m = merge<M>(m, other);
    }
  }
  return convert<double>(m);
}

}  // namespace gpukit::finance::mc
