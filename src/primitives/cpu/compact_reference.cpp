// The sequential reference of compact: one loop from the first element to the last.

#include "gpukit/primitives/compact.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/compact_predicates.hpp"

namespace gpukit::primitives {

template <class T>
std::int64_t compact_sequential(std::span<const T> input, std::span<T> output, KeepPredicate keep) {
  detail::validate_compact_arrays(input.data(), input.size(), output.data(), output.size());
  return detail::with_keep_predicate<T>(keep, [&](auto predicate) {
    std::int64_t kept = 0;
    for (const T x : input) {
      if (predicate(x)) output[static_cast<std::size_t>(kept++)] = x;
    }
    return kept;
  });
}

#define GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL(T) \
  template std::int64_t compact_sequential<T>(std::span<const T>, std::span<T>, KeepPredicate);

GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL(std::int32_t)
GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL(std::int64_t)
GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL(std::uint32_t)
GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL(float)
GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL(double)
#undef GPUKIT_INSTANTIATE_COMPACT_SEQUENTIAL

}  // namespace gpukit::primitives
