#pragma once
// Internal: the deterministic scan engine (device::deterministic_scan in scan.cuh): tiles of 4096
// elements in the canonical layout (scan_canonical.hpp), the deterministic look-back of
// tile_state.cuh.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpukit/primitives/cuda/detail/check.cuh"
#include "gpukit/primitives/cuda/detail/tile_state.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives::device::detail::deterministic_scan_agent {

using canonical_scan::initial_value;
using canonical_scan::kLanes;
using canonical_scan::kRowElements;
using canonical_scan::kRows;
using canonical_scan::kTile;
using canonical_scan::kVec;
using canonical_scan::kWarpElements;
using canonical_scan::kWarps;

inline constexpr int kThreads = kWarps * kLanes;
using canonical_scan::kGroupTiles;

template <class Op>
struct SharedStorage {
  using Acc = typename Op::Acc;
  Acc warp_totals[kWarps];
  Acc exclusive;
  long long next_tile;
};

/// Loads the four elements of `lane` in one row: `row_valid` elements from the row's start are
/// real (any int; the rest is the identity), all 128 when `row_full`.
template <class Op>
__device__ __forceinline__ void load_row(const Op& op, const typename Op::Input* row, int row_valid,
                                         bool row_full, int lane, bool vector_ok,
                                         typename Op::Acc (&out)[kVec]) {
  using Input = typename Op::Input;
  const Input* p = row + lane * kVec;
  if (vector_ok && row_full) {
    alignas(16) Input buffer[kVec];
    constexpr int kChunks = int(sizeof(buffer) / 16);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      reinterpret_cast<uint4*>(buffer)[c] = __ldcs(reinterpret_cast<const uint4*>(p) + c);
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) out[j] = op.load(buffer[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      out[j] = lane * kVec + j < row_valid ? op.load(p[j]) : op.identity();
    }
  }
}

/// Writes the API's outputs: Op::store (or the accumulator itself), Op::fits checked and the
/// first failing index reported with atomicMax(2^63 - index).
template <class Op, class Output>
struct StoreOutputs {
  Output* output;
  unsigned long long* overflow_report;
  std::int64_t index_base;  // added to reported indices (chunks of a longer array)

  /// Stores values[0..3] at `first`; `available` (>= 1) outputs remain from `first` on.
  __device__ __forceinline__ void operator()(const Op& op, std::int64_t first, int available,
                                             bool vector_ok,
                                             const typename Op::Acc (&values)[kVec]) const {
    const bool full = available >= kVec;  // see load_row's caller: no clamp-then-compare
    const int count = full ? kVec : available;
    alignas(16) Output buffer[kVec];
    int first_bad = kVec;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if constexpr (requires { op.fits(values[j]); }) {
        if (j < count && !op.fits(values[j]) && first_bad == kVec) first_bad = j;
      }
      if constexpr (requires { op.store(values[j]); }) {
        buffer[j] = op.store(values[j]);
      } else {
        buffer[j] = values[j];
      }
    }
    if (first_bad < kVec) {
      atomicMax(overflow_report,
                (1ull << 63) - static_cast<unsigned long long>(index_base + first + first_bad));
    }
    Output* p = output + first;
    if (vector_ok && full && sizeof(buffer) % 16 == 0) {
#pragma unroll
      for (int c = 0; c < int(sizeof(buffer) / 16); ++c) {
        __stcs(reinterpret_cast<uint4*>(p) + c, reinterpret_cast<const uint4*>(buffer)[c]);
      }
    } else {
      for (int j = 0; j < count; ++j) p[j] = buffer[j];
    }
  }
};

