#pragma once
// Internal: the pipelined exact scan engine for sm_90 (device::exact_scan_sm90 in scan.cuh):
// persistent, warp-specialised blocks streaming tiles through shared-memory stages filled by bulk
// copies (ptx_sm90.cuh), on the exact look-back and launch control of tile_state.cuh.

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gpukit/primitives/cuda/detail/check.cuh"
#include "gpukit/primitives/cuda/detail/ptx_sm90.cuh"
#include "gpukit/primitives/cuda/detail/tile_state.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives::device::detail::exact_scan_sm90_agent {

/// Operations whose result does not depend on the order of the operands (gpukit's sums, products,
/// min and max) say so with `static constexpr bool kCommutative = true`; their reducers fold each
/// lane's column first and combine the lanes once a segment instead of once a row.
template <class Op>
inline constexpr bool kCommutative = requires {
  requires Op::kCommutative;
};

/// exact_scan_sm90's shape on sm_90. Measured on the H200 (int32 exact sum, 2^28 and 2^30,
/// docs/case-studies/scan.md): three fold and four scan stages of 32 KB (224 KB), the second copy
/// two tiles after the first, the look-back one tile after the fold: 94.1-94.4% of copy. Three
/// scan stages gave 93.7-93.8%, two fold and three scan stages with a lag of one 92.0-92.2%. In
/// the prototype (2-3% slower throughout), against its 92.6-93.0% for this shape: a lag of three
/// tiles 90.7-90.9%, a look-back lag of 0 or 2 the same, two fold stages 85.7-86.2%, 24 KB stages
/// 87.7-88.8%, the copies without L2 hints 89.7-89.9%; a lag of four tiles (17 MB of tiles between
/// the copies) missed L2: 75%.
struct ExactScanPolicySm90 {
  /// Bytes a stage (a tile): stage_bytes / 512 rows of 32 16-byte chunks.
  static constexpr int stage_bytes = 32768;
  /// Stages that take the tiles' first copies (from DRAM, to be folded).
  static constexpr int fold_stages = 3;
  /// Stages that take their second copies (from L2, to be scanned).
  static constexpr int scan_stages = 4;
  /// Tiles between a tile's first copy and its second.
  static constexpr int lag = 2;
  /// Tiles of the block folded after a tile before its look-back starts.
  static constexpr int lookback_lag = 1;
  /// Consumer warps (one segment of every tile each).
  static constexpr int consumer_warps = 8;
  /// Reducer warps (consumer_warps / reducer_warps segments of every tile each).
  static constexpr int reducer_warps = 2;
};

// --- geometry ----------------------------------------------------------------------------------

/// A stage of kStageBytes is kStageBytes / 512 rows of 32 16-byte chunks; consumer warp w owns
/// rows [w kWarpRows, (w + 1) kWarpRows), a segment. kFoldStages stages take the tiles' first
/// copies, kScanStages their second, issued kLag tiles later; the look-back of a tile waits until
/// the block's next kLookbackLag tiles are folded. Warps: the producer, kReducerWarps reducers
/// (kConsumerWarps / kReducerWarps segments of every tile each), the look-back warp, then the
/// consumers.
/// (A policy names these; PipelineShape adds what follows from them.)
template <class Policy>
struct PipelineShape {
  static constexpr int kStageBytes = Policy::stage_bytes;
  static constexpr int kFoldStages = Policy::fold_stages;
  static constexpr int kScanStages = Policy::scan_stages;
  static constexpr int kLag = Policy::lag;
  static constexpr int kLookbackLag = Policy::lookback_lag;
  static constexpr int kConsumerWarps = Policy::consumer_warps;
  static constexpr int kReducerWarps = Policy::reducer_warps;
  /// The per-tile values (ticket, segment totals, prefix) of a block's last kSlots tiles. The
  /// producer overwrites a slot kSlots tiles on, once the tile kLag + kScanStages back has been
  /// read; so kSlots > kLag + kScanStages keeps a slot until its tile is done.
  static constexpr int kSlots = kLag + kScanStages + 2;
  static constexpr int kStageAlignment = 128;
  static constexpr std::size_t kDynamicBytes =
      std::size_t(kFoldStages + kScanStages) * kStageBytes + kStageAlignment;
  static constexpr int kRows = kStageBytes / (kLanes * 16);
  static constexpr int kWarpRows = kRows / kConsumerWarps;
  static constexpr int kReducerSegments = kConsumerWarps / kReducerWarps;
  static constexpr int kFirstReducerWarp = 1;
  static constexpr int kLookbackWarp = kFirstReducerWarp + kReducerWarps;
  static constexpr int kFirstConsumerWarp = kLookbackWarp + 1;
  static constexpr int kThreads = (kFirstConsumerWarp + kConsumerWarps) * kLanes;
  static_assert(kWarpRows * kConsumerWarps == kRows, "exact_scan_sm90: rows split evenly");
  static_assert(kReducerSegments * kReducerWarps == kConsumerWarps && kReducerSegments <= kLanes &&
                    (kReducerSegments & (kReducerSegments - 1)) == 0,
                "exact_scan_sm90: a power of two segments a reducer warp");
  // The look-back of tile k waits for the fold of tile k + kLookbackLag, whose ticket the
  // producer takes only after the second copy of tile k + kLookbackLag - 1 - kLag, which waits
  // for tile k + kLookbackLag - 1 - kLag - kScanStages to be scanned: an earlier tile.
  static_assert(kLookbackLag <= kLag + kScanStages, "exact_scan_sm90: no wait on a later tile");
  template <class E>
  static constexpr std::int64_t tile_elements() {
    return kStageBytes / sizeof(E);
  }
};

