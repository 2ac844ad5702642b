#pragma once
// Internal: the Monte Carlo moments and the fixed trees that merge them, shared by the CPU
// backend and the CUDA kernels.
//
// A lane accumulates its samples from a shift (its first sample) so that no sum of squares is
// differenced far from the mean (LaneSums). The 32 lane moments of a tile are merged by the tree
// of a warp's shuffle-down reduction (offsets 16, 8, 4, 2, 1), and the tiles of an option by the
// stride-doubling tree (merge_tile_pair, or TileTree as the tiles arrive): both trees are fixed,
// so the bits do not depend on who computes a tile.
//
// Every floating-point operation is written out with gpukit/core/rounded_arithmetic.hpp, so no
// compiler contracts it differently in different kernels. Its mul_add is fused on the device and
// rounds twice on the CPU: the backends agree within a rounding bound, each is deterministic.
// The merges take the mul_add as a policy (BackendMulAdd by default): FusedMulAdd is the device's
// rounding on the host (std::fma), so that the host can continue a GPU's tree with the GPU's bits
// (the blocks of a book priced across GPUs, monte_carlo_blocks.hpp).

#include <cmath>
#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"

namespace gpukit::finance::mc {

/// Moments of up to three variables over `count` samples: x (the estimator's sample: a payoff,
/// or an antithetic pair's mean), c (the control: S_T / S0, or the pair's mean) with the co-moment
/// of x and c, and d (an antithetic pair's half difference, for the variance reduction factor).
template <class T>
struct Moments {
  T count = 0;
  T mean_x = 0, m2_x = 0;
  T mean_c = 0, m2_c = 0, co_xc = 0;
  T mean_d = 0, m2_d = 0;
};

/// a * b + c as the compiling backend rounds it (rounded::mul_add: fused on the device, a
/// rounded product and a rounded sum on the CPU).
struct BackendMulAdd {
  template <class T>
  GPUKIT_HD_INLINE static T apply(T a, T b, T c) {
    return rounded::mul_add(a, b, c);
  }
};

/// a * b + c rounded once, as the device's fused multiply-add, on the host (std::fma is correctly
/// rounded with or without an FMA instruction): host merges with it give a GPU's bits.
struct FusedMulAdd {
  template <class T>
  static T apply(T a, T b, T c) {
    return std::fma(a, b, c);
  }
};

/// Chan, Golub and LeVeque's pairwise update with b's weight nb / (na + nb) given.
template <class M, class MulAdd = BackendMulAdd, class T>
GPUKIT_HD_INLINE Moments<T> merge_weighted(const Moments<T>& a, const Moments<T>& b, T weight_b) {
  Moments<T> r;
  r.count = rounded::add(a.count, b.count);
  const T cross = rounded::mul(a.count, weight_b);  // na nb / n
  const T dx = rounded::sub(b.mean_x, a.mean_x);
  r.mean_x = MulAdd::apply(dx, weight_b, a.mean_x);
  r.m2_x = MulAdd::apply(rounded::mul(dx, dx), cross, rounded::add(a.m2_x, b.m2_x));
  if constexpr (M::control) {
    const T dc = rounded::sub(b.mean_c, a.mean_c);
    r.mean_c = MulAdd::apply(dc, weight_b, a.mean_c);
    r.m2_c = MulAdd::apply(rounded::mul(dc, dc), cross, rounded::add(a.m2_c, b.m2_c));
    r.co_xc = MulAdd::apply(rounded::mul(dx, dc), cross, rounded::add(a.co_xc, b.co_xc));
  }
  if constexpr (M::antithetic) {
    const T dd = rounded::sub(b.mean_d, a.mean_d);
    r.mean_d = MulAdd::apply(dd, weight_b, a.mean_d);
    r.m2_d = MulAdd::apply(rounded::mul(dd, dd), cross, rounded::add(a.m2_d, b.m2_d));
  }
  return r;
}

/// Chan, Golub and LeVeque's pairwise update. Empty sides return the other unchanged. Equal
/// counts (every merge of full tiles) take the weight 1/2 without dividing: the same bits, as
/// n / 2n is exact.
template <class M, class MulAdd = BackendMulAdd, class T>
GPUKIT_HD_INLINE Moments<T> merge(const Moments<T>& a, const Moments<T>& b) {
  if (b.count == T(0)) return a;
  if (a.count == T(0)) return b;
  return merge_weighted<M, MulAdd>(
      a, b, a.count == b.count ? T(0.5) : b.count / rounded::add(a.count, b.count));
}

/// merge() of two sides known to hold the same, nonzero count (lanes of a full tile).
template <class M, class T>
GPUKIT_HD_INLINE Moments<T> merge_equal(const Moments<T>& a, const Moments<T>& b) {
  return merge_weighted<M>(a, b, T(0.5));
}

/// A tile's moments from its lanes' (`lanes` of them, a power of two), in the warp's shuffle-down
/// tree as the CPU backends replay it: lane l absorbs lane l + offset, offsets halving from
/// lanes / 2; lane 0 ends with the tile. Overwrites `lane_moments`.
template <class M, class T>
inline Moments<T> merge_lanes_as_a_warp(Moments<T>* lane_moments, int lanes) {
  for (int offset = lanes / 2; offset > 0; offset /= 2) {
    for (int lane = 0; lane < offset; ++lane)
      lane_moments[lane] = merge<M>(lane_moments[lane], lane_moments[lane + offset]);
  }
  return lane_moments[0];
}

template <class T, class U>
GPUKIT_HD_INLINE Moments<T> convert(const Moments<U>& m) {
  return {T(m.count), T(m.mean_x), T(m.m2_x),   T(m.mean_c),
          T(m.m2_c),  T(m.co_xc),  T(m.mean_d), T(m.m2_d)};
}

/// One lane's sums from a shift (its first sample); the caller knows the count.
template <class M, class Real>
struct LaneSums {
  Real shift_x = 0, sum_x = 0, sum2_x = 0;
  Real shift_c = 0, sum_c = 0, sum2_c = 0, sum_xc = 0;
  Real shift_d = 0, sum_d = 0, sum2_d = 0;

