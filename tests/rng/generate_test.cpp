// The CPU backend of the flat streams: every element equals the element-wise definition
// (flat_stream.hpp) at awkward sizes and offsets, pieces join seamlessly, thread counts change
// nothing, the reserved counter layout holds, normals are the transforms of the uniforms, and
// the end of the 2^64-element stream is checked.

#include "gpukit/rng/generate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/rng/flat_stream.hpp"
#include "gpukit/rng/philox.hpp"
#include "rng/rng_test_support.hpp"

namespace gpukit::rng {
namespace {

using testing::same_bits;

const std::int64_t kSizes[] = {0, 1, 2, 3, 5, 31, 32, 33, 1023, 1025, 65537};
const std::uint64_t kOffsets[] = {0, 1, 2, 3, 7, (std::uint64_t{1} << 33) + 1};

TEST(GenerateBits, BlocksFollowTheReservedFlatStreamCounters) {
  const std::uint64_t seed = 0xfeedface12345678ull;
  std::vector<std::uint32_t> bits(4 * 5);
  const std::uint64_t first_block = (std::uint64_t{1} << 32) + 9;
  generate_bits(Context::cpu(), bits, seed, 4 * first_block);
  for (std::uint64_t b = 0; b < 5; ++b) {
    const std::uint64_t block = first_block + b;
    const Uint32x4 expected =
        philox4x32_10({{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                        0u, 0xffffffffu}},
                      {{0x12345678u, 0xfeedfaceu}});
    for (int lane = 0; lane < 4; ++lane) EXPECT_EQ(bits[4 * b + lane], expected.word[lane]);
  }
}

template <class T>
class FlatStreamTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FlatStreamTest, RealTypes);

TYPED_TEST(FlatStreamTest, EveryElementIsTheElementWiseDefinition) {
  using T = TypeParam;
  for (std::int64_t n : kSizes) {
    for (std::uint64_t offset : kOffsets) {
      std::vector<T> u(n, T(-1)), z(n, T(-1)), w(n, T(-1));
      generate_uniform<T>(Context::cpu(), u, 5, offset);
      generate_normal<T>(Context::cpu(), z, 5, offset, NormalTransform::box_muller);
      generate_normal<T>(Context::cpu(), w, 5, offset, NormalTransform::inverse_cdf);
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint64_t k = offset + j;
        ASSERT_TRUE(same_bits(u[j], flat_stream_uniform<T>(5, k)))
            << n << " " << offset << " " << j;
        ASSERT_TRUE(same_bits(z[j], (flat_stream_normal<T, NormalTransform::box_muller>(5, k))));
        ASSERT_TRUE(same_bits(w[j], (flat_stream_normal<T, NormalTransform::inverse_cdf>(5, k))));
      }
    }
  }
}

// Normal element k is the transform of uniform element k (inverse CDF) or of the uniform pair
// (2j, 2j + 1) that holds it (Box-Muller).
TYPED_TEST(FlatStreamTest, NormalsAreTransformsOfTheUniformStream) {
  using T = TypeParam;
  constexpr std::size_t n = 4096;
  std::vector<T> u(n), box(n), inverse(n);
  generate_uniform<T>(Context::cpu(), u, 31);
  generate_normal<T>(Context::cpu(), box, 31, 0, NormalTransform::box_muller);
  generate_normal<T>(Context::cpu(), inverse, 31, 0, NormalTransform::inverse_cdf);
  for (std::size_t i = 0; i < n; i += 2) {
    const NormalPair<T> pair = box_muller(u[i], u[i + 1]);
    EXPECT_TRUE(same_bits(box[i], pair.first)) << i;
    EXPECT_TRUE(same_bits(box[i + 1], pair.second)) << i;
    EXPECT_TRUE(same_bits(inverse[i], inverse_normal_cdf(u[i]))) << i;
    EXPECT_TRUE(same_bits(inverse[i + 1], inverse_normal_cdf(u[i + 1]))) << i;
  }
}

TYPED_TEST(FlatStreamTest, PiecesAndThreadCountsGiveTheSameStream) {
  using T = TypeParam;
  constexpr std::size_t n = 100003;
  std::vector<T> whole(n);
  generate_normal<T>(Context::cpu(1), whole, 8, 11);
  for (int threads : {2, 3}) {
    std::vector<T> parallel(n);
    generate_normal<T>(Context::cpu(threads), parallel, 8, 11);
    EXPECT_EQ(parallel, whole) << threads << " threads";
  }
  std::vector<T> pieces(n);
  const std::size_t cut1 = 3, cut2 = 50001;
  generate_normal<T>(Context::cpu(), std::span<T>(pieces).first(cut1), 8, 11);
  generate_normal<T>(Context::cpu(), std::span<T>(pieces).subspan(cut1, cut2 - cut1), 8, 11 + cut1);
  generate_normal<T>(Context::cpu(), std::span<T>(pieces).subspan(cut2), 8, 11 + cut2);
  EXPECT_EQ(pieces, whole);
}

TYPED_TEST(FlatStreamTest, SeedsGiveDifferentStreams) {
  using T = TypeParam;
  std::vector<T> a(64), b(64), c(64);
  generate_uniform<T>(Context::cpu(), a, 1);
  generate_uniform<T>(Context::cpu(), b, 2);
  generate_uniform<T>(Context::cpu(), c, 1 + (std::uint64_t{1} << 32));
  int equal_ab = 0, equal_ac = 0;
  for (int i = 0; i < 64; ++i) equal_ab += a[i] == b[i], equal_ac += a[i] == c[i];
  EXPECT_LE(equal_ab, 1);
  EXPECT_LE(equal_ac, 1);
}

TEST(GenerateBits, TheLastElementsOfTheStreamAndNoFurther) {
  const std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint32_t> end(3);
  generate_bits(Context::cpu(), end, 4, last - 2);
  const Uint32x4 last_block = flat_stream_words(4, last / 4);
  EXPECT_EQ(end[2], last_block.word[3]);
  EXPECT_EQ(end[0], last_block.word[1]);
  std::vector<std::uint32_t> too_far(4);
  EXPECT_THROW(generate_bits(Context::cpu(), too_far, 4, last - 2), InvalidInput);
  std::vector<double> doubles(2);
  EXPECT_NO_THROW(generate_uniform<double>(Context::cpu(), doubles, 4, last - 1));
  EXPECT_THROW(generate_uniform<double>(Context::cpu(), doubles, 4, last), InvalidInput);
}

}  // namespace
}  // namespace gpukit::rng
