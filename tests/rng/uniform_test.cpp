// Uniform conversions: the open interval, the exact value grid, symmetry, and the moments and
// bin counts of the flat stream.

#include "gpukit/rng/uniform.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpukit/rng/flat_stream.hpp"
#include "gpukit/rng/generate.hpp"
#include "rng_test_support.hpp"

namespace gpukit::rng {
namespace {

TEST(Uniform, FloatEndsAreInsideTheOpenInterval) {
  EXPECT_EQ(uniform_float(0u), 0x1p-24f);
  EXPECT_EQ(uniform_float(0x1ffu), 0x1p-24f);  // the low 9 bits are not used
  EXPECT_EQ(uniform_float(0xffffffffu), 1.0f - 0x1p-24f);
  EXPECT_LT(uniform_float(0xffffffffu), 1.0f);
  EXPECT_GT(uniform_float(0u), 0.0f);
}

TEST(Uniform, DoubleEndsAreInsideTheOpenInterval) {
  EXPECT_EQ(uniform_double(0u, 0u), 0x1p-53);
  EXPECT_EQ(uniform_double(0u, 0xfffu), 0x1p-53);  // the low 12 bits of the second word
  EXPECT_EQ(uniform_double(0xffffffffu, 0xffffffffu), 1.0 - 0x1p-53);
  EXPECT_LT(uniform_double(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(uniform_double(0x80000000u, 0u), 0.5 + 0x1p-53);
  EXPECT_EQ(uniform_double(0u, 0x1000u), 3 * 0x1p-53);  // the first bit of the second word used
}

// All 2^23 float values: exactly (2m + 1) 2^-24, strictly increasing.
TEST(Uniform, FloatGridIsExactAndIncreasing) {
  float previous = 0.0f;
  for (std::uint32_t m = 0; m < (1u << 23); ++m) {
    const float u = uniform_float(m << 9 | (m & 0x1ffu));
    ASSERT_EQ(static_cast<double>(u), (2.0 * m + 1.0) * 0x1p-24) << m;
    ASSERT_GT(u, previous) << m;
    previous = u;
  }
  EXPECT_LT(previous, 1.0f);
}

TEST(Uniform, FlippedWordsGiveOneMinusU) {
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const Uint32x4 w = flat_stream_words(99, i);
    ASSERT_EQ(uniform_float(~w.word[0]), 1.0f - uniform_float(w.word[0]));
    ASSERT_EQ(uniform_double(~w.word[1], ~w.word[2]), 1.0 - uniform_double(w.word[1], w.word[2]));
  }
}

template <class T>
class UniformStreamTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(UniformStreamTest, RealTypes);

// 2^20 uniforms: the mean within 5 standard errors of 1/2 (SE sqrt(1/12/n)), the variance of
// 1/12 (SE sqrt((1/80 - 1/144)/n)), and a 1000-bin chi-square below its mean + 5 sd
// (999 + 5 sqrt(2 x 999)).
TYPED_TEST(UniformStreamTest, MomentsAndBinCountsMatchTheUniformDistribution) {
  using T = TypeParam;
  constexpr std::size_t n = std::size_t{1} << 20;
  std::vector<T> u(n);
  generate_uniform<T>(Context::cpu(), u, 12345);
  const testing::Moments m = testing::sample_moments<T>(u);
  EXPECT_NEAR(m.mean, 0.5L, 5 * std::sqrt(1.0L / 12 / n));
  EXPECT_NEAR(m.variance, 1.0L / 12, 5 * std::sqrt((1.0L / 80 - 1.0L / 144) / n));
  std::vector<long> bins(1000, 0);
  for (T v : u) {
    ASSERT_GT(v, T(0));
    ASSERT_LT(v, T(1));
    ++bins[static_cast<std::size_t>(v * 1000)];
  }
  const double expected = static_cast<double>(n) / 1000;
  double chi_square = 0;
  for (long count : bins) chi_square += (count - expected) * (count - expected) / expected;
  EXPECT_LT(chi_square, 999 + 5 * std::sqrt(2.0 * 999));
}

}  // namespace
}  // namespace gpukit::rng
