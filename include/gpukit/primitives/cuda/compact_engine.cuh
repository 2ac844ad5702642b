#pragma once
// Single-pass stream compaction on the exact scan engine's machinery (exact_scan_engine.cuh):
// counts are integers, so the classic decoupled look-back applies. Public so that a CUDA user can
// instantiate it with a predicate of their own.
//
// Per 16 KB tile (4096 elements of 4 bytes): persistent blocks take tiles in order from an atomic
// counter and prefetch the next tile (cp.async) while working on the current one; each lane reads
// its consecutive elements from the swizzled buffer and counts the kept ones; a warp shuffle scan
// and one barrier give every thread its offset within the tile, and the kept elements are packed,
// in order, into the tile's (now free) shared-memory buffer. Warp 0 publishes the tile's count and
// looks back for the number kept before the tile; then the block copies the packed elements out
// with consecutive threads on consecutive addresses, so the writes coalesce however sparse the
// kept elements are.

#include <cuda_runtime.h>

#include <cstdint>

#include "gpukit/primitives/cuda/exact_scan_engine.cuh"

namespace gpukit::primitives::compact_engine {

using exact_scan::kLanes;
using exact_scan::kThreads;
using exact_scan::kWarps;

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
  uint4 buffers[2][kWarps][exact_scan::kWarpChunks];  // the current tile and the next one
  int warp_kept[kWarps];
  long long exclusive;
  unsigned long long tickets[2];
};

template <class T, class Keep>
__global__ void __launch_bounds__(kThreads, 4)
    compact_kernel(Keep keep, const T* input, T* output, std::int64_t count, std::int64_t tiles,
                   exact_scan::LookbackStatus<CountOp> status, unsigned long long* tile_counter,
                   long long* kept_total) {
  using Shape = exact_scan::TileShape<T>;
  __shared__ CompactShared shared;
  const CountOp op;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(input) % 16 == 0;

  if (threadIdx.x == 0) {
    shared.tickets[0] = atomicAdd(tile_counter, 1ull);
    shared.tickets[1] = atomicAdd(tile_counter, 1ull);
  }
  __syncthreads();
  std::int64_t tile = static_cast<std::int64_t>(shared.tickets[0]);
  std::int64_t next = static_cast<std::int64_t>(shared.tickets[1]);
  if (tile < tiles) {
    exact_scan::stage_warp_segment(input, count, tile, shared.buffers[0][warp], vector_ok);
  }
  exact_scan::cp_async_commit();

  for (int round = 0; tile < tiles; ++round) {
    unsigned long long ticket = 0;
    if (threadIdx.x == 0) ticket = atomicAdd(tile_counter, 1ull);
    // The next tile goes to the buffer the whole block copied out of in the previous round.
    __syncthreads();
    if (next < tiles) {
      exact_scan::stage_warp_segment(input, count, next, shared.buffers[(round + 1) & 1][warp],
                                     vector_ok);
    }
    exact_scan::cp_async_commit();
    exact_scan::cp_async_wait_previous();
    __syncwarp();

    T items[Shape::kItems];
    exact_scan::read_blocked(shared.buffers[round & 1][warp], items);
    const std::int64_t tile_begin = tile * Shape::kTile;
    const int tile_valid =
        static_cast<int>(count - tile_begin < Shape::kTile ? count - tile_begin : Shape::kTile);
    const int first_item = warp * Shape::kWarpElements + lane * Shape::kItems;
    unsigned kept_mask = 0;  // bit j: items[j] is kept
#pragma unroll
    for (int j = 0; j < Shape::kItems; ++j) {
      if (first_item + j < tile_valid && keep(items[j])) kept_mask |= 1u << j;
    }
    const int thread_kept = __popc(kept_mask);
    int lane_inclusive = thread_kept;
#pragma unroll
    for (int d = 1; d < kLanes; d *= 2) {
      const int lower = __shfl_up_sync(~0u, lane_inclusive, d);
      if (lane >= d) lane_inclusive += lower;
    }
    if (lane == kLanes - 1) shared.warp_kept[warp] = lane_inclusive;
    __syncthreads();  // every warp has also read its items: the tile's buffer is free

    int offset = lane_inclusive - thread_kept;
    int tile_kept = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      if (w < warp) offset += shared.warp_kept[w];
      tile_kept += shared.warp_kept[w];
    }
    T* packed = reinterpret_cast<T*>(shared.buffers[round & 1]);
#pragma unroll
    for (int j = 0; j < Shape::kItems; ++j) {
      if (kept_mask & (1u << j)) packed[offset++] = items[j];
    }
    if (warp == 0) {
      const long long before = exact_scan::resolve_tile_prefix(op, status, tile, tile_kept);
      if (lane == 0) {
        shared.exclusive = before;
        shared.tickets[0] = ticket;
        if (tile == tiles - 1) *kept_total = before + tile_kept;
      }
    }
    __syncthreads();

    T* destination = output + shared.exclusive;
    for (int k = threadIdx.x; k < tile_kept; k += kThreads) __stcs(destination + k, packed[k]);
    tile = next;
    next = static_cast<std::int64_t>(shared.tickets[0]);
  }
  exact_scan::cp_async_wait_all();
}

/// Workspace bytes a compaction of `count` elements needs (T's tile size).
template <class T>
std::size_t workspace_bytes(std::int64_t count) {
  const std::int64_t tiles =
      (count + exact_scan::TileShape<T>::kTile - 1) / exact_scan::TileShape<T>::kTile;
  return exact_scan::WorkspaceLayout::kStatus + exact_scan::LookbackStatus<CountOp>::bytes(tiles);
}

/// Copies the elements x of `input` with keep(x) true, in order, to the front of `output`
/// (device memory, disjoint from the input) and writes their number to `kept_total` (device).
/// `keep` is a device-callable predicate on T; T's size is 4, 8 or 16 bytes.
template <class T, class Keep>
void launch(Keep keep, const T* input, T* output, std::int64_t count, long long* kept_total,
            ScanWorkspace& workspace, cudaStream_t stream) {
  if (count <= 0) {
    scan_engine::check_cuda(cudaMemsetAsync(kept_total, 0, sizeof(long long), stream),
                            "cudaMemsetAsync(kept count)");
    return;
  }
  using Status = exact_scan::LookbackStatus<CountOp>;
  const std::int64_t tiles =
      (count + exact_scan::TileShape<T>::kTile - 1) / exact_scan::TileShape<T>::kTile;
  auto* base = static_cast<unsigned char*>(workspace.reserve(workspace_bytes<T>(count)));
  scan_engine::check_cuda(
      cudaMemsetAsync(base, 0, exact_scan::WorkspaceLayout::kStatus + Status::flag_bytes(tiles),
                      stream),
      "cudaMemsetAsync(compact tile status)");
  const auto kernel = compact_kernel<T, Keep>;
  static const int resident = exact_scan::resident_blocks(kernel);
  const std::int64_t blocks = tiles < resident ? tiles : resident;
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      keep, input, output, count, tiles,
      Status::at(base + exact_scan::WorkspaceLayout::kStatus, tiles),
      reinterpret_cast<unsigned long long*>(base + exact_scan::WorkspaceLayout::kTileCounter),
      kept_total);
  scan_engine::check_cuda(cudaGetLastError(), "launch of compact_kernel");
}

}  // namespace gpukit::primitives::compact_engine
