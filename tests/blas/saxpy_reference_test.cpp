// The reference itself: hand-worked cases where the two roundings differ, the tie that a plain
// wider-type sum gets wrong, specials, and a check that catches a wrong element (no vacuous pass).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/core/error.hpp"
#include "saxpy_test_support.hpp"

namespace gpukit::blas {
namespace {

using testing::same_bits;

template <class T>
class SaxpyReferenceTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SaxpyReferenceTest, ElementTypes);

TYPED_TEST(SaxpyReferenceTest, FusedAndSeparateDifferWhereTheProductIsInexact) {
  using T = TypeParam;
  // a = x = 1 + 2^-k with 2k > p (p = 24 or 53): a x = 1 + 2^(1-k) + 2^-2k exactly, and 2^-2k is
  // less than half an ulp of 1, so rounding the product first loses it. y = -(1 + 2^(1-k)).
  constexpr int k = std::numeric_limits<T>::digits / 2 + 1;
  const T a = T(1) + std::ldexp(T(1), -k);
  const T y = -(T(1) + std::ldexp(T(1), 1 - k));
  const AxpyExpected<T> e = axpy_expected(a, a, y);
  EXPECT_TRUE(same_bits(e.fused, std::ldexp(T(1), -2 * k)));  // the exact 2^-2k
  EXPECT_TRUE(same_bits(e.separate, T(0)));
  EXPECT_TRUE(axpy_element_ok(a, a, y, e.fused, AxpyRounding::fused));
  EXPECT_FALSE(axpy_element_ok(a, a, y, e.separate, AxpyRounding::fused));
  EXPECT_TRUE(axpy_element_ok(a, a, y, e.separate, AxpyRounding::fused_or_separate));
  // What the hardware's own FMA gives (std::fma rounds once, as IEEE 754 requires).
  EXPECT_TRUE(same_bits(e.fused, std::fma(a, a, y)));
}

TYPED_TEST(SaxpyReferenceTest, ATieInTheWiderSumIsBrokenByTheExactValue) {
  using T = TypeParam;
  const auto tie = testing::tie_case<T>();
  const AxpyExpected<T> e = axpy_expected(tie.alpha, tie.x, tie.y);
  EXPECT_TRUE(same_bits(e.fused, tie.fused)) << e.fused;
  EXPECT_TRUE(same_bits(e.separate, tie.separate)) << e.separate;
  EXPECT_TRUE(same_bits(e.fused, std::fma(tie.alpha, tie.x, tie.y)));
}

TYPED_TEST(SaxpyReferenceTest, SpecialValuesFollowIeee) {
  using T = TypeParam;
  constexpr T inf = std::numeric_limits<T>::infinity();
  constexpr T max = std::numeric_limits<T>::max();
  EXPECT_TRUE(std::isnan(axpy_expected(T(2), inf, -inf).fused));
  EXPECT_TRUE(std::isnan(axpy_expected(inf, T(0), T(1)).fused));
  EXPECT_TRUE(std::isnan(axpy_expected(T(1), std::numeric_limits<T>::quiet_NaN(), T(1)).fused));
  EXPECT_EQ(axpy_expected(T(2), max, T(0)).fused, inf);
  // 2 max - max: finite when fused, infinite when the product is rounded first.
  EXPECT_EQ(axpy_expected(T(2), max, -max).fused, max);
  EXPECT_EQ(axpy_expected(T(2), max, -max).separate, inf);
  // Signed zeros: -0 + -0 is -0, and an exact cancellation is +0.
  EXPECT_TRUE(same_bits(axpy_expected(T(1), -T(0), -T(0)).fused, -T(0)));
  EXPECT_TRUE(same_bits(axpy_expected(T(-1), T(3), T(3)).fused, T(0)));
}

TYPED_TEST(SaxpyReferenceTest, TheCheckFindsAWrongElementAndAppliesTheAlphaZeroRule) {
  using T = TypeParam;
  const std::vector<T> x = {T(1.5), T(-2), T(0.25)}, y = {T(1), T(3), -T(0)};
  std::vector<T> out = {std::fma(T(3), x[0], y[0]), std::fma(T(3), x[1], y[1]),
                        std::fma(T(3), x[2], y[2])};
  EXPECT_TRUE(check_axpy_result<T>(T(3), x, y, out, AxpyRounding::fused).passed());
  out[2] = std::nextafter(out[2], T(1));  // one ulp off
  const AxpyCheck bad = check_axpy_result<T>(T(3), x, y, out, AxpyRounding::fused_or_separate);
  EXPECT_EQ(bad.first_bad, 2);
  EXPECT_EQ(bad.bad_count, 1);
  // alpha = 0: y bit for bit (-0 stays -0), whatever x holds.
  const std::vector<T> nan_x(3, std::numeric_limits<T>::quiet_NaN());
  EXPECT_TRUE(check_axpy_result<T>(T(0), nan_x, y, y, AxpyRounding::fused).passed());
  const std::vector<T> plus_zero = {T(1), T(3), T(0)};
  EXPECT_FALSE(check_axpy_result<T>(T(0), nan_x, y, plus_zero, AxpyRounding::fused).passed());
  EXPECT_THROW(check_axpy_result<T>(T(1), x, y, std::vector<T>(2), AxpyRounding::fused),
               InvalidInput);
}

}  // namespace
}  // namespace gpukit::blas
