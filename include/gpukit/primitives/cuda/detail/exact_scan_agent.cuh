#pragma once
// Internal: the exact scan engine (device::exact_scan in scan.cuh): one block a tile of up to
// 64 KB (tile_io.cuh), the exact look-back and launch control of tile_state.cuh.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpukit/primitives/cuda/detail/check.cuh"
#include "gpukit/primitives/cuda/detail/ptx.cuh"
#include "gpukit/primitives/cuda/detail/tile_io.cuh"
#include "gpukit/primitives/cuda/detail/tile_state.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives::device::detail::exact_scan_agent {

template <class Acc>
struct ScanShared {
  Acc warp_totals[kSubTiles][kWarps];
  Acc exclusive;
  unsigned long long ticket;
  bool last;  // the last block to finish (finish_block)
};

/// Blocks an SM: three (85 registers, 3 x 64 KB of shared memory) for accumulators up to 8
/// bytes, two for wider ones (int64 sums accumulate in 128 bits, user types).
template <class Op>
inline constexpr int kMinBlocks = sizeof(typename Op::Acc) > 8 ? 2 : 3;

template <class Op, class Output, bool kFull>
__device__ __forceinline__ void scan_thread_items(
    const Op& op, const typename Op::Input (&items)[TileShape<typename Op::Input>::kItems],
    typename Op::Acc prefix, bool exclusive, int first_item, int sub_valid, uint4* warp_buffer,
    int& first_bad) {
  using Acc = typename Op::Acc;
  using Shape = TileShape<typename Op::Input>;
  const int lane = threadIdx.x % kLanes;
  Acc running = prefix;
#pragma unroll
  for (int q = 0; q < kLaneChunks; ++q) {
    alignas(16) Output out[Shape::kVec];
#pragma unroll
    for (int v = 0; v < Shape::kVec; ++v) {
      const int j = q * Shape::kVec + v;
      const bool valid = kFull || first_item + j < sub_valid;
      const Acc before = running;
      if (valid) running = op(running, op.load(items[j]));
      const Acc y = exclusive ? before : running;
      if constexpr (requires { op.fits(y); }) {
        if (valid && !op.fits(y) && first_bad > j) first_bad = j;
      }
      if constexpr (requires { op.store(y); }) {
        out[v] = op.store(y);
      } else {
        out[v] = y;
      }
    }
    memcpy(&warp_buffer[chunk_slot(lane * kLaneChunks + q)], out, sizeof out);
  }
}

template <class Op, class Output, int kWords, unsigned kPollDelayNs, bool kPublishInclusive>
__global__ void __launch_bounds__(kThreads, kMinBlocks<Op>)
    exact_scan_kernel(Op op, const typename Op::Input* input, Output* output, std::int64_t count,
                      int sub_tiles, std::int64_t tiles, bool exclusive, ExactTileStatus<Op> status,
                      LaunchControl* control, std::int64_t index_base) {
  using Input = typename Op::Input;
  using Acc = typename Op::Acc;
  using Shape = TileShape<Input>;
  static_assert(sizeof(Output) == sizeof(Input), "exact_scan: outputs as wide as inputs");
  extern __shared__ uint4 tile_buffer[];  // [sub_tiles][kWarps][kWarpChunks]
  __shared__ ScanShared<Acc> shared;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const auto buffer = [warp](int sub) { return tile_buffer + (sub * kWarps + warp) * kWarpChunks; };

  // Tiles in the order blocks start, so a tile only waits on tiles of running blocks.
  if (threadIdx.x == 0) {
    shared.ticket = atomicAdd(&control->tile_counter, 1ull);
    if (shared.ticket == 0) clear_overflow_report(control);
  }
  __syncthreads();
  const auto tile = static_cast<std::int64_t>(shared.ticket);
  const std::int64_t first_sub = tile * sub_tiles;
  const bool input_vector_ok = reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
  const bool output_vector_ok = reinterpret_cast<std::uintptr_t>(output) % 16 == 0;
  // The whole tile's copies in flight at once, one group per sub-tile (empty ones past the end).
#pragma unroll
  for (int sub = 0; sub < kSubTiles; ++sub) {
    if (sub < sub_tiles) {
      stage_warp_segment(input, count, first_sub + sub, buffer(sub), input_vector_ok);
    }
    cp_async_commit();
  }

  // Pass 1, each sub-tile as it lands: the threads' folds and the warps' scans of them.
  const int first_item = warp * Shape::kWarpElements + lane * Shape::kItems;
  Acc lane_exclusive[kSubTiles];
#pragma unroll
  for (int sub = 0; sub < kSubTiles; ++sub) {
    if (sub >= sub_tiles) break;
    wait_for_sub_tile(sub);
    __syncwarp();
    Input items[Shape::kItems];
    read_blocked(buffer(sub), items);
    const int valid = sub_tile_valid<Input>(count, first_sub + sub);
    Acc thread_total = op.identity();
    if (valid == Shape::kSubTile) {
#pragma unroll
      for (int j = 0; j < Shape::kItems; ++j) thread_total = op(thread_total, op.load(items[j]));
    } else {
#pragma unroll
      for (int j = 0; j < Shape::kItems; ++j) {
        if (first_item + j < valid) thread_total = op(thread_total, op.load(items[j]));
      }
    }
    const Acc lane_inclusive = detail::warp_inclusive_scan(op, thread_total);
    const Acc lower = detail::shuffle_up(lane_inclusive, 1);
    lane_exclusive[sub] = lane == 0 ? op.identity() : lower;
    if (lane == kLanes - 1) shared.warp_totals[sub][warp] = lane_inclusive;
  }
  __syncthreads();

  if (warp == 0) {
    Acc aggregate = op.identity();
    for (int sub = 0; sub < sub_tiles; ++sub) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) aggregate = op(aggregate, shared.warp_totals[sub][w]);
    }
    const Acc tile_exclusive =
        resolve_tile_prefix<kWords, kPollDelayNs, kPublishInclusive>(op, status, tile, aggregate);
    if (lane == 0) shared.exclusive = tile_exclusive;
  }
  __syncthreads();

  // Pass 2: outputs, sub-tile by sub-tile, through the buffer to 16-byte streaming stores.
  Acc base = shared.exclusive;  // everything before the sub-tile