  GPUKIT_HD_INLINE void set_shift(Real x, Real c, Real d) {
    shift_x = x;
    if constexpr (M::control) shift_c = c;
    if constexpr (M::antithetic) shift_d = d;
  }

  GPUKIT_HD_INLINE void add(Real x, Real c, Real d) {
    const Real ex = rounded::sub(x, shift_x);
    sum_x = rounded::add(sum_x, ex);
    sum2_x = rounded::mul_add(ex, ex, sum2_x);
    if constexpr (M::control) {
      const Real ec = rounded::sub(c, shift_c);
      sum_c = rounded::add(sum_c, ec);
      sum2_c = rounded::mul_add(ec, ec, sum2_c);
      sum_xc = rounded::mul_add(ex, ec, sum_xc);
    }
    if constexpr (M::antithetic) {
      const Real ed = rounded::sub(d, shift_d);
      sum_d = rounded::add(sum_d, ed);
      sum2_d = rounded::mul_add(ed, ed, sum2_d);
    }
  }

  GPUKIT_HD_INLINE Moments<Real> moments(Real n) const {
    Moments<Real> m;
    if (n == Real(0)) return m;
    m.count = n;
    const Real inv_n = Real(1) / n;
    m.mean_x = rounded::mul_add(sum_x, inv_n, shift_x);
    m.m2_x = rounded::mul_add(-rounded::mul(sum_x, sum_x), inv_n, sum2_x);
    if constexpr (M::control) {
      m.mean_c = rounded::mul_add(sum_c, inv_n, shift_c);
      m.m2_c = rounded::mul_add(-rounded::mul(sum_c, sum_c), inv_n, sum2_c);
      m.co_xc = rounded::mul_add(-rounded::mul(sum_x, sum_c), inv_n, sum_xc);
    }
    if constexpr (M::antithetic) {
      m.mean_d = rounded::mul_add(sum_d, inv_n, shift_d);
      m.m2_d = rounded::mul_add(-rounded::mul(sum_d, sum_d), inv_n, sum2_d);
    }
    return m;
  }
};

/// The same tree as merge_tile_pair's levels, built as the tiles arrive in order (pairwise
/// summation's stack): a complete subtree of 2^L tiles is merged as soon as its right half is, and
/// finish() merges the incomplete right edge from the right, as the fixed tree does when the count
/// is not a power of two. The same merges with the same operands, so the same bits, in
/// O(log tiles) memory. With MulAdd = FusedMulAdd it merges as the device does.
template <class M, class MulAdd = BackendMulAdd>
struct TileTree {
  Moments<double> node[64];
  int level[64];
  int size = 0;

  /// Pushes the next tile, or with `l` > 0 the root of the next 2^l tiles (a complete subtree of
  /// the fixed tree: its tiles start at a multiple of 2^l), which merges as pushing its tiles one
  /// by one would: the stack then holds subtrees of at least 2^l tiles, which none of the merges
  /// inside the subtree touches.
  void push(Moments<double> m, int l = 0) {
    while (size > 0 && level[size - 1] == l) m = merge<M, MulAdd>(node[--size], m), ++l;
    node[size] = m, level[size] = l, ++size;
  }
  /// The root of the tiles pushed since the last finish(), and an empty tree.
  Moments<double> finish() {
    if (size == 0) return {};
    Moments<double> m = node[--size];
    while (size > 0) m = merge<M, MulAdd>(node[--size], m);
    return m;
  }
};

/// The fixed tree over tiles, one level at a time: at stride s, tile i (a multiple of 2s) absorbs
/// tile i + s. Level `stride`'s merge number k touches tiles 2 s k and 2 s k + s.
template <class M>
GPUKIT_HD_INLINE void merge_tile_pair(Moments<double>* tiles, std::int64_t count,
                                      std::int64_t stride, std::int64_t k) {
  const std::int64_t i = 2 * stride * k;
  if (i + stride < count) tiles[i] = merge<M>(tiles[i], tiles[i + stride]);
}

}  // namespace gpukit::finance::mc
