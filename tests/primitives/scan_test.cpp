// The scan through the public API, each scenario written once and run on every backend (Cpu/...
// and Cuda/...; the CUDA backend moves host data through its pinned chunks and carries tile
// prefixes between them): every type x op x kind against the sequential reference at awkward
// sizes, in place, the same bits on every thread count and backend, the canonical tree's error
// bound, the NaN and signed-zero policy, the overflow rule, wrapping products and argument errors.
// CPU only: the sequential reference on hand-checked cases and the generic operator. The CUDA
// variants one by one and scan_on_device: scan_gpu_test.cpp.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"
#include "scan_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::primitives {
namespace {

using gpukit::testing::EveryBackendTest;
using gpukit::testing::EveryBackendTypedTest;
using gpukit::testing::quick_tests;
using gpukit::testing::TestSeed;
using testing::all_scan_ops;
using testing::make_scan_data;
using testing::poisoned;
using testing::same_elements;
using testing::scan_sizes;

template <class T>
std::vector<T> sequential(const std::vector<T>& x, ScanOp op, ScanKind kind) {
  std::vector<T> y = poisoned<T>(x.size());
  scan_sequential<T>(x, y, op, kind);
  return y;
}

template <class T>
std::vector<T> scanned(const Context& context, const std::vector<T>& x, ScanOp op, ScanKind kind) {
  std::vector<T> y = poisoned<T>(x.size());
  scan<T>(context, x, y, op, kind);
  return y;
}

constexpr ScanKind kKinds[] = {ScanKind::inclusive, ScanKind::exclusive};

// --- typed scenarios: every element type on every backend ---------------------------------------

template <class Case>
class ScanTest : public EveryBackendTypedTest<Case> {};
TYPED_TEST_SUITE_P(ScanTest);

TYPED_TEST_P(ScanTest, EveryOpAndKindMatchesTheSequentialReference) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  const bool on_cuda = TypeParam::backend == Backend::cuda;
  std::vector<std::int64_t> sizes = scan_sizes(/*large=*/on_cuda && !quick_tests(), seed.value());
  // On CUDA, more than two of the host path's 2^24-element chunks.
  if (on_cuda) sizes.push_back((std::int64_t{1} << (quick_tests() ? 17 : 25)) + 3);
  for (const std::int64_t n : sizes) {
    for (const ScanOp op : all_scan_ops()) {
      const auto x = make_scan_data<T>(n, op, seed.value() + static_cast<std::uint64_t>(n));
      for (const ScanKind kind : kKinds) {
        EXPECT_TRUE(same_elements(sequential(x, op, kind), scanned(this->context(), x, op, kind)))
            << "n=" << n << " op=" << scan_op_name(op) << " " << scan_kind_name(kind);
      }
    }
  }
}

TYPED_TEST_P(ScanTest, InPlaceEqualsOutOfPlace) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{4097}, std::int64_t{50001}}) {
    for (const ScanKind kind : kKinds) {
      auto x = make_scan_data<T>(n, ScanOp::sum, seed.value());
      const auto expected = sequential(x, ScanOp::sum, kind);
      scan<T>(this->context(), x, x, ScanOp::sum, kind);
      EXPECT_TRUE(same_elements(expected, x)) << scan_kind_name(kind) << " n=" << n;
    }
  }
}

// One bracketing everywhere: every backend and thread count gives the bits of the CPU on one
// thread, run after run. For floats the data have mixed magnitudes (min/max-style data), so the
// order of additions changes the rounding and equal bits mean the same bracketing.
TYPED_TEST_P(ScanTest, SumsAreBitwiseTheSameOnEveryBackendAndRun) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  const std::int64_t n = (std::int64_t{1} << (quick_tests() ? 16 : 22)) + 12345;
  const auto x =
      make_scan_data<T>(n, std::is_floating_point_v<T> ? ScanOp::max : ScanOp::sum, seed.value());
  for (const ScanKind kind : kKinds) {
    SCOPED_TRACE(scan_kind_name(kind));
    const auto one_thread = scanned(Context::cpu(1), x, ScanOp::sum, kind);
    if constexpr (std::is_floating_point_v<T>) {
      EXPECT_FALSE(same_elements(one_thread, sequential(x, ScanOp::sum, kind)))
          << "the data should be sensitive to the order of additions";
    }
    for (const int threads : {0, 2, 3}) {
      EXPECT_TRUE(same_elements(one_thread, scanned(this->context(threads), x, ScanOp::sum, kind)))
          << threads << " CPU threads";
    }
    EXPECT_TRUE(same_elements(one_thread, scanned(this->context(), x, ScanOp::sum, kind)))
        << "a second run";
  }
}

