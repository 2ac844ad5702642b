// Stream compaction on the CPU: every predicate and type against the sequential reference at
// awkward sizes, all-kept / none-kept / alternating inputs, the predicates' edge values, the
// generic predicate, and argument errors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/compact.hpp"
#include "scan_test_support.hpp"

namespace gpukit::primitives {
namespace {

using testing::poisoned;
using testing::same_elements;
using testing::scan_sizes;

Context cpu_context(int threads = 0) {
  Context context;
  context.backend = Backend::cpu;
  context.cpu_threads = threads;
  return context;
}

constexpr KeepPredicate kPredicates[] = {KeepPredicate::nonzero, KeepPredicate::positive,
                                         KeepPredicate::negative, KeepPredicate::finite};

/// Values that exercise every predicate: zeros, both signs, and for floats -0.0, Inf and NaN.
template <class T>
std::vector<T> make_compact_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (T& v : x) {
    const std::uint64_t r = rng();
    switch (r % 8) {
      case 0:
        v = T(0);
        break;
      case 1:
        if constexpr (std::is_floating_point_v<T>) {
          v = (r >> 8) % 3 == 0   ? std::numeric_limits<T>::quiet_NaN()
              : (r >> 8) % 3 == 1 ? -std::numeric_limits<T>::infinity()
                                  : T(-0.0);
        } else {
          v = std::numeric_limits<T>::max();
        }
        break;
      default:
        v = static_cast<T>(static_cast<std::int64_t>(r >> 3) % 1000 -
                           (std::is_signed_v<T> ? 500 : 0));
    }
  }
  return x;
}

template <class T>
class CompactCpuTyped : public ::testing::Test {};
using CompactTypes = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, float, double>;
TYPED_TEST_SUITE(CompactCpuTyped, CompactTypes);

TYPED_TEST(CompactCpuTyped, EveryPredicateMatchesTheSequentialReference) {
  using T = TypeParam;
  const std::uint64_t seed = std::random_device{}();
  for (const std::int64_t n : scan_sizes(/*large=*/false)) {
    const auto x = make_compact_data<T>(n, seed + static_cast<std::uint64_t>(n));
    for (const KeepPredicate keep : kPredicates) {
      // Poisoned outputs: a kept element that is never written (a zero, say) shows as poison.
      std::vector<T> expected = poisoned<T>(x.size()), actual = poisoned<T>(x.size());
      const std::int64_t expected_count = compact_sequential<T>(x, expected, keep);
      const std::int64_t count = compact<T>(cpu_context(3), x, actual, keep);
      ASSERT_EQ(count, expected_count) << keep_predicate_name(keep) << " n=" << n;
      expected.resize(static_cast<std::size_t>(count));
      actual.resize(static_cast<std::size_t>(count));
      EXPECT_TRUE(same_elements(expected, actual))
          << keep_predicate_name(keep) << " n=" << n << " seed=" << seed;
    }
  }
}

TEST(CompactCpu, AllKeptNoneKeptAndAlternating) {
  for (const std::int64_t n : {1, 4096, 200001}) {
    std::vector<std::int32_t> ones(static_cast<std::size_t>(n), 1), zeros(ones.size(), 0),
        alternating(ones.size());
    for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = int(i % 2) * int(i);
    const std::vector<std::int32_t> poison = poisoned<std::int32_t>(ones.size());
    std::vector<std::int32_t> out = poison;
    EXPECT_EQ(compact<std::int32_t>(cpu_context(), ones, out, KeepPredicate::nonzero), n);
    EXPECT_EQ(out, ones);
    out = poison;
    EXPECT_EQ(compact<std::int32_t>(cpu_context(), zeros, out, KeepPredicate::nonzero), 0);
    // All zeros kept (every zero is finite): an unwritten zero would show as poison.
    out = poison;
    EXPECT_EQ(compact<std::int32_t>(cpu_context(), zeros, out, KeepPredicate::finite), n);
    EXPECT_EQ(out, zeros);
    out = poison;
    const std::int64_t kept =
        compact<std::int32_t>(cpu_context(), alternating, out, KeepPredicate::positive);
    ASSERT_EQ(kept, n / 2);
    for (std::int64_t i = 0; i < kept; ++i) ASSERT_EQ(out[std::size_t(i)], 2 * i + 1);
  }
}

TEST(CompactCpu, PredicatesOnEdgeValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0.0, -0.0, 1.0, -1.0, nan, inf, -inf};
  std::vector<double> out(x.size());
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::nonzero), 5);  // NaN is nonzero
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::positive), 2);
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::negative), 2);
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::finite), 4);
  // The same through the CPU backend, element by element into a poisoned output: the signed
  // zeros kept by `finite` keep their signs.
  std::vector<double> finite = poisoned<double>(x.size());
  ASSERT_EQ(compact<double>(cpu_context(), x, finite, KeepPredicate::finite), 4);
  finite.resize(4);
  EXPECT_TRUE(same_elements(std::vector<double>{0.0, -0.0, 1.0, -1.0}, finite));
  const std::vector<std::uint32_t> u = {0, 1, 4000000000u};
  std::vector<std::uint32_t> uout(u.size());
  EXPECT_EQ(compact_sequential<std::uint32_t>(u, uout, KeepPredicate::negative), 0);
  EXPECT_EQ(compact_sequential<std::uint32_t>(u, uout, KeepPredicate::finite), 3);
}

TEST(CompactCpu, GenericPredicateAndArgumentErrors) {
  std::vector<int> x(100000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = int(i);
  std::vector<int> out = poisoned<int>(x.size());
  const std::int64_t kept = compact_if<int>(
      x, out, [](int v) { return v % 7 == 3; }, /*threads=*/2);
  ASSERT_EQ(kept, 14286);
  for (std::int64_t i = 0; i < kept; ++i) ASSERT_EQ(out[std::size_t(i)], 7 * i + 3);
  std::vector<float> small(10), shorter(9);
  EXPECT_THROW(compact<float>(cpu_context(), small, shorter, KeepPredicate::finite), InvalidInput);
  EXPECT_THROW(compact<float>(cpu_context(), std::span<const float>(small.data(), 5),
                              std::span<float>(small.data() + 2, 8), KeepPredicate::finite),
               InvalidInput);
  EXPECT_THROW(parse_keep_predicate("odd"), InvalidInput);
}

}  // namespace
}  // namespace gpukit::primitives