template <class Acc, class Cfg>
struct PipelineShared {
  unsigned long long fold_full[Cfg::kFoldStages];   // the first copy landed (producer + copy)
  unsigned long long fold_empty[Cfg::kFoldStages];  // folded (every reducer warp)
  unsigned long long scan_full[Cfg::kScanStages];   // the second copy landed (producer + copy)
  unsigned long long scan_empty[Cfg::kScanStages];  // its rows read (every consumer warp)
  unsigned long long reduced[Cfg::kSlots];          // the aggregate published (first reducer)
  unsigned long long ready[Cfg::kSlots];            // the exclusive prefix known (look-back warp)
  long long ticket[Cfg::kSlots];                    // the tile, or -1: no more tiles
  Acc segment_totals[Cfg::kSlots][Cfg::kConsumerWarps];
  Acc aggregate[Cfg::kSlots];
  Acc exclusive[Cfg::kSlots];
  bool last;
};

/// The largest divisor of n that is at most `limit` (a batch of loads, a group of rows).
constexpr int largest_divisor_up_to(int n, int limit) {
  for (int d = limit; d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

/// The kVec elements of chunk `chunk` of a tile (those at or past `valid` left unread): from the
/// stage, whose first `bulk` elements the copy brought, or (fewer than a chunk, at the array's end)
/// from global memory at `tile_input`.
template <class E>
__device__ __forceinline__ void read_chunk(const uint4* stage, const E* tile_input, int chunk,
                                           int valid, int bulk, E (&items)[16 / sizeof(E)]) {
  constexpr int kVec = 16 / sizeof(E);
  if ((chunk + 1) * kVec <= bulk) {
    const uint4 word = stage[chunk];
    memcpy(items, &word, sizeof word);
  } else {
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const int e = chunk * kVec + v;
      if (e < valid) items[v] = e < bulk ? reinterpret_cast<const E*>(stage)[e] : tile_input[e];
    }
  }
}

/// The fold of a chunk's kVec elements, in order (as a tree).
template <class Op>
__device__ __forceinline__ typename Op::Acc fold_chunk(const Op& op, uint4 word) {
  using E = typename Op::Input;
  constexpr int kVec = 16 / sizeof(E);
  E items[kVec];
  memcpy(items, &word, sizeof word);
  typename Op::Acc values[kVec];
#pragma unroll
  for (int v = 0; v < kVec; ++v) values[v] = op.load(items[v]);
#pragma unroll
  for (int width = 1; width < kVec; width *= 2) {
#pragma unroll
    for (int v = 0; v + width < kVec; v += 2 * width) values[v] = op(values[v], values[v + width]);
  }
  return values[0];
}

// --- the roles ---------------------------------------------------------------------------------

/// Where stage `stage` (the fold stages first, then the scan stages) begins.
template <class Cfg, class Chunk>
__device__ __forceinline__ Chunk* stage_at(Chunk* stages, int stage) {
  return stages + std::size_t(stage) * (Cfg::kStageBytes / 16);
}

/// Lane 0 of warp 0: each tile, in the order the counter hands them out, into a free fold stage,
/// and kLag tiles later into a free scan stage.
template <class Cfg, class E, class Shared>
__device__ __forceinline__ void produce(const E* input, std::int64_t count, std::int64_t tiles,
                                        LaunchControl* control, uint4* stages, Shared& shared) {
  constexpr std::int64_t kTile = Cfg::template tile_elements<E>();
  constexpr int kFold = Cfg::kFoldStages;
  constexpr int kScan = Cfg::kScanStages;
  const unsigned long long keep = l2_policy(true);
  const unsigned long long drop = l2_policy(false);
  const auto copy_tile = [&](uint4* stage, unsigned long long* barrier, long long ticket,
                             unsigned long long policy) {
    const std::int64_t begin = ticket * kTile;
    const std::int64_t valid = count - begin < kTile ? count - begin : kTile;
    const auto bytes = static_cast<unsigned>(valid * std::int64_t(sizeof(E)) / 16 * 16);
    barrier_arrive_expect_bytes(barrier, bytes);
    if (bytes > 0) bulk_copy(stage, input + begin, bytes, barrier, policy);
  };
  const auto copy_again = [&](int j) {
    const int s = j % kScan;
    if (j >= kScan) barrier_wait(&shared.scan_empty[s], (j / kScan - 1) & 1);
    copy_tile(stage_at<Cfg>(stages, kFold + s), &shared.scan_full[s],
              shared.ticket[j % Cfg::kSlots], drop);
  };
  int k = 0;
  for (;; ++k) {
    const int f = k % kFold;
    if (k >= kFold) barrier_wait(&shared.fold_empty[f], (k / kFold - 1) & 1);
    const auto ticket = static_cast<long long>(atomicAdd(&control->tile_counter, 1ull));
    if (ticket >= tiles) {
      shared.ticket[k % Cfg::kSlots] = -1;
      barrier_arrive(&shared.fold_full[f]);
      break;
    }
    if (ticket == 0) detail::clear_overflow_report(control);
    shared.ticket[k % Cfg::kSlots] = ticket;
    copy_tile(stage_at<Cfg>(stages, f), &shared.fold_full[f], ticket, keep);
    if (k >= Cfg::kLag) copy_again(k - Cfg::kLag);
  }
  for (int j = k > Cfg::kLag ? k - Cfg::kLag : 0; j < k; ++j) copy_again(j);
}

/// Reducer warp `which`: segments [which kReducerSegments, (which + 1) kReducerSegments) of every
/// tile as soon as its first copy lands; the first reducer then publishes the tile's aggregate
/// (the first tile's as its inclusive prefix). Two warps share a tile rather than taking turns:
/// this latency is every later tile's wait for this tile's aggregate (measured in the engine's
/// first form: 0.9 against 2.4 us, 1% more bandwidth).
template <class Cfg, class Op, class Shared>
__device__ __forceinline__ void reduce_tiles(const Op& op, const typename Op::Input* input,
                                             std::int64_t count, const ExactTileStatus<Op>& status,
                                             int which, const uint4* stages, Shared& shared) {
  using E = typename Op::Input;
  using Acc = typename Op::Acc;
  constexpr int kVec = 16 / sizeof(E);
  constexpr int kMine = Cfg::kReducerSegments;
  constexpr std::int64_t kTile = Cfg::template tile_elements<E>();
  const int first_segment = which * kMine;
  const int lane = threadIdx.x % kLanes;
  for (int k = 0;; ++k) {
    const int f = k % Cfg::kFoldStages;
    const int slot = k % Cfg::kSlots;
    barrier_wait(&shared.fold_full[f], (k / Cfg::kFoldStages) & 1);
    const long long tile = shared.ticket[slot];
    if (tile < 0) {
      if (which == 0 && lane == 0) barrier_arrive(&shared.reduced[slot]);
      return;
    }
    const uint4* stage = stage_at<Cfg>(stages, f);
    const std::int64_t begin = tile * kTile;
    const int valid = static_cast<int>(count - begin < kTile ? count - begin : kTile);
    if (kCommutative<Op> && valid == kTile) {
      // Each lane folds its column of every segment (loads in flight together, combined as a
      // tree), then one butterfly for all the segments.
      constexpr int kBatch = largest_divisor_up_to(Cfg::kWarpRows, 8);
      Acc columns[kMine];
#pragma unroll
      for (int m = 0; m < kMine; ++m) {
        const int first_chunk = (first_segment + m) * Cfg::kWarpRows * kLanes + lane;
#pragma unroll
        for (int b = 0; b < Cfg::kWarpRows; b += kBatch) {
          Acc folds[kBatch];
#pragma unroll
          for (int r = 0; r < kBatch; ++r) {
            folds[r] = fold_chunk(op, stage[first_chunk + (b + r) * kLanes]);
          }
#pragma unroll
          for (int width = 1; width < kBatch; width *= 2) {
#pragma unroll
            for (int r = 0; r + width < kBatch; r += 2 * width) {
              folds[r] = op(folds[r], folds[r + width]);
            }
          }
          columns[m] = b == 0 ? folds[0] : op(columns[m], folds[0]);
        }
      }
      __syncwarp();
      if (lane == 0) barrier_arrive(&shared.fold_empty[f]);
      const Acc total = warp_totals_scattered<kMine>(op, columns);
      if (lane % (kLanes / kMine) == 0) {
        shared.segment_totals[slot][first_segment + segment_of_lane<kMine>(lane)] = total;
      }
    } else {
      // In order, row by row (a partial tile, or an operation that may not commute).
      const int bulk = valid * int(sizeof(E)) / 16 * 16 / int(sizeof(E));
      for (int w = first_segment; w < first_segment + kMine; ++w) {
        Acc segment = op.identity();
        for (int r = 0; r < Cfg::kWarpRows; ++r) {
          const int chunk = (w * Cfg::kWarpRows + r) * kLanes + lane;
          E items[kVec];
          read_chunk(stage, input + begin, chunk, valid, bulk, items);
          Acc lane_value = op.identity();
#pragma unroll
          for (int v = 0; v < kVec; ++v) {
            if (chunk * kVec + v < valid) lane_value = op(lane_value, op.load(items[v]));
          }
          segment = op(segment, detail::shuffle(warp_fold_to_lane0(op, lane_value), 0));
        }
        if (lane == 0) shared.segment_totals[slot][w] = segment;
      }
      __syncwarp();
      if (lane == 0) barrier_arrive(&shared.fold_empty[f]);
    }
    named_barrier_sync<Cfg::kReducerWarps * kLanes>();
    if (which == 0 && lane == 0) {
      Acc aggregate = op.identity();
#pragma unroll
      for (int w = 0; w < Cfg::kConsumerWarps; ++w) {
        aggregate = op(aggregate, shared.segment_totals[slot][w]);
      }
      shared.aggregate[slot] = aggregate;
      if (tile > 0) {
        status.publish(tile, detail::kAggregate, aggregate);
      } else {
        status.publish(0, detail::kInclusive,
                       detail::clamp_carry(op, op(canonical_scan::initial_value(op), aggregate)));
      }
      barrier_arrive(&shared.reduced[slot]);
    }
  }
}

/// The look-back warp: every tile's exclusive prefix in turn, once the block's next kLookbackLag
/// tiles are folded (or there are no more); publishes the inclusive prefix (unless
/// !kPublishInclusive, for tests: then each look-back walks back through aggregates to the block's
/// own previous tile). One warp: in the engine's first form, two look-back warps taking turns
/// each started before the block's previous tile had its prefix and took more rounds (measured:
/// 82% of copy against 87%).
template <class Cfg, bool kPublishInclusive, class Op, class Shared>
__device__ __forceinline__ void look_back_tiles(const Op& op, const ExactTileStatus<Op>& status,
                                                Shared& shared) {
  using Acc = typename Op::Acc;
  constexpr int kNoEnd = std::numeric_limits<int>::max();
  const int lane = threadIdx.x % kLanes;
  int folded = 0;    // the block's tiles whose fold this warp has seen
  int end = kNoEnd;  // the slot index holding the block's end, once seen
  long long previous_tile = -1;
  Acc previous_inclusive = canonical_scan::initial_value(op);
  for (int k = 0;; ++k) {
    while (folded <= k + Cfg::kLookbackLag && end == kNoEnd) {
      barrier_wait(&shared.reduced[folded % Cfg::kSlots], (folded / Cfg::kSlots) & 1);
      if (shared.ticket[folded % Cfg::kSlots] < 0) end = folded;
      ++folded;
    }
    const int slot = k % Cfg::kSlots;
    if (k == end) {  // the consumers learn of the end from this slot
      if (lane == 0) barrier_arrive(&shared.ready[slot]);
      return;
    }
    const long long tile = shared.ticket[slot];
    const Acc exclusive = tile == 0
                              ? canonical_scan::initial_value(op)
                              : detail::lookback_exclusive_prefix<detail::kLookbackWords,
                                                                  detail::kLookbackPollDelayNs>(
                                    op, status, tile, previous_tile, previous_inclusive);
    const Acc inclusive = detail::clamp_carry(op, op(exclusive, shared.aggregate[slot]));
    if (lane == 0) {
      if (kPublishInclusive && tile > 0) status.publish(tile, detail::kInclusive, inclusive);
      shared.exclusive[slot] = exclusive;
      barrier_arrive(&shared.ready[slot]);
    }
    previous_tile = tile;
    previous_inclusive = inclusive;
  }
}

/// Reports the warp's lowest failing output index (`bad`: this lane's, or INT64_MAX), as
/// detail::report_overflow does for the one-block-a-tile kernel.
__device__ __forceinline__ void report_lowest_overflow(LaunchControl* control, std::int64_t bad) {
  constexpr auto kNone = std::numeric_limits<std::int64_t>::max();
  if (!__any_sync(~0u, bad != kNone)) return;
#pragma unroll
  for (int d = 1; d < kLanes; d *= 2) {
    const std::int64_t other = __shfl_xor_sync(~0u, bad, d);
    bad = other < bad ? other : bad;
  }
  if (threadIdx.x % kLanes == 0) detail::record_overflow(control, bad);
}

/// A group of a consumer warp's rows: items[r] is the lane's chunk of row r, whose first element
/// is tile element lane_first + r 32 kVec. Scanned from `carry` (advanced past the rows) and
/// stored; returns the lowest failing output index of the lane (INT64_MAX: none). kFull: every
/// element valid and every chunk whole. The outputs are checked with one vote a group, and only a
/// group with a failing output goes through them again for its index (an index kept per element
/// was most of the consumers' instructions).
template <bool kFull, bool kExclusive, int kRows, class Op, class Output>
__device__ __forceinline__ std::int64_t scan_rows(
    const Op& op, const typename Op::Input (&items)[kRows][16 / sizeof(typename Op::Input)],
    typename Op::Acc& carry, int lane_first, int valid, Output* tile_output,
    std::int64_t tile_index) {
  using Acc = typename Op::Acc;
  constexpr int kVec = 16 / sizeof(typename Op::Input);
  constexpr int kRowElements = kLanes * kVec;
  constexpr auto kNone = std::numeric_limits<std::int64_t>::max();
  const int lane = threadIdx.x % kLanes;
  // Every row's lane scan first (independent), then the carry from row to row.
  Acc lane_exclusive[kRows];
  Acc row_totals[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int first = lane_first + r * kRowElements;
    Acc lane_total = op.identity();
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      if (kFull || first + v < valid) lane_total = op(lane_total, op.load(items[r][v]));
    }
    const Acc inclusive = detail::warp_inclusive_scan(op, lane_total);
    const Acc lower = detail::shuffle_up(inclusive, 1);
    lane_exclusive[r] = lane == 0 ? op.identity() : lower;
    row_totals[r] = detail::shuffle(inclusive, kLanes - 1);
  }
  const Acc group_carry = carry;
  bool all_fit = true;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int first = lane_first + r * kRowElements;
    Acc running = op(carry, lane_exclusive[r]);
    alignas(16) Output out[kVec];
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const bool is_valid = kFull || first + v < valid;
      const Acc before = running;
      if (is_valid) running = op(running, op.load(items[r][v]));
      const Acc y = kExclusive ? before : running;
      if constexpr (requires { op.fits(y); }) all_fit &= !is_valid || op.fits(y);
      if constexpr (requires { op.store(y); }) {
        out[v] = op.store(y);
      } else {
        out[v] = y;
      }
    }
    if (kFull || first + kVec <= valid) {
      uint4 word;
      memcpy(&word, out, sizeof word);
      __stcs(reinterpret_cast<uint4*>(tile_output + first), word);
    } else {
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        if (first + v < valid) tile_output[first + v] = out[v];
      }
    }
    carry = op(carry, row_totals[r]);
  }
  std::int64_t bad = kNone;
  if constexpr (requires(Acc y) { op.fits(y); }) {
    if (!__all_sync(~0u, all_fit)) {
      Acc row_carry = group_carry;
      for (int r = 0; r < kRows; ++r) {
        const int first = lane_first + r * kRowElements;
        Acc running = op(row_carry, lane_exclusive[r]);
        for (int v = 0; v < kVec; ++v) {
          const bool is_valid = kFull || first + v < valid;
          const Acc before = running;
          if (is_valid) running = op(running, op.load(items[r][v]));
          const Acc y = kExclusive ? before : running;
          if (is_valid && !op.fits(y) && bad == kNone) bad = tile_index + first + v;
        }
        row_carry = op(row_carry, row_totals[r]);
      }
    }
  }
  return bad;
}

