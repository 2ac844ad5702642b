// Philox4x32: the Random123 known-answer vectors (philox_known_answers.hpp, shared with the
// device test), gpukit's counter layout, and avalanche.

#include "gpukit/rng/philox.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

#include "philox_known_answers.hpp"

namespace gpukit::rng {
namespace {

using testing::kPhiloxKnownAnswers;
using testing::PhiloxKnownAnswer;

TEST(Philox, Random123KnownAnswersTenRounds) {
  for (const PhiloxKnownAnswer& a : kPhiloxKnownAnswers) {
    EXPECT_EQ(philox4x32_10(a.counter, a.key), a.ten_rounds) << std::hex << a.counter.word[0];
    EXPECT_EQ(philox4x32<10>(a.counter, a.key), a.ten_rounds);
  }
}

// Seven rounds pins down the key schedule between rounds independently of the ten-round count.
TEST(Philox, Random123KnownAnswersSevenRounds) {
  for (const PhiloxKnownAnswer& a : kPhiloxKnownAnswers) {
    EXPECT_EQ(philox4x32<7>(a.counter, a.key), a.seven_rounds) << std::hex << a.counter.word[0];
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
