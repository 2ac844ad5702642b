#pragma once
// MT19937, the Mersenne Twister of Matsumoto and Nishimura (ACM TOMACS 8(1), 1998): the CPU
// reference generator of seed 000's Monte Carlo study (slides 20-21). A 624-word state, period
// 2^19937 - 1, 32-bit outputs; the same sequence as std::mt19937 for a 32-bit seed and as the
// authors' mt19937ar.c init_by_array for a key. It satisfies std::uniform_random_bit_generator.
//
// Unlike Philox it is sequential: output k needs the k outputs before it, so it cannot be
// addressed by (option, path, step). The GPU gets it as many independent twisters, one stream per
// (seed, option), in mt19937_streams.hpp.

#include <array>
#include <cstdint>
#include <limits>
#include <span>

#include "gpukit/rng/mt19937_recurrence.hpp"

namespace gpukit::rng {

class Mt19937 {
 public:
  using result_type = std::uint32_t;
  static constexpr std::uint32_t default_seed = 5489u;
  static constexpr int state_words = detail::kMtStateWords;

  /// init_genrand(seed), as std::mt19937(seed).
  explicit Mt19937(std::uint32_t seed = default_seed) { this->seed(seed); }
  /// init_by_array(key); InvalidInput for an empty key.
  explicit Mt19937(std::span<const std::uint32_t> key) { seed(key); }

  void seed(std::uint32_t seed);
  void seed(std::span<const std::uint32_t> key);

  /// The next 32-bit output.
  std::uint32_t operator()() {
    if (index_ >= state_words) regenerate();
    return detail::mt_temper(state_[index_++]);
  }
  /// Skips `count` outputs (one regeneration per 624).
  void discard(std::uint64_t count);

  static constexpr std::uint32_t min() { return 0; }
  static constexpr std::uint32_t max() { return std::numeric_limits<std::uint32_t>::max(); }

 private:
  void regenerate();

  std::array<std::uint32_t, state_words> state_{};
  int index_ = state_words;
};

}  // namespace gpukit::rng
