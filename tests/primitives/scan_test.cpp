// The CPU scan: the sequential reference on hand-checked cases, the CPU backend (canonical tiles
// on OpenMP threads) against it for every type x op x kind at awkward sizes, determinism across
// thread counts, the overflow rule, in place, the generic operator, and argument errors.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"
#include "scan_test_support.hpp"

namespace gpukit::primitives {
namespace {

using testing::all_scan_ops;
using testing::make_scan_data;
using testing::poisoned;
using testing::same_elements;
using testing::scan_sizes;

Context cpu_context(int threads = 0) {
  Context context;
  context.backend = Backend::cpu;
  context.cpu_threads = threads;
  return context;
}

template <class T>
std::vector<T> sequential(const std::vector<T>& x, ScanOp op, ScanKind kind) {
  std::vector<T> y = poisoned<T>(x.size());
  scan_sequential<T>(x, y, op, kind);
  return y;
}

template <class T>
std::vector<T> on_cpu(const std::vector<T>& x, ScanOp op, ScanKind kind, int threads = 0) {
  std::vector<T> y = poisoned<T>(x.size());
  scan<T>(cpu_context(threads), x, y, op, kind);
  return y;
}

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

template <class T>
class ScanCpuTyped : public ::testing::Test {};
using ScanTypes = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, float, double>;
TYPED_TEST_SUITE(ScanCpuTyped, ScanTypes);

TYPED_TEST(ScanCpuTyped, EveryOpAndKindMatchesTheSequentialReference) {
  using T = TypeParam;
  const std::uint64_t seed = std::random_device{}();
  for (const std::int64_t n : scan_sizes(/*large=*/false, seed)) {
    for (const ScanOp op : all_scan_ops()) {
      for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
        const auto x = make_scan_data<T>(n, op, seed + static_cast<std::uint64_t>(n));
        EXPECT_TRUE(same_elements(sequential(x, op, kind), on_cpu(x, op, kind)))
            << "n=" << n << " op=" << scan_op_name(op) << " " << scan_kind_name(kind)
            << " seed=" << seed;
      }
    }
  }
}

TYPED_TEST(ScanCpuTyped, InPlaceEqualsOutOfPlace) {
  using T = TypeParam;
  const std::uint64_t seed = std::random_device{}();
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    auto x = make_scan_data<T>(50001, ScanOp::sum, seed);
    const auto expected = sequential(x, ScanOp::sum, kind);
    scan<T>(cpu_context(), x, x, ScanOp::sum, kind);
    EXPECT_TRUE(same_elements(expected, x)) << scan_kind_name(kind) << " seed=" << seed;
  }
}

TEST(ScanCpu, FloatSumsAreBitwiseEqualForEveryThreadCount) {
  // Mixed magnitudes: here the order of additions changes the rounding, so equal bits mean the
  // same bracketing.
  const std::uint64_t seed = std::random_device{}();
  const auto x = make_scan_data<float>(300007, ScanOp::max, seed);
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    const auto one = on_cpu(x, ScanOp::sum, kind, 1);
    EXPECT_TRUE(same_elements(one, on_cpu(x, ScanOp::sum, kind, 2))) << "seed=" << seed;
    EXPECT_TRUE(same_elements(one, on_cpu(x, ScanOp::sum, kind, 3))) << "seed=" << seed;
    EXPECT_FALSE(same_elements(one, sequential(x, ScanOp::sum, kind)))
        << "the data should be sensitive to the order of additions; seed=" << seed;
  }
}

TEST(ScanCpu, FloatSumsStayWithinTheCanonicalTreesErrorBound) {
  const std::uint64_t seed = std::random_device{}();
  const std::int64_t n = 1 << 18;
  const auto x = make_scan_data<float>(n, ScanOp::max, seed);
  const auto y = on_cpu(x, ScanOp::sum, ScanKind::inclusive);
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
        << "i=" << i << " seed=" << seed;
  }
}

TEST(ScanCpu, SumsStartFromPositiveZero) {
  const std::vector<double> x = {-0.0, -0.0, 1.5};
  const auto exclusive = on_cpu(x, ScanOp::sum, ScanKind::exclusive);
  EXPECT_FALSE(std::signbit(exclusive[0]));
  const auto inclusive = on_cpu(x, ScanOp::sum, ScanKind::inclusive);
  EXPECT_FALSE(std::signbit(inclusive[0]));  // +0.0 + -0.0, as the seed's loop computes it
  EXPECT_TRUE(same_elements(sequential(x, ScanOp::sum, ScanKind::inclusive), inclusive));
}

TEST(ScanCpu, NanAndSignedZeroPolicyOfMinAndMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {2.0f, +0.0f, -0.0f, nan, -5.0f};
  const auto mins = on_cpu(x, ScanOp::min, ScanKind::inclusive);
  EXPECT_EQ(mins[0], 2.0f);
  EXPECT_FALSE(std::signbit(mins[1]));
  EXPECT_TRUE(std::signbit(mins[2]));  // -0.0 orders below +0.0
  EXPECT_TRUE(std::isnan(mins[3]));
  EXPECT_TRUE(std::isnan(mins[4]));  // a NaN stays in every later prefix
  EXPECT_TRUE(same_elements(sequential(x, ScanOp::min, ScanKind::inclusive), mins));
  const auto maxs = on_cpu(x, ScanOp::max, ScanKind::exclusive);
  EXPECT_EQ(maxs[0], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(maxs[4]));
}

