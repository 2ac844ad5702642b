#pragma once
// The single-pass scan engine for exact operations (integer sums, products modulo 2^w, min, max,
// bitwise operations, any associative operation whose result does not depend on the bracketing):
// Merrill and Garland's decoupled look-back (2016) in its classic form, public so that a CUDA user
// can instantiate it with an operation of their own (the scan_canonical.hpp operation concept:
// Input, Acc, identity, load, operator(); `store`, `fits`, `initial` and `clamp_carry` optional).
// Elements are combined strictly in order, so the operation need not be commutative.
//
// Why a second engine. scan_engine.cuh brackets tiles in a fixed tree so that floating-point sums
// give the same bits on every run; that costs a block up to ten microseconds of waiting per tile
// (docs/case-studies/scan.md). An exact operation gives the same result for every bracketing, so
// here a tile's exclusive prefix is whatever the look-back finds first: the inclusive prefix of
// the nearest predecessor that has published one, combined with the aggregates of the tiles
// between. Floating-point sums and products keep the deterministic engine.
//
// The kernel, one block a tile of up to 64 KB (four sub-tiles of 4096 int32: 256 threads x 4
// chunks of 16 bytes):
// - a block takes its tile from an atomic counter when it starts, so tiles are taken in the order
//   blocks run and a tile only ever waits on tiles of running blocks (no deadlock, whatever the
//   scheduling). A block never holds a tile it is not working on: an early ticket (prefetching
//   the next tile of a persistent block) makes every later tile wait for the holder's current
//   one, and the waits chain (measured: 14% of copy bandwidth);
// - the whole tile's 64 KB of loads are in flight at once (cp.async, one group per sub-tile),
//   three blocks an SM: enough bytes in flight to cover the look-back of the others. They land
//   striped (lane l, chunk 32k + l: coalesced) in a swizzled layout that lets each lane read its
//   16 consecutive elements (blocked) without bank conflicts;
// - pass 1, each sub-tile as it lands: each thread folds its elements, a warp shuffle scan
//   combines the threads; one barrier; warp 0 publishes the tile's aggregate, looks back over 32
//   predecessors a round trip (one status word each: flag and value in 64 bits when the
//   accumulator allows it; it waits only for the tiles after the nearest inclusive prefix),
//   reduces the window in tile order and publishes the inclusive prefix; one barrier;
// - pass 2, each sub-tile: the outputs from the elements (read again from shared memory), back
//   through the buffer (blocked in, striped out) to 16-byte streaming stores;
// - the last block to finish returns the tile counter and the tiles' flags to zero, so a launch
//   is one kernel with no memset before it (LaunchControl).
// Arrays below 384 sub-tiles (1.5 M int32) take fewer sub-tiles a tile (sub_tiles_for).

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpukit/primitives/cuda/scan_engine.cuh"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives::exact_scan {

inline constexpr int kLanes = 32;
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
                "exact_scan: elements of 4, 8 or 16 bytes");
  static constexpr int kVec = int(16 / sizeof(E));       // elements a chunk
  static constexpr int kItems = kLaneChunks * kVec;      // elements a thread (blocked)
  static constexpr int kWarpElements = kLanes * kItems;  // a warp's consecutive segment
  static constexpr int kSubTile = kThreads * kItems;     // 4096 for 4-byte elements
};

enum StatusFlag : unsigned { kInvalid = 0, kAggregate = 1, kInclusive = 2 };

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

__device__ __forceinline__ void cp_async_16(void* shared, const void* global) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
/// Waits for all but the most recent group of this thread's copies.
__device__ __forceinline__ void cp_async_wait_previous() {
  asm volatile("cp.async.wait_group 1;" ::: "memory");
}

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
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

// --- tile status -------------------------------------------------------------------------------

/// One word per tile, flag in the low two bits, when scan_engine::packed_status allows it (the
/// accumulator fits 32 bits, or 62 because the operation clamps its carries); else a flag word
/// and two value arrays (the aggregate and the inclusive prefix: a reader that saw the flag
/// "aggregate" must not read a value the owner overwrites with its inclusive prefix).
template <class Op, bool kPacked = scan_engine::packed_status<Op>()>
struct LookbackStatus;

template <class Op>
struct LookbackStatus<Op, true> {
  using Acc = typename Op::Acc;
  unsigned long long* words;