/// Consumer warp `w`: its segment of every tile, from the tile's second copy, scanned from the
/// tile's prefix and stored.
template <class Cfg, bool kExclusive, class Op, class Output, class Shared>
__device__ __forceinline__ void consume_tiles(const Op& op, const typename Op::Input* input,
                                              Output* output, std::int64_t count,
                                              LaunchControl* control, std::int64_t index_base,
                                              int w, const uint4* stages, Shared& shared) {
  using E = typename Op::Input;
  using Acc = typename Op::Acc;
  constexpr int kVec = 16 / sizeof(E);
  constexpr int kRows = Cfg::kWarpRows;
  // Up to eight rows at a time in registers; the stage is free once the last group is read.
  constexpr int kGroup = largest_divisor_up_to(kRows, 8);
  constexpr std::int64_t kTile = Cfg::template tile_elements<E>();
  const int lane = threadIdx.x % kLanes;
  for (int k = 0;; ++k) {
    const int slot = k % Cfg::kSlots;
    barrier_wait(&shared.ready[slot], (k / Cfg::kSlots) & 1);
    const long long tile = shared.ticket[slot];
    if (tile < 0) return;
    Acc carry = shared.exclusive[slot];
#pragma unroll
    for (int v = 0; v < Cfg::kConsumerWarps; ++v) {
      if (v < w) carry = op(carry, shared.segment_totals[slot][v]);
    }
    const int s = k % Cfg::kScanStages;
    barrier_wait(&shared.scan_full[s], (k / Cfg::kScanStages) & 1);
    const uint4* stage = stage_at<Cfg>(stages, Cfg::kFoldStages + s);
    const std::int64_t begin = tile * kTile;
    const int valid = static_cast<int>(count - begin < kTile ? count - begin : kTile);
    const int first_chunk = w * kRows * kLanes + lane;
    std::int64_t bad = std::numeric_limits<std::int64_t>::max();
#pragma unroll
    for (int g = 0; g < kRows; g += kGroup) {
      E items[kGroup][kVec];
      const int group_chunk = first_chunk + g * kLanes;
      if (valid == kTile) {
#pragma unroll
        for (int r = 0; r < kGroup; ++r) {
          const uint4 word = stage[group_chunk + r * kLanes];
          memcpy(items[r], &word, sizeof word);
        }
      } else {
        const int bulk = valid * int(sizeof(E)) / 16 * 16 / int(sizeof(E));
#pragma unroll
        for (int r = 0; r < kGroup; ++r) {
          read_chunk(stage, input + begin, group_chunk + r * kLanes, valid, bulk, items[r]);
        }
      }
      if (g + kGroup == kRows) {
        __syncwarp();
        if (lane == 0) barrier_arrive(&shared.scan_empty[s]);
      }
      const std::int64_t group_bad =
          valid == kTile ? scan_rows<true, kExclusive>(op, items, carry, group_chunk * kVec, valid,
                                                       output + begin, index_base + begin)
                         : scan_rows<false, kExclusive>(op, items, carry, group_chunk * kVec, valid,
                                                        output + begin, index_base + begin);
      bad = group_bad < bad ? group_bad : bad;
    }
    if constexpr (requires(Acc y) { op.fits(y); }) report_lowest_overflow(control, bad);
  }
}

