#pragma once
// Internal: the compaction engine (device::compact in compact.cuh): the exact engines' tile I/O
// and look-back over the counts of kept elements.

#include <cuda_runtime.h>

#include <cstdint>

#include "gpukit/primitives/cuda/detail/check.cuh"
#include "gpukit/primitives/cuda/detail/ptx.cuh"
#include "gpukit/primitives/cuda/detail/tile_io.cuh"
#include "gpukit/primitives/cuda/detail/tile_state.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::device::detail::compact_agent {

/// Counts as a scan operation: exact int64 sums, packed into 62-bit status payloads (a count of
/// at most 2^62 needs no clamping).
struct CountOp {
  using Input = long long;
  using Acc = long long;
  __host__ __device__ static Acc identity() { return 0; }
  __host__ __device__ static Acc load(Input x) { return x; }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
  __host__ __device__ static Acc clamp_carry(Acc a) { return a; }
};

struct CompactShared {
  int warp_kept[detail::kSubTiles][kWarps];
  long long exclusive;
  unsigned long long ticket;
  bool last;  // the last block to finish (detail::finish_block)
};

template <class T, class Keep>
__global__ void __launch_bounds__(kThreads, 3)
    compact_kernel(Keep keep, const T* input, T* output, std::int64_t count, int sub_tiles,
                   std::int64_t tiles, detail::ExactTileStatus<CountOp> status,
                   detail::LaunchControl* control, long long* kept_total) {
  using Shape = detail::TileShape<T>;
  constexpr int kSubTiles = detail::kSubTiles;
  static_assert(Shape::kItems <= 32, "compact: one keep bit an item");
  extern __shared__ uint4 tile_buffer[];  // [sub_tiles][kWarps][kWarpChunks]
  __shared__ CompactShared shared;
  const CountOp op;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const auto buffer = [warp](int sub) {
    return tile_buffer + (sub * kWarps + warp) * detail::kWarpChunks;
  };

  if (threadIdx.x == 0) shared.ticket = atomicAdd(&control->tile_counter, 1ull);
  __syncthreads();
  const auto tile = static_cast<std::int64_t>(shared.ticket);
  const std::int64_t first_sub = tile * sub_tiles;
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
#pragma unroll
  for (int sub = 0; sub < kSubTiles; ++sub) {
    if (sub < sub_tiles) {
      detail::stage_warp_segment(input, count, first_sub + sub, buffer(sub), vector_ok);
    }
    detail::cp_async_commit();
  }

  // Pass 1: which items are kept, and the warps' scans of the threads' counts.
  const int first_item = warp * Shape::kWarpElements + lane * Shape::kItems;
  unsigned kept_mask[kSubTiles];  // bit j: item j of the sub-tile is kept
  int lane_exclusive[kSubTiles];
#pragma unroll
  for (int sub = 0; sub < kSubTiles; ++sub) {
    kept_mask[sub] = 0;
    lane_exclusive[sub] = 0;
    if (sub >= sub_tiles) break;
    detail::wait_for_sub_tile(sub);
    __syncwarp();
    T items[Shape::kItems];
    detail::read_blocked(buffer(sub), items);
    const int valid = detail::sub_tile_valid<T>(count, first_sub + sub);
#pragma unroll
    for (int j = 0; j < Shape::kItems; ++j) {
      if (first_item + j < valid && keep(items[j])) kept_mask[sub] |= 1u << j;
    }
    const int thread_kept = __popc(kept_mask[sub]);
    int lane_inclusive = thread_kept;
#pragma unroll
    for (int d = 1; d < kLanes; d *= 2) {
      const int lower = __shfl_up_sync(~0u, lane_inclusive, d);
      if (lane >= d) lane_inclusive += lower;
    }
    lane_exclusive[sub] = lane_inclusive - thread_kept;
    if (lane == kLanes - 1) shared.warp_kept[sub][warp] = lane_inclusive;
  }
  __syncthreads();

  if (warp == 0) {
    long long tile_kept = 0;
    for (int sub = 0; sub < sub_tiles; ++sub) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) tile_kept += shared.warp_kept[sub][w];
    }
    const long long before = detail::resolve_tile_prefix(op, status, tile, tile_kept);
    if (lane == 0) {
      shared.exclusive = before;
      if (tile == tiles - 1) *kept_total = before + tile_kept;
    }
  }

  // Pass 2: pack the kept items, in order, to the front of the tile's buffer. Sub-tile s's items
  // go below the end of sub-tile s's own area, so each sub-tile is read into registers (and a
  // barrier passed) before any thread writes over it.
  T* packed = reinterpret_cast<T*>(tile_buffer);
  int packed_before = 0;  // kept items of the tile's earlier sub-tiles