REGISTER_TYPED_TEST_SUITE_P(ScanTest, EveryOpAndKindMatchesTheSequentialReference,
                            InPlaceEqualsOutOfPlace, SumsAreBitwiseTheSameOnEveryBackendAndRun);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(ScanTest, std::int32_t, std::int64_t, std::uint32_t, float,
                                    double);

// --- scenarios with their own types, on every backend -------------------------------------------

class ScanScenarios : public EveryBackendTest {};

TEST_P(ScanScenarios, FloatSumsStayWithinTheCanonicalTreesErrorBound) {
  const TestSeed seed;
  const std::int64_t n = 1 << 18;
  const auto x = make_scan_data<float>(n, ScanOp::max, seed.value());
  const auto y = scanned(context(), x, ScanOp::sum, ScanKind::inclusive);
  const auto reference = sequential(x, ScanOp::sum, ScanKind::inclusive);
  // Each output is a sum along a path of at most 25 in-tile additions and one per earlier tile.
  long double abs_prefix = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    abs_prefix += std::fabs(x[static_cast<std::size_t>(i)]);
    const double steps = 26.0 + double(i / canonical_scan::kTile);
    const double bound = steps * std::numeric_limits<float>::epsilon() * double(abs_prefix);
    ASSERT_LE(std::fabs(double(y[static_cast<std::size_t>(i)]) -
                        double(reference[static_cast<std::size_t>(i)])),
              bound)
        << "i=" << i;
  }
}

TEST_P(ScanScenarios, SumsStartFromPositiveZero) {
  const std::vector<double> x = {-0.0, -0.0, 1.5};
  const auto exclusive = scanned(context(), x, ScanOp::sum, ScanKind::exclusive);
  EXPECT_FALSE(std::signbit(exclusive[0]));
  const auto inclusive = scanned(context(), x, ScanOp::sum, ScanKind::inclusive);
  EXPECT_FALSE(std::signbit(inclusive[0]));  // +0.0 + -0.0, as the seed's loop computes it
  EXPECT_TRUE(same_elements(sequential(x, ScanOp::sum, ScanKind::inclusive), inclusive));
  EXPECT_TRUE(same_elements(sequential(x, ScanOp::sum, ScanKind::exclusive), exclusive));
}

