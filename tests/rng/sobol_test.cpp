// Sobol points (gpukit/rng/sobol.hpp) on every backend: the unscrambled points are SciPy's (a
// table SciPy wrote, scripts/generate_sobol_test_table.py); Burley's Owen scrambling keeps every
// one-dimensional (0, m, 1)-net and the box counts of every two-dimensional elementary interval,
// and changes with the seed, the stream key and the replicate; a stream in pieces and on any
// thread count is the same; the Cuda instances produce the CPU's integers. The uniforms of the
// 32-bit points and their normals (the inverse CDF, AS241: normal_test.cpp has its accuracy) stay
// finite at both ends.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/sobol.hpp"
#include "rng_test_support.hpp"
#include "sobol_scipy_points.hpp"

namespace gpukit::rng {
namespace {

using gpukit::testing::EveryBackendTest;

class SobolScenarios : public EveryBackendTest {
 protected:
  std::vector<std::uint32_t> points(const SobolSpec& spec, std::size_t count,
                                    int cpu_threads = 0) const {
    std::vector<std::uint32_t> out(count * static_cast<std::size_t>(spec.dimensions), 0xDEADBEEFu);
    generate_sobol(context(cpu_threads), out, spec);
    return out;
  }
};

SobolSpec unscrambled(int dimensions, std::uint32_t first_point = 0) {
  SobolSpec spec;
  spec.dimensions = dimensions;
  spec.first_point = first_point;
  spec.scrambled = false;
  return spec;
}

SobolSpec scrambled(int dimensions, std::uint64_t seed, std::uint64_t stream_key = 7,
                    std::uint32_t replicate = 0) {
  SobolSpec spec;
  spec.dimensions = dimensions;
  spec.seed = seed;
  spec.stream_key = stream_key;
  spec.replicate = replicate;
  return spec;
}

TEST_P(SobolScenarios, UnscrambledPointsAreScipys) {
  const std::vector<std::uint32_t> first = points(unscrambled(kSobolMaxDimensions), 256);
  for (std::size_t i = 0; i < 256; ++i) {
    for (std::size_t c = 0; c < std::size(testing::kScipyColumns); ++c) {
      const auto d = static_cast<std::size_t>(testing::kScipyColumns[c]);
      ASSERT_EQ(first[i * kSobolMaxDimensions + d], testing::kScipyFirstPoints[i][c])
          << "point " << i << " dimension " << d;
    }
  }
  const std::vector<std::uint32_t> high = points(unscrambled(12, testing::kScipyHighStart), 8);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t d = 0; d < 12; ++d) {
      ASSERT_EQ(high[i * 12 + d], testing::kScipyHighPoints[i][d])
          << "point " << testing::kScipyHighStart + i << " dimension " << d;
    }
  }
}

// Every elementary interval [k 2^-m, (k + 1) 2^-m) of each coordinate holds 2^(n - m) of the
// first 2^n points, unscrambled and under several scramblings, at every m <= n (n = 12; 8 for the
// widest points, whose 21201 coordinates each take a scrambling).
TEST_P(SobolScenarios, EveryCoordinateIsAZeroMOneNet) {
  const int dimensions_and_log2_points[][2] = {{1, 12},   {2, 12},    {3, 12},
                                               {100, 12}, {1111, 12}, {21201, 8}};
  for (const auto& [dims, log2_points] : dimensions_and_log2_points) {
    const std::size_t n = std::size_t{1} << log2_points;
    for (const std::uint64_t seed : {0ull, 1ull, 0x123456789abcdefull}) {
      const SobolSpec spec = seed == 0 ? unscrambled(dims) : scrambled(dims, seed);
      const std::vector<std::uint32_t> x = points(spec, n);
      for (const int d : {0, dims / 2, dims - 1}) {
        for (int m = 1; m <= log2_points; ++m) {
          std::vector<std::size_t> count(std::size_t{1} << m, 0);
          for (std::size_t i = 0; i < n; ++i) {
            ++count[x[i * static_cast<std::size_t>(dims) + static_cast<std::size_t>(d)] >>
                    (32 - m)];
          }
          for (std::size_t k = 0; k < count.size(); ++k) {
            ASSERT_EQ(count[k], n >> m) << "dims " << dims << " seed " << seed << " dimension " << d
                                        << " m " << m << " interval " << k;
          }
        }
      }
    }
  }
}