template <class Cfg, class Op, class Output, bool kExclusive, bool kPublishInclusive>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    exact_scan_sm90_kernel(Op op, const typename Op::Input* input, Output* output,
                           std::int64_t count, std::int64_t tiles, ExactTileStatus<Op> status,
                           LaunchControl* control, std::int64_t index_base) {
  using Acc = typename Op::Acc;
  static_assert(sizeof(Output) == sizeof(typename Op::Input),
                "exact_scan_sm90: outputs as wide as inputs");
  // [kFoldStages + kScanStages][kStageBytes / 16] from the first kStageAlignment boundary.
  extern __shared__ uint4 dynamic_shared[];
  uint4* const stages = reinterpret_cast<uint4*>(
      (reinterpret_cast<std::uintptr_t>(dynamic_shared) + Cfg::kStageAlignment - 1) &
      ~std::uintptr_t{Cfg::kStageAlignment - 1});
  __shared__ PipelineShared<Acc, Cfg> shared;
  const int warp = threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kFoldStages; ++s) {
      barrier_init(&shared.fold_full[s], 1);
      barrier_init(&shared.fold_empty[s], Cfg::kReducerWarps);
    }
    for (int s = 0; s < Cfg::kScanStages; ++s) {
      barrier_init(&shared.scan_full[s], 1);
      barrier_init(&shared.scan_empty[s], Cfg::kConsumerWarps);
    }
    for (int s = 0; s < Cfg::kSlots; ++s) {
      barrier_init(&shared.reduced[s], 1);
      barrier_init(&shared.ready[s], 1);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp == 0) {
    if (lane == 0) produce<Cfg>(input, count, tiles, control, stages, shared);
  } else if (warp < Cfg::kLookbackWarp) {
    reduce_tiles<Cfg>(op, input, count, status, warp - Cfg::kFirstReducerWarp, stages, shared);
  } else if (warp == Cfg::kLookbackWarp) {
    look_back_tiles<Cfg, kPublishInclusive>(op, status, shared);
  } else {
    consume_tiles<Cfg, kExclusive>(op, input, output, count, control, index_base,
                                   warp - Cfg::kFirstConsumerWarp, stages, shared);
  }

  detail::finish_block(control, status, tiles, gridDim.x, shared.last);
}