  static std::size_t flag_bytes(std::int64_t tiles) {
    return std::size_t(tiles) * sizeof(unsigned long long);
  }
  static std::size_t bytes(std::int64_t tiles) { return flag_bytes(tiles); }
  static LookbackStatus at(void* area, std::int64_t) {
    return {static_cast<unsigned long long*>(area)};
  }

  __device__ __forceinline__ void publish(std::int64_t tile, unsigned flag, Acc value) const {
    scan_engine::store_status_word(words + tile, flag, value);
  }
  __device__ __forceinline__ void read(std::int64_t tile, unsigned& flag, Acc& value) const {
    scan_engine::load_status_word(words + tile, flag, value);
  }
  /// By a whole block, once no tile reads the status any more: every tile's flag back to invalid.
  __device__ __forceinline__ void clear(std::int64_t tiles) const {
    for (std::int64_t t = threadIdx.x; t < tiles; t += blockDim.x) words[t] = 0;
  }
};

template <class Op>
struct LookbackStatus<Op, false> {
  using Acc = typename Op::Acc;
  unsigned* flags;
  Acc* aggregates;
  Acc* inclusives;

  static std::size_t flag_bytes(std::int64_t tiles) {
    return (std::size_t(tiles) * sizeof(unsigned) + 15) / 16 * 16;
  }
  static std::size_t bytes(std::int64_t tiles) {
    return flag_bytes(tiles) + 2 * ((std::size_t(tiles) * sizeof(Acc) + 15) / 16 * 16);
  }
  static LookbackStatus at(void* area, std::int64_t tiles) {
    auto* base = static_cast<unsigned char*>(area);
    auto* aggregates = reinterpret_cast<Acc*>(base + flag_bytes(tiles));
    auto* inclusives = reinterpret_cast<Acc*>(base + flag_bytes(tiles) +
                                              (std::size_t(tiles) * sizeof(Acc) + 15) / 16 * 16);
    return {static_cast<unsigned*>(area), aggregates, inclusives};
  }

  __device__ __forceinline__ void publish(std::int64_t tile, unsigned flag, Acc value) const {
    (flag == kInclusive ? inclusives : aggregates)[tile] = value;
    // Release: the value is visible to whoever acquires the flag.
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + tile), "r"(flag) : "memory");
  }
  __device__ __forceinline__ void read(std::int64_t tile, unsigned& flag, Acc& value) const {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(flag) : "l"(flags + tile) : "memory");
    if (flag == kAggregate) value = aggregates[tile];
    if (flag == kInclusive) value = inclusives[tile];
  }
  /// By a whole block, once no tile reads the status any more: every tile's flag back to invalid
  /// (the values follow their flags).
  __device__ __forceinline__ void clear(std::int64_t tiles) const {
    for (std::int64_t t = threadIdx.x; t < tiles; t += blockDim.x) flags[t] = kInvalid;
  }
};

/// Status words a lane reads per look-back step (a window of kLanes x kLookbackWords tiles a round
/// trip to L2). Measured on the H200 (int32 sum, 2^28): 1, 2, 4 and 8 words a lane gave 3.04,
/// 2.93, 2.81 and 2.74 TB/s: a wider window only adds traffic on the contended status lines.
inline constexpr int kLookbackWords = 1;
/// Nanoseconds a look-back warp sleeps before polling unpublished predecessors again (0: none).
inline constexpr unsigned kLookbackPollDelayNs = 0;