template <class Op, class Output>
// Four resident blocks an SM (64 registers) keep 64 KB of loads in flight per SM; 16-byte
// accumulators (int64 sums, user types) need more registers than that leaves.
__global__ void __launch_bounds__(kThreads, sizeof(typename Op::Acc) > 8 ? 2 : 4)
    deterministic_scan_kernel(Op op, const typename Op::Input* input,
                              StoreOutputs<Op, Output> store, std::int64_t count,
                              std::int64_t tiles, bool exclusive,
                              DeterministicTileStatus<Op> status, unsigned long long* tile_counter,
                              const typename Op::Acc* carry_in, typename Op::Acc* total_out) {
  using Acc = typename Op::Acc;
  __shared__ SharedStorage<Op> shared;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const bool input_vector_ok = reinterpret_cast<std::uintptr_t>(input) % 16 == 0 &&
                               (sizeof(typename Op::Input) * kVec) % 16 == 0;
  const bool output_vector_ok =
      reinterpret_cast<std::uintptr_t>(store.output) % 16 == 0 && (sizeof(Output) * kVec) % 16 == 0;
  const Acc carry = carry_in != nullptr ? *carry_in : initial_value(op);

  if (threadIdx.x == 0) shared.next_tile = static_cast<long long>(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  std::int64_t tile = shared.next_tile;
  while (tile < tiles) {
    unsigned long long next_tile = 0;
    if (threadIdx.x == 0) next_tile = atomicAdd(tile_counter, 1ull);  // hidden behind the tile

    const std::int64_t tile_begin = tile * kTile;
    const int valid = static_cast<int>(count - tile_begin < kTile ? count - tile_begin : kTile);
    const int warp_begin = warp * kWarpElements;

    // Registers: each lane's slot folds, lane prefixes and the row prefixes (canonical order).
    Acc local[kRows][kVec];
    Acc lane_excl[kRows];
    Acc row_prefix[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row_begin = warp_begin + r * kRowElements;
      // Not a clamped count compared with 128: CUDA 13.0's ptxas fuses max(min(x, 128), 0) == 128
      // into one VIMNMX whose predicate means the opposite (partial rows took the vector path).
      const int row_valid = valid - row_begin;
      load_row(op, input + tile_begin + row_begin, row_valid, row_valid >= kRowElements, lane,
               input_vector_ok, local[r]);
    }
    Acc warp_total = op.identity();
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int j = 1; j < kVec; ++j) local[r][j] = op(local[r][j - 1], local[r][j]);
      Acc s = local[r][kVec - 1];
#pragma unroll
      for (int d = 1; d < kLanes; d *= 2) {
        const Acc lower = shuffle_up(s, d);
        if (lane >= d) s = op(lower, s);
      }
      const Acc previous = shuffle_up(s, 1);
      lane_excl[r] = lane == 0 ? op.identity() : previous;
      row_prefix[r] = warp_total;
      warp_total = op(warp_total, shuffle(s, kLanes - 1));
    }
    if (lane == 0) shared.warp_totals[warp] = warp_total;
    __syncthreads();

    Acc warp_prefix = op.identity();
    for (int w = 0; w < warp; ++w) warp_prefix = op(warp_prefix, shared.warp_totals[w]);
    if (warp == 0) {
      Acc aggregate = op.identity();
#pragma unroll
      for (int w = 0; w < kWarps; ++w) aggregate = op(aggregate, shared.warp_totals[w]);
      if (lane == 0) status.publish(tile, kValid, aggregate);
      const Acc exclusive_prefix =
          tile_exclusive_prefix(op, status, tile, tiles, carry, aggregate, total_out);
      if (lane == 0) {
        shared.exclusive = exclusive_prefix;
        shared.next_tile = static_cast<long long>(next_tile);
      }
    }
    __syncthreads();

    const Acc warp_base = op(shared.exclusive, warp_prefix);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row_begin = warp_begin + r * kRowElements;
      const int first = row_begin + lane * kVec;
      if (first >= valid) break;
      const Acc prefix = op(op(warp_base, row_prefix[r]), lane_excl[r]);
      Acc out[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if (exclusive) {
          out[j] = j == 0 ? prefix : op(prefix, local[r][j - 1]);
        } else {
          out[j] = op(prefix, local[r][j]);
        }
      }
      store(op, tile_begin + first, valid - first, output_vector_ok, out);
    }
    tile = shared.next_tile;
  }
}

