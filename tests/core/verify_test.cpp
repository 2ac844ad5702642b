#include "gpukit/core/verify.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace gpukit {
namespace {

TEST(Compare, MetricsMatchHandComputedValues) {
  const std::vector<double> ref = {1.0, -2.0, 4.0};
  const std::vector<float> got = {1.5f, -2.0f, 3.0f};
  const ErrorMetrics m = compare<double, float>(ref, got);
  EXPECT_EQ(m.count, 3u);
  EXPECT_DOUBLE_EQ(m.relative_l1, (0.5 + 0 + 1) / 7.0);
  EXPECT_DOUBLE_EQ(m.relative_l2, std::sqrt((0.25 + 1) / 21.0));
  EXPECT_DOUBLE_EQ(m.max_abs, 1.0);
}

TEST(Compare, IdenticalInputsGiveZero) {
  const std::vector<double> v = {3.0, 1e-30, -7.0};
  const ErrorMetrics m = compare<double, double>(v, v);
  EXPECT_EQ(m.relative_l1, 0.0);
  EXPECT_EQ(m.max_abs, 0.0);
}

TEST(Compare, NaNNeverPasses) {
  const std::vector<double> ref = {1.0, 2.0};
  const std::vector<double> got = {1.0, std::numeric_limits<double>::quiet_NaN()};
  const ErrorMetrics m = compare<double, double>(ref, got);
  EXPECT_TRUE(std::isnan(m.max_abs));
  EXPECT_TRUE(std::isnan(m.relative_l1));
  EXPECT_FALSE(m.max_abs <= 1.0);
  // A NaN before finite differences stays: a poisoned element nobody wrote cannot hide behind
  // the elements after it.
  const std::vector<double> nan_first = {std::numeric_limits<double>::quiet_NaN(), 2.5};
  EXPECT_TRUE(std::isnan(compare<double, double>(ref, nan_first).max_abs));
}

TEST(Compare, LengthMismatchIsInvalidInput) {
  const std::vector<double> a = {1.0}, b = {1.0, 2.0};
  EXPECT_THROW((compare<double, double>(a, b)), InvalidInput);
}

}  // namespace
}  // namespace gpukit
