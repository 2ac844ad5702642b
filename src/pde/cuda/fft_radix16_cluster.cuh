#pragma once
// Internal: the radix-16 FFT's tile (fft_radix16_block.cuh) spread over the shared memory of the
// P blocks of a thread-block cluster, so that a column longer than one block's shared memory
// holds still takes one read and one write of global memory. Only the first and the last stage
// reach into the other blocks.

#include "pde/cuda/fft_radix16_block.cuh"

namespace gpukit::pde::cuda_detail::fft_radix16 {

/// The whole tile spread over the shared memory of the P blocks of a cluster: rows
/// [h n0/P, (h + 1) n0/P) in block h's (on the GPU, pointers into distributed shared memory;
/// P = 1: the block's own). Only the first and the last stage reach across blocks: their
/// butterflies' rows are j + m n0/16 (j < n0/16), so place m lies in part m / (16/P), at the
/// same row of it as place m % (16/P) of part 0.
template <class C, int TC, int P>
struct SplitTile {
  static_assert(P == 1 || P == 2 || P == 4 || P == 8);
  static constexpr int places_per_part = 16 / P;
  C* part[P];
  int log2_rows_per_part;
  int log2_pad;  // of every part: SharedTile::log2_pad

  struct SplitLine {
    Line<C> in_part[P];
    __host__ __device__ __forceinline__ C load(int m) const {
      return in_part[m / places_per_part].load(m % places_per_part);
    }
    __host__ __device__ __forceinline__ void store(int m, C value) const {
      in_part[m / places_per_part].store(m % places_per_part, value);
    }
  };
  /// The first or last stage's butterfly: rows row0 + m n0/16 (row0 < n0/16).
  __host__ __device__ __forceinline__ SplitLine line(int row0, int log2_s, int c) const {
    SplitLine split;
    GPUKIT_FFT_UNROLL
    for (int h = 0; h < P; ++h)
      split.in_part[h] = SharedTile<C, TC>{part[h], 0, log2_pad}.line(row0, log2_s, c);
    return split;
  }
};

}  // namespace gpukit::pde::cuda_detail::fft_radix16
