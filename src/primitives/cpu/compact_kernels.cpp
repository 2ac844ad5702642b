// The CPU backend of compact: compact_if with the named predicate on OpenMP threads.

#include "primitives/cpu/compact_launchers.hpp"

#include "primitives/compact_predicates.hpp"

namespace gpukit::primitives::cpu_detail {

template <class T>
std::int64_t compact_on_cpu(int threads, std::span<const T> input, std::span<T> output,
                            KeepPredicate keep) {
  return detail::with_keep_predicate<T>(
      keep, [&](auto predicate) { return compact_if(input, output, predicate, threads); });
}

#define GPUKIT_INSTANTIATE_COMPACT_ON_CPU(T) \
  template std::int64_t compact_on_cpu<T>(int, std::span<const T>, std::span<T>, KeepPredicate);

GPUKIT_INSTANTIATE_COMPACT_ON_CPU(std::int32_t)
GPUKIT_INSTANTIATE_COMPACT_ON_CPU(std::int64_t)
GPUKIT_INSTANTIATE_COMPACT_ON_CPU(std::uint32_t)
GPUKIT_INSTANTIATE_COMPACT_ON_CPU(float)
GPUKIT_INSTANTIATE_COMPACT_ON_CPU(double)
#undef GPUKIT_INSTANTIATE_COMPACT_ON_CPU

}  // namespace gpukit::primitives::cpu_detail
