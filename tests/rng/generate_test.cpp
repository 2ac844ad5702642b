// The flat streams through the public API, each scenario written once and run on every backend
// (Cpu/... and Cuda/...; the CUDA backend generates on the device and copies through its chunks):
// every word and uniform bitwise equal to the element-wise definition (flat_stream.hpp) and every
// normal within the distance normal.hpp states for the backend, at awkward sizes and offsets; the
// reserved counter layout; pieces, thread counts and chunks change nothing; the end of the 2^64
// stream. The device-data API and the kernels one by one: rng_gpu_test.cpp.

#include "gpukit/rng/generate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/rng/flat_stream.hpp"
#include "gpukit/rng/philox.hpp"
#include "rng_test_support.hpp"

namespace gpukit::rng {
namespace {

using gpukit::testing::EveryBackendTest;
using gpukit::testing::EveryBackendTypedTest;
using testing::normal_ulps_allowed;
using testing::same_bits;
using testing::ulp_distance;

const std::int64_t kSizes[] = {0, 1, 2, 3, 5, 31, 32, 33, 1023, 1025, 65537};
const std::uint64_t kOffsets[] = {0, 1, 2, 3, 7, (std::uint64_t{1} << 33) + 1};

class FlatStreamScenarios : public EveryBackendTest {};

TEST_P(FlatStreamScenarios, BlocksFollowTheReservedFlatStreamCounters) {
  const std::uint64_t seed = 0xfeedface12345678ull;
  std::vector<std::uint32_t> bits(4 * 5);
  const std::uint64_t first_block = (std::uint64_t{1} << 32) + 9;
  generate_bits(context(), bits, seed, 4 * first_block);
  for (std::uint64_t b = 0; b < 5; ++b) {
    const std::uint64_t block = first_block + b;
    const Uint32x4 expected =
        philox4x32_10({{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                        0u, 0xffffffffu}},
                      {{0x12345678u, 0xfeedfaceu}});
    for (int lane = 0; lane < 4; ++lane) EXPECT_EQ(bits[4 * b + lane], expected.word[lane]);
  }
}

// On CUDA also 2^25 + 5 elements, two full chunks of the host path and a ragged one (at one
// offset: the host-side definition of 2^25 elements is slow).
std::vector<std::int64_t> sizes_for(Backend backend) {
  std::vector<std::int64_t> sizes(std::begin(kSizes), std::end(kSizes));
  if (backend == Backend::cuda && !gpukit::testing::quick_tests()) {
    sizes.push_back((std::int64_t{1} << 25) + 5);
  }
  return sizes;
}
std::vector<std::uint64_t> offsets_for(std::int64_t n) {
  if (n > 65537) return {3};
  return {std::begin(kOffsets), std::end(kOffsets)};
}

TEST_P(FlatStreamScenarios, WordsAreTheElementWiseDefinition) {
  for (const std::int64_t n : sizes_for(GetParam())) {
    for (const std::uint64_t offset : offsets_for(n)) {
      std::vector<std::uint32_t> w(static_cast<std::size_t>(n), 0xA5A5A5A5u);
      generate_bits(context(), w, 5, offset);
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint64_t k = offset + static_cast<std::uint64_t>(j);
        ASSERT_EQ(w[j], flat_stream_words(5, k / 4).word[k % 4])
            << "n=" << n << " offset=" << offset << " element " << j;
      }
    }
  }
}

template <class Case>
class FlatStreamTest : public EveryBackendTypedTest<Case> {};
TYPED_TEST_SUITE_P(FlatStreamTest);

// Uniforms bitwise; normals bitwise on the CPU and within normal.hpp's distances on CUDA (its
// log and sin/cos differ from the CPU's in the last bits). Outputs start poisoned (-1).
TYPED_TEST_P(FlatStreamTest, EveryElementIsTheElementWiseDefinition) {
  using T = typename TypeParam::Element;
  const double box_ulps = normal_ulps_allowed<T>(TypeParam::backend, NormalTransform::box_muller);
  const double inverse_ulps =
      normal_ulps_allowed<T>(TypeParam::backend, NormalTransform::inverse_cdf);
  for (const std::int64_t n : sizes_for(TypeParam::backend)) {
    // The chunk-crossing size checks the uniforms only (normals: rng_gpu_test.cpp, 2^22 of them).
    const bool normals = n <= 65537;
    for (const std::uint64_t offset : offsets_for(n)) {
      const auto size = static_cast<std::size_t>(n);
      std::vector<T> u(size, T(-1)), z(normals ? size : 0, T(-1)), w(normals ? size : 0, T(-1));
      generate_uniform<T>(this->context(), u, 5, offset);
      generate_normal<T>(this->context(), z, 5, offset, NormalTransform::box_muller);
      generate_normal<T>(this->context(), w, 5, offset, NormalTransform::inverse_cdf);
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint64_t k = offset + static_cast<std::uint64_t>(j);
        ASSERT_TRUE(same_bits(u[j], flat_stream_uniform<T>(5, k)))
            << "n=" << n << " offset=" << offset << " element " << j;
        if (!normals) continue;
        ASSERT_LE(ulp_distance(z[j], flat_stream_normal<T, NormalTransform::box_muller>(5, k)),
                  box_ulps)
            << "box-muller n=" << n << " offset=" << offset << " element " << j;
        ASSERT_LE(ulp_distance(w[j], flat_stream_normal<T, NormalTransform::inverse_cdf>(5, k)),
                  inverse_ulps)
            << "inverse-cdf n=" << n << " offset=" << offset << " element " << j;
      }
    }
  }
}

