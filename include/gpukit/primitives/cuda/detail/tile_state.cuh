#pragma once
// Internal: the tile state and look-back layer of every single-pass engine (Merrill and Garland
// 2016). A tile publishes its aggregate in a status entry of the one TileStatus type (the flag and
// a value of up to 62 bits in one 64-bit word when the accumulator allows it, else a flag word and
// values ordered by release/acquire); a later tile's warp looks back over the entries for its
// exclusive prefix. Two look-backs read them: the exact one (exact scans, compaction) takes the
// nearest inclusive prefix and the aggregates after it, whatever the timing left published; the
// deterministic one brackets tiles in fixed groups of 32 so that a floating-point sum gives the
// same bits every run. The deterministic reduction's few tile sums travel in epoch-tagged slots
// read by one finishing block. Also here: the launch's control words (the clean-workspace
// protocol of the exact engines) and the overflow report every scan engine writes.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cuda/atomic>
#include <type_traits>

#include "gpukit/primitives/cuda/detail/ptx.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives::device::detail {

/// A status entry's flag. The exact look-back publishes a tile's aggregate, later its inclusive
/// prefix; the deterministic look-back's entries (tile aggregates, group prefixes) are only ever
/// valid, which it spells kValid.
enum StatusFlag : unsigned { kInvalid = 0, kAggregate = 1, kInclusive = 2, kValid = kAggregate };

// --- operation traits --------------------------------------------------------------------------

template <class Op>
__host__ __device__ __forceinline__ typename Op::Acc clamp_carry(const Op& op, typename Op::Acc a) {
  if constexpr (requires { op.clamp_carry(a); }) {
    return op.clamp_carry(a);
  } else {
    return a;
  }
}

/// One published (clamped) carry: P = clamp(E ⊕ a).
template <class Op>
__device__ __forceinline__ typename Op::Acc carry_op(const Op& op, typename Op::Acc e,
                                                     typename Op::Acc a) {
  return clamp_carry(op, op(e, a));
}

/// Status words pack the flag with the payload when the accumulator is at most 32 bits, or a
/// 64-bit integer the operation clamps (exact int32/uint32 sums: |payload| < 2^61).
template <class Op>
constexpr bool packed_status() {
  using Acc = typename Op::Acc;
  if constexpr (sizeof(Acc) <= 4) return std::is_trivially_copyable_v<Acc>;
  if constexpr (sizeof(Acc) == 8 && std::is_integral_v<Acc>) {
    return requires(const Op& op, Acc a) { op.clamp_carry(a); };
  }
  return false;
}

// --- status words ------------------------------------------------------------------------------

/// A packed status word (every look-back): the value's bits above a 2-bit flag, stored and loaded
/// relaxed at GPU scope (a whole aligned 8-byte word is single-copy atomic, so a reader sees the
/// flag and its value together). A 62-bit payload sign-extends for signed accumulators.
template <class Acc>
__device__ __forceinline__ void store_status_word(unsigned long long* word_address, unsigned flag,
                                                  Acc value) {
  unsigned long long payload = 0;
  if constexpr (sizeof(Acc) == 8) {
    payload = static_cast<unsigned long long>(value);
  } else {
    unsigned bits = 0;
    memcpy(&bits, &value, sizeof(Acc));
    payload = bits;
  }
  const unsigned long long word = (payload << 2) | flag;
  store_relaxed_gpu(word_address, word);
}

template <class Acc>
__device__ __forceinline__ void load_status_word(const unsigned long long* word_address,
                                                 unsigned& flag, Acc& value) {
  const unsigned long long word = load_relaxed_gpu(word_address);
  flag = static_cast<unsigned>(word & 3u);
  if constexpr (sizeof(Acc) == 8) {
    if constexpr (std::is_signed_v<Acc>) {
      value = static_cast<Acc>(static_cast<long long>(word) >> 2);  // arithmetic shift
    } else {
      value = static_cast<Acc>(word >> 2);
    }
  } else {
    const auto bits = static_cast<unsigned>(word >> 2);
    memcpy(&value, &bits, sizeof(Acc));
  }
}