#pragma unroll
  for (int sub = 0; sub < kSubTiles; ++sub) {
    if (sub >= sub_tiles) break;
    Acc prefix = base;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const Acc total = shared.warp_totals[sub][w];
      if (w < warp) prefix = op(prefix, total);
      base = op(base, total);
    }
    prefix = op(prefix, lane_exclusive[sub]);
    Input items[Shape::kItems];
    read_blocked(buffer(sub), items);
    const std::int64_t sub_begin = (first_sub + sub) * Shape::kSubTile;
    const int valid = sub_tile_valid<Input>(count, first_sub + sub);
    int first_bad = Shape::kItems;
    __syncwarp();  // every lane has its items before the outputs overwrite them
    if (valid == Shape::kSubTile) {
      scan_thread_items<Op, Output, true>(op, items, prefix, exclusive, first_item, valid,
                                          buffer(sub), first_bad);
    } else {
      scan_thread_items<Op, Output, false>(op, items, prefix, exclusive, first_item, valid,
                                           buffer(sub), first_bad);
    }
    if constexpr (requires(Acc y) { op.fits(y); }) {
      report_overflow(control, index_base + sub_begin + first_item, first_bad, Shape::kItems);
    }
    __syncwarp();
    const std::int64_t warp_begin = sub_begin + warp * Shape::kWarpElements;
    store_warp_segment(buffer(sub), output + warp_begin, count - warp_begin, output_vector_ok);
  }
  finish_block(control, status, tiles, /*blocks=*/tiles, shared.last);
}

// --- host side -----------------------------------------------------------------------------------

/// Workspace bytes a launch over `count` elements needs.
template <class Op>
std::size_t workspace_bytes(std::int64_t count) {
  return kStatusOffset + ExactTileStatus<Op>::bytes(tile_count<typename Op::Input>(count));
}

/// Scans `count` elements of `input` into `output` (device memory, any alignment of the element
/// types; the same pointer for in place, otherwise disjoint) on `stream`: inclusive or exclusive
/// per `kind`. Clears the workspace's overflow report and records in it the first index (plus
/// `index_base`) whose output fails `op.fits` (device::scan_overflow_index reads it). The
/// workspace grows to workspace_bytes<Op>(count); one kernel launch, no memset, when the
/// workspace's last user was this engine or the compaction engine with at least as many tiles.
/// `sub_tiles` (1..kSubTiles, 0: sub_tiles_for), kWords (status words a lane reads per look-back
/// step) and kPollDelayNs are for tuning experiments and tests; kPublishInclusive = false is for
/// tests.
template <int kWords = kLookbackWords, unsigned kPollDelayNs = kLookbackPollDelayNs,
          bool kPublishInclusive = true, class Op, class Output, class Workspace>
void launch(const Op& op, const typename Op::Input* input, Output* output, std::int64_t count,
            ScanKind kind, Workspace& workspace, cudaStream_t stream, std::int64_t index_base = 0,
            int sub_tiles = 0) {
  using Input = typename Op::Input;
  using Status = ExactTileStatus<Op>;
  if (sub_tiles <= 0 || sub_tiles > kSubTiles) sub_tiles = sub_tiles_for<Input>(count);
  const std::int64_t tile = std::int64_t{sub_tiles} * TileShape<Input>::kSubTile;
  const std::int64_t tiles = count > 0 ? (count + tile - 1) / tile : 0;
  auto* base = static_cast<unsigned char*>(workspace.reserve_clean(
      kStatusOffset + Status::bytes(tiles), kStatusOffset + Status::flag_bytes(tiles), stream));
  auto* control = reinterpret_cast<LaunchControl*>(base);
  if (count <= 0) {
    detail::check_cuda(cudaMemsetAsync(&control->overflow_report, 0, 8, stream),
                       "cudaMemsetAsync(exact scan overflow report)");
    workspace.leave_clean();
    return;
  }
  const auto kernel = exact_scan_kernel<Op, Output, kWords, kPollDelayNs, kPublishInclusive>;
  static const bool allowed = (allow_tile_buffer(kernel), true);
  (void)allowed;
  kernel<<<static_cast<unsigned>(tiles), kThreads, tile_buffer_bytes(sub_tiles), stream>>>(
      op, input, output, count, sub_tiles, tiles, kind == ScanKind::exclusive,
      Status::at(base + kStatusOffset, tiles), control, index_base);
  detail::check_cuda(cudaGetLastError(), "launch of exact_scan_kernel");
  workspace.leave_clean();
}

}  // namespace gpukit::primitives::device::detail::exact_scan_agent
