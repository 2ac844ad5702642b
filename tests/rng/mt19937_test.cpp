// MT19937 against its reference outputs (the C++ standard's 10000th output, std::mt19937, the
// authors' mt19937ar.out for init_by_array) on the host, and the independent streams built from it
// through the public API on every backend (Cpu/... and Cuda/...). The CUDA kernel at every grid:
// rng_gpu_test.cpp.

#include "gpukit/rng/mt19937.hpp"

#include <gtest/gtest.h>

#include <concepts>
#include <cstdint>
#include <random>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/rng/mt19937_streams.hpp"

namespace gpukit::rng {
namespace {

static_assert(std::uniform_random_bit_generator<Mt19937>);

TEST(Mt19937, DefaultSeedMatchesTheStandard) {
  Mt19937 generator;  // seed 5489
  EXPECT_EQ(generator(), 3499211612u);
  EXPECT_EQ(generator(), 581869302u);
  EXPECT_EQ(generator(), 3890346734u);
  generator.discard(10000 - 4);
  // [rand.predef]: the 10000th consecutive invocation of a default-constructed mt19937.
  EXPECT_EQ(generator(), 4123659995u);
}

TEST(Mt19937, MatchesStdMt19937ForManySeeds) {
  for (std::uint32_t seed : {0u, 1u, 5489u, 123456789u, 0xffffffffu}) {
    Mt19937 ours(seed);
    std::mt19937 standard(seed);
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(ours(), standard()) << "seed " << seed << " #" << i;
  }
}

// The first outputs of mt19937ar.out, the authors' test output for
// init_by_array({0x123, 0x234, 0x345, 0x456}).
TEST(Mt19937, InitByArrayMatchesTheAuthorsReferenceOutput) {
  const std::uint32_t key[] = {0x123, 0x234, 0x345, 0x456};
  Mt19937 generator(key);
  const std::uint32_t expected[] = {1067595299u, 955945823u,  477289528u, 4107218783u, 4228976476u,
                                    3344332714u, 3355579695u, 227628506u, 810200273u,  2591290167u};
  for (std::uint32_t e : expected) EXPECT_EQ(generator(), e);
}

TEST(Mt19937, DiscardSkipsExactlyThatManyOutputs) {
  for (std::uint64_t skip : {0ull, 1ull, 623ull, 624ull, 625ull, 5000ull}) {
    Mt19937 skipping(99), stepping(99);
    skipping();  // start mid-state
    stepping();
    skipping.discard(skip);
    for (std::uint64_t i = 0; i < skip; ++i) stepping();
    EXPECT_EQ(skipping(), stepping()) << skip;
  }
}

TEST(Mt19937, ReseedingRestartsTheSequence) {
  Mt19937 generator(7);
  const std::uint32_t first = generator();
  generator.discard(1000);
  generator.seed(7);
  EXPECT_EQ(generator(), first);
  EXPECT_THROW(generator.seed(std::span<const std::uint32_t>{}), InvalidInput);
}

std::vector<std::uint32_t> stream_by_hand(std::uint64_t seed, std::uint64_t stream,
                                          std::int64_t length) {
  const std::uint32_t key[] = {
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
      static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)};
  Mt19937 generator(key);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(length));
  for (auto& w : out) w = generator();
  return out;
}

class Mt19937StreamScenarios : public gpukit::testing::EveryBackendTest {};

TEST_P(Mt19937StreamScenarios, EachStreamIsTheTwisterOfItsKey) {
  const std::uint64_t seed = 0x0000000100000002ull;
  const std::int64_t per_stream = 1000;
  const std::uint64_t first_stream = (std::uint64_t{3} << 32) + 5;
  std::vector<std::uint32_t> out(7 * per_stream);
  generate_mt19937_streams(context(), out, per_stream, seed, first_stream);
  for (std::uint64_t s = 0; s < 7; ++s) {
    const std::vector<std::uint32_t> expected = stream_by_hand(seed, first_stream + s, per_stream);
    for (std::int64_t k = 0; k < per_stream; ++k) {
      ASSERT_EQ(out[s * per_stream + k], expected[k]) << "stream " << s << " #" << k;
    }
  }
  // Neighbouring streams are different sequences.
  EXPECT_NE(std::vector<std::uint32_t>(out.begin(), out.begin() + per_stream),
            std::vector<std::uint32_t>(out.begin() + per_stream, out.begin() + 2 * per_stream));
}

TEST_P(Mt19937StreamScenarios, ThreadCountDoesNotChangeTheWords) {
  std::vector<std::uint32_t> one(13 * 777), three(13 * 777);
  generate_mt19937_streams(context(1), one, 777, 42);
  generate_mt19937_streams(context(3), three, 777, 42);
  EXPECT_EQ(one, three);
}

TEST_P(Mt19937StreamScenarios, RejectsShapesThatDoNotDivide) {
  std::vector<std::uint32_t> out(10);
  EXPECT_THROW(generate_mt19937_streams(context(), out, 3, 1), InvalidInput);
  EXPECT_THROW(generate_mt19937_streams(context(), out, 0, 1), InvalidInput);
  EXPECT_THROW(generate_mt19937_streams(context(), out, -5, 1), InvalidInput);
  EXPECT_NO_THROW(generate_mt19937_streams(context(), std::span<std::uint32_t>{}, 0, 1));
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(Mt19937StreamScenarios);

}  // namespace
}  // namespace gpukit::rng
