#pragma once
// Random words to uniform floating-point numbers on the open interval (0, 1).
//
// Never 0 (a log or an inverse normal CDF would return -inf) and never 1 (the same at the other
// end): each conversion keeps as many random bits as can sit at the midpoints of a uniform grid
// without any value rounding to 1, and every operation is exact, so the CPU and the GPU produce
// the same bits.
//   float:  (m + 1/2) 2^-23 for m = the word's top 23 bits, i.e. the 2^23 values (2m + 1) 2^-24,
//           from 2^-24 (about 6.0e-8) to 1 - 2^-24.
//           (A 24-bit m does not fit: m + 1/2 would need 25 significant bits, and the largest
//           value would round to 1.0f.)
//   double: (m + 1/2) 2^-52 for m = 52 bits (the first word's 32 and the second word's top 20),
//           i.e. the 2^52 values (2m + 1) 2^-53, from 2^-53 (about 1.1e-16) to 1 - 2^-53.
// Both grids are symmetric about 1/2: the word with every bit flipped gives exactly 1 - u, so
// antithetic pairs and the two tails of a normal transform mirror each other exactly.

#include <cstdint>

#include "gpukit/core/host_device.hpp"

namespace gpukit::rng {

/// A float in (0, 1) from one random word (its top 23 bits).
GPUKIT_HD_INLINE float uniform_float(std::uint32_t word) {
  return (static_cast<float>(word >> 9) + 0.5f) * 0x1p-23f;
}

/// A double in (0, 1) from two random words: all 32 bits of `high`, the top 20 of `low`.
GPUKIT_HD_INLINE double uniform_double(std::uint32_t high, std::uint32_t low) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(high) << 20) | (low >> 12);
  return (static_cast<double>(bits) + 0.5) * 0x1p-52;
}

}  // namespace gpukit::rng
