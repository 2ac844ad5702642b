#pragma once
// The single-pass scan engine (Merrill and Garland 2016, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back"), public so that a CUDA user can instantiate it with an operation of their
// own (the scan_canonical.hpp operation concept; `store` and `fits` are optional).
//
// One launch. Persistent blocks take 4096-element tiles in order from an atomic counter, so a
// tile only ever waits on tiles already taken by running blocks. A block loads its tile with
// 16-byte loads into registers (warp w owns elements [512w, 512w + 512), four rows of 32 lanes x
// 4 elements), scans it in registers and warp shuffles in the canonical order, and publishes the
// tile's aggregate. Its first warp then finds the tile's exclusive prefix as the canonical
// bracketing defines it: the Kogge-Stone scan of the aggregates of the tile's group of 32 (the
// earlier tiles of the group, read in one coalesced load), on top of the inclusive prefix Q of
// the previous group. Q is published by each group's last tile; when it is not there yet, the
// warp takes the nearest published Q and adds the later groups' sums (their 32 aggregates summed
// by the same shuffle tree) left to right. Every prefix is thus a fixed function
// of the input whatever the timing: the result is bitwise deterministic and equals the CPU's
// canonical scan. One load of 32 group prefixes finds the nearest published one, and each
// group after it costs one coalesced load and five shuffles. Status
// entries pack a validity flag with a payload of up to 62 bits (one atomic 64-bit word) when the
// accumulator allows it; wider accumulators use a flag word plus a value, ordered by
// release/acquire.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::primitives::scan_engine {

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

enum StatusFlag : unsigned { kFlagInvalid = 0, kFlagValid = 1 };

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

/// Bytes of status per entry (a flag word plus a value when not packed).
template <class Op>
constexpr std::size_t status_bytes_per_entry() {
  if constexpr (packed_status<Op>()) {
    return sizeof(unsigned long long);
  } else {
    return sizeof(unsigned) + sizeof(typename Op::Acc);
  }
}

/// Status entries of a launch over `tiles` tiles: one aggregate per tile, then one inclusive
/// prefix per group.
inline std::int64_t status_entries(std::int64_t tiles) {
  return tiles + (tiles + kGroupTiles - 1) / kGroupTiles;
}

// --- shuffles of any trivially copyable value ---------------------------------------------------

/// Applies `shuffle_word` (one 32-bit warp shuffle) to every word of `value`.
template <class T, class ShuffleWord>
__device__ __forceinline__ T shuffle_words(T value, ShuffleWord shuffle_word) {
  static_assert(sizeof(T) % 4 == 0, "scan_engine: accumulators are whole 32-bit words");
  unsigned words[sizeof(T) / 4];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) words[i] = shuffle_word(words[i]);
  memcpy(&value, words, sizeof(T));
  return value;
}

template <class T>
__device__ __forceinline__ T shuffle(T value, int source_lane) {
  return shuffle_words(value,
                       [source_lane](unsigned w) { return __shfl_sync(~0u, w, source_lane); });
}

template <class T>
__device__ __forceinline__ T shuffle_up(T value, int delta) {
  return shuffle_words(value, [delta](unsigned w) { return __shfl_up_sync(~0u, w, delta); });
}

// --- tile status ---------------------------------------------------------------------------------

/// A packed status word (both engines): the value's bits above a 2-bit flag, stored and loaded
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
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(word_address), "l"(word) : "memory");
}

template <class Acc>
__device__ __forceinline__ void load_status_word(const unsigned long long* word_address,
                                                 unsigned& flag, Acc& value) {
  unsigned long long word;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(word_address) : "memory");
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

/// The workspace layout: [0, 8) the overflow report, [8, 16) the tile counter, [16, ...) status.
struct WorkspaceLayout {
  static constexpr std::size_t kOverflowReport = 0;
  static constexpr std::size_t kTileCounter = 8;
  static constexpr std::size_t kStatus = 16;
};