// scan.hpp's policy: a NaN makes every later min/max output the canonical quiet NaN (whatever
// the NaN's sign and payload), -0.0 orders below +0.0, sums follow IEEE. Checked on a short array
// element by element and on arrays of several tiles, where the NaN or the zero of the other sign
// reaches later tiles through the carried prefixes.
template <class T>
void check_nan_and_signed_zero_policy(const Context& context) {
  SCOPED_TRACE(gpukit::testing::element_name<T>());
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  const T qnan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  // A negative NaN with a payload: the outputs must still be the canonical quiet NaN.
  const T odd_nan = std::bit_cast<T>(static_cast<Bits>(std::bit_cast<Bits>(-qnan) | Bits{5}));
  ASSERT_TRUE(std::isnan(odd_nan));

  const std::vector<T> x = {T(2), T(+0.0), T(-0.0), odd_nan, T(-5)};
  const std::vector<T> expected_inclusive_min = {T(2), T(+0.0), T(-0.0), qnan, qnan};
  const std::vector<T> expected_exclusive_min = {inf, T(2), T(+0.0), T(-0.0), qnan};
  const std::vector<T> expected_inclusive_max = {T(2), T(2), T(2), qnan, qnan};
  const std::vector<T> expected_exclusive_max = {-inf, T(2), T(2), T(2), qnan};
  EXPECT_TRUE(
      same_elements(expected_inclusive_min, scanned(context, x, ScanOp::min, ScanKind::inclusive)));
  EXPECT_TRUE(
      same_elements(expected_exclusive_min, scanned(context, x, ScanOp::min, ScanKind::exclusive)));
  EXPECT_TRUE(
      same_elements(expected_inclusive_max, scanned(context, x, ScanOp::max, ScanKind::inclusive)));
  EXPECT_TRUE(
      same_elements(expected_exclusive_max, scanned(context, x, ScanOp::max, ScanKind::exclusive)));
  for (const ScanOp op : {ScanOp::min, ScanOp::max}) {
    for (const ScanKind kind : kKinds) {
      EXPECT_TRUE(same_elements(sequential(x, op, kind), scanned(context, x, op, kind)))
          << scan_op_name(op) << " " << scan_kind_name(kind);
    }
  }

  // Three tiles and a ragged one. +0.0 everywhere, -0.0 at 6000 (tile 1), the odd NaN at 9000
  // (tile 2): min is +0.0 before 6000, -0.0 from 6000, NaN from 9000; max is +0.0, then NaN.
  const std::int64_t n = 3 * canonical_scan::kTile + 17;
  std::vector<T> zeros(static_cast<std::size_t>(n), T(+0.0));
  zeros[6000] = T(-0.0);
  zeros[9000] = odd_nan;
  for (const ScanKind kind : kKinds) {
    SCOPED_TRACE(scan_kind_name(kind));
    const std::size_t shift = kind == ScanKind::exclusive ? 1 : 0;  // output i sees x[0..i-shift]
    std::vector<T> expected_min(zeros.size()), expected_max(zeros.size());
    for (std::size_t i = 0; i < zeros.size(); ++i) {
      expected_min[i] = i < 6000 + shift ? T(+0.0) : i < 9000 + shift ? T(-0.0) : qnan;
      expected_max[i] = i < 9000 + shift ? T(+0.0) : qnan;
    }
    if (shift) expected_min[0] = inf, expected_max[0] = -inf;
    EXPECT_TRUE(same_elements(expected_min, scanned(context, zeros, ScanOp::min, kind)));
    EXPECT_TRUE(same_elements(expected_max, scanned(context, zeros, ScanOp::max, kind)));
    // All -0.0 but one +0.0 at 7000: max turns +0.0 there, min stays -0.0.
    std::vector<T> negative_zeros(zeros.size(), T(-0.0));
    negative_zeros[7000] = T(+0.0);
    for (std::size_t i = 0; i < zeros.size(); ++i) {
      expected_min[i] = T(-0.0);
      expected_max[i] = i < 7000 + shift ? T(-0.0) : T(+0.0);
    }
    if (shift) expected_min[0] = inf, expected_max[0] = -inf;
    EXPECT_TRUE(same_elements(expected_min, scanned(context, negative_zeros, ScanOp::min, kind)));
    EXPECT_TRUE(same_elements(expected_max, scanned(context, negative_zeros, ScanOp::max, kind)));
    // Sums: IEEE, so the NaN stays in every later prefix (its bits are not specified); +Inf and
    // -Inf in the same prefix make a NaN too.
    std::vector<T> ones(zeros.size(), T(1));
    ones[9000] = odd_nan;
    const auto sums = scanned(context, ones, ScanOp::sum, kind);
    for (std::size_t i = 0; i < sums.size(); ++i) {
      ASSERT_EQ(std::isnan(sums[i]), i >= 9000 + shift) << "sum i=" << i;
    }
    ones[9000] = T(1);
    ones[5000] = inf;
    ones[10000] = -inf;
    const auto infinite = scanned(context, ones, ScanOp::sum, kind);
    for (std::size_t i = 5000 + shift; i < 10000 + shift; ++i) ASSERT_EQ(infinite[i], inf) << i;
    for (std::size_t i = 10000 + shift; i < infinite.size(); ++i) {
      ASSERT_TRUE(std::isnan(infinite[i])) << i;
    }
  }
}

TEST_P(ScanScenarios, NanAndSignedZeroPolicyOfMinMaxAndSum) {
  check_nan_and_signed_zero_policy<float>(context());
  check_nan_and_signed_zero_policy<double>(context());
}

// The first overflowing output is named, for the inclusive and the exclusive scan (whose output
// i + 1 holds the inclusive output i).
void expect_overflow_at(const Context& context, const std::vector<std::int32_t>& x, ScanKind kind,
                        const std::string& index) {
  std::vector<std::int32_t> y(x.size());
  try {
    scan<std::int32_t>(context, x, y, ScanOp::sum, kind);
    ADD_FAILURE() << "no overflow reported for " << scan_kind_name(kind);
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("element " + index), std::string::npos) << e.what();
  }
}

