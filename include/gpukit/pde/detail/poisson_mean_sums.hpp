#pragma once
// pde's building blocks, internal but installed (detail/: not the public API; it may change with
// any version): the sums behind the mean rule (poisson.hpp, "Gauge and solvability"), for every
// engine of the Poisson problem, pde's own and gpukit_scale_out's distributed slabs, so that each
// classifies "mean is zero" from the same bits. sum(f) and sum(|f|) in double with Neumaier
// compensation, written once as a reduction operation that every backend runs over the same fixed
// tree (gpukit/primitives/reduce_canonical.hpp): the CPU through canonical::reduce_canonical
// (host_mean_sums), CUDA through device::deterministic_reduce. One operation on one tree gives one
// set of bits, so the CPU and the GPU classify "mean is zero" identically.
//
// Plain C++ with __host__ __device__ members (GPUKIT_HD_INLINE); only additions, subtractions and
// comparisons, so no compiler can contract anything into an FMA that the other side lacks.
// Tested in tests/pde/poisson_test.cpp (the mean rule on both backends) and
// tests/scale_out/poisson_test.cpp (tile sums of slabs against host_mean_sums of the whole).

#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>

#include "gpukit/core/host_device.hpp"

namespace gpukit::pde::detail {

/// Two Neumaier sums side by side: sum(f) and sum(|f|), each a rounded running sum and the
/// running sum of its rounding errors. 32 bytes, trivially copyable: the CUDA engine moves it
/// word by word through warp shuffles and its flagged slots.
struct MeanSums {
  double sum;
  double sum_compensation;
  double abs_sum;
  double abs_compensation;

  GPUKIT_HD_INLINE double total() const { return sum + sum_compensation; }
  GPUKIT_HD_INLINE double abs_total() const { return abs_sum + abs_compensation; }
};
static_assert(std::is_trivially_copyable_v<MeanSums> && sizeof(MeanSums) == 32);

/// The reduction operation (the shape of reduce_canonical.hpp and primitives/cuda/reduce.cuh):
/// an element x becomes {x, 0, |x|, 0}; two partial sums combine as Neumaier's step applied to
/// their rounded sums, their compensations added. Exactly commutative (the error term is
/// symmetric: when |a| == |b| both branches give the same value), not associative: the fixed
/// tree is what makes the bits reproducible.
template <class Real>
struct MeanSumsOp {
  using Input = Real;
  using Acc = MeanSums;

  GPUKIT_HD_INLINE static Acc identity() { return {0, 0, 0, 0}; }
  GPUKIT_HD_INLINE static Acc load(Real x) {
    const double v = static_cast<double>(x);  // exact for float and double
    return {v, 0, std::fabs(v), 0};
  }
  GPUKIT_HD_INLINE Acc operator()(const Acc& a, const Acc& b) const {
    return {a.sum + b.sum, (a.sum_compensation + b.sum_compensation) + rounding(a.sum, b.sum),
            a.abs_sum + b.abs_sum,
            (a.abs_compensation + b.abs_compensation) + rounding(a.abs_sum, b.abs_sum)};
  }

 private:
  /// (x + y) - fl(x + y), exactly (Neumaier: subtract from the larger magnitude).
  GPUKIT_HD_INLINE static double rounding(double x, double y) {
    const double t = x + y;
    return std::fabs(x) >= std::fabs(y) ? (x - t) + y : (y - t) + x;
  }
};

/// The mean rule's sums of f (host memory): MeanSumsOp over the canonical tree on `threads`
/// OpenMP threads (<= 0: the OpenMP default), the same bits for every thread count and the bits
/// of the CUDA backend's device sums (float and double; defined in gpukit_pde).
template <class Real>
MeanSums host_mean_sums(std::span<const Real> f, int threads);

}  // namespace gpukit::pde::detail
