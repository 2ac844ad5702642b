#pragma once
// The MT19937 recurrence, seeding and tempering (Matsumoto and Nishimura, ACM TOMACS 8(1), 1998,
// and their mt19937ar.c of 2002) as functions for the CPU and CUDA kernels, shared by the CPU
// generator (mt19937.hpp) and the GPU's one-twister-per-block kernel, so both produce the same
// words.

#include <cstdint>

#include "gpukit/core/host_device.hpp"

namespace gpukit::rng::detail {

inline constexpr int kMtStateWords = 624;  // n
inline constexpr int kMtShift = 397;       // m
inline constexpr std::uint32_t kMtMatrixA = 0x9908B0DFu;
inline constexpr std::uint32_t kMtUpperMask = 0x80000000u;
inline constexpr std::uint32_t kMtLowerMask = 0x7FFFFFFFu;

/// Word i of the next state from the current words i, i + 1 and i + m (indices mod n); the
/// sequential in-place update passes the already-updated word for i + m >= n and, for i = n - 1,
/// the updated word 0.
GPUKIT_HD_INLINE std::uint32_t mt_next_word(std::uint32_t word_i, std::uint32_t word_i_plus_1,
                                            std::uint32_t word_i_plus_m) {
  const std::uint32_t y = (word_i & kMtUpperMask) | (word_i_plus_1 & kMtLowerMask);
  return word_i_plus_m ^ (y >> 1) ^ ((y & 1u) ? kMtMatrixA : 0u);
}

GPUKIT_HD_INLINE std::uint32_t mt_temper(std::uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & 0x9D2C5680u;
  y ^= (y << 15) & 0xEFC60000u;
  y ^= y >> 18;
  return y;
}

/// init_genrand: the state of a 32-bit seed (std::mt19937's seeding).
GPUKIT_HD_INLINE void mt_seed_state(std::uint32_t* state, std::uint32_t seed) {
  state[0] = seed;
  for (int i = 1; i < kMtStateWords; ++i) {
    state[i] = 1812433253u * (state[i - 1] ^ (state[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  }
}

/// init_by_array: the state of a key of any length (the reference's seeding for long seeds).
GPUKIT_HD_INLINE void mt_seed_state_by_array(std::uint32_t* state, const std::uint32_t* key,
                                             int key_length) {
  mt_seed_state(state, 19650218u);
  int i = 1, j = 0;
  for (int k = kMtStateWords > key_length ? kMtStateWords : key_length; k > 0; --k) {
    state[i] = (state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) * 1664525u)) + key[j] +
               static_cast<std::uint32_t>(j);
    ++i, ++j;
    if (i >= kMtStateWords) {
      state[0] = state[kMtStateWords - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (int k = kMtStateWords - 1; k > 0; --k) {
    state[i] = (state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) * 1566083941u)) -
               static_cast<std::uint32_t>(i);
    ++i;
    if (i >= kMtStateWords) {
      state[0] = state[kMtStateWords - 1];
      i = 1;
    }
  }
  state[0] = 0x80000000u;  // the most significant bit set: a non-zero state
}

}  // namespace gpukit::rng::detail