// --- the status entries ------------------------------------------------------------------------

/// How an entry is published, the one thing the two look-backs need differently of their status.
/// kOnce: an entry is written once (the deterministic look-back's tile aggregates and group
/// prefixes), so one value array serves. kAggregateThenInclusive: a tile publishes its aggregate,
/// later its inclusive prefix (the exact look-back); unpacked, the two values need separate arrays
/// (a reader that saw the flag "aggregate" must not read a value the owner overwrites with its
/// inclusive prefix). Packed, both are the same single word.
enum class Publication { kOnce, kAggregateThenInclusive };

/// The status entries of one launch, the one tile-state type of every look-back. One word per
/// entry, flag in the low two bits, when packed_status allows it (the accumulator fits 32 bits,
/// or 62 because the operation clamps its carries); else a flag word per entry and the values in
/// one array per publication (kPublication), ordered by release/acquire.
template <class Op, Publication kPublication, bool kPacked = detail::packed_status<Op>()>
struct TileStatus;

template <class Op, Publication kPublication>
struct TileStatus<Op, kPublication, true> {
  using Acc = typename Op::Acc;
  unsigned long long* words;

  /// Bytes that must be zero (every flag invalid) before a launch.
  static std::size_t flag_bytes(std::int64_t entries) {
    return std::size_t(entries) * sizeof(unsigned long long);
  }
  /// Bytes of `entries` entries.
  static std::size_t bytes(std::int64_t entries) { return flag_bytes(entries); }
  static TileStatus at(void* area, std::int64_t) {
    return {static_cast<unsigned long long*>(area)};
  }

  __device__ __forceinline__ void publish(std::int64_t entry, unsigned flag, Acc value) const {
    detail::store_status_word(words + entry, flag, value);
  }
  __device__ __forceinline__ void read(std::int64_t entry, unsigned& flag, Acc& value) const {
    detail::load_status_word(words + entry, flag, value);
  }
  /// By a whole block, once no tile reads the status any more: every entry's flag back to invalid.
  __device__ __forceinline__ void clear(std::int64_t entries) const {
    for (std::int64_t t = threadIdx.x; t < entries; t += blockDim.x) words[t] = 0;
  }
};

template <class Op, Publication kPublication>
struct TileStatus<Op, kPublication, false> {
  using Acc = typename Op::Acc;
  static constexpr int kValueArrays = kPublication == Publication::kOnce ? 1 : 2;
  unsigned* flags;
  Acc* values[kValueArrays];  // [0]: aggregates (kOnce: every value), [1]: inclusive prefixes

  static std::size_t flag_bytes(std::int64_t entries) {
    return (std::size_t(entries) * sizeof(unsigned) + 15) / 16 * 16;
  }
  static std::size_t value_bytes(std::int64_t entries) {
    return (std::size_t(entries) * sizeof(Acc) + 15) / 16 * 16;
  }
  static std::size_t bytes(std::int64_t entries) {
    return flag_bytes(entries) + kValueArrays * value_bytes(entries);
  }
  static TileStatus at(void* area, std::int64_t entries) {
    auto* base = static_cast<unsigned char*>(area);
    TileStatus status{static_cast<unsigned*>(area), {}};
    for (int k = 0; k < kValueArrays; ++k) {
      status.values[k] =
          reinterpret_cast<Acc*>(base + flag_bytes(entries) + k * value_bytes(entries));
    }
    return status;
  }

