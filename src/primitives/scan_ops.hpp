#pragma once
// Internal: the scan operations as host/device functors (the Operation concept of
// gpukit/primitives/operation.hpp: Input, Acc, identity, load, combine) plus `store`, which turns
// an accumulator into the output type, and `fits`, which says whether it can. Shared by the CPU
// backend, the reference and every CUDA kernel, so all of them compute the same arithmetic.

#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpukit/core/error.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/primitives/scan.hpp"
#include "primitives/reduce_ops.hpp"

namespace gpukit::primitives::detail {

/// The exact accumulator of an integer sum scan: int64 for int32, uint64 for uint32, 128 bits
/// for int64; floating point accumulates in its own type.
template <class T>
using ExactScanAcc = std::conditional_t<
    std::is_floating_point_v<T>, T,
    std::conditional_t<std::is_same_v<T, std::int64_t>, int128,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>>;

/// T's unsigned type for integers (wrapping arithmetic without undefined behaviour), else T.
template <class T>
using WrappingAcc = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>,
                                                std::type_identity<T>>::type;

/// Exact sums (the API's default): `fits` tells whether an output is representable in T.
/// The accumulator's range is never exceeded: an output past T's range is an error, and the
/// CUDA engines clamp the carried tile prefixes (detail::clamp_carry in
/// cuda/detail/tile_state.cuh), so |acc| stays far below it.
template <class T>
struct ExactScanSum {
  using Input = T;
  using Acc = ExactScanAcc<T>;
  /// Integer sums may be combined in any order (device::exact_scan_sm90 folds columns first).
  static constexpr bool kCommutative = std::is_integral_v<T>;
  GPUKIT_HD_INLINE static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return Acc(-0.0);
    } else {
      return Acc(0);
    }
  }
  /// P[-1] when nothing carries in: +0.0, as the seed's loop starts (scanned[0] = 0), so the
  /// exclusive sum's first element is +0.0 and not the identity -0.0.
  GPUKIT_HD_INLINE static Acc initial() { return Acc(0); }
  GPUKIT_HD_INLINE static Acc load(T x) { return static_cast<Acc>(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a + b; }
  GPUKIT_HD_INLINE static bool fits(Acc a) {
    if constexpr (std::is_floating_point_v<T>) {
      return true;
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (a < static_cast<Acc>(std::numeric_limits<T>::lowest())) return false;
      }
      return a <= static_cast<Acc>(std::numeric_limits<T>::max());
    }
  }
  GPUKIT_HD_INLINE static T store(Acc a) { return static_cast<T>(a); }
  /// Tile prefixes carried across tiles saturate at +-2^40 for int32/uint32 (2^100 for int64):
  /// a prefix that far out of T's range already makes an output overflow, and the clamp keeps
  /// the accumulator from wrapping on any input size.
  GPUKIT_HD_INLINE static Acc clamp_carry(Acc a) {
    if constexpr (std::is_floating_point_v<T>) {
      return a;
    } else {
      const Acc limit = Acc(1) << (sizeof(T) == 8 ? 100 : 40);
      if (a > limit) return limit;
      if constexpr (std::is_signed_v<T>) {
        if (a < -limit) return -limit;
      }
      return a;
    }
  }
};

/// Sums that wrap modulo 2^w in T's unsigned type (the ladder kernels and CUB do this).
template <class T>
struct WrappingScanSum {
  using Input = T;
  using Acc = WrappingAcc<T>;
  static constexpr bool kCommutative = std::is_integral_v<T>;
  GPUKIT_HD_INLINE static Acc identity() { return ExactScanSum<T>::identity(); }
  GPUKIT_HD_INLINE static Acc initial() { return Acc(0); }
  GPUKIT_HD_INLINE static Acc load(T x) { return static_cast<Acc>(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a + b; }
  GPUKIT_HD_INLINE static bool fits(Acc) { return true; }
  GPUKIT_HD_INLINE static T store(Acc a) { return static_cast<T>(a); }
};

/// Products: integers wrap modulo 2^w (unsigned arithmetic, no undefined behaviour).
template <class T>
struct ScanProduct {
  using Input = T;
  using Acc = WrappingAcc<T>;
  static constexpr bool kCommutative = std::is_integral_v<T>;
  GPUKIT_HD_INLINE static Acc identity() { return Acc(1); }
  GPUKIT_HD_INLINE static Acc load(T x) { return static_cast<Acc>(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const {
    if constexpr (std::is_same_v<Acc, std::uint32_t>) {
      return static_cast<Acc>(static_cast<std::uint64_t>(a) * b);  // no promotion to int
    } else {
      return a * b;
    }
  }
  GPUKIT_HD_INLINE static bool fits(Acc) { return true; }
  GPUKIT_HD_INLINE static T store(Acc a) { return static_cast<T>(a); }
};

/// Min and max: the reduction's functors (NaN wins, -0.0 below +0.0), stored as they are.
template <class T>
struct ScanMin : MinOp<T> {
  static constexpr bool kCommutative = true;  // NaN and signed zeros decided symmetrically
  GPUKIT_HD_INLINE static bool fits(T) { return true; }
  GPUKIT_HD_INLINE static T store(T a) { return a; }
};
template <class T>
struct ScanMax : MaxOp<T> {
  static constexpr bool kCommutative = true;
  GPUKIT_HD_INLINE static bool fits(T) { return true; }
  GPUKIT_HD_INLINE static T store(T a) { return a; }
};

/// Calls f(op_functor) for `op`; kExact picks the exact integer sum (else the wrapping one). A
/// template argument, so that only the chosen sum's kernels are compiled.
template <class T, bool kExact, class F>
decltype(auto) with_scan_op(ScanOp op, F&& f) {
  using Sum = std::conditional_t<kExact, ExactScanSum<T>, WrappingScanSum<T>>;
  switch (op) {
    case ScanOp::sum:
      return f(Sum{});
    case ScanOp::product:
      return f(ScanProduct<T>{});
    case ScanOp::min:
      return f(ScanMin<T>{});
    case ScanOp::max:
      return f(ScanMax<T>{});
  }
  throw InvalidInput("unknown scan operation");
}

}  // namespace gpukit::primitives::detail