TEST(ScanCpu, Int32SumOverflowNamesTheFirstElement) {
  std::vector<std::int32_t> x(20000, 1);
  x[12345] = std::numeric_limits<std::int32_t>::max() - 12344;  // prefix 12345 + that = max + 1
  std::vector<std::int32_t> y(x.size());
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    const std::string expected_index = kind == ScanKind::inclusive ? "12345" : "12346";
    for (auto run : {+[](std::span<const std::int32_t> in, std::span<std::int32_t> out,
                         ScanKind k) { scan_sequential(in, out, ScanOp::sum, k); },
                     +[](std::span<const std::int32_t> in, std::span<std::int32_t> out,
                         ScanKind k) { scan(cpu_context(), in, out, ScanOp::sum, k); }}) {
      try {
        run(x, y, kind);
        ADD_FAILURE() << "no overflow reported for " << scan_kind_name(kind);
      } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("element " + expected_index), std::string::npos)
            << e.what();
      }
    }
  }
  // The same values as int64, and a total that only the exclusive scan never writes.
  std::vector<std::int32_t> last_only(5000, 0);
  last_only.back() = std::numeric_limits<std::int32_t>::max();
  last_only.front() = 1;
  std::vector<std::int32_t> out = poisoned<std::int32_t>(last_only.size());
  EXPECT_NO_THROW(
      scan<std::int32_t>(cpu_context(), last_only, out, ScanOp::sum, ScanKind::exclusive));
  std::vector<std::int32_t> exclusive(last_only.size(), 1);  // 0, then the 1 at the front
  exclusive[0] = 0;
  EXPECT_TRUE(same_elements(exclusive, out));
  EXPECT_THROW(scan<std::int32_t>(cpu_context(), last_only, out, ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
}

TEST(ScanCpu, UnsignedSumsOverflowAboveTheMaximumOnly) {
  std::vector<std::uint32_t> x(10000, 0);
  x[0] = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> y = poisoned<std::uint32_t>(x.size());
  EXPECT_NO_THROW(scan<std::uint32_t>(cpu_context(), x, y, ScanOp::sum, ScanKind::inclusive));
  // Every prefix is the maximum itself (poison 0xA5A5A5A5 is not).
  EXPECT_TRUE(same_elements(
      std::vector<std::uint32_t>(x.size(), std::numeric_limits<std::uint32_t>::max()), y));
  x[9999] = 1;
  EXPECT_THROW(scan<std::uint32_t>(cpu_context(), x, y, ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
}

TEST(ScanCpu, IntegerProductsWrap) {
  const std::vector<std::int32_t> x = {65536, 65536, 3};
  const auto y = on_cpu(x, ScanOp::product, ScanKind::inclusive);
  EXPECT_EQ(y, (std::vector<std::int32_t>{65536, 0, 0}));
  const std::vector<std::int32_t> z = {-2147483647 - 1, -1};
  EXPECT_EQ(on_cpu(z, ScanOp::product, ScanKind::inclusive),
            (std::vector<std::int32_t>{-2147483647 - 1, -2147483647 - 1}));
}

TEST(ScanCpu, RefusesMismatchedAndPartlyOverlappingOutputs) {
  std::vector<float> x(100, 1.0f), y(99);
  EXPECT_THROW(scan<float>(cpu_context(), x, y, ScanOp::sum, ScanKind::inclusive), InvalidInput);
  EXPECT_THROW(scan<float>(cpu_context(), std::span<const float>(x.data(), 50),
                           std::span<float>(x.data() + 10, 50), ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
  EXPECT_THROW(parse_scan_op("mean"), InvalidInput);
  EXPECT_EQ(parse_scan_op("max"), ScanOp::max);
}

// --- the generic operator ----------------------------------------------------------------------

using Matrix2 = std::array<std::uint32_t, 4>;  // row major, arithmetic modulo 2^32

Matrix2 multiply(const Matrix2& a, const Matrix2& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
          a[2] * b[1] + a[3] * b[3]};
}

TEST(ScanWith, NonCommutativeMatrixProductMatchesASequentialFold) {
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
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
    for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
      std::vector<Matrix2> y = poisoned<Matrix2>(x.size());
      scan_with<Matrix2>(x, y, multiply, identity, kind);
      Matrix2 acc = identity;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (kind == ScanKind::exclusive) {
          ASSERT_EQ(y[i], acc) << "i=" << i << " seed=" << seed;
        }
        acc = multiply(acc, x[i]);
        if (kind == ScanKind::inclusive) {
          ASSERT_EQ(y[i], acc) << "i=" << i << " seed=" << seed;
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