  __device__ __forceinline__ void publish(std::int64_t entry, unsigned flag, Acc value) const {
    if constexpr (kValueArrays == 1) {
      values[0][entry] = value;
    } else {
      (flag == kInclusive ? values[1] : values[0])[entry] = value;
    }
    // Release: the value is visible to whoever acquires the flag.
    store_release_gpu(flags + entry, flag);
  }
  __device__ __forceinline__ void read(std::int64_t entry, unsigned& flag, Acc& value) const {
    flag = load_acquire_gpu(flags + entry);
    if constexpr (kValueArrays == 1) {
      if (flag != kInvalid) value = values[0][entry];
    } else {
      if (flag == kAggregate) value = values[0][entry];
      if (flag == kInclusive) value = values[1][entry];
    }
  }
  /// By a whole block, once no tile reads the status any more: every entry's flag back to invalid
  /// (the values follow their flags).
  __device__ __forceinline__ void clear(std::int64_t entries) const {
    for (std::int64_t t = threadIdx.x; t < entries; t += blockDim.x) flags[t] = kInvalid;
  }
};

/// The exact look-back's status: one entry a tile, aggregate then inclusive prefix.
template <class Op>
using ExactTileStatus = TileStatus<Op, Publication::kAggregateThenInclusive>;
/// The deterministic look-back's status: one entry a tile aggregate, then one a group prefix.
template <class Op>
using DeterministicTileStatus = TileStatus<Op, Publication::kOnce>;

// --- the exact look-back: the nearest inclusive prefix ----------------------------------------

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
/// sm_90 engine a block's own previous tile. Only the tiles after the nearest
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
  static_assert(kWords >= 1 && kWords <= 8, "detail: 1 to 8 status words a lane");
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
      const Acc earlier =
          detail::shuffle_words(window, [d](unsigned w) { return __shfl_down_sync(~0u, w, d); });
      if (lane + d < kLanes) window = op(earlier, window);
    }
    later = detail::clamp_carry(op, op(detail::shuffle(window, 0), later));
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
    status.publish(tile, kInclusive, detail::clamp_carry(op, op(exclusive, aggregate)));
  }
  return exclusive;
}

// --- the launch's control words -------------------------------------------------------------

/// The head of the workspace, before the tile status. A launch leaves it and the tiles' flags as
/// it found them, zero (the overflow report excepted), so the next launch needs no memset
/// (ScanWorkspace::reserve_clean): the first tile clears the report, the last block to finish
/// clears the rest. Measured on the H200, a memset queued before every launch cost 1.2-2.7 us.
struct LaunchControl {
  unsigned long long overflow_report;  // where WorkspaceLayout puts it, for every scan engine
  unsigned long long tile_counter;     // tiles taken
  unsigned long long done_counter;     // blocks finished
  unsigned report_cleared;             // 1 once the first tile has cleared the report
  unsigned unused;
};
static_assert(sizeof(LaunchControl) == 32);
/// The tile status follows the control words.
inline constexpr std::size_t kStatusOffset = sizeof(LaunchControl);

/// By thread 0 of the first tile's block, before it publishes anything: clears the overflow
/// report of an earlier launch, then lets this launch's reports in (release).
__device__ __forceinline__ void clear_overflow_report(LaunchControl* control) {
  control->overflow_report = 0;
  store_release_gpu(&control->report_cleared, 1u);
}

/// Waits (acquire) until the first tile has cleared the report; only an overflowing warp gets
/// here, and the first tile's block is running (it took its ticket before this one).
__device__ __forceinline__ void wait_for_report_cleared(const LaunchControl* control) {
  for (;;) {
    if (load_acquire_gpu(&control->report_cleared) != 0) return;
  }
}

/// By the whole block, as its last act: counts the block as finished; the last of `blocks` (one a
/// tile in exact_scan and compaction, one an SM in exact_scan_sm90) returns the counters and the
/// tiles' flags to zero. Every block has done its look-backs (the only reads of other tiles'
/// status) and its reports before it counts itself.
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

// --- the deterministic look-back: fixed groups of kGroupTiles tiles -----------------------------

using canonical_scan::kGroupTiles;