// --- host side ---------------------------------------------------------------------------------

template <class Cfg, class E>
std::int64_t tile_count(std::int64_t count) {
  constexpr std::int64_t kTile = Cfg::template tile_elements<E>();
  return (count + kTile - 1) / kTile;
}

/// Blocks a launch of kKernel takes on the current device: as many as are resident at once (one
/// an SM), found once per device; 0 when the kernel cannot run there (a device before sm_90 or
/// with less shared memory a block, or a binary without sm_90 code).
template <class Cfg, auto kKernel>
int resident_blocks() {
  const auto kernel = kKernel;
  constexpr std::size_t kDynamicBytes = Cfg::kDynamicBytes;
  static std::array<std::atomic<int>, 64> per_device{};  // blocks + 1; 0: not known yet
  int device = 0;
  detail::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= int(per_device.size())) return 0;
  if (const int known = per_device[std::size_t(device)].load(); known > 0) return known - 1;
  int major = 0;
  int sms = 0;
  int shared_optin = 0;
  detail::check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                     "cudaDeviceGetAttribute(compute capability)");
  detail::check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                     "cudaDeviceGetAttribute(multiprocessors)");
  detail::check_cuda(
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
      "cudaDeviceGetAttribute(shared memory per block)");
  cudaFuncAttributes attributes{};
  detail::check_cuda(cudaFuncGetAttributes(&attributes, kernel),
                     "cudaFuncGetAttributes(pipelined scan)");
  int blocks = 0;
  if (major >= 9 && attributes.binaryVersion >= 90 &&
      std::size_t(shared_optin) >= kDynamicBytes + attributes.sharedSizeBytes) {
    detail::check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(kDynamicBytes)),
                       "cudaFuncSetAttribute(pipelined scan shared memory)");
    int per_sm = 0;
    detail::check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads,
                                                                     kDynamicBytes),
                       "cudaOccupancyMaxActiveBlocksPerMultiprocessor(pipelined scan)");
    blocks = sms * per_sm;
  }
  per_device[std::size_t(device)].store(blocks + 1);
  return blocks;
}