#pragma unroll
  for (int sub = 0; sub < kSubTiles; ++sub) {
    if (sub >= sub_tiles) break;
    int offset = packed_before + lane_exclusive[sub];
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const int kept = shared.warp_kept[sub][w];
      if (w < warp) offset += kept;
      packed_before += kept;
    }
    T items[Shape::kItems];
    detail::read_blocked(buffer(sub), items);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < Shape::kItems; ++j) {
      if (kept_mask[sub] & (1u << j)) packed[offset++] = items[j];
    }
  }
  __syncthreads();

  // Consecutive threads on consecutive addresses: the writes coalesce however sparse the kept
  // items are.
  T* destination = output + shared.exclusive;
  for (int k = threadIdx.x; k < packed_before; k += kThreads) __stcs(destination + k, packed[k]);
  detail::finish_block(control, status, tiles, /*blocks=*/tiles, shared.last);
}

/// Workspace bytes a compaction of `count` elements needs (T's tile size).
template <class T>
std::size_t workspace_bytes(std::int64_t count) {
  return detail::kStatusOffset +
         detail::ExactTileStatus<CountOp>::bytes(detail::tile_count<T>(count));
}

/// Copies the elements x of `input` with keep(x) true, in order, to the front of `output`
/// (device memory, disjoint from the input) and writes their number to `kept_total` (device).
/// `keep` is a device-callable predicate on T; T's size is 4, 8 or 16 bytes. One kernel launch,
/// no memset, when the workspace's last user was this engine or the exact scan engine with at
/// least as many tiles (detail::LaunchControl). `sub_tiles` (1..4, 0: the default rule) is
/// for tuning experiments and tests.
template <class T, class Keep, class Workspace>
void launch(Keep keep, const T* input, T* output, std::int64_t count, long long* kept_total,
            Workspace& workspace, cudaStream_t stream, int sub_tiles = 0) {
  if (count <= 0) {
    detail::check_cuda(cudaMemsetAsync(kept_total, 0, sizeof(long long), stream),
                       "cudaMemsetAsync(kept count)");
    return;
  }
  using Status = detail::ExactTileStatus<CountOp>;
  if (sub_tiles <= 0 || sub_tiles > detail::kSubTiles) {
    sub_tiles = detail::sub_tiles_for<T>(count);
  }
  const std::int64_t tile = std::int64_t{sub_tiles} * detail::TileShape<T>::kSubTile;
  const std::int64_t tiles = (count + tile - 1) / tile;
  auto* base = static_cast<unsigned char*>(
      workspace.reserve_clean(detail::kStatusOffset + Status::bytes(tiles),
                              detail::kStatusOffset + Status::flag_bytes(tiles), stream));
  const auto kernel = compact_kernel<T, Keep>;
  static const bool allowed = (detail::allow_tile_buffer(kernel), true);
  (void)allowed;
  kernel<<<static_cast<unsigned>(tiles), kThreads, detail::tile_buffer_bytes(sub_tiles), stream>>>(
      keep, input, output, count, sub_tiles, tiles, Status::at(base + detail::kStatusOffset, tiles),
      reinterpret_cast<detail::LaunchControl*>(base), kept_total);
  detail::check_cuda(cudaGetLastError(), "launch of compact_kernel");
  workspace.leave_clean();
}

}  // namespace gpukit::primitives::device::detail::compact_agent
