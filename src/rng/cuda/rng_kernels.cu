// The flat-stream kernels: each thread computes whole Philox blocks (four words) and stores the
// lanes inside the request, with the same loop body as the CPU backend (flat_stream_fill.hpp), so
// the values depend on the stream position only, never on the thread, block or grid.
//
// Napkin math (H200, to be checked by `gpukit bench rng`): a Philox4x32-10 block is about six
// integer instructions per round (two 32x32->64 multiplies, two three-input XORs, two key adds),
// ~60 per block; at ~64 integer instructions per clock per SM x 132 SMs x 1.98 GHz that is
// ~280 G blocks/s, ~1.1 T float uniforms/s, about what HBM can store (~4.3 TB/s / 4 bytes).
// Uniform fills therefore sit near both limits; normals, computed in double (normal.hpp), are
// bound by arithmetic.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/cuda/check.hpp"
#include "core/cuda/launch_shape.hpp"
#include "rng/cuda/rng_launchers.hpp"
#include "rng/flat_stream_fill.hpp"

namespace gpukit::rng::cuda_detail {

using detail::StreamKind;

namespace {

constexpr int kThreadsPerBlock = 256;

// `whole_blocks_aligned`: the request starts on a block boundary and `out` on 16 bytes, so every
// block inside the request is one 16-byte store (a quarter of the store instructions of four
// lane stores 16 bytes apart, and whole sectors per instruction); the blocks at the ends go
// lane by lane.
template <class T, StreamKind kKind>
__global__ void __launch_bounds__(kThreadsPerBlock)
    fill_flat_stream_kernel(T* out, std::uint64_t offset, std::int64_t count, std::uint64_t seed,
                            std::uint64_t first_block, std::int64_t block_count,
                            bool whole_blocks_aligned) {
  constexpr int lanes = kFlatStreamLanes<T>;
  static_assert(sizeof(T) * lanes == sizeof(uint4));
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < block_count; i += stride) {
    const std::uint64_t block = first_block + static_cast<std::uint64_t>(i);
    const std::uint64_t first_index = block * lanes;
    if (whole_blocks_aligned && first_index - offset + lanes <= static_cast<std::uint64_t>(count)) {
      T values[lanes];
      detail::values_of_block<T, kKind>(flat_stream_words(seed, block), values);
      uint4 packed;
      memcpy(&packed, values, sizeof packed);
      *reinterpret_cast<uint4*>(out + (first_index - offset)) = packed;
    } else {
      detail::store_block<T, kKind>(out, offset, count, seed, block);
    }
  }
}

}  // namespace

template <class T, StreamKind kKind>
void launch_fill_flat_stream(T* device_out, std::int64_t count, std::uint64_t seed,
                             std::uint64_t offset, StreamHandle stream, int grid_blocks) {
  if (count <= 0) return;
  const detail::BlockRange blocks = detail::blocks_covering<T>(offset, count);
  const auto kernel = fill_flat_stream_kernel<T, kKind>;
  std::int64_t grid = grid_blocks;
  if (grid <= 0) {
    const std::int64_t resident = std::int64_t{gpukit::cuda::detail::current_sm_count()} *
                                  gpukit::cuda::detail::resident_blocks_per_sm(
                                      reinterpret_cast<const void*>(kernel), kThreadsPerBlock);
    grid = std::min((blocks.count + kThreadsPerBlock - 1) / kThreadsPerBlock, resident);
  }
  const bool whole_blocks_aligned =
      offset % static_cast<std::uint64_t>(kFlatStreamLanes<T>) == 0 &&
      reinterpret_cast<std::uintptr_t>(device_out) % sizeof(uint4) == 0;
  kernel<<<static_cast<unsigned>(grid), kThreadsPerBlock, 0, stream>>>(
      device_out, offset, count, seed, blocks.first, blocks.count, whole_blocks_aligned);
  GPUKIT_CUDA_CHECK_LAUNCH("fill_flat_stream_kernel");
}

#define GPUKIT_INSTANTIATE_FILL(T, kind)                                                         \
  template void launch_fill_flat_stream<T, kind>(T*, std::int64_t, std::uint64_t, std::uint64_t, \
                                                 StreamHandle, int);
GPUKIT_INSTANTIATE_FILL(std::uint32_t, StreamKind::bits)
GPUKIT_INSTANTIATE_FILL(float, StreamKind::uniform)
GPUKIT_INSTANTIATE_FILL(double, StreamKind::uniform)
GPUKIT_INSTANTIATE_FILL(float, StreamKind::normal_box_muller)
GPUKIT_INSTANTIATE_FILL(double, StreamKind::normal_box_muller)
GPUKIT_INSTANTIATE_FILL(float, StreamKind::normal_inverse_cdf)
GPUKIT_INSTANTIATE_FILL(double, StreamKind::normal_inverse_cdf)
#undef GPUKIT_INSTANTIATE_FILL

}  // namespace gpukit::rng::cuda_detail