template <class Op, bool kPacked = packed_status<Op>()>
struct TileStatus;

template <class Op>
struct TileStatus<Op, true> {
  using Acc = typename Op::Acc;
  unsigned long long* words;

  __host__ static std::size_t flag_bytes(std::int64_t entries) {
    return std::size_t(entries) * sizeof(unsigned long long);
  }
  __host__ static TileStatus at(void* status, std::int64_t) {
    return {static_cast<unsigned long long*>(status)};
  }

  __device__ __forceinline__ void publish(std::int64_t entry, Acc value) const {
    store_status_word(words + entry, kFlagValid, value);
  }
  __device__ __forceinline__ void read(std::int64_t entry, unsigned& flag, Acc& value) const {
    load_status_word(words + entry, flag, value);
  }
};

template <class Op>
struct TileStatus<Op, false> {
  using Acc = typename Op::Acc;
  unsigned* flags;
  Acc* values;

  __host__ static std::size_t flag_bytes(std::int64_t entries) {
    return (std::size_t(entries) * sizeof(unsigned) + 15) / 16 * 16;
  }
  __host__ static TileStatus at(void* status, std::int64_t entries) {
    auto* bytes = static_cast<unsigned char*>(status);
    return {static_cast<unsigned*>(status), reinterpret_cast<Acc*>(bytes + flag_bytes(entries))};
  }

  __device__ __forceinline__ void publish(std::int64_t entry, Acc value) const {
    values[entry] = value;
    // Release: the value is visible to whoever acquires the flag.
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + entry), "r"(kFlagValid)
                 : "memory");
  }
  __device__ __forceinline__ void read(std::int64_t entry, unsigned& flag, Acc& value) const {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                 : "=r"(flag)
                 : "l"(flags + entry)
                 : "memory");
    if (flag != kFlagInvalid) value = values[entry];
  }
};

/// Status bytes for a launch over `tiles` tiles (flags plus values), 16-byte aligned.
template <class Op>
std::size_t status_bytes(std::int64_t tiles) {
  return (std::size_t(status_entries(tiles)) * status_bytes_per_entry<Op>() + 15) / 16 * 16 + 16;
}

// --- the kernel --------------------------------------------------------------------------------

template <class Op>
struct SharedStorage {
  using Acc = typename Op::Acc;
  Acc warp_totals[kWarps];
  Acc exclusive;
  long long next_tile;
};

/// The warp's Kogge-Stone inclusive scan of one value per lane (the canonical lane order).
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_inclusive_scan(const Op& op, typename Op::Acc s) {
  const int lane = threadIdx.x % kLanes;
#pragma unroll
  for (int d = 1; d < kLanes; d *= 2) {
    const auto lower = shuffle_up(s, d);
    if (lane >= d) s = op(lower, s);
  }
  return s;
}