/// Status entries of a launch over `tiles` tiles: one aggregate per tile, then one inclusive
/// prefix per group.
inline std::int64_t status_entries(std::int64_t tiles) {
  return tiles + (tiles + kGroupTiles - 1) / kGroupTiles;
}

/// The deterministic engine's workspace: [0, 8) the overflow report (where every engine keeps
/// it), [8, 16) the tile counter, [16, ...) status.
struct WorkspaceLayout {
  static constexpr std::size_t kOverflowReport = 0;
  static constexpr std::size_t kTileCounter = 8;
  static constexpr std::size_t kStatus = 16;
};

/// Status bytes for a launch over `tiles` tiles (flags plus values), 16-byte aligned.
template <class Op>
std::size_t status_bytes(std::int64_t tiles) {
  return DeterministicTileStatus<Op>::bytes(status_entries(tiles));
}

/// The sum of one full group's 32 tile aggregates (spinning until all are published), by the
/// canonical shuffle tree.
template <class Op, class Status>
__device__ __forceinline__ typename Op::Acc group_sum(const Op& op, const Status& status,
                                                      std::int64_t group) {
  const int lane = threadIdx.x % kLanes;
  unsigned flag = kInvalid;
  typename Op::Acc aggregate = op.identity();
  do {
    status.read(group * kGroupTiles + lane, flag, aggregate);
  } while (flag == kInvalid);
  return shuffle(warp_inclusive_scan(op, aggregate), kLanes - 1);
}

/// Q[group] (the inclusive prefix at the end of a full group), by one warp. Lane l looks at the
/// published Q of group - l, so one load finds the nearest published one within 32 groups (the
/// carry stands for Q[-1]); the groups after it are summed and folded left to right.
template <class Op, class Status>
__device__ typename Op::Acc group_prefix(const Op& op, const Status& status, std::int64_t group,
                                         std::int64_t tiles, typename Op::Acc carry) {
  using Acc = typename Op::Acc;
  const int lane = threadIdx.x % kLanes;
  if (group < 0) return carry;
  unsigned published = 0;
  Acc value = carry;
  for (;;) {
    const std::int64_t g = group - lane;
    unsigned flag = kValid;
    value = carry;
    if (g >= 0) status.read(tiles + g, flag, value);
    published = __ballot_sync(~0u, flag != kInvalid);
    if (published != 0) break;  // else every one of 32 groups is still running: look again
  }
  const int nearest = __ffs(published) - 1;
  Acc q = shuffle(value, nearest);
  for (int j = nearest - 1; j >= 0; --j) q = carry_op(op, q, group_sum(op, status, group - j));
  return q;
}

/// By warp 0, once the tile's aggregate is published: the tile's exclusive prefix (every lane
/// returns it); lane 0 publishes the group's Q when this is the group's last tile or the last
/// tile of all, and writes it to `total_out` for the last tile.
template <class Op, class Status>
__device__ typename Op::Acc tile_exclusive_prefix(const Op& op, const Status& status,
                                                  std::int64_t tile, std::int64_t tiles,
                                                  typename Op::Acc carry,
                                                  typename Op::Acc aggregate,
                                                  typename Op::Acc* total_out) {
  using Acc = typename Op::Acc;
  const int lane = threadIdx.x % kLanes;
  const std::int64_t group = tile / kGroupTiles;
  const int position = static_cast<int>(tile % kGroupTiles);
  Acc value = op.identity();
  if (lane < position) {
    unsigned flag = kInvalid;
    do {
      status.read(group * kGroupTiles + lane, flag, value);
    } while (flag == kInvalid);
  } else if (lane == position) {
    value = aggregate;
  }
  const Acc scanned = warp_inclusive_scan(op, value);
  const Acc before_in_group = shuffle(scanned, position > 0 ? position - 1 : 0);
  const Acc group_sum = shuffle(scanned, kLanes - 1);
  const Acc q = group_prefix(op, status, group - 1, tiles, carry);
  if (lane == 0 && (position == kGroupTiles - 1 || tile == tiles - 1)) {
    const Acc group_inclusive = carry_op(op, q, group_sum);
    status.publish(tiles + group, kValid, group_inclusive);
    if (tile == tiles - 1 && total_out != nullptr) *total_out = group_inclusive;
  }
  return position == 0 ? q : op(q, before_in_group);
}

