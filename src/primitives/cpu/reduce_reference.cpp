// The sequential reference of reduce: one loop from the first element to the last, floating sums
// and products in long double and integer sums in 128 bits, not the tiles the backends share.

#include <cmath>
#include <limits>

#include "gpukit/primitives/reduce.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/reduce_dispatch.hpp"

namespace gpukit::primitives {

template <class T>
reduce_result_t<T> reduce_sequential(std::span<const T> data, ReduceOp op) {
  using Result = reduce_result_t<T>;
  detail::validate_reduce_arguments<T>(op, static_cast<std::int64_t>(data.size()));
  if constexpr (std::is_floating_point_v<T>) {
    for (const T x : data)
      if (std::isnan(x)) return std::numeric_limits<T>::quiet_NaN();
    if (op == ReduceOp::sum || op == ReduceOp::product) {
      if (data.empty()) return op == ReduceOp::sum ? T(0) : T(1);
      long double acc = op == ReduceOp::sum ? -0.0L : 1.0L;
      for (const T x : data) acc = op == ReduceOp::sum ? acc + x : acc * x;
      const auto value = static_cast<T>(acc);
      return std::isnan(value) ? std::numeric_limits<T>::quiet_NaN() : value;
    }
  } else {
    if (op == ReduceOp::sum) {
      detail::int128 acc = 0;
      for (const T x : data) acc += x;
      const bool overflow = acc > std::numeric_limits<Result>::max() ||
                            acc < detail::int128(std::numeric_limits<Result>::lowest());
      return detail::checked<T>(static_cast<Result>(acc), overflow);
    }
  }
  return detail::with_ladder_op<T>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    typename Op::Acc acc = Op::identity();
    for (const T x : data) acc = op_functor(acc, Op::load(x));
    bool overflow = false;
    return detail::finalize<T>(acc, overflow);
  });
}

template reduce_result_t<std::int32_t> reduce_sequential<std::int32_t>(
    std::span<const std::int32_t>, ReduceOp);
template reduce_result_t<std::int64_t> reduce_sequential<std::int64_t>(
    std::span<const std::int64_t>, ReduceOp);
template reduce_result_t<std::uint32_t> reduce_sequential<std::uint32_t>(
    std::span<const std::uint32_t>, ReduceOp);
template reduce_result_t<float> reduce_sequential<float>(std::span<const float>, ReduceOp);
template reduce_result_t<double> reduce_sequential<double>(std::span<const double>, ReduceOp);

}  // namespace gpukit::primitives