TEST_P(ScanScenarios, Int32SumOverflowNamesTheFirstElement) {
  std::vector<std::int32_t> x(20000, 1);
  x[12345] = std::numeric_limits<std::int32_t>::max() - 12344;  // prefix 12345 + that = max + 1
  expect_overflow_at(context(), x, ScanKind::inclusive, "12345");
  expect_overflow_at(context(), x, ScanKind::exclusive, "12346");
  // Later outputs back in range: only the first index matters (tile 2 of 4).
  std::vector<std::int32_t> back(3 * 4096 + 17, 1);
  back[9000] = std::numeric_limits<std::int32_t>::max() - 8999;  // prefix 9000 + that = max + 1
  back[9500] = -5;
  expect_overflow_at(context(), back, ScanKind::inclusive, "9000");
  expect_overflow_at(context(), back, ScanKind::exclusive, "9001");
  // A total that only the exclusive scan never writes.
  std::vector<std::int32_t> last_only(5000, 0);
  last_only.back() = std::numeric_limits<std::int32_t>::max();
  last_only.front() = 1;
  std::vector<std::int32_t> out = poisoned<std::int32_t>(last_only.size());
  EXPECT_NO_THROW(scan<std::int32_t>(context(), last_only, out, ScanOp::sum, ScanKind::exclusive));
  std::vector<std::int32_t> exclusive(last_only.size(), 1);  // 0, then the 1 at the front
  exclusive[0] = 0;
  EXPECT_TRUE(same_elements(exclusive, out));
  EXPECT_THROW(scan<std::int32_t>(context(), last_only, out, ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
  // A clean scan right after an overflow is not reported.
  const std::vector<std::int32_t> ones(back.size(), 1);
  EXPECT_NO_THROW(scanned(context(), ones, ScanOp::sum, ScanKind::inclusive));
}

TEST_P(ScanScenarios, UnsignedSumsOverflowAboveTheMaximumOnly) {
  std::vector<std::uint32_t> x(10000, 0);
  x[0] = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> y = poisoned<std::uint32_t>(x.size());
  EXPECT_NO_THROW(scan<std::uint32_t>(context(), x, y, ScanOp::sum, ScanKind::inclusive));
  // Every prefix is the maximum itself (poison 0xA5A5A5A5 is not).
  EXPECT_TRUE(same_elements(
      std::vector<std::uint32_t>(x.size(), std::numeric_limits<std::uint32_t>::max()), y));
  x[9999] = 1;
  EXPECT_THROW(scan<std::uint32_t>(context(), x, y, ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
}

TEST_P(ScanScenarios, IntegerProductsWrap) {
  const std::vector<std::int32_t> x = {65536, 65536, 3};
  EXPECT_EQ(scanned(context(), x, ScanOp::product, ScanKind::inclusive),
            (std::vector<std::int32_t>{65536, 0, 0}));
  const std::vector<std::int32_t> z = {-2147483647 - 1, -1};
  EXPECT_EQ(scanned(context(), z, ScanOp::product, ScanKind::inclusive),
            (std::vector<std::int32_t>{-2147483647 - 1, -2147483647 - 1}));
}

TEST_P(ScanScenarios, RefusesMismatchedAndPartlyOverlappingOutputs) {
  std::vector<float> x(100, 1.0f), y(99);
  EXPECT_THROW(scan<float>(context(), x, y, ScanOp::sum, ScanKind::inclusive), InvalidInput);
  EXPECT_THROW(scan<float>(context(), std::span<const float>(x.data(), 50),
                           std::span<float>(x.data() + 10, 50), ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(ScanScenarios);

// --- CPU only: the reference itself, the names, the generic operator -----------------------------

TEST(ScanSequential, SeedExample) {
  // Seed 004: the exclusive sum scan of [3 1 7 0 4 1 6 3] is [0 3 4 11 11 15 16 22].
  const std::vector<std::int32_t> x = {3, 1, 7, 0, 4, 1, 6, 3};
  EXPECT_EQ(sequential(x, ScanOp::sum, ScanKind::exclusive),
            (std::vector<std::int32_t>{0, 3, 4, 11, 11, 15, 16, 22}));
  EXPECT_EQ(sequential(x, ScanOp::sum, ScanKind::inclusive),
            (std::vector<std::int32_t>{3, 4, 11, 11, 15, 16, 22, 25}));
  EXPECT_EQ(sequential(x, ScanOp::max, ScanKind::inclusive),
            (std::vector<std::int32_t>{3, 3, 7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(
      sequential(x, ScanOp::min, ScanKind::exclusive),
      (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max(), 3, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(sequential(x, ScanOp::product, ScanKind::inclusive),
            (std::vector<std::int32_t>{3, 3, 21, 0, 0, 0, 0, 0}));
}

TEST(ScanSequential, Int32SumOverflowNamesTheFirstElement) {
  std::vector<std::int32_t> x(20000, 1);
  x[12345] = std::numeric_limits<std::int32_t>::max() - 12344;
  std::vector<std::int32_t> y(x.size());
  for (const ScanKind kind : kKinds) {
    const std::string expected_index = kind == ScanKind::inclusive ? "12345" : "12346";
    try {
      scan_sequential<std::int32_t>(x, y, ScanOp::sum, kind);
      ADD_FAILURE() << "no overflow reported for " << scan_kind_name(kind);
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("element " + expected_index), std::string::npos)
          << e.what();
    }
  }
}

TEST(ScanOpNames, ParseAndUnknownNamesAreRefused) {
  EXPECT_THROW(parse_scan_op("mean"), InvalidInput);
  EXPECT_EQ(parse_scan_op("max"), ScanOp::max);
}

using Matrix2 = std::array<std::uint32_t, 4>;  // row major, arithmetic modulo 2^32

Matrix2 multiply(const Matrix2& a, const Matrix2& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
          a[2] * b[1] + a[3] * b[3]};
}

TEST(ScanWith, NonCommutativeMatrixProductMatchesASequentialFold) {
  const TestSeed seed;
  std::mt19937 rng(static_cast<unsigned>(seed.value()));
  for (const std::int64_t n : {1, 33, 4097, 100003}) {
    std::vector<Matrix2> x(static_cast<std::size_t>(n));
    for (auto& m : x) {
      m = {std::uint32_t(rng() % 7), std::uint32_t(rng() % 7), std::uint32_t(rng() % 7),
           std::uint32_t(rng() % 7)};
    }
    // Shears that do not commute open the array, so order matters from the start.
    x[0] = {1, 1, 0, 1};
    if (n > 1) x[1] = {1, 0, 1, 1};
    if (n > 1) {
      ASSERT_NE(multiply(x[0], x[1]), multiply(x[1], x[0]));
    }
    const Matrix2 identity = {1, 0, 0, 1};
    for (const ScanKind kind : kKinds) {
      std::vector<Matrix2> y = poisoned<Matrix2>(x.size());
      scan_with<Matrix2>(x, y, multiply, identity, kind);
      Matrix2 acc = identity;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (kind == ScanKind::exclusive) {
          ASSERT_EQ(y[i], acc) << "i=" << i;
        }
        acc = multiply(acc, x[i]);
        if (kind == ScanKind::inclusive) {
          ASSERT_EQ(y[i], acc) << "i=" << i;
        }
      }
    }
  }
}

TEST(ScanWith, NoElementPastTheEndReachesTheOperator) {
  // The array lives inside a larger buffer whose tail is poison the operator refuses.
  for (const std::int64_t n : {1, 127, 4095, 4097, 10000}) {
    std::vector<int> buffer(static_cast<std::size_t>(n) + 5000, -1);
    for (std::int64_t i = 0; i < n; ++i) buffer[static_cast<std::size_t>(i)] = int(i % 5);
    std::atomic<bool> saw_poison{false};
    const auto checked_add = [&saw_poison](int a, int b) {
      if (a < 0 || b < 0) saw_poison = true;
      return a + b;
    };
    std::vector<int> y = poisoned<int>(static_cast<std::size_t>(n));
    scan_with<int>(std::span<const int>(buffer.data(), static_cast<std::size_t>(n)), y, checked_add,
                   0, ScanKind::inclusive);
    EXPECT_FALSE(saw_poison) << "an element past n reached the operator; n=" << n;
    for (std::int64_t i = 0, s = 0; i < n; ++i) {  // every element, the leading zero included
      s += int(i % 5);
      ASSERT_EQ(y[static_cast<std::size_t>(i)], s) << "i=" << i << " n=" << n;
    }
    EXPECT_EQ(y.back(), [&] {
      int s = 0;
      for (std::int64_t i = 0; i < n; ++i) s += int(i % 5);
      return s;
    }());
  }
}

}  // namespace
}  // namespace gpukit::primitives