/// By one whole warp, for tile >= 1: the tile's exclusive prefix (every lane returns it). Lane l
/// watches tiles newest - kWords l - j (j < kWords), all its loads in flight at once. Tile
/// `known_tile` (< tile) is taken without a read as an inclusive prefix of value `known_inclusive`,
/// and nothing before it is read: by default the initial value before the first tile, in the
/// pipelined engine a block's own previous tile. Only the tiles after the nearest
/// inclusive prefix in the window are waited for; their values and that prefix are combined in
/// tile order (within a lane from j = kWords - 1 down, then across lanes by a shuffle tree, the
/// higher lane being the earlier); with no inclusive prefix in the window, its aggregate carries on
/// to the window before it. kPublishInclusive = false (tests) leaves every tile after the first to
/// walk back through aggregates alone. Between polls of unpublished tiles the warp sleeps
/// kPollDelayNs.
template <int kWords, unsigned kPollDelayNs, class Op, class Status>
__device__ typename Op::Acc lookback_exclusive_prefix(const Op& op, const Status& status,
                                                      std::int64_t tile, std::int64_t known_tile,
                                                      typename Op::Acc known_inclusive) {
  using Acc = typename Op::Acc;
  static_assert(kWords >= 1 && kWords <= 8, "exact_scan: 1 to 8 status words a lane");
  constexpr unsigned kAllWords = (1u << kWords) - 1;
  const int lane = threadIdx.x % kLanes;
  Acc later = op.identity();  // the combined windows after the current one
  for (std::int64_t newest = tile - 1;; newest -= kLanes * kWords) {
    const std::int64_t lane_newest = newest - std::int64_t{kWords} * lane;
    unsigned flags[kWords];
    Acc values[kWords];
#pragma unroll
    for (int j = 0; j < kWords; ++j) {
      const std::int64_t watched = lane_newest - j;
      flags[j] = kInclusive;
      values[j] = watched == known_tile ? known_inclusive : op.identity();
      if (watched > known_tile) status.read(watched, flags[j], values[j]);
    }
    unsigned inclusive_words;  // this lane's words holding an inclusive prefix
    int nearest_lane;          // the lowest lane holding one (kLanes: none)
    for (;;) {
      inclusive_words = 0;
      unsigned invalid_words = 0;
#pragma unroll
      for (int j = 0; j < kWords; ++j) {
        inclusive_words |= unsigned(flags[j] == kInclusive) << j;
        invalid_words |= unsigned(flags[j] == kInvalid) << j;
      }
      const unsigned inclusive_lanes = __ballot_sync(~0u, inclusive_words != 0);
      nearest_lane = inclusive_lanes != 0 ? __ffs(inclusive_lanes) - 1 : kLanes;
      // The words that matter: those before the nearest inclusive prefix.
      const unsigned needed = lane < nearest_lane ? kAllWords
                              : lane == nearest_lane
                                  ? (inclusive_words & (0u - inclusive_words)) - 1
                                  : 0u;
      if (!__any_sync(~0u, (invalid_words & needed) != 0)) break;
      if constexpr (kPollDelayNs > 0) __nanosleep(kPollDelayNs);
#pragma unroll
      for (int j = 0; j < kWords; ++j) {
        if ((invalid_words & needed) >> j & 1u) status.read(lane_newest - j, flags[j], values[j]);
      }
    }
    // The lane's words up to and including the nearest inclusive prefix, earliest first.
    const int last_word = lane < nearest_lane    ? kWords - 1
                          : lane == nearest_lane ? __ffs(inclusive_words) - 1
                                                 : -1;
    Acc window = op.identity();
#pragma unroll
    for (int j = kWords - 1; j >= 0; --j) {
      if (j <= last_word) window = op(window, values[j]);
    }
#pragma unroll
    for (int d = 1; d < kLanes; d *= 2) {
      const Acc earlier = scan_engine::shuffle_words(
          window, [d](unsigned w) { return __shfl_down_sync(~0u, w, d); });
      if (lane + d < kLanes) window = op(earlier, window);
    }
    later = scan_engine::clamp_carry(op, op(scan_engine::shuffle(window, 0), later));
    if (nearest_lane < kLanes) return later;
  }
}

template <int kWords, unsigned kPollDelayNs, class Op, class Status>
__device__ __forceinline__ typename Op::Acc lookback_exclusive_prefix(const Op& op,
                                                                      const Status& status,
                                                                      std::int64_t tile) {
  return lookback_exclusive_prefix<kWords, kPollDelayNs>(op, status, tile, -1,
                                                         canonical_scan::initial_value(op));
}

/// By warp 0 once `aggregate` (the tile's) is known: publishes it, looks back, publishes the
/// inclusive prefix (unless !kPublishInclusive, for tests; the first tile always does) and returns
/// the exclusive one (every lane).
template <int kWords = kLookbackWords, unsigned kPollDelayNs = kLookbackPollDelayNs,
          bool kPublishInclusive = true, class Op, class Status>
__device__ __forceinline__ typename Op::Acc resolve_tile_prefix(const Op& op, const Status& status,
                                                                std::int64_t tile,
                                                                typename Op::Acc aggregate) {
  using Acc = typename Op::Acc;
  const int lane = threadIdx.x % kLanes;
  Acc exclusive;
  if (tile == 0) {
    exclusive = canonical_scan::initial_value(op);
  } else {
    if (lane == 0) status.publish(tile, kAggregate, aggregate);
    exclusive = lookback_exclusive_prefix<kWords, kPollDelayNs>(op, status, tile);
  }
  if (lane == 0 && (kPublishInclusive || tile == 0)) {
    status.publish(tile, kInclusive, scan_engine::clamp_carry(op, op(exclusive, aggregate)));
  }
  return exclusive;
}

