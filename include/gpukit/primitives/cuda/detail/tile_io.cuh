#pragma once
// Internal: block tile I/O of the exact engines (exact scan, compaction): a tile of up to four
// sub-tiles of 16 KB, 256 threads x 4 chunks of 16 bytes each, copied in striped (lane l, chunk
// 32k + l: coalesced) with cp.async into a swizzled shared-memory layout that lets each lane read
// its consecutive elements (blocked) without bank conflicts, and written back the same way.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gpukit/primitives/cuda/detail/check.cuh"
#include "gpukit/primitives/cuda/detail/ptx.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"

namespace gpukit::primitives::device::detail {

inline constexpr int kWarps = 8;
inline constexpr int kThreads = kWarps * kLanes;
/// 16-byte chunks a lane holds per sub-tile: 64 bytes a thread, 16 KB a sub-tile.
inline constexpr int kLaneChunks = 4;
inline constexpr int kWarpChunks = kLanes * kLaneChunks;  // 128 chunks, 2 KB a warp
/// A tile is up to four sub-tiles of 16 KB (kThreads x kLaneChunks chunks), all loaded at once.
inline constexpr int kSubTiles = 4;

/// The tile geometry for elements of type E (4, 8 or 16 bytes).
template <class E>
struct TileShape {
  static_assert(sizeof(E) == 4 || sizeof(E) == 8 || sizeof(E) == 16,
                "detail: elements of 4, 8 or 16 bytes");
  static constexpr int kVec = int(16 / sizeof(E));       // elements a chunk
  static constexpr int kItems = kLaneChunks * kVec;      // elements a thread (blocked)
  static constexpr int kWarpElements = kLanes * kItems;  // a warp's consecutive segment
  static constexpr int kSubTile = kThreads * kItems;     // 4096 for 4-byte elements
};

/// The shared-memory slot of chunk c (0..127) of a warp's segment. Keeps c's group of 8 and
/// permutes within it, so that both the striped accesses (8 lanes at chunks 32k + l) and the
/// blocked ones (8 lanes at chunks 4l + q) hit 8 distinct 16-byte bank groups.
__device__ __forceinline__ int chunk_slot(int c) { return (c & ~7) | ((c ^ (c >> 3)) & 7); }

/// Element e of a warp's segment in its (swizzled) shared-memory buffer.
template <class E>
__device__ __forceinline__ E& element_at(uint4* warp_buffer, int e) {
  constexpr int kVec = TileShape<E>::kVec;
  return reinterpret_cast<E*>(warp_buffer + chunk_slot(e / kVec))[e % kVec];
}

/// Starts copying the calling warp's segment of sub-tile `sub_tile` into `warp_buffer` (striped,
/// swizzled): 16-byte asynchronous copies when the segment is whole and the input 16-byte aligned,
/// else element by element (synchronously; only the last tile or a misaligned input goes this way).
/// Elements past `count` are not read.
template <class E>
__device__ __forceinline__ void stage_warp_segment(const E* input, std::int64_t count,
                                                   std::int64_t sub_tile, uint4* warp_buffer,
                                                   bool vector_ok) {
  using Shape = TileShape<E>;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const std::int64_t begin = sub_tile * Shape::kSubTile + std::int64_t(warp) * Shape::kWarpElements;
  const std::int64_t remaining = count - begin;
  const E* source = input + begin;
  if (vector_ok && remaining >= Shape::kWarpElements) {
#pragma unroll
    for (int k = 0; k < kLaneChunks; ++k) {
      const int c = k * kLanes + lane;
      cp_async_16(warp_buffer + chunk_slot(c), reinterpret_cast<const uint4*>(source) + c);
    }
  } else {
#pragma unroll
    for (int k = 0; k < Shape::kItems; ++k) {
      const int e = k * kLanes + lane;
      if (e < remaining) element_at<E>(warp_buffer, e) = source[e];
    }
  }
}

/// Reads the lane's kItems consecutive elements (blocked) from its warp's buffer.
template <class E>
__device__ __forceinline__ void read_blocked(const uint4* warp_buffer,
                                             E (&items)[TileShape<E>::kItems]) {
  const int lane = threadIdx.x % kLanes;
#pragma unroll
  for (int q = 0; q < kLaneChunks; ++q) {
    const uint4 chunk = warp_buffer[chunk_slot(lane * kLaneChunks + q)];
    memcpy(&items[q * TileShape<E>::kVec], &chunk, sizeof chunk);
  }
}

/// Writes the warp's segment from `warp_buffer` (striped) to `destination` (the segment's start):
/// 16-byte streaming stores when whole and aligned, else element by element up to `remaining`.
template <class E>
__device__ __forceinline__ void store_warp_segment(const uint4* warp_buffer, E* destination,
                                                   std::int64_t remaining, bool vector_ok) {
  using Shape = TileShape<E>;
  const int lane = threadIdx.x % kLanes;
  if (vector_ok && remaining >= Shape::kWarpElements) {
#pragma unroll
    for (int k = 0; k < kLaneChunks; ++k) {
      const int c = k * kLanes + lane;
      __stcs(reinterpret_cast<uint4*>(destination) + c, warp_buffer[chunk_slot(c)]);
    }
  } else {
#pragma unroll
    for (int k = 0; k < Shape::kItems; ++k) {
      const int e = k * kLanes + lane;
      if (e < remaining) {
        destination[e] = element_at<E>(const_cast<uint4*>(warp_buffer), e);
      }
    }
  }
}

/// The same for a sub-tile index known only after unrolling: sub-tile `sub` of kSubTiles groups
/// has arrived once at most kSubTiles - 1 - sub groups are pending.
__device__ __forceinline__ void wait_for_sub_tile(int sub) {
  static_assert(kSubTiles == 4, "detail: one wait per sub-tile below");
  if (sub == 0) cp_async_wait<3>();
  if (sub == 1) cp_async_wait<2>();
  if (sub == 2) cp_async_wait<1>();
  if (sub == 3) cp_async_wait<0>();
}

/// The dynamic shared memory of a block working on tiles of `sub_tiles` sub-tiles.
inline constexpr std::size_t tile_buffer_bytes(int sub_tiles) {
  return std::size_t(sub_tiles) * kWarps * kWarpChunks * sizeof(uint4);
}

/// Elements of sub-tile `sub` that exist (may be <= 0 past the end, or more than a sub-tile).
template <class E>
__device__ __forceinline__ int sub_tile_valid(std::int64_t count, std::int64_t sub) {
  const std::int64_t left = count - sub * TileShape<E>::kSubTile;
  return left < TileShape<E>::kSubTile ? static_cast<int>(left < 0 ? 0 : left)
                                       : TileShape<E>::kSubTile;
}

/// Sub-tiles a tile: one per 96 sub-tiles of the array, from one up to four (64 KB) from 384
/// sub-tiles (1.5 M int32) up. Measured on the H200 (int32 sum, docs/case-studies/scan.md): four
/// were the fastest from 2^22 to 2^30, even where that leaves fewer tiles than the 396 blocks
/// that fit at once (2^22: 256 tiles); at 2^21 two and four tied, at 2^20 two were the fastest.
template <class E>
int sub_tiles_for(std::int64_t count) {
  const std::int64_t s = count / (std::int64_t{96} * TileShape<E>::kSubTile);
  return static_cast<int>(s < 1 ? 1 : (s > kSubTiles ? kSubTiles : s));
}

template <class E>
std::int64_t tile_count(std::int64_t count) {
  const std::int64_t tile = std::int64_t{sub_tiles_for<E>(count)} * TileShape<E>::kSubTile;
  return (count + tile - 1) / tile;
}

/// Lets `kernel` use a whole tile's dynamic shared memory (once per kernel).
template <class Kernel>
void allow_tile_buffer(Kernel kernel) {
  detail::check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(tile_buffer_bytes(kSubTiles))),
                     "cudaFuncSetAttribute(exact scan shared memory)");
}

}  // namespace gpukit::primitives::device::detail