// --- epoch-tagged slots: tile values read by one finishing block -------------------------------

// The third publication the single-pass engines need: the deterministic reduction's few tile
// sums, read by the one block that finishes (no look-back). A value can be 8 bytes (double, int64
// sums) with no bits to spare for a 2-bit flag, and the slots are never cleared: the epoch in each
// word tells this launch's values from an earlier launch's, so a launch needs neither a memset nor
// a last-block clear (docs/design-notes.md, "One tile-state layer").

/// A value published with its launch's epoch in every word (NCCL's LL protocol): each 32-bit
/// word of the value travels with the epoch in one aligned 8-byte word, which is single-copy
/// atomic, so a reader that finds the epoch in every word has the whole value, with no fence on
/// either side.
template <class Acc>
struct FlaggedSlot {
  static_assert(sizeof(Acc) % 4 == 0, "flagged values must be a multiple of 4 bytes");
  unsigned long long words[sizeof(Acc) / 4];
};

template <class Acc>
__device__ __forceinline__ void publish_flagged(FlaggedSlot<Acc>* slot, const Acc& value,
                                                unsigned epoch) {
  unsigned words[sizeof(Acc) / 4];
  std::memcpy(words, &value, sizeof(Acc));
#pragma unroll
  for (int k = 0; k < static_cast<int>(sizeof(Acc) / 4); ++k) {
    ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(slot->words[k])
        .store((static_cast<unsigned long long>(epoch) << 32) | words[k],
               ::cuda::memory_order_relaxed);
  }
}

/// Where a launch's flagged values go: `slots`, and the state of the epochs before them (in the
/// same zeroed allocation, so that zeroing both at once restarts the epochs with no stale word
/// left that could match). The epoch of a launch is *state + 1, in 1 .. 2^32 - 1; the finishing
/// block advances it, so that launches captured in a CUDA graph get a new epoch at every replay.
template <class Acc>
struct FlaggedRegion {
  unsigned* state = nullptr;
  FlaggedSlot<Acc>* slots = nullptr;    // null: not a flagged launch
  unsigned long long* words = nullptr;  // the whole region after the state, for a wrap
  std::int64_t word_count = 0;

  __device__ unsigned current_epoch() const { return __ldcg(state) + 1; }
  /// Called by every thread of the finishing block once it has read every slot.
  __device__ void advance_epoch(unsigned epoch) const {
    if (epoch != 0xFFFFFFFFu) {
      if (threadIdx.x == 0) *state = epoch;
      return;
    }
    // After 2^32 - 1 launches the tags would come round again: clear every word first, once
    // every thread is past its reads.
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < word_count; i += blockDim.x) words[i] = 0;
    __syncthreads();
    if (threadIdx.x == 0) *state = 0;
  }
};

/// Waits until the 8-byte word carries `epoch`; returns its 32 data bits. `tagged` is a first
/// load of it, issued earlier so that a thread's loads overlap.
__device__ __forceinline__ unsigned settle_flagged(unsigned long long* word,
                                                   unsigned long long tagged, unsigned epoch) {
  while (static_cast<unsigned>(tagged >> 32) != epoch) {
    __nanosleep(32);
    tagged = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(*word).load(
        ::cuda::memory_order_relaxed);
  }
  return static_cast<unsigned>(tagged);
}

static_assert(offsetof(LaunchControl, overflow_report) == WorkspaceLayout::kOverflowReport,
              "detail: every scan engine keeps the overflow report where overflow_index reads it");

}  // namespace gpukit::primitives::device::detail
