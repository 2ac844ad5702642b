#pragma once
// The flat streams that generate.hpp fills: for each seed, one sequence of random words,
// uniforms or normals indexed by a 64-bit position k, the same on every backend.
//
// Layout. Block b of a seed's flat stream is the Philox block of (seed, option 0xFFFFFFFF,
// path b, step 0) (philox.hpp), so flat streams never repeat the numbers of a priced option.
// A block holds kFlatStreamLanes<T> elements: element k is lane k % L of block k / L, with
//   32-bit words and float:  L = 4, lane i from word i;
//   double:                  L = 2, lane 0 from words (0, 1), lane 1 from words (2, 3);
//   float Box-Muller:        lanes (0, 1) are the pair of uniforms (0, 1), lanes (2, 3) of (2, 3);
//   double Box-Muller:       lanes (0, 1) are the pair of the two double uniforms.
// Uniforms follow uniform.hpp, normals normal.hpp. Filling k = offset ... offset + n - 1 gives
// the same values whether done in one call or in several with consecutive offsets.

#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/philox.hpp"
#include "gpukit/rng/uniform.hpp"

namespace gpukit::rng {

/// The option word reserved for flat streams.
inline constexpr std::uint32_t kFlatStreamOption = 0xFFFFFFFFu;

/// Elements of type T per Philox block.
template <class T>
inline constexpr int kFlatStreamLanes = sizeof(T) == 8 ? 2 : 4;

/// The four random words of block `block` of the flat stream of `seed`.
GPUKIT_HD_INLINE Uint32x4 flat_stream_words(std::uint64_t seed, std::uint64_t block) {
  return philox_words(seed, kFlatStreamOption, block, 0);
}

/// The uniforms of one block.
template <class Real>
GPUKIT_HD_INLINE void uniforms_of_block(const Uint32x4& words,
                                        Real (&out)[kFlatStreamLanes<Real>]) {
  static_assert(sizeof(Real) == 4 || sizeof(Real) == 8, "float or double");
  if constexpr (sizeof(Real) == 4) {
    for (int lane = 0; lane < 4; ++lane) out[lane] = uniform_float(words.word[lane]);
  } else {
    out[0] = uniform_double(words.word[0], words.word[1]);
    out[1] = uniform_double(words.word[2], words.word[3]);
  }
}

/// The normals of one block.
template <class Real, NormalTransform kTransform>
GPUKIT_HD_INLINE void normals_of_block(const Uint32x4& words, Real (&out)[kFlatStreamLanes<Real>]) {
  Real uniforms[kFlatStreamLanes<Real>];
  uniforms_of_block<Real>(words, uniforms);
  if constexpr (kTransform == NormalTransform::box_muller) {
    for (int lane = 0; lane < kFlatStreamLanes<Real>; lane += 2) {
      const NormalPair<Real> pair = box_muller(uniforms[lane], uniforms[lane + 1]);
      out[lane] = pair.first;
      out[lane + 1] = pair.second;
    }
  } else {
    for (int lane = 0; lane < kFlatStreamLanes<Real>; ++lane) {
      out[lane] = inverse_normal_cdf(uniforms[lane]);
    }
  }
}

/// Element `index` of the uniform flat stream of `seed` (one element at a time: for tests and
/// for kernels that need a single value; whole blocks are four times cheaper).
template <class Real>
GPUKIT_HD_INLINE Real flat_stream_uniform(std::uint64_t seed, std::uint64_t index) {
  constexpr int lanes = kFlatStreamLanes<Real>;
  Real values[lanes];
  uniforms_of_block<Real>(flat_stream_words(seed, index / lanes), values);
  return values[index % lanes];
}

/// Element `index` of the normal flat stream of `seed`.
template <class Real, NormalTransform kTransform>
GPUKIT_HD_INLINE Real flat_stream_normal(std::uint64_t seed, std::uint64_t index) {
  constexpr int lanes = kFlatStreamLanes<Real>;
  Real values[lanes];
  normals_of_block<Real, kTransform>(flat_stream_words(seed, index / lanes), values);
  return values[index % lanes];
}

}  // namespace gpukit::rng