// --- the launch's control words -------------------------------------------------------------

/// The head of the workspace, before the tile status. A launch leaves it and the tiles' flags as
/// it found them, zero (the overflow report excepted), so the next launch needs no memset
/// (ScanWorkspace::reserve_clean): the first tile clears the report, the last block to finish
/// clears the rest. Measured on the H200, a memset queued before every launch cost 1.2-2.7 us.
struct LaunchControl {
  unsigned long long overflow_report;  // where scan_engine::overflow_index reads it
  unsigned long long tile_counter;     // tiles taken
  unsigned long long done_counter;     // blocks finished
  unsigned report_cleared;             // 1 once the first tile has cleared the report
  unsigned unused;
};
static_assert(sizeof(LaunchControl) == 32 && scan_engine::WorkspaceLayout::kOverflowReport == 0);
/// The tile status follows the control words.
inline constexpr std::size_t kStatusOffset = sizeof(LaunchControl);

/// By thread 0 of the first tile's block, before it publishes anything: clears the overflow
/// report of an earlier launch, then lets this launch's reports in (release).
__device__ __forceinline__ void clear_overflow_report(LaunchControl* control) {
  control->overflow_report = 0;
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(&control->report_cleared), "r"(1u)
               : "memory");
}

/// Waits (acquire) until the first tile has cleared the report; only an overflowing warp gets
/// here, and the first tile's block is running (it took its ticket before this one).
__device__ __forceinline__ void wait_for_report_cleared(const LaunchControl* control) {
  for (;;) {
    unsigned cleared;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                 : "=r"(cleared)
                 : "l"(&control->report_cleared)
                 : "memory");
    if (cleared != 0) return;
  }
}

/// By the whole block, as its last act: counts the block as finished; the last of `blocks` (one a
/// tile here, one an SM in the pipelined engine) returns the counters and the tiles' flags to
/// zero. Every block has done its look-backs (the only reads of other tiles' status) and its
/// reports before it counts itself.
template <class Status>
__device__ __forceinline__ void finish_block(LaunchControl* control, const Status& status,
                                             std::int64_t tiles, std::int64_t blocks,
                                             bool& last /* shared */) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&control->done_counter, 1ull) == static_cast<unsigned long long>(blocks - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  status.clear(tiles);
  if (threadIdx.x == 0) {
    control->tile_counter = 0;
    control->done_counter = 0;
    control->report_cleared = 0;
  }
}

// --- the scan kernel ---------------------------------------------------------------------------

/// Waits until at most `kPending` of this thread's most recent copy groups are in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}
/// The same for a sub-tile index known only after unrolling: sub-tile `sub` of kSubTiles groups
/// has arrived once at most kSubTiles - 1 - sub groups are pending.
__device__ __forceinline__ void wait_for_sub_tile(int sub) {
  static_assert(kSubTiles == 4, "exact_scan: one wait per sub-tile below");
  if (sub == 0) cp_async_wait<3>();
  if (sub == 1) cp_async_wait<2>();
  if (sub == 2) cp_async_wait<1>();
  if (sub == 3) cp_async_wait<0>();
}

template <class Acc>
struct ScanShared {
  Acc warp_totals[kSubTiles][kWarps];
  Acc exclusive;
  unsigned long long ticket;
  bool last;  // the last block to finish (finish_block)
};

/// The dynamic shared memory of a block working on tiles of `sub_tiles` sub-tiles.
inline constexpr std::size_t tile_buffer_bytes(int sub_tiles) {
  return std::size_t(sub_tiles) * kWarps * kWarpChunks * sizeof(uint4);
}

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

/// Elements of sub-tile `sub` that exist (may be <= 0 past the end, or more than a sub-tile).
template <class E>
__device__ __forceinline__ int sub_tile_valid(std::int64_t count, std::int64_t sub) {
  const std::int64_t left = count - sub * TileShape<E>::kSubTile;
  return left < TileShape<E>::kSubTile ? static_cast<int>(left < 0 ? 0 : left)
                                       : TileShape<E>::kSubTile;
}