// The counts of the 2^m boxes [a 2^-j, (a + 1) 2^-j) x [b 2^(j-m), (b + 1) 2^(j-m)) of a pair of
// coordinates, for each j, as a sorted list: a nested scramble maps such boxes onto such boxes,
// so the lists are the unscrambled points' (the projection's t-value is kept). Dimensions 0 and
// 1 form a (0, m, 2)-net: one point a box.
std::vector<std::vector<int>> box_counts(const std::vector<std::uint32_t>& x, int dims, int d1,
                                         int d2, int m) {
  std::vector<std::vector<int>> all;
  const std::size_t n = x.size() / static_cast<std::size_t>(dims);
  for (int j = 0; j <= m; ++j) {
    std::vector<int> count(std::size_t{1} << m, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t a = j == 0 ? 0 : x[i * dims + d1] >> (32 - j);
      const std::uint64_t b = j == m ? 0 : x[i * dims + d2] >> (32 - (m - j));
      ++count[(a << (m - j)) | b];
    }
    std::sort(count.begin(), count.end());
    all.push_back(count);
  }
  return all;
}

TEST_P(SobolScenarios, TwoDimensionalProjectionsKeepTheirStratification) {
  constexpr int kLog2Points = 10;
  constexpr int kDims = 40;
  const std::vector<std::uint32_t> plain = points(unscrambled(kDims), 1u << kLog2Points);
  const std::vector<std::uint32_t> mixed = points(scrambled(kDims, 2008, 99), 1u << kLog2Points);
  const std::vector<std::vector<int>> net = box_counts(plain, kDims, 0, 1, kLog2Points);
  for (const std::vector<int>& counts : net) {
    ASSERT_TRUE(std::all_of(counts.begin(), counts.end(), [](int c) { return c == 1; }));
  }
  const int pairs[][2] = {{0, 1}, {1, 2}, {2, 3}, {4, 7}, {10, 31}, {38, 39}};
  for (const auto& pair : pairs) {
    EXPECT_EQ(box_counts(mixed, kDims, pair[0], pair[1], kLog2Points),
              box_counts(plain, kDims, pair[0], pair[1], kLog2Points))
        << "dimensions " << pair[0] << ", " << pair[1];
  }
}

// Each change of the key gives other points: nearly every coordinate differs (two independent
// scramblings agree on a coordinate with probability 2^-32); the same key gives the same points.
TEST_P(SobolScenarios, ScramblingChangesWithSeedStreamAndReplicate) {
  constexpr int kDims = 8;
  constexpr std::size_t kPoints = 512;
  const std::vector<std::uint32_t> base = points(scrambled(kDims, 1, 2, 3), kPoints);
  EXPECT_EQ(points(scrambled(kDims, 1, 2, 3), kPoints), base);
  const std::vector<std::vector<std::uint32_t>> others = {
      points(unscrambled(kDims), kPoints), points(scrambled(kDims, 9, 2, 3), kPoints),
      points(scrambled(kDims, 1, 9, 3), kPoints), points(scrambled(kDims, 1, 2, 9), kPoints)};
  for (std::size_t k = 0; k < others.size(); ++k) {
    std::size_t same = 0;
    for (std::size_t i = 0; i < base.size(); ++i) same += others[k][i] == base[i];
    EXPECT_LE(same, 2u) << "variant " << k;
  }
}

// Points in pieces (first_point) and on any thread count are the stream's; on a GPU, the CPU's.
TEST_P(SobolScenarios, PiecesThreadsAndBackendsGiveTheSameIntegers) {
  constexpr int kDims = 37;
  constexpr std::size_t kPoints = 1025;
  const SobolSpec spec = scrambled(kDims, 77, 5, 1);
  std::vector<std::uint32_t> on_cpu(kPoints * kDims);
  generate_sobol(Context::cpu(1), on_cpu, spec);
  EXPECT_EQ(points(spec, kPoints), on_cpu);
  EXPECT_EQ(points(spec, kPoints, 2), on_cpu);
  SobolSpec tail = spec;
  tail.first_point = 1000;
  const std::vector<std::uint32_t> piece = points(tail, kPoints - 1000);
  EXPECT_TRUE(std::equal(piece.begin(), piece.end(), on_cpu.begin() + 1000 * kDims));
  EXPECT_TRUE(points(spec, 0).empty());
}

