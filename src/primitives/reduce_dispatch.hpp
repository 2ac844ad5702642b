#pragma once
// Internal: maps a run-time (element type, ReduceOp, accuracy) to the op functor a kernel or the
// CPU loop is instantiated with. Two families: the deterministic engine's (exact 128-bit integer
// sums, optional accurate floating sums) and the ladder kernels' (64-bit wrapping sums).

#include <type_traits>

#include "primitives/reduce_ops.hpp"

namespace gpukit::primitives::detail {

/// Throws InvalidInput for a bitwise op on floating point and for min/max of nothing.
template <class T>
void validate_reduce_arguments(ReduceOp op, std::int64_t count) {
  if (!reduce_op_applies<T>(op)) {
    throw InvalidInput(std::string("reduce: '") + std::string(reduce_op_name(op)) +
                       "' needs integer input, not floating point");
  }
  if (count < 0) throw InvalidInput("reduce: negative element count");
  if (count == 0 && (op == ReduceOp::min || op == ReduceOp::max)) {
    throw InvalidInput(std::string("reduce: ") + std::string(reduce_op_name(op)) +
                       " of an empty array is undefined");
  }
}

/// Calls `f(Op{})` with the functor for (T, op) whose sum is `Sum`.
template <class T, class Sum, class F>
decltype(auto) with_reduce_op(ReduceOp op, F&& f) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::bit_and:
        return f(AndOp<T>{});
      case ReduceOp::bit_or:
        return f(OrOp<T>{});
      case ReduceOp::bit_xor:
        return f(XorOp<T>{});
      default:
        break;
    }
  }
  switch (op) {
    case ReduceOp::product:
      return f(Product<T>{});
    case ReduceOp::min:
      return f(MinOp<T>{});
    case ReduceOp::max:
      return f(MaxOp<T>{});
    default:
      return f(Sum{});
  }
}

/// Largest count for which a 64-bit accumulator sums 32-bit integers exactly:
/// 2^32 * (2^31 - 1) < 2^63 and 2^32 * (2^32 - 1) < 2^64.
inline constexpr std::int64_t kMaxNarrowSumCount = std::int64_t{1} << 32;

/// The deterministic engine's functors (the API's default on every backend). 32-bit integer
/// sums of up to 2^32 elements accumulate in 64 bits, which is exact there and half the work of
/// 128 bits; everything else as ExactSum. The choice changes no result.
template <class T, class F>
decltype(auto) with_canonical_op(ReduceOp op, bool accurate_sum, std::int64_t count, F&& f) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == ReduceOp::sum && accurate_sum) return f(AccurateSum<T>{});
  } else if constexpr (sizeof(T) == 4) {
    if (op == ReduceOp::sum && count <= kMaxNarrowSumCount) return f(LadderSum<T>{});
  }
  return with_reduce_op<T, ExactSum<T>>(op, static_cast<F&&>(f));
}

/// The ladder kernels' functors.
template <class T, class F>
decltype(auto) with_ladder_op(ReduceOp op, F&& f) {
  return with_reduce_op<T, LadderSum<T>>(op, static_cast<F&&>(f));
}

}  // namespace gpukit::primitives::detail
