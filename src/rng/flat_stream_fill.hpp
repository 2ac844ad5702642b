#pragma once
// Internal: the one loop body of every flat-stream fill (generate.cpp's OpenMP loop and the CUDA
// kernel): compute one Philox block's values and store the lanes that fall inside the request.

#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/rng/flat_stream.hpp"

namespace gpukit::rng::detail {

enum class StreamKind { bits, uniform, normal_box_muller, normal_inverse_cdf };

template <class T, StreamKind kKind>
GPUKIT_HD_INLINE void values_of_block(const Uint32x4& words, T (&out)[kFlatStreamLanes<T>]) {
  if constexpr (kKind == StreamKind::bits) {
    for (int lane = 0; lane < 4; ++lane) out[lane] = words.word[lane];
  } else if constexpr (kKind == StreamKind::uniform) {
    uniforms_of_block<T>(words, out);
  } else if constexpr (kKind == StreamKind::normal_box_muller) {
    normals_of_block<T, NormalTransform::box_muller>(words, out);
  } else {
    normals_of_block<T, NormalTransform::inverse_cdf>(words, out);
  }
}

/// The blocks that hold stream elements [offset, offset + count), count > 0.
struct BlockRange {
  std::uint64_t first = 0;
  std::int64_t count = 0;
};
template <class T>
BlockRange blocks_covering(std::uint64_t offset, std::int64_t count) {
  constexpr auto lanes = static_cast<std::uint64_t>(kFlatStreamLanes<T>);
  const std::uint64_t first = offset / lanes;
  const std::uint64_t last = (offset + static_cast<std::uint64_t>(count) - 1) / lanes;
  return {first, static_cast<std::int64_t>(last - first + 1)};
}

/// Writes the elements of block `block` that lie in [offset, offset + count) to out[k - offset].
template <class T, StreamKind kKind>
GPUKIT_HD_INLINE void store_block(T* out, std::uint64_t offset, std::int64_t count,
                                  std::uint64_t seed, std::uint64_t block) {
  constexpr int lanes = kFlatStreamLanes<T>;
  T values[lanes];
  values_of_block<T, kKind>(flat_stream_words(seed, block), values);
  const std::uint64_t first_index = block * lanes;
  for (int lane = 0; lane < lanes; ++lane) {
    const std::uint64_t index = first_index + static_cast<std::uint64_t>(lane);
    if (index >= offset && index - offset < static_cast<std::uint64_t>(count)) {
      out[index - offset] = values[lane];
    }
  }
}

}  // namespace gpukit::rng::detail