/// By one thread of a warp with an overflow: records `index` in the report unless the report
/// already holds an earlier one (the report keeps 2^63 - index, so the largest is the earliest).
__device__ __forceinline__ void record_overflow(LaunchControl* control, std::int64_t index) {
  wait_for_report_cleared(control);
  const auto value = (1ull << 63) - static_cast<unsigned long long>(index);
  if (*static_cast<volatile unsigned long long*>(&control->overflow_report) < value) {
    atomicMax(&control->overflow_report, value);
  }
}

/// Records `first_bad` (this lane's first failing item, kItems when none) for the warp: the
/// lowest failing lane reports, and only when the report does not hold an earlier index already
/// (an overflowing scan would otherwise send one atomic per thread to one address: measured, a
/// 2^30 int32 scan that overflows early took 41 ms instead of 2.8).
__device__ __forceinline__ void report_overflow(LaunchControl* control,
                                                std::int64_t lane_first_index, int first_bad,
                                                int items) {
  const unsigned failing = __ballot_sync(~0u, first_bad < items);
  if (failing == 0) return;
  const int lane = threadIdx.x % kLanes;
  if (lane != __ffs(failing) - 1) return;
  record_overflow(control, lane_first_index + first_bad);
}

template <class Op, class Output, int kWords, unsigned kPollDelayNs, bool kPublishInclusive>
__global__ void __launch_bounds__(kThreads, kMinBlocks<Op>)
    exact_scan_kernel(Op op, const typename Op::Input* input, Output* output, std::int64_t count,
                      int sub_tiles, std::int64_t tiles, bool exclusive, LookbackStatus<Op> status,
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
    const Acc lane_inclusive = scan_engine::warp_inclusive_scan(op, thread_total);
    const Acc lower = scan_engine::shuffle_up(lane_inclusive, 1);
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

/// The workspace layout: [0, kStatusOffset) the LaunchControl words (the overflow report first,
/// where scan_engine::overflow_index reads it), then the tile status.

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

/// Workspace bytes a launch over `count` elements needs.
template <class Op>
std::size_t workspace_bytes(std::int64_t count) {
  return kStatusOffset + LookbackStatus<Op>::bytes(tile_count<typename Op::Input>(count));
}

/// Lets `kernel` use a whole tile's dynamic shared memory (once per kernel).
template <class Kernel>
void allow_tile_buffer(Kernel kernel) {
  scan_engine::check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(tile_buffer_bytes(kSubTiles))),
                          "cudaFuncSetAttribute(exact scan shared memory)");
}

/// Scans `count` elements of `input` into `output` (device memory, any alignment of the element
/// types; the same pointer for in place, otherwise disjoint) on `stream`: inclusive or exclusive
/// per `kind`. Clears the workspace's overflow report and records in it the first index (plus
/// `index_base`) whose output fails `op.fits` (scan_engine::overflow_index reads it). The
/// workspace grows to workspace_bytes<Op>(count); one kernel launch, no memset, when the
/// workspace's last user was this engine or the compaction engine with at least as many tiles.
/// `sub_tiles` (1..kSubTiles, 0: sub_tiles_for), kWords (status words a lane reads per look-back
/// step) and kPollDelayNs are for tuning experiments and tests; kPublishInclusive = false is for
/// tests.
template <int kWords = kLookbackWords, unsigned kPollDelayNs = kLookbackPollDelayNs,
          bool kPublishInclusive = true, class Op, class Output>
void launch(const Op& op, const typename Op::Input* input, Output* output, std::int64_t count,
            ScanKind kind, ScanWorkspace& workspace, cudaStream_t stream,
            std::int64_t index_base = 0, int sub_tiles = 0) {
  using Input = typename Op::Input;
  using Status = LookbackStatus<Op>;
  if (sub_tiles <= 0 || sub_tiles > kSubTiles) sub_tiles = sub_tiles_for<Input>(count);
  const std::int64_t tile = std::int64_t{sub_tiles} * TileShape<Input>::kSubTile;
  const std::int64_t tiles = count > 0 ? (count + tile - 1) / tile : 0;
  auto* base = static_cast<unsigned char*>(workspace.reserve_clean(
      kStatusOffset + Status::bytes(tiles), kStatusOffset + Status::flag_bytes(tiles), stream));
  auto* control = reinterpret_cast<LaunchControl*>(base);
  if (count <= 0) {
    scan_engine::check_cuda(cudaMemsetAsync(&control->overflow_report, 0, 8, stream),
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
  scan_engine::check_cuda(cudaGetLastError(), "launch of exact_scan_kernel");
  workspace.leave_clean();
}

}  // namespace gpukit::primitives::exact_scan