/// Workspace bytes a launch over `count` elements needs.
template <class Op>
std::size_t workspace_bytes(std::int64_t count) {
  const std::int64_t tiles = (count + kTile - 1) / kTile;
  return WorkspaceLayout::kStatus + status_bytes<Op>(tiles);
}

/// Clears the overflow report at the start of `area` (a workspace's or a caller's storage; once
/// per API call, before the first launch).
inline void clear_overflow_report(void* area, cudaStream_t stream) {
  check_cuda(cudaMemsetAsync(area, 0, 8, stream), "cudaMemsetAsync(overflow report)");
}
inline void clear_overflow_report(ScanWorkspace& workspace, cudaStream_t stream) {
  clear_overflow_report(workspace.data(), stream);
}

/// The first overflowing index recorded at the start of `area`, or -1 (waits for nothing: call
/// after the stream is complete).
inline std::int64_t overflow_index(const void* area) {
  unsigned long long report = 0;
  check_cuda(cudaMemcpy(&report, area, sizeof report, cudaMemcpyDeviceToHost),
             "cudaMemcpy(overflow report)");
  return report == 0 ? -1 : static_cast<std::int64_t>((1ull << 63) - report);
}
inline std::int64_t overflow_index(const ScanWorkspace& workspace) {
  return overflow_index(workspace.data());
}

/// Scans `count` elements of `input` into `output` (device memory; the same pointer for in place)
/// on `stream`. `carry_in` (device, may be null) is Q[-1]; `total_out` (device, may be null)
/// receives the last group's Q; `index_base` offsets the overflow report's
/// indices. The workspace must hold workspace_bytes<Op>(count); its overflow report is not
/// cleared here.
template <class Op, class Output, class Workspace>
void launch(const Op& op, const typename Op::Input* input, Output* output, std::int64_t count,
            ScanKind kind, Workspace& workspace, cudaStream_t stream,
            const typename Op::Acc* carry_in = nullptr, typename Op::Acc* total_out = nullptr,
            std::int64_t index_base = 0) {
  if (count <= 0) return;
  const std::int64_t tiles = (count + kTile - 1) / kTile;
  auto* base = static_cast<unsigned char*>(workspace.reserve(workspace_bytes<Op>(count)));
  auto* tile_counter = reinterpret_cast<unsigned long long*>(base + WorkspaceLayout::kTileCounter);
  void* status_area = base + WorkspaceLayout::kStatus;
  // Only the counter and the flags need clearing; the values are written before their flags.
  const std::int64_t entries = status_entries(tiles);
  check_cuda(cudaMemsetAsync(tile_counter, 0, 8 + DeterministicTileStatus<Op>::flag_bytes(entries),
                             stream),
             "cudaMemsetAsync(scan tile status)");

  const auto kernel = deterministic_scan_kernel<Op, Output>;
  static int resident_blocks = [&] {
    int device = 0, sms = 0, per_sm = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(SM count)");
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return sms * (per_sm > 0 ? per_sm : 1);
  }();
  const std::int64_t blocks = tiles < resident_blocks ? tiles : resident_blocks;
  const StoreOutputs<Op, Output> store{
      output, reinterpret_cast<unsigned long long*>(base + WorkspaceLayout::kOverflowReport),
      index_base};
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      op, input, store, count, tiles, kind == ScanKind::exclusive,
      DeterministicTileStatus<Op>::at(status_area, entries), tile_counter, carry_in, total_out);
  check_cuda(cudaGetLastError(), "launch of deterministic_scan_kernel");
}

}  // namespace gpukit::primitives::device::detail::deterministic_scan_agent
