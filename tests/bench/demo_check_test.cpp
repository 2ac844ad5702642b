// The demos' float checks (`gpukit demo`): against independent long double sequential sums
// within derived bounds, passing correct results and failing wrong ones on the CPU backend,
// where they used to compare the CPU backend with itself.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bench/black_scholes_seed_demo.hpp"
#include "bench/reduce_demo.hpp"
#include "bench/scan_demo.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::bench {
namespace {

const Context kCpu = Context::cpu(2);

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 2 - 1);
  return x;
}

TEST(SummationErrorBound, IsHighamsGammaTimesTheAbsoluteSum) {
  const double u = 0x1p-24;
  EXPECT_DOUBLE_EQ(summation_error_bound<float>(26, 1000), 26 * u / (1 - 26 * u) * 1000);
  EXPECT_EQ(summation_error_bound<float>(0, 5), 0.0);
  EXPECT_TRUE(std::isinf(summation_error_bound<float>(1 << 24, 1)));
}

TEST(ReduceDemoCheck, PassesTheTreeSumAndFailsAWrongOne) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{16385}, std::size_t{1} << 20}) {
    const std::vector<float> x = random_floats(n, 7 + n);
    const float sum = primitives::reduce<float>(kCpu, x, primitives::ReduceOp::sum);
    const FloatSumCheck ok = check_float_sum(x, sum);
    EXPECT_TRUE(ok.passed) << n << ": " << ok.difference << " bound " << ok.bound;
    EXPECT_GT(ok.bound, 0.0);
    // Off by one element (a dropped or doubled term) or by a NaN: fails.
    EXPECT_FALSE(check_float_sum(x, sum + x[n / 2] + 2 * static_cast<float>(ok.bound)).passed);
    EXPECT_FALSE(check_float_sum(x, std::numeric_limits<float>::quiet_NaN()).passed);
  }
  const ReduceDemo demo = run_reduce_demo(kCpu, 1 << 18, 2007);
  EXPECT_TRUE(demo.passed());
  EXPECT_TRUE(demo.float_check.passed);
}

TEST(ScanDemoCheck, PassesTheCanonicalScanAndFailsAWrongOne) {
  const std::size_t n = (std::size_t{1} << 20) + 3;  // several groups of 32 tiles
  const std::vector<float> x = random_floats(n, 11);
  std::vector<float> y(n, std::numeric_limits<float>::quiet_NaN());
  primitives::scan<float>(kCpu, x, y, primitives::ScanOp::sum, primitives::ScanKind::inclusive);
  const FloatScanCheck ok = check_float_scan(x, y);
  EXPECT_TRUE(ok.passed) << "worst " << ok.worst_ratio << " at " << ok.worst_index;
  // A term dropped from one output, a NaN, a length mismatch: each fails.
  std::vector<float> wrong = y;
  wrong[5] -= x[5];
  EXPECT_FALSE(check_float_scan(x, wrong).passed);
  wrong = y;
  wrong[n - 1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(check_float_scan(x, wrong).passed);
  EXPECT_FALSE(check_float_scan(x, std::span<const float>(y.data(), n - 1)).passed);
  const ScanDemo demo = run_scan_demo(kCpu, 1 << 18, 2011);
  EXPECT_TRUE(demo.passed());
}

TEST(BlackScholesDemoCheck, PassesAgainstTheLongDoubleReference) {
  const BlackScholesSeedDemo demo = run_black_scholes_seed_demo(kCpu, 100003, 2008);
  EXPECT_TRUE(demo.check.passed) << demo.check.worst_ratio;
  EXPECT_GT(demo.check.worst_ratio, 0.0);  // float prices do differ from the reference
  EXPECT_LT(demo.error.max_abs, 1e-4);     // the seed's own criterion still holds
}

}  // namespace
}  // namespace gpukit::bench
