// The --check comparisons of reduce, scan and compact: each passes the reference itself and a
// result within its bound, and fails a result just outside it, on hand-made inputs whose bound is
// computed here from the formula in check.hpp.

#include "gpukit/primitives/check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gpukit::primitives {
namespace {

TEST(ReduceCheck, IntegersMustBeEqual) {
  const std::vector<std::int32_t> data = {1, -2, 3, 2147483647, 5};
  const ReduceCheck<std::int32_t> ok =
      check_reduce_result<std::int32_t>(data, ReduceOp::sum, 2147483654);
  EXPECT_EQ(ok.reference, 2147483654);  // widened to int64: no overflow
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.difference, 0.0);
  const ReduceCheck<std::int32_t> off =
      check_reduce_result<std::int32_t>(data, ReduceOp::sum, 2147483655);
  EXPECT_FALSE(off.passed);
  EXPECT_EQ(off.difference, 1.0);
}

TEST(ReduceCheck, FloatSumsPassWithinTheTreesBoundAndFailBeyondIt) {
  const std::vector<float> data(1000, 1.0f);
  // One level (<= 16384 elements): 26 eps(float) sum|x|.
  const double bound = 26.0 * std::numeric_limits<float>::epsilon() * 1000;
  const ReduceCheck<float> exact = check_reduce_result<float>(data, ReduceOp::sum, 1000.0f);
  EXPECT_TRUE(exact.passed);
  EXPECT_EQ(exact.reference, 1000.0f);
  EXPECT_EQ(exact.bound, bound);
  const float inside = 1000.0f + 0.9f * static_cast<float>(bound);
  EXPECT_TRUE(check_reduce_result<float>(data, ReduceOp::sum, inside).passed);
  const float outside = 1000.0f + 1.5f * static_cast<float>(bound);
  const ReduceCheck<float> off = check_reduce_result<float>(data, ReduceOp::sum, outside);
  EXPECT_FALSE(off.passed);
  EXPECT_EQ(off.difference, double(outside) - 1000.0);
}

TEST(ReduceCheck, TheBoundGrowsALevelPer16384FoldOfTheSize) {
  const std::vector<double> one_tile(16384, 1.0), two_levels(16385, 1.0);
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_EQ(check_reduce_result<double>(one_tile, ReduceOp::sum, 16384.0).bound,
            26.0 * 1 * eps * 16384);
  EXPECT_EQ(check_reduce_result<double>(two_levels, ReduceOp::sum, 16385.0).bound,
            26.0 * 2 * eps * 16385);
}

TEST(ReduceCheck, ANanPassesOnlyWhereTheReferenceIsNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> with_nan = {1.0, nan, 2.0};
  EXPECT_TRUE(check_reduce_result<double>(with_nan, ReduceOp::sum, nan).passed);
  EXPECT_FALSE(check_reduce_result<double>(with_nan, ReduceOp::sum, 3.0).passed);
  const std::vector<double> finite = {1.0, 2.0};
  EXPECT_FALSE(check_reduce_result<double>(finite, ReduceOp::sum, nan).passed);
}

TEST(ScanCheck, NamesTheFirstElementOutsideItsBound) {
  const std::vector<double> input(10, 1.0);
  std::vector<double> result(10);
  for (std::size_t i = 0; i < result.size(); ++i) result[i] = double(i + 1);
  const ScanCheck exact =
      check_scan_result<double>(input, result, ScanOp::sum, ScanKind::inclusive);
  EXPECT_TRUE(exact.passed());
  EXPECT_EQ(exact.metrics.max_abs, 0.0);
  // Element 6 (prefix of |x| = 7): bound 26 eps 7.
  const double bound = 26.0 * std::numeric_limits<double>::epsilon() * 7;
  result[6] = 7.0 + 0.5 * bound;
  EXPECT_TRUE(check_scan_result<double>(input, result, ScanOp::sum, ScanKind::inclusive).passed());
  result[8] = 9.1;
  result[6] = 7.0 + 4 * bound;
  const ScanCheck off = check_scan_result<double>(input, result, ScanOp::sum, ScanKind::inclusive);
  EXPECT_EQ(off.first_bad, 6);
  EXPECT_NEAR(off.metrics.max_abs, 0.1, 1e-12);  // the metrics cover every element
}

TEST(ScanCheck, AnExclusiveOutputsBoundExcludesItsOwnElement) {
  // Exclusive sum of {1, 1000}: y[1] = 1 with a prefix of |x| of 1, not 1001.
  const std::vector<double> input = {1.0, 1000.0};
  const double eps = std::numeric_limits<double>::epsilon();
  const std::vector<double> inside = {0.0, 1.0 + 20 * eps}, outside = {0.0, 1.0 + 30 * eps};
  EXPECT_TRUE(check_scan_result<double>(input, inside, ScanOp::sum, ScanKind::exclusive).passed());
  EXPECT_EQ(check_scan_result<double>(input, outside, ScanOp::sum, ScanKind::exclusive).first_bad,
            1);
}

TEST(ScanCheck, MinMaxAndIntegersMustBeEqual) {
  const std::vector<float> input = {3.0f, 1.0f, 2.0f};
  std::vector<float> result = {3.0f, 1.0f, 1.0f};
  EXPECT_TRUE(check_scan_result<float>(input, result, ScanOp::min, ScanKind::inclusive).passed());
  result[2] = std::nextafter(1.0f, 2.0f);
  EXPECT_EQ(check_scan_result<float>(input, result, ScanOp::min, ScanKind::inclusive).first_bad, 2);
  const std::vector<std::uint32_t> ints = {1, 2, 3};
  const std::vector<std::uint32_t> good = {1, 3, 6}, bad = {1, 4, 6};
  EXPECT_TRUE(
      check_scan_result<std::uint32_t>(ints, good, ScanOp::sum, ScanKind::inclusive).passed());
  EXPECT_EQ(check_scan_result<std::uint32_t>(ints, bad, ScanOp::sum, ScanKind::inclusive).first_bad,
            1);
  EXPECT_THROW(check_scan_result<std::uint32_t>(ints, std::span<const std::uint32_t>(good).first(2),
                                                ScanOp::sum, ScanKind::inclusive),
               InvalidInput);
}

TEST(CompactCheck, ComparesTheKeptElementsBitForBit) {
  const std::vector<double> input = {1.0, -0.0, 2.0, 0.0, -3.0};
  const std::vector<double> kept = {1.0, 2.0, -3.0};
  const CompactCheck ok = check_compact_result<double>(input, kept, KeepPredicate::nonzero);
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.reference_kept, 3);
  const std::vector<double> finite = {1.0, -0.0, 2.0, 0.0, -3.0};
  std::vector<double> signless = finite;
  signless[1] = 0.0;  // -0.0 kept as +0.0: equal as numbers, not as bits
  EXPECT_FALSE(check_compact_result<double>(input, signless, KeepPredicate::finite).passed);
  EXPECT_TRUE(check_compact_result<double>(input, finite, KeepPredicate::finite).passed);
  const std::vector<double> short_by_one = {1.0, 2.0};
  EXPECT_FALSE(check_compact_result<double>(input, short_by_one, KeepPredicate::nonzero).passed);
}

}  // namespace
}  // namespace gpukit::primitives
