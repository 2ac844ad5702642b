// Stream compaction through the public API, each scenario written once and run on every backend
// (Cpu/... and Cuda/...; the CUDA backend moves host data through its pinned chunks): every
// predicate and type against the sequential reference at awkward sizes, all-kept / none-kept /
// alternating inputs, the predicates' edge values, and argument errors. CPU only: the sequential
// reference on edge values, the generic predicate, the predicate names. The CUDA variants one by
// one: compact_gpu_test.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/compact.hpp"
#include "scan_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::primitives {
namespace {

using gpukit::testing::EveryBackendTest;
using gpukit::testing::EveryBackendTypedTest;
using gpukit::testing::TestSeed;
using testing::poisoned;
using testing::same_elements;
using testing::scan_sizes;

constexpr KeepPredicate kPredicates[] = {KeepPredicate::nonzero, KeepPredicate::positive,
                                         KeepPredicate::negative, KeepPredicate::finite};

/// Values that exercise every predicate: zeros, both signs, for floats -0.0, -Inf and NaN, for
/// integers the type's extremes.
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
          v = (r >> 8) % 2 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
        }
        break;
      default:
        v = static_cast<T>(static_cast<std::int64_t>(r >> 3) % 1000 -
                           (std::is_signed_v<T> ? 500 : 0));
    }
  }
  return x;
}

template <class Case>
class CompactTest : public EveryBackendTypedTest<Case> {};
TYPED_TEST_SUITE_P(CompactTest);

