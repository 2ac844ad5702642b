#pragma once
// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw ("Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), and gpukit's counter layout.
//
// A counter-based generator is a keyed bijection of a 128-bit counter: the numbers at a position
// are a pure function of (key, counter), with no state to carry or to split between threads. That
// is what lets the CPU backend and every CUDA kernel produce the same numbers whatever the thread
// count, block size or grid size: a number is addressed by what it is for, never by who computes
// it. Philox4x32 is ten rounds of two 32x32->64-bit multiplications and XORs (the round function
// and the Weyl key schedule of the paper, checked against the Random123 known-answer vectors in
// tests/rng/philox_test.cpp and, on the device, tests/rng/rng_gpu_test.cpp).
//
// Counter layout (the contract every gpukit consumer of random numbers follows):
//   key     = { seed bits 0-31, seed bits 32-63 }
//   counter = { path bits 0-31, path bits 32-63, step, option }
// so one Philox call yields the four 32-bit words of (seed, option, path, step): four float
// uniforms, two double uniforms, four float normals or two double normals. A consumer that needs
// more words per time step numbers its blocks step * k + j and documents k. Option 0xFFFFFFFF is
// reserved for the flat streams of generate.hpp (flat_stream.hpp), so they never repeat the
// numbers of a priced option.
//
// Everything here is header-only and compiles with a plain C++ compiler and with nvcc (callable
// from kernels).

#include <cstdint>

#include "gpukit/core/host_device.hpp"

namespace gpukit::rng {

/// Four 32-bit words: a Philox counter or its output block.
struct Uint32x4 {
  std::uint32_t word[4];
  friend constexpr bool operator==(const Uint32x4&, const Uint32x4&) = default;
};

/// Two 32-bit words: a Philox4x32 key.
struct Uint32x2 {
  std::uint32_t word[2];
  friend constexpr bool operator==(const Uint32x2&, const Uint32x2&) = default;
};

namespace detail {

// The paper's multipliers and Weyl-sequence key increments (golden ratio and sqrt(3) - 1).
inline constexpr std::uint32_t kPhiloxMultiplier0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxMultiplier1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxKeyIncrement0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxKeyIncrement1 = 0xBB67AE85u;

/// High 32 bits of the 64-bit product: one instruction on the GPU, a 64-bit multiply on the CPU.
GPUKIT_HD_INLINE std::uint32_t multiply_high(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
#endif
}

GPUKIT_HD_INLINE Uint32x4 philox4x32_round(const Uint32x4& counter, const Uint32x2& key) {
  const std::uint32_t high0 = multiply_high(kPhiloxMultiplier0, counter.word[0]);
  const std::uint32_t low0 = kPhiloxMultiplier0 * counter.word[0];
  const std::uint32_t high1 = multiply_high(kPhiloxMultiplier1, counter.word[2]);
  const std::uint32_t low1 = kPhiloxMultiplier1 * counter.word[2];
  return {
      {high1 ^ counter.word[1] ^ key.word[0], low1, high0 ^ counter.word[3] ^ key.word[1], low0}};
}

}  // namespace detail

/// Philox4x32 with `kRounds` rounds (the key is bumped between rounds, not before the first).
/// Ten rounds is the published, Crush-resistant default; seven is kept for its known answers.
template <int kRounds>
GPUKIT_HD_INLINE Uint32x4 philox4x32(Uint32x4 counter, Uint32x2 key) {
  static_assert(kRounds >= 1, "Philox needs at least one round");
  counter = detail::philox4x32_round(counter, key);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 1; round < kRounds; ++round) {
    key.word[0] += detail::kPhiloxKeyIncrement0;
    key.word[1] += detail::kPhiloxKeyIncrement1;
    counter = detail::philox4x32_round(counter, key);
  }
  return counter;
}

/// Philox4x32-10: the generator gpukit uses.
GPUKIT_HD_INLINE Uint32x4 philox4x32_10(const Uint32x4& counter, const Uint32x2& key) {
  return philox4x32<10>(counter, key);
}

/// The key of a 64-bit seed (low word first).
GPUKIT_HD_INLINE Uint32x2 philox_key(std::uint64_t seed) {
  return {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
}

/// The counter of (option, path, step) in gpukit's layout (see the top of this file).
GPUKIT_HD_INLINE Uint32x4 philox_counter(std::uint32_t option, std::uint64_t path,
                                         std::uint32_t step) {
  return {{static_cast<std::uint32_t>(path), static_cast<std::uint32_t>(path >> 32), step, option}};
}

/// The four random words of (seed, option, path, step).
GPUKIT_HD_INLINE Uint32x4 philox_words(std::uint64_t seed, std::uint32_t option, std::uint64_t path,
                                       std::uint32_t step) {
  return philox4x32_10(philox_counter(option, path, step), philox_key(seed));
}

}  // namespace gpukit::rng