// Normal element k is the transform of uniform element k (inverse CDF) or of the uniform pair
// (2j, 2j + 1) that holds it (Box-Muller), the transforms evaluated here on the host.
TYPED_TEST_P(FlatStreamTest, NormalsAreTransformsOfTheUniformStream) {
  using T = typename TypeParam::Element;
  const double box_ulps = normal_ulps_allowed<T>(TypeParam::backend, NormalTransform::box_muller);
  const double inverse_ulps =
      normal_ulps_allowed<T>(TypeParam::backend, NormalTransform::inverse_cdf);
  constexpr std::size_t n = 4096;
  std::vector<T> u(n), box(n), inverse(n);
  generate_uniform<T>(this->context(), u, 31);
  generate_normal<T>(this->context(), box, 31, 0, NormalTransform::box_muller);
  generate_normal<T>(this->context(), inverse, 31, 0, NormalTransform::inverse_cdf);
  for (std::size_t i = 0; i < n; i += 2) {
    const NormalPair<T> pair = box_muller(u[i], u[i + 1]);
    EXPECT_LE(ulp_distance(box[i], pair.first), box_ulps) << i;
    EXPECT_LE(ulp_distance(box[i + 1], pair.second), box_ulps) << i;
    EXPECT_LE(ulp_distance(inverse[i], inverse_normal_cdf(u[i])), inverse_ulps) << i;
    EXPECT_LE(ulp_distance(inverse[i + 1], inverse_normal_cdf(u[i + 1])), inverse_ulps) << i;
  }
}

// Bitwise the same in one piece or three, on 1, 2 or 3 CPU threads.
TYPED_TEST_P(FlatStreamTest, PiecesAndThreadCountsGiveTheSameStream) {
  using T = typename TypeParam::Element;
  constexpr std::size_t n = 100003;
  std::vector<T> whole(n);
  generate_normal<T>(this->context(1), whole, 8, 11);
  for (int threads : {2, 3}) {
    std::vector<T> parallel(n);
    generate_normal<T>(this->context(threads), parallel, 8, 11);
    EXPECT_EQ(parallel, whole) << threads << " threads";
  }
  std::vector<T> pieces(n);
  const std::size_t cut1 = 3, cut2 = 50001;
  generate_normal<T>(this->context(), std::span<T>(pieces).first(cut1), 8, 11);
  generate_normal<T>(this->context(), std::span<T>(pieces).subspan(cut1, cut2 - cut1), 8,
                     11 + cut1);
  generate_normal<T>(this->context(), std::span<T>(pieces).subspan(cut2), 8, 11 + cut2);
  EXPECT_EQ(pieces, whole);
}

TYPED_TEST_P(FlatStreamTest, SeedsGiveDifferentStreams) {
  using T = typename TypeParam::Element;
  std::vector<T> a(64), b(64), c(64);
  generate_uniform<T>(this->context(), a, 1);
  generate_uniform<T>(this->context(), b, 2);
  generate_uniform<T>(this->context(), c, 1 + (std::uint64_t{1} << 32));
  int equal_ab = 0, equal_ac = 0;
  for (int i = 0; i < 64; ++i) equal_ab += a[i] == b[i], equal_ac += a[i] == c[i];
  EXPECT_LE(equal_ab, 1);
  EXPECT_LE(equal_ac, 1);
}

REGISTER_TYPED_TEST_SUITE_P(FlatStreamTest, EveryElementIsTheElementWiseDefinition,
                            NormalsAreTransformsOfTheUniformStream,
                            PiecesAndThreadCountsGiveTheSameStream, SeedsGiveDifferentStreams);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(FlatStreamTest, float, double);

TEST_P(FlatStreamScenarios, TheLastElementsOfTheStreamAndNoFurther) {
  const std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint32_t> end(3);
  generate_bits(context(), end, 4, last - 2);
  const Uint32x4 last_block = flat_stream_words(4, last / 4);
  EXPECT_EQ(end[2], last_block.word[3]);
  EXPECT_EQ(end[1], last_block.word[2]);
  EXPECT_EQ(end[0], last_block.word[1]);
  std::vector<std::uint32_t> too_far(4);
  EXPECT_THROW(generate_bits(context(), too_far, 4, last - 2), InvalidInput);
  std::vector<double> doubles(2);
  EXPECT_NO_THROW(generate_uniform<double>(context(), doubles, 4, last - 1));
  EXPECT_TRUE(same_bits(doubles[1], flat_stream_uniform<double>(4, last)));
  EXPECT_THROW(generate_uniform<double>(context(), doubles, 4, last), InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(FlatStreamScenarios);

}  // namespace
}  // namespace gpukit::rng