/// Workspace bytes a launch over `count` elements needs (its tiles are Policy's, not the
/// one-block-a-tile engine's).
template <class Policy = ExactScanPolicySm90, class Op>
std::size_t workspace_bytes(std::int64_t count) {
  const std::int64_t tiles =
      count > 0 ? tile_count<PipelineShape<Policy>, typename Op::Input>(count) : 0;
  return detail::kStatusOffset + ExactTileStatus<Op>::bytes(tiles);
}

/// Scans as detail::launch does (the same workspace layout and clean-workspace contract, so
/// that the two engines and the compaction engine share a workspace with no memset between them)
/// and returns true, or returns false having done nothing when this engine cannot take the call:
/// a GPU before sm_90, a binary without sm_90 code, or input or output not 16-byte aligned.
template <class Policy = ExactScanPolicySm90, bool kPublishInclusive = true, class Op, class Output,
          class Workspace>
bool launch(const Op& op, const typename Op::Input* input, Output* output, std::int64_t count,
            ScanKind kind, Workspace& workspace, cudaStream_t stream, std::int64_t index_base = 0) {
  using Cfg = PipelineShape<Policy>;
  using Status = ExactTileStatus<Op>;
  if (reinterpret_cast<std::uintptr_t>(input) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(output) % 16 != 0) {
    return false;
  }
  constexpr auto kExclusiveKernel =
      exact_scan_sm90_kernel<Cfg, Op, Output, true, kPublishInclusive>;
  constexpr auto kInclusiveKernel =
      exact_scan_sm90_kernel<Cfg, Op, Output, false, kPublishInclusive>;
  const bool exclusive = kind == ScanKind::exclusive;
  const auto kernel = exclusive ? kExclusiveKernel : kInclusiveKernel;
  const int resident = exclusive ? resident_blocks<Cfg, kExclusiveKernel>()
                                 : resident_blocks<Cfg, kInclusiveKernel>();
  if (resident <= 0) return false;
  const std::int64_t tiles = count > 0 ? tile_count<Cfg, typename Op::Input>(count) : 0;
  auto* base = static_cast<unsigned char*>(
      workspace.reserve_clean(detail::kStatusOffset + Status::bytes(tiles),
                              detail::kStatusOffset + Status::flag_bytes(tiles), stream));
  auto* control = reinterpret_cast<LaunchControl*>(base);
  if (count <= 0) {
    detail::check_cuda(cudaMemsetAsync(&control->overflow_report, 0, 8, stream),
                       "cudaMemsetAsync(pipelined scan overflow report)");
    workspace.leave_clean();
    return true;
  }
  const std::int64_t blocks = tiles < resident ? tiles : resident;
  constexpr std::size_t kDynamicBytes = Cfg::kDynamicBytes;
  kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, kDynamicBytes, stream>>>(
      op, input, output, count, tiles, Status::at(base + detail::kStatusOffset, tiles), control,
      index_base);
  detail::check_cuda(cudaGetLastError(), "launch of exact_scan_sm90_kernel");
  workspace.leave_clean();
  return true;
}

}  // namespace gpukit::primitives::device::detail::exact_scan_sm90_agent
