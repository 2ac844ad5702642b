// The CPU backend of reduce: the canonical tiles on OpenMP threads.

#include "primitives/cpu/reduce_launchers.hpp"

#include "gpukit/primitives/reduce_canonical.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/reduce_dispatch.hpp"

namespace gpukit::primitives::cpu_detail {

template <class T>
reduce_result_t<T> reduce_on_cpu(int threads, std::span<const T> data, ReduceOp op,
                                 const ReduceOptions& options) {
  const auto count = static_cast<std::int64_t>(data.size());
  if (count == 0 && op == ReduceOp::sum) return reduce_result_t<T>(0);  // +0.0, not -0.0
  return detail::with_canonical_op<T>(op, options.accurate_sum, count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    const auto acc = canonical::reduce_canonical(
        data.data(), count, op_functor, [](T x) { return Op::load(x); }, threads);
    bool overflow = false;
    const auto value = detail::finalize<T>(acc, overflow);
    return detail::checked<T>(value, overflow);
  });
}

#define GPUKIT_INSTANTIATE_REDUCE_ON_CPU(T)                                       \
  template reduce_result_t<T> reduce_on_cpu<T>(int, std::span<const T>, ReduceOp, \
                                               const ReduceOptions&);

GPUKIT_INSTANTIATE_REDUCE_ON_CPU(std::int32_t)
GPUKIT_INSTANTIATE_REDUCE_ON_CPU(std::int64_t)
GPUKIT_INSTANTIATE_REDUCE_ON_CPU(std::uint32_t)
GPUKIT_INSTANTIATE_REDUCE_ON_CPU(float)
GPUKIT_INSTANTIATE_REDUCE_ON_CPU(double)
#undef GPUKIT_INSTANTIATE_REDUCE_ON_CPU

}  // namespace gpukit::primitives::cpu_detail