TYPED_TEST_P(CompactTest, EveryPredicateMatchesTheSequentialReference) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  // On CUDA up to 2^24 elements: more than one of the host path's chunks.
  const bool large = TypeParam::backend == Backend::cuda && !gpukit::testing::quick_tests();
  for (const std::int64_t n : scan_sizes(large, seed.value())) {
    const auto x = make_compact_data<T>(n, seed.value() + static_cast<std::uint64_t>(n));
    for (const KeepPredicate keep : kPredicates) {
      // Poisoned outputs: a kept element that is never written (a zero, say) shows as poison.
      std::vector<T> expected = poisoned<T>(x.size()), actual = poisoned<T>(x.size());
      const std::int64_t expected_count = compact_sequential<T>(x, expected, keep);
      const std::int64_t count = compact<T>(this->context(/*cpu_threads=*/3), x, actual, keep);
      ASSERT_EQ(count, expected_count) << keep_predicate_name(keep) << " n=" << n;
      expected.resize(static_cast<std::size_t>(count));
      actual.resize(static_cast<std::size_t>(count));
      EXPECT_TRUE(same_elements(expected, actual)) << keep_predicate_name(keep) << " n=" << n;
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(CompactTest, EveryPredicateMatchesTheSequentialReference);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(CompactTest, std::int32_t, std::int64_t, std::uint32_t, float,
                                    double);

class CompactScenarios : public EveryBackendTest {};

// ones: all kept; zeros: none kept as nonzero, all kept as finite (an unwritten zero would show as
// poison); alternating 0, 1, 0, 3, 0, 5, ...: the odd positions kept, in order.
template <class T>
void check_all_kept_none_kept_and_alternating(const Context& context, std::int64_t n) {
  SCOPED_TRACE(::testing::Message() << gpukit::testing::element_name<T>() << " n=" << n);
  std::vector<T> ones(static_cast<std::size_t>(n), T(1)), zeros(ones.size(), T(0)),
      alternating(ones.size());
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = static_cast<T>((i % 2) * i);
  const std::vector<T> poison = poisoned<T>(ones.size());
  std::vector<T> out = poison;
  EXPECT_EQ(compact<T>(context, ones, out, KeepPredicate::nonzero), n);
  EXPECT_TRUE(same_elements(ones, out));
  out = poison;
  EXPECT_EQ(compact<T>(context, zeros, out, KeepPredicate::nonzero), 0);
  out = poison;
  EXPECT_EQ(compact<T>(context, zeros, out, KeepPredicate::finite), n);
  EXPECT_TRUE(same_elements(zeros, out));
  for (const KeepPredicate keep : {KeepPredicate::nonzero, KeepPredicate::positive}) {
    out = poison;
    const std::int64_t kept = compact<T>(context, alternating, out, keep);
    ASSERT_EQ(kept, n / 2) << keep_predicate_name(keep);
    for (std::int64_t i = 0; i < kept; ++i) {
      ASSERT_EQ(out[std::size_t(i)], static_cast<T>(2 * i + 1))
          << keep_predicate_name(keep) << " i=" << i;
    }
  }
}

TEST_P(CompactScenarios, AllKeptNoneKeptAndAlternating) {
  std::vector<std::int64_t> sizes = {1, 4096, 4097, 200001};
  // On CUDA, 2^25 + 5 elements: two full chunks of the host path and a ragged one.
  if (GetParam() == Backend::cuda) {
    sizes.push_back((std::int64_t{1} << (gpukit::testing::quick_tests() ? 17 : 25)) + 5);
  }
  for (const std::int64_t n : sizes) {
    check_all_kept_none_kept_and_alternating<std::int32_t>(context(), n);
    check_all_kept_none_kept_and_alternating<float>(context(), n);
  }
}

TEST_P(CompactScenarios, PredicatesOnEdgeValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0.0, -0.0, 1.0, -1.0, nan, inf, -inf};
  // Element by element into a poisoned output: the signed zeros kept by `finite` keep their
  // signs, NaN is nonzero, neither zero is positive or negative.
  const std::pair<KeepPredicate, std::vector<double>> cases[] = {
      {KeepPredicate::nonzero, {1.0, -1.0, nan, inf, -inf}},
      {KeepPredicate::positive, {1.0, inf}},
      {KeepPredicate::negative, {-1.0, -inf}},
      {KeepPredicate::finite, {0.0, -0.0, 1.0, -1.0}},
  };
  for (const auto& [keep, expected] : cases) {
    std::vector<double> out = poisoned<double>(x.size());
    const std::int64_t kept = compact<double>(context(), x, out, keep);
    ASSERT_EQ(kept, static_cast<std::int64_t>(expected.size())) << keep_predicate_name(keep);
    out.resize(expected.size());
    EXPECT_TRUE(same_elements(expected, out)) << keep_predicate_name(keep);
  }
  const std::vector<std::uint32_t> u = {0, 1, 4000000000u};
  std::vector<std::uint32_t> uout = poisoned<std::uint32_t>(u.size());
  EXPECT_EQ(compact<std::uint32_t>(context(), u, uout, KeepPredicate::negative), 0);
  EXPECT_EQ(compact<std::uint32_t>(context(), u, uout, KeepPredicate::finite), 3);
  EXPECT_EQ(uout, u);
}

TEST_P(CompactScenarios, RefusesShortAndOverlappingOutputs) {
  std::vector<float> small(10), shorter(9);
  EXPECT_THROW(compact<float>(context(), small, shorter, KeepPredicate::finite), InvalidInput);
  EXPECT_THROW(compact<float>(context(), std::span<const float>(small.data(), 5),
                              std::span<float>(small.data() + 2, 8), KeepPredicate::finite),
               InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(CompactScenarios);

// --- CPU only: the reference itself, the generic predicate, the names ---------------------------

TEST(CompactSequential, PredicatesOnEdgeValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0.0, -0.0, 1.0, -1.0, nan, inf, -inf};
  std::vector<double> out(x.size());
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::nonzero), 5);  // NaN is nonzero
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::positive), 2);
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::negative), 2);
  EXPECT_EQ(compact_sequential<double>(x, out, KeepPredicate::finite), 4);
  const std::vector<std::uint32_t> u = {0, 1, 4000000000u};
  std::vector<std::uint32_t> uout(u.size());
  EXPECT_EQ(compact_sequential<std::uint32_t>(u, uout, KeepPredicate::negative), 0);
  EXPECT_EQ(compact_sequential<std::uint32_t>(u, uout, KeepPredicate::finite), 3);
}

TEST(CompactIf, GenericPredicateAndUnknownPredicateNames) {
  std::vector<int> x(100000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = int(i);
  std::vector<int> out = poisoned<int>(x.size());
  const std::int64_t kept = compact_if<int>(
      x, out, [](int v) { return v % 7 == 3; }, /*threads=*/2);
  ASSERT_EQ(kept, 14286);
  for (std::int64_t i = 0; i < kept; ++i) ASSERT_EQ(out[std::size_t(i)], 7 * i + 3);
  EXPECT_THROW(parse_keep_predicate("odd"), InvalidInput);
}

}  // namespace
}  // namespace gpukit::primitives
