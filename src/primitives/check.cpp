// The --check comparisons of reduce, scan and compact against their sequential references.

#include "gpukit/primitives/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives {

template <class T>
ReduceCheck<T> check_reduce_result(std::span<const T> data, ReduceOp op,
                                   reduce_result_t<T> result) {
  ReduceCheck<T> check;
  check.reference = reduce_sequential<T>(data, op);
  const auto reference = check.reference;
  if constexpr (std::is_floating_point_v<T>) {
    check.difference = std::fabs(double(result) - double(reference));
    // The fixed tree's bound (reduce_canonical.hpp): 26 roundings a level, each at most eps
    // times the running sum of magnitudes.
    double magnitude = 0;
    for (T x : data) magnitude += std::fabs(double(x));
    int levels = 1;
    for (double n = 16384; n < double(data.size()); n *= 16384) ++levels;
    check.bound = 26.0 * levels * std::numeric_limits<T>::epsilon() * magnitude;
    check.passed = (std::isnan(result) && std::isnan(reference)) || result == reference ||
                   check.difference <= check.bound;
  } else {
    check.passed = result == reference;
    check.difference = check.passed ? 0.0 : 1.0;
  }
  return check;
}

template <class T>
ScanCheck check_scan_result(std::span<const T> input, std::span<const T> result, ScanOp op,
                            ScanKind kind) {
  if (result.size() != input.size())
    throw InvalidInput("scan check: the result and the input differ in length");
  std::vector<T> reference(input.size());
  scan_sequential<T>(input, reference, op, kind);
  ScanCheck check;
  long double magnitude = 0;
  for (std::size_t i = 0; i < input.size() && check.first_bad < 0; ++i) {
    const T r = reference[i], y = result[i];
    bool ok = false;
    if constexpr (std::is_floating_point_v<T>) {
      // An exclusive output excludes its own element from the prefix of |x|.
      if (kind == ScanKind::inclusive) magnitude += std::fabs(input[i]);
      const double roundings = 26.0 + double(i / canonical_scan::kTile);
      const double scale = op == ScanOp::sum ? double(magnitude) : std::fabs(double(r));
      ok = (std::isnan(r) && std::isnan(y)) || r == y ||
           (op != ScanOp::min && op != ScanOp::max &&
            std::fabs(double(y) - double(r)) <=
                roundings * std::numeric_limits<T>::epsilon() * scale);
      if (kind == ScanKind::exclusive) magnitude += std::fabs(input[i]);
    } else {
      ok = r == y;
    }
    if (!ok) check.first_bad = static_cast<std::int64_t>(i);
  }
  check.metrics = compare<T, T>(reference, result);
  return check;
}

template <class T>
CompactCheck check_compact_result(std::span<const T> input, std::span<const T> kept,
                                  KeepPredicate keep) {
  std::vector<T> reference(input.size());
  reference.resize(static_cast<std::size_t>(compact_sequential<T>(input, reference, keep)));
  CompactCheck check;
  check.reference_kept = static_cast<std::int64_t>(reference.size());
  check.passed = std::equal(reference.begin(), reference.end(), kept.begin(), kept.end(),
                            [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; });
  return check;
}

#define GPUKIT_INSTANTIATE_CHECKS(T)                                                      \
  template ReduceCheck<T> check_reduce_result<T>(std::span<const T>, ReduceOp,            \
                                                 reduce_result_t<T>);                     \
  template ScanCheck check_scan_result<T>(std::span<const T>, std::span<const T>, ScanOp, \
                                          ScanKind);                                      \
  template CompactCheck check_compact_result<T>(std::span<const T>, std::span<const T>,   \
                                                KeepPredicate);

GPUKIT_INSTANTIATE_CHECKS(std::int32_t)
GPUKIT_INSTANTIATE_CHECKS(std::int64_t)
GPUKIT_INSTANTIATE_CHECKS(std::uint32_t)
GPUKIT_INSTANTIATE_CHECKS(float)
GPUKIT_INSTANTIATE_CHECKS(double)
#undef GPUKIT_INSTANTIATE_CHECKS

}  // namespace gpukit::primitives
