// Philox4x32: the Random123 known-answer vectors, gpukit's counter layout, and avalanche.
//
// The known answers are Random123's kat_vectors for philox4x32_7 and philox4x32_10, as quoted in
// DEShawResearch/Random123-Boost, libs/random/test/test_philox.cpp ("cut-and-pasted from the
// kat_vectors file in the original Random123 distribution").

#include "gpukit/rng/philox.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

namespace gpukit::rng {
namespace {

struct KnownAnswer {
  Uint32x4 counter;
  Uint32x2 key;
  Uint32x4 expected;
};

constexpr Uint32x4 kZeros = {{0, 0, 0, 0}};
constexpr Uint32x4 kOnes = {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}};
constexpr Uint32x4 kPiCounter = {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
constexpr Uint32x2 kPiKey = {{0xa4093822u, 0x299f31d0u}};

TEST(Philox, Random123KnownAnswersTenRounds) {
  const KnownAnswer answers[] = {
      {kZeros, {{0, 0}}, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {kOnes, {{0xffffffffu, 0xffffffffu}}, {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {kPiCounter, kPiKey, {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const KnownAnswer& a : answers) {
    EXPECT_EQ(philox4x32_10(a.counter, a.key), a.expected) << std::hex << a.counter.word[0];
    EXPECT_EQ(philox4x32<10>(a.counter, a.key), a.expected);
  }
}

// Seven rounds pins down the key schedule between rounds independently of the ten-round count.
TEST(Philox, Random123KnownAnswersSevenRounds) {
  const KnownAnswer answers[] = {
      {kZeros, {{0, 0}}, {{0x5f6fb709u, 0x0d893f64u, 0x4f121f81u, 0x4f730a48u}}},
      {kOnes, {{0xffffffffu, 0xffffffffu}}, {{0x5207ddc2u, 0x45165e59u, 0x4d8ee751u, 0x8c52f662u}}},
      {kPiCounter, kPiKey, {{0x4dfccabau, 0x190a87f0u, 0xc47362bau, 0xb6b5242au}}},
  };
  for (const KnownAnswer& a : answers) {
    EXPECT_EQ(philox4x32<7>(a.counter, a.key), a.expected) << std::hex << a.counter.word[0];
  }
}

TEST(Philox, CounterLayoutIsPathLowPathHighStepOption) {
  EXPECT_EQ(philox_counter(7, 0x0000000500000002ull, 3), (Uint32x4{{2, 5, 3, 7}}));
  EXPECT_EQ(philox_key(0x0123456789abcdefull), (Uint32x2{{0x89abcdefu, 0x01234567u}}));
  const Uint32x4 by_hand = philox4x32_10({{2, 5, 3, 7}}, {{0x89abcdefu, 0x01234567u}});
  EXPECT_EQ(philox_words(0x0123456789abcdefull, 7, 0x0000000500000002ull, 3), by_hand);
}

TEST(Philox, EveryCoordinateSelectsDifferentWords) {
  const Uint32x4 base = philox_words(42, 1, 1000, 5);
  EXPECT_NE(philox_words(43, 1, 1000, 5), base);
  EXPECT_NE(philox_words(42 + (std::uint64_t{1} << 32), 1, 1000, 5), base);
  EXPECT_NE(philox_words(42, 2, 1000, 5), base);
  EXPECT_NE(philox_words(42, 1, 1001, 5), base);
  EXPECT_NE(philox_words(42, 1, 1000 + (std::uint64_t{1} << 32), 5), base);
  EXPECT_NE(philox_words(42, 1, 1000, 6), base);
}

int hamming_distance(const Uint32x4& a, const Uint32x4& b) {
  int bits = 0;
  for (int i = 0; i < 4; ++i) bits += std::popcount(a.word[i] ^ b.word[i]);
  return bits;
}

// Flipping any one input bit (128 counter bits, 64 key bits) flips each output bit with
// probability 1/2: over 200 random inputs per position the mean distance is 64 with standard
// error sqrt(128 / 4 / 200) = 0.4; we allow 5 standard errors.
TEST(Philox, OneInputBitFlipsHalfTheOutputBits) {
  std::mt19937_64 engine(2011);
  constexpr int kTrials = 200;
  for (int position = 0; position < 192; ++position) {
    long total = 0;
    for (int t = 0; t < kTrials; ++t) {
      Uint32x4 counter;
      Uint32x2 key;
      for (auto& w : counter.word) w = static_cast<std::uint32_t>(engine());
      for (auto& w : key.word) w = static_cast<std::uint32_t>(engine());
      Uint32x4 flipped_counter = counter;
      Uint32x2 flipped_key = key;
      if (position < 128) {
        flipped_counter.word[position / 32] ^= 1u << (position % 32);
      } else {
        flipped_key.word[(position - 128) / 32] ^= 1u << (position % 32);
      }
      total += hamming_distance(philox4x32_10(counter, key),
                                philox4x32_10(flipped_counter, flipped_key));
    }
    EXPECT_NEAR(static_cast<double>(total) / kTrials, 64.0, 5 * 0.4) << "input bit " << position;
  }
}

}  // namespace
}  // namespace gpukit::rng
