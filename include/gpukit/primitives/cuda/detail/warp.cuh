#pragma once
// Internal: warp collectives of any trivially copyable value (whole 32-bit words): shuffles, the
// Kogge-Stone scan, ordered and commutative folds.

#include <cuda_runtime.h>

#include <cstring>

namespace gpukit::primitives::device::detail {

/// Threads a warp.
inline constexpr int kLanes = 32;

// --- shuffles of any trivially copyable value -------------------------------------------------

/// Applies `shuffle_word` (one 32-bit warp shuffle) to every word of `value`.
template <class T, class ShuffleWord>
__device__ __forceinline__ T shuffle_words(T value, ShuffleWord shuffle_word) {
  static_assert(sizeof(T) % 4 == 0, "detail: accumulators are whole 32-bit words");
  unsigned words[sizeof(T) / 4];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) words[i] = shuffle_word(words[i]);
  memcpy(&value, words, sizeof(T));
  return value;
}

template <class T>
__device__ __forceinline__ T shuffle(T value, int source_lane) {
  return shuffle_words(value,
                       [source_lane](unsigned w) { return __shfl_sync(~0u, w, source_lane); });
}

template <class T>
__device__ __forceinline__ T shuffle_up(T value, int delta) {
  return shuffle_words(value, [delta](unsigned w) { return __shfl_up_sync(~0u, w, delta); });
}

/// Shuffles any 4-byte-multiple value down the warp, word by word.
template <class T>
__device__ __forceinline__ T shuffle_down(const T& value, int offset) {
  static_assert(sizeof(T) % 4 == 0, "shuffled values must be a multiple of 4 bytes");
  constexpr int kWords = sizeof(T) / 4;
  unsigned words[kWords];
  std::memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_down_sync(0xffffffffu, words[w], offset);
  T result;
  std::memcpy(&result, words, sizeof(T));
  return result;
}

// --- warp collectives ----------------------------------------------------------------------

/// The warp's Kogge-Stone inclusive scan of one value per lane (the canonical lane order).
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_inclusive_scan(const Op& op, typename Op::Acc s) {
  const int lane = threadIdx.x % kLanes;
#pragma unroll
  for (int d = 1; d < kLanes; d *= 2) {
    const auto lower = shuffle_up(s, d);
    if (lane >= d) s = op(lower, s);
  }
  return s;
}

/// The ordered fold of the 32 lanes' values (lane 0 first); lane 0 holds it.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_fold_to_lane0(const Op& op,
                                                               typename Op::Acc value) {
  const int lane = threadIdx.x % kLanes;
#pragma unroll
  for (int d = 1; d < kLanes; d *= 2) {
    const auto later =
        detail::shuffle_words(value, [d](unsigned w) { return __shfl_down_sync(~0u, w, d); });
    if (lane + d < kLanes) value = op(value, later);
  }
  return value;
}

/// For a commutative operation: the warp-wide totals of kCount values a lane (a power of two up
/// to 32) by a butterfly that halves the values each step, kCount - 1 + 5 - log2(kCount)
/// shuffles instead of 5 kCount. Lane l ends up with the total of value segment_of_lane(l).
template <int kCount, int kOffset = kLanes / 2, class Op>
__device__ __forceinline__ typename Op::Acc warp_totals_scattered(
    const Op& op, typename Op::Acc (&values)[kCount]) {
  const int lane = threadIdx.x % kLanes;
  if constexpr (kCount == 1) {
    typename Op::Acc value = values[0];
#pragma unroll
    for (int d = kOffset; d >= 1; d /= 2) {
      value = op(value, detail::shuffle_words(
                            value, [d](unsigned w) { return __shfl_xor_sync(~0u, w, d); }));
    }
    return value;
  } else {
    constexpr int kHalf = kCount / 2;
    const bool upper = (lane & kOffset) != 0;
    typename Op::Acc kept[kHalf];
#pragma unroll
    for (int i = 0; i < kHalf; ++i) {
      const auto mine = upper ? values[i + kHalf] : values[i];
      const auto theirs = upper ? values[i] : values[i + kHalf];
      kept[i] = op(mine, detail::shuffle_words(
                             theirs, [](unsigned w) { return __shfl_xor_sync(~0u, w, kOffset); }));
    }
    return warp_totals_scattered<kHalf, kOffset / 2>(op, kept);
  }
}

/// The value index whose total lane `lane` holds after warp_totals_scattered<kCount>.
template <int kCount>
__device__ __forceinline__ int segment_of_lane(int lane) {
  int segment = 0;
#pragma unroll
  for (int half = kCount / 2, offset = kLanes / 2; half >= 1; half /= 2, offset /= 2) {
    if (lane & offset) segment += half;
  }
  return segment;
}

}  // namespace gpukit::primitives::device::detail