/// The sum of one full group's 32 tile aggregates (spinning until all are published), by the
/// canonical shuffle tree.
template <class Op, class Status>
__device__ __forceinline__ typename Op::Acc group_sum(const Op& op, const Status& status,
                                                      std::int64_t group) {
  const int lane = threadIdx.x % kLanes;
  unsigned flag = kFlagInvalid;
  typename Op::Acc aggregate = op.identity();
  do {
    status.read(group * kGroupTiles + lane, flag, aggregate);
  } while (flag == kFlagInvalid);
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
    unsigned flag = kFlagValid;
    value = carry;
    if (g >= 0) status.read(tiles + g, flag, value);
    published = __ballot_sync(~0u, flag != kFlagInvalid);
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
    unsigned flag = kFlagInvalid;
    do {
      status.read(group * kGroupTiles + lane, flag, value);
    } while (flag == kFlagInvalid);
  } else if (lane == position) {
    value = aggregate;
  }
  const Acc scanned = warp_inclusive_scan(op, value);
  const Acc before_in_group = shuffle(scanned, position > 0 ? position - 1 : 0);
  const Acc group_sum = shuffle(scanned, kLanes - 1);
  const Acc q = group_prefix(op, status, group - 1, tiles, carry);
  if (lane == 0 && (position == kGroupTiles - 1 || tile == tiles - 1)) {
    const Acc group_inclusive = carry_op(op, q, group_sum);
    status.publish(tiles + group, group_inclusive);
    if (tile == tiles - 1 && total_out != nullptr) *total_out = group_inclusive;
  }
  return position == 0 ? q : op(q, before_in_group);
}

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
    decoupled_lookback_kernel(Op op, const typename Op::Input* input,
                              StoreOutputs<Op, Output> store, std::int64_t count,
                              std::int64_t tiles, bool exclusive, TileStatus<Op> status,
                              unsigned long long* tile_counter, const typename Op::Acc* carry_in,
                              typename Op::Acc* total_out) {
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
      if (lane == 0) status.publish(tile, aggregate);
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

// --- host side -----------------------------------------------------------------------------------

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw CudaError(what, cudaGetErrorString(status), __FILE__, __LINE__);
}

/// Workspace bytes a launch over `count` elements needs.
template <class Op>
std::size_t workspace_bytes(std::int64_t count) {
  const std::int64_t tiles = (count + kTile - 1) / kTile;
  return WorkspaceLayout::kStatus + status_bytes<Op>(tiles);
}

/// Clears the overflow report (once per API call, before the first launch).
inline void clear_overflow_report(ScanWorkspace& workspace, cudaStream_t stream) {
  check_cuda(cudaMemsetAsync(workspace.data(), 0, 8, stream), "cudaMemsetAsync(overflow report)");
}

/// The first overflowing index recorded in the workspace, or -1 (waits for nothing: call after
/// the stream is complete).
inline std::int64_t overflow_index(const ScanWorkspace& workspace) {
  unsigned long long report = 0;
  check_cuda(cudaMemcpy(&report, workspace.data(), sizeof report, cudaMemcpyDeviceToHost),
             "cudaMemcpy(overflow report)");
  return report == 0 ? -1 : static_cast<std::int64_t>((1ull << 63) - report);
}

/// Scans `count` elements of `input` into `output` (device memory; the same pointer for in place)
/// on `stream`. `carry_in` (device, may be null) is Q[-1]; `total_out` (device, may be null)
/// receives the last group's Q; `index_base` offsets the overflow report's
/// indices. The workspace must hold workspace_bytes<Op>(count); its overflow report is not
/// cleared here.
template <class Op, class Output>
void launch(const Op& op, const typename Op::Input* input, Output* output, std::int64_t count,
            ScanKind kind, ScanWorkspace& workspace, cudaStream_t stream,
            const typename Op::Acc* carry_in = nullptr, typename Op::Acc* total_out = nullptr,
            std::int64_t index_base = 0) {
  if (count <= 0) return;
  const std::int64_t tiles = (count + kTile - 1) / kTile;
  auto* base = static_cast<unsigned char*>(workspace.reserve(workspace_bytes<Op>(count)));
  auto* tile_counter = reinterpret_cast<unsigned long long*>(base + WorkspaceLayout::kTileCounter);
  void* status_area = base + WorkspaceLayout::kStatus;
  // Only the counter and the flags need clearing; the values are written before their flags.
  const std::int64_t entries = status_entries(tiles);
  check_cuda(cudaMemsetAsync(tile_counter, 0, 8 + TileStatus<Op>::flag_bytes(entries), stream),
             "cudaMemsetAsync(scan tile status)");

  const auto kernel = decoupled_lookback_kernel<Op, Output>;
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
      TileStatus<Op>::at(status_area, entries), tile_counter, carry_in, total_out);
  check_cuda(cudaGetLastError(), "launch of decoupled_lookback_kernel");
}

}  // namespace gpukit::primitives::scan_engine