TEST_P(SobolScenarios, RefusesBadArguments) {
  std::vector<std::uint32_t> out(10);
  EXPECT_THROW(generate_sobol(context(), out, unscrambled(0)), InvalidInput);
  EXPECT_THROW(generate_sobol(context(), out, unscrambled(kSobolMaxDimensions + 1)), InvalidInput);
  EXPECT_THROW(generate_sobol(context(), out, unscrambled(3)), InvalidInput);  // 10 % 3 != 0
  EXPECT_THROW(generate_sobol(context(), out, unscrambled(1, 0xFFFFFFF8u)), InvalidInput);
  std::vector<std::uint32_t> last(8);
  generate_sobol(context(), last, unscrambled(1, 0xFFFFFFF8u));  // the sequence's last 8 points
  EXPECT_NE(last[7], 0u);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(SobolScenarios);

TEST(SobolDirectionNumbers, VanDerCorputAndTheRange) {
  const std::vector<std::uint32_t> v = sobol_direction_numbers(2);
  for (int k = 1; k <= 32; ++k) EXPECT_EQ(v[static_cast<std::size_t>(k - 1)], 1u << (32 - k));
  // Dimension 1 (Joe-Kuo's d = 2): x + 1, m_1 = 1, so v_k = v_{k-1} ^ (v_{k-1} >> 1).
  EXPECT_EQ(v[32], 0x80000000u);
  EXPECT_EQ(v[33], 0xC0000000u);
  EXPECT_EQ(v[34], 0xA0000000u);
  EXPECT_EQ(sobol_direction_numbers(0).size(), 0u);
  EXPECT_EQ(sobol_direction_numbers(kSobolMaxDimensions).size(), 32u * kSobolMaxDimensions);
  EXPECT_THROW(sobol_direction_numbers(-1), InvalidInput);
  EXPECT_THROW(sobol_direction_numbers(kSobolMaxDimensions + 1), InvalidInput);
}

// A nested scramble is a bijection of the 32-bit words that keeps every prefix class: words that
// share their top m bits map to words that share their top m bits.
TEST(OwenScramble, KeepsPrefixClasses) {
  for (const std::uint32_t seed : {0u, 1u, 0x9e3779b9u, 0xffffffffu}) {
    for (std::uint32_t k = 0; k < 4096; ++k) {
      const std::uint32_t a = k * 0x10001u + 0x1234567u * (k % 7);
      const std::uint32_t b = a ^ (1u << (k % 32));  // differs first at bit k % 32
      const std::uint32_t sa = owen_scramble(a, seed), sb = owen_scramble(b, seed);
      const int top_shared = std::countl_zero(a ^ b);
      ASSERT_EQ(std::countl_zero(sa ^ sb), top_shared) << a << " " << b << " seed " << seed;
    }
  }
}

// The 32-bit points' uniforms are strictly inside (0, 1), symmetric, and their normals finite.
TEST(SobolUniform, NeverZeroOrOneAndSymmetric) {
  EXPECT_EQ(sobol_uniform(0u), 0x1p-33);
  EXPECT_EQ(sobol_uniform(0xFFFFFFFFu), 1.0 - 0x1p-33);
  for (std::uint32_t x : {0u, 1u, 12345u, 0x7FFFFFFFu}) {
    EXPECT_EQ(sobol_uniform(~x), 1.0 - sobol_uniform(x));
    EXPECT_EQ(inverse_normal_cdf(sobol_uniform(~x)), -inverse_normal_cdf(sobol_uniform(x)));
  }
  const double lowest = inverse_normal_cdf(sobol_uniform(0u));
  EXPECT_TRUE(std::isfinite(lowest));
  // The quantile of 2^-33, to the accuracy normal_test.cpp requires of AS241.
  const long double reference = testing::reference_normal_quantile(0x1p-33, lowest);
  EXPECT_LE(std::fabs(lowest - reference), 1e-15L * std::fabs(reference));
}

}  // namespace
}  // namespace gpukit::rng
