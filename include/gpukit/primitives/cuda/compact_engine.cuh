#pragma once
// Single-pass stream compaction on the scan engine's tiles and decoupled look-back
// (scan_engine.cuh), public so that a CUDA user can instantiate it with a predicate of their own.
//
// A tile's 4096 elements are loaded as the scan loads them (warp w: four rows of 32 lanes x 4).
// Each row's keep-flags are counted with four ballots, so a lane knows where its kept elements go
// within the row; each warp packs its kept elements, in order, into shared memory. The tile's
// count is published and warp 0 looks back for the number kept before the tile, exactly as the
// scan's look-back does. Then every warp copies its packed elements out with consecutive lanes
// on consecutive addresses, so the writes coalesce however sparse the kept elements are.

#include <cuda_runtime.h>

#include <cstdint>

#include "gpukit/primitives/cuda/scan_engine.cuh"

namespace gpukit::primitives::compact_engine {

using scan_engine::kLanes;
using scan_engine::kRowElements;
using scan_engine::kRows;
using scan_engine::kThreads;
using scan_engine::kTile;
using scan_engine::kVec;
using scan_engine::kWarpElements;
using scan_engine::kWarps;

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

template <class T>
struct CompactShared {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "compact_engine: elements of 4 or 8 bytes");
  scan_engine::SharedStorage<CountOp> scan;
  T packed[kWarps][kWarpElements];
};

template <class T, class Keep>
__global__ void __launch_bounds__(kThreads)
    compact_kernel(Keep keep, const T* input, T* output, std::int64_t count, std::int64_t tiles,
                   scan_engine::TileStatus<CountOp> status, unsigned long long* tile_counter,
                   long long* kept_total) {
  __shared__ CompactShared<T> shared;
  const CountOp op;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const unsigned lanes_below = (1u << lane) - 1u;
  const bool vector_ok =
      reinterpret_cast<std::uintptr_t>(input) % 16 == 0 && (sizeof(T) * kVec) % 16 == 0;
  T* packed = shared.packed[warp];

  if (threadIdx.x == 0) {
    shared.scan.next_tile = static_cast<long long>(atomicAdd(tile_counter, 1ull));
  }
  __syncthreads();
  std::int64_t tile = shared.scan.next_tile;
  while (tile < tiles) {
    unsigned long long next_tile = 0;
    if (threadIdx.x == 0) next_tile = atomicAdd(tile_counter, 1ull);
    const std::int64_t tile_begin = tile * kTile;
    const int valid = static_cast<int>(count - tile_begin < kTile ? count - tile_begin : kTile);
    const int warp_begin = warp * kWarpElements;

    // Load, flag, and pack each row's kept elements after the previous rows' in shared memory.
    int warp_kept = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row_begin = warp_begin + r * kRowElements;
      const int first = row_begin + lane * kVec;
      alignas(16) T x[kVec];
      bool flag[kVec];
      const T* p = input + tile_begin + first;
      if (vector_ok && row_begin + kRowElements <= valid) {
#pragma unroll
        for (int c = 0; c < int(sizeof(x) / 16); ++c) {
          reinterpret_cast<uint4*>(x)[c] = __ldcs(reinterpret_cast<const uint4*>(p) + c);
        }
#pragma unroll
        for (int j = 0; j < kVec; ++j) flag[j] = keep(x[j]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          flag[j] = first + j < valid;
          if (flag[j]) {
            x[j] = p[j];
            flag[j] = keep(x[j]);
          }
        }
      }
      // Kept elements of lanes below this one, then this lane's own, in element order.
      int position = warp_kept;
      int row_kept = 0;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const unsigned mask = __ballot_sync(~0u, flag[j]);
        position += __popc(mask & lanes_below);
        row_kept += __popc(mask);
      }
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if (flag[j]) packed[position++] = x[j];
      }
      warp_kept += row_kept;
    }
    if (lane == 0) shared.scan.warp_totals[warp] = warp_kept;
    __syncthreads();

    long long warp_prefix = 0;
    for (int w = 0; w < warp; ++w) warp_prefix += shared.scan.warp_totals[w];
    if (warp == 0) {
      long long tile_kept = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) tile_kept += shared.scan.warp_totals[w];
      if (lane == 0) status.publish(tile, tile_kept);
      const long long before =
          scan_engine::tile_exclusive_prefix(op, status, tile, tiles, 0ll, tile_kept, kept_total);
      if (lane == 0) {
        shared.scan.exclusive = before;
        shared.scan.next_tile = static_cast<long long>(next_tile);
      }
    }
    __syncthreads();

    T* out = output + shared.scan.exclusive + warp_prefix;
    for (int k = lane; k < warp_kept; k += kLanes) __stcs(out + k, packed[k]);
    __syncwarp();  // the packed buffer is rewritten by the next tile
    tile = shared.scan.next_tile;
  }
}

/// Workspace bytes a compaction of `count` elements needs.
inline std::size_t workspace_bytes(std::int64_t count) {
  return scan_engine::workspace_bytes<CountOp>(count);
}

/// Copies the elements x of `input` with keep(x) true, in order, to the front of `output`
/// (device memory, disjoint from the input) and writes their number to `kept_total` (device).
/// `keep` is a device-callable predicate on T; T's size is 4 or 8 bytes.
template <class T, class Keep>
void launch(Keep keep, const T* input, T* output, std::int64_t count, long long* kept_total,
            ScanWorkspace& workspace, cudaStream_t stream) {
  if (count <= 0) {
    scan_engine::check_cuda(cudaMemsetAsync(kept_total, 0, sizeof(long long), stream),
                            "cudaMemsetAsync(kept count)");
    return;
  }
  const std::int64_t tiles = (count + kTile - 1) / kTile;
  auto* base = static_cast<unsigned char*>(workspace.reserve(workspace_bytes(count)));
  auto* tile_counter =
      reinterpret_cast<unsigned long long*>(base + scan_engine::WorkspaceLayout::kTileCounter);
  void* status_area = base + scan_engine::WorkspaceLayout::kStatus;
  scan_engine::check_cuda(cudaMemsetAsync(tile_counter, 0,
                                          8 + scan_engine::TileStatus<CountOp>::flag_bytes(
                                                  scan_engine::status_entries(tiles)),
                                          stream),
                          "cudaMemsetAsync(compact tile status)");
  const auto kernel = compact_kernel<T, Keep>;
  static int resident_blocks = [&] {
    int device = 0, sms = 0, per_sm = 0;
    scan_engine::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    scan_engine::check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                            "cudaDeviceGetAttribute(SM count)");
    scan_engine::check_cuda(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return sms * (per_sm > 0 ? per_sm : 1);
  }();
  const std::int64_t blocks = tiles < resident_blocks ? tiles : resident_blocks;
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      keep, input, output, count, tiles,
      scan_engine::TileStatus<CountOp>::at(status_area, scan_engine::status_entries(tiles)),
      tile_counter, kept_total);
  scan_engine::check_cuda(cudaGetLastError(), "launch of compact_kernel");
}

}  // namespace gpukit::primitives::compact_engine
