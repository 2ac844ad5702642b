#pragma once
// Internal: the reduction operations as host/device functors, shared by the CPU backend, the
// sequential reference's NaN policy and every CUDA kernel, so that all of them compute the same
// arithmetic. Each op: `using Input`, `using Acc`, `identity()`, `load(Input)`, `operator()`.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpukit/core/error.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives::detail {

using int128 = __int128;
using uint128 = unsigned __int128;

template <class T>
GPUKIT_HD_INLINE bool sign_bit(T x) {
#if defined(__CUDA_ARCH__)
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

// --- sums ------------------------------------------------------------------------------------

// Integer sums wrap in an unsigned accumulator (two's complement): exact whenever the true sum
// fits, and free of signed-overflow undefined behaviour. Floating sums start from -0.0, the
// IEEE additive identity (-0.0 + x == x for every x, +0.0 included).
template <class T, class AccT>
struct SumOp {
  using Input = T;
  using Acc = AccT;
  GPUKIT_HD_INLINE static Acc identity() {
    if constexpr (std::is_floating_point_v<Acc>) {
      return Acc(-0.0);
    } else {
      return Acc(0);
    }
  }
  GPUKIT_HD_INLINE static Acc load(T x) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      return static_cast<Acc>(static_cast<std::int64_t>(x));  // sign-extends into the wide type
    } else {
      return static_cast<Acc>(x);
    }
  }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a + b; }
};

/// A double-double value: hi + lo with |lo| <= ulp(hi) / 2.
struct DoubleDouble {
  double hi, lo;
};

// Compensated double sum: Knuth's TwoSum keeps each addition's rounding error, and the errors
// travel through the same tree in `lo`. Six additions per element; the reduction stays
// memory-bound on a GPU. No multiplications, so FMA contraction cannot change it.
template <class T>
struct CompensatedSumOp {
  using Input = T;
  using Acc = DoubleDouble;
  GPUKIT_HD_INLINE static Acc identity() { return {-0.0, -0.0}; }
  GPUKIT_HD_INLINE static Acc load(T x) { return {static_cast<double>(x), -0.0}; }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const {
    const double s = a.hi + b.hi;
    const double bb = s - a.hi;
    const double error = (a.hi - (s - bb)) + (b.hi - bb);
    return {s, (a.lo + b.lo) + error};
  }
};

// --- products, min, max, bitwise ------------------------------------------------------------

// Integer products wrap modulo 2^64 (unsigned arithmetic, so no undefined behaviour).
template <class T, class AccT>
struct ProductOp {
  using Input = T;
  using Acc = AccT;
  GPUKIT_HD_INLINE static Acc identity() { return Acc(1); }
  GPUKIT_HD_INLINE static Acc load(T x) { return SumOp<T, Acc>::load(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a * b; }
};

// Floating min/max: NaN wins (canonical quiet NaN, whatever the payload or the order) and -0.0
// orders below +0.0, so the operation is commutative bit for bit and every backend agrees.
template <class T>
struct MinOp {
  using Input = T;
  using Acc = T;
  GPUKIT_HD_INLINE static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  GPUKIT_HD_INLINE static Acc load(T x) { return x; }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
      if (a == b) return sign_bit(a) ? a : b;
    }
    return b < a ? b : a;
  }
};

template <class T>
struct MaxOp {
  using Input = T;
  using Acc = T;
  GPUKIT_HD_INLINE static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  GPUKIT_HD_INLINE static Acc load(T x) { return x; }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
      if (a == b) return sign_bit(a) ? b : a;
    }
    return a < b ? b : a;
  }
};

template <class T>
using BitsOf = std::make_unsigned_t<T>;

template <class T>
struct AndOp {
  using Input = T;
  using Acc = BitsOf<T>;
  GPUKIT_HD_INLINE static Acc identity() { return ~Acc(0); }
  GPUKIT_HD_INLINE static Acc load(T x) { return static_cast<Acc>(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a & b; }
};
template <class T>
struct OrOp {
  using Input = T;
  using Acc = BitsOf<T>;
  GPUKIT_HD_INLINE static Acc identity() { return Acc(0); }
  GPUKIT_HD_INLINE static Acc load(T x) { return static_cast<Acc>(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a | b; }
};
template <class T>
struct XorOp {
  using Input = T;
  using Acc = BitsOf<T>;
  GPUKIT_HD_INLINE static Acc identity() { return Acc(0); }
  GPUKIT_HD_INLINE static Acc load(T x) { return static_cast<Acc>(x); }
  GPUKIT_HD_INLINE Acc operator()(Acc a, Acc b) const { return a ^ b; }
};

// --- accumulator choice ----------------------------------------------------------------------

template <class T>
using WideUnsigned = std::conditional_t<std::is_integral_v<T>, std::uint64_t, T>;

/// Accumulator of the ladder kernels' sums and every integer product: 64-bit wrapping.
template <class T>
using LadderSum = SumOp<T, WideUnsigned<T>>;
template <class T>
using Product = ProductOp<T, WideUnsigned<T>>;
/// Accumulator of the deterministic engine's integer sums: 128-bit, which cannot wrap for any
/// array that fits in memory (2^64 elements of 2^63 stay below 2^127).
template <class T>
using ExactSum = SumOp<T, std::conditional_t<std::is_integral_v<T>, uint128, T>>;
/// The accurate mode of floating sums.
template <class T>
using AccurateSum =
    std::conditional_t<std::is_same_v<T, float>, SumOp<float, double>, CompensatedSumOp<double>>;

// --- results ---------------------------------------------------------------------------------

/// Turns an accumulator into the API's result: the canonical NaN for any NaN, the value rounded
/// once for wider floating accumulators, the integer narrowed to 64 bits (`overflow` set when
/// an exact 128-bit sum does not fit).
template <class T, class Acc>
GPUKIT_HD_INLINE reduce_result_t<T> finalize(Acc acc, bool& overflow) {
  using Result = reduce_result_t<T>;
  overflow = false;
  if constexpr (std::is_same_v<Acc, DoubleDouble>) {
    // A non-finite hi makes lo meaningless (Inf - Inf inside TwoSum); keep hi.
    const double value = (acc.hi - acc.hi == 0.0) ? acc.hi + acc.lo : acc.hi;
    return value != value ? std::numeric_limits<Result>::quiet_NaN() : static_cast<Result>(value);
  } else if constexpr (std::is_floating_point_v<Acc>) {
    const auto value = static_cast<Result>(acc);
    return value != value ? std::numeric_limits<Result>::quiet_NaN() : value;
  } else if constexpr (std::is_same_v<Acc, uint128>) {
    if constexpr (std::is_signed_v<T>) {
      const auto value = static_cast<int128>(acc);
      overflow = value > std::numeric_limits<std::int64_t>::max() ||
                 value < std::numeric_limits<std::int64_t>::min();
      return static_cast<std::int64_t>(value);
    } else {
      overflow = (acc >> 64) != 0;
      return static_cast<std::uint64_t>(acc);
    }
  } else if constexpr (std::is_signed_v<T>) {
    // Wrapped sums and products, or bitwise results: reinterpret, then sign-extend the bits of T.
    if constexpr (sizeof(Acc) < sizeof(Result)) {
      return static_cast<Result>(static_cast<T>(acc));
    } else {
      return static_cast<Result>(acc);
    }
  } else {
    return static_cast<Result>(acc);
  }
}

}  // namespace gpukit::primitives::detail
