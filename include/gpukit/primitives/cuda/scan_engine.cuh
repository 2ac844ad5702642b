#pragma once
// The single-pass scan engine (Merrill and Garland 2016, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back"), public so that a CUDA user can instantiate it with an operation of their
// own (the scan_canonical.hpp operation concept; `store` and `fits` are optional).
//
// One launch. Persistent blocks take 4096-element tiles in order from an atomic counter, so a
// tile only ever waits on tiles already taken by running blocks. A block loads its tile with
// 16-byte loads into registers (warp w owns elements [512w, 512w + 512), four rows of 32 lanes x
// 4 elements), scans it in registers and warp shuffles in the canonical order, publishes the
// tile's aggregate, and its first warp looks back over the predecessors' status words 32 at a
// time for the exclusive prefix. The look-back folds the aggregates it finds left to right from
// the nearest published inclusive prefix, so that every tile prefix is the same left fold
// P[k] = P[k-1] ⊕ aggregate[k] whatever the timing: the result is bitwise deterministic and
// equals the CPU's canonical scan. Status words pack a 2-bit flag with a payload of up to 62 bits
// (one atomic 64-bit word) when the accumulator allows it; wider accumulators use a flag word
// plus separate aggregate and inclusive arrays, ordered by release/acquire.

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
/// Windows of 32 aggregates the look-back keeps while it searches for an inclusive prefix;
/// past that it waits on the oldest window (whose tiles are all running).
inline constexpr int kLookbackDepth = 8;

enum TileFlag : unsigned { kFlagInvalid = 0, kFlagAggregate = 1, kFlagPrefix = 2 };

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

/// Bytes of status per tile (flag word plus two values when not packed).
template <class Op>
constexpr std::size_t status_bytes_per_tile() {
  if constexpr (packed_status<Op>()) {
    return sizeof(unsigned long long);
  } else {
    return sizeof(unsigned) + 2 * sizeof(typename Op::Acc);
  }
}

// --- shuffles of any trivially copyable value ---------------------------------------------------

template <class T>
__device__ __forceinline__ T shuffle(T value, int source_lane) {
  static_assert(sizeof(T) % 4 == 0, "scan_engine: accumulators are whole 32-bit words");
  unsigned words[sizeof(T) / 4];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) words[i] = __shfl_sync(~0u, words[i], source_lane);
  memcpy(&value, words, sizeof(T));
  return value;
}

template <class T>
__device__ __forceinline__ T shuffle_up(T value, int delta) {
  static_assert(sizeof(T) % 4 == 0, "scan_engine: accumulators are whole 32-bit words");
  unsigned words[sizeof(T) / 4];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) words[i] = __shfl_up_sync(~0u, words[i], delta);
  memcpy(&value, words, sizeof(T));
  return value;
}

// --- tile status ---------------------------------------------------------------------------------

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

  __host__ static std::size_t flag_bytes(std::int64_t tiles) {
    return std::size_t(tiles) * sizeof(unsigned long long);
  }
  __host__ static TileStatus at(void* status, std::int64_t) {
    return {static_cast<unsigned long long*>(status)};
  }

  __device__ __forceinline__ void publish(std::int64_t tile, unsigned flag, Acc value) const {
    unsigned long long payload = 0;
    if constexpr (sizeof(Acc) == 8) {
      payload = static_cast<unsigned long long>(value);
    } else {
      unsigned bits = 0;
      memcpy(&bits, &value, sizeof(Acc));
      payload = bits;
    }
    const unsigned long long word = (payload << 2) | flag;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(words + tile), "l"(word) : "memory");
  }
  __device__ __forceinline__ void read(std::int64_t tile, unsigned& flag, Acc& value) const {
    unsigned long long word;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(words + tile) : "memory");
    flag = static_cast<unsigned>(word & 3u);
    if constexpr (sizeof(Acc) == 8) {
      // The 62-bit payload sign-extends (arithmetic shift) for signed accumulators.
      if constexpr (std::is_signed_v<Acc>) {
        value = static_cast<Acc>(static_cast<long long>(word) >> 2);
      } else {
        value = static_cast<Acc>(word >> 2);
      }
    } else {
      const unsigned bits = static_cast<unsigned>(word >> 2);
      memcpy(&value, &bits, sizeof(Acc));
    }
  }
};

template <class Op>
struct TileStatus<Op, false> {
  using Acc = typename Op::Acc;
  unsigned* flags;
  Acc* aggregates;
  Acc* inclusives;

  __host__ static std::size_t flag_bytes(std::int64_t tiles) {
    return (std::size_t(tiles) * sizeof(unsigned) + 15) / 16 * 16;
  }
  __host__ static TileStatus at(void* status, std::int64_t tiles) {
    auto* bytes = static_cast<unsigned char*>(status);
    auto* aggregates = reinterpret_cast<Acc*>(bytes + flag_bytes(tiles));
    return {static_cast<unsigned*>(status), aggregates, aggregates + tiles};
  }

  __device__ __forceinline__ void publish(std::int64_t tile, unsigned flag, Acc value) const {
    (flag == kFlagPrefix ? inclusives : aggregates)[tile] = value;
    // Release: the value is visible to whoever acquires the flag.
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + tile), "r"(flag) : "memory");
  }
  __device__ __forceinline__ void read(std::int64_t tile, unsigned& flag, Acc& value) const {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(flag) : "l"(flags + tile) : "memory");
    if (flag == kFlagPrefix) {
      value = inclusives[tile];
    } else if (flag == kFlagAggregate) {
      value = aggregates[tile];
    }
  }
};

/// Status bytes for `tiles` tiles (flags plus values), 16-byte aligned.
template <class Op>
std::size_t status_bytes(std::int64_t tiles) {
  return (std::size_t(tiles) * status_bytes_per_tile<Op>() + 15) / 16 * 16 + 16;
}

// --- the kernel --------------------------------------------------------------------------------

template <class Op>
struct SharedStorage {
  using Acc = typename Op::Acc;
  Acc warp_totals[kWarps];
  Acc exclusive;
  long long next_tile;
  Acc window[kLookbackDepth][kLanes];
};

/// The exclusive prefix of `tile` (> 0), by warp 0 (all 32 lanes return it).
template <class Op, class Status>
__device__ typename Op::Acc look_back(const Op& op, const Status& status, std::int64_t tile,
                                      typename Op::Acc carry, SharedStorage<Op>& shared) {
  using Acc = typename Op::Acc;
  const int lane = threadIdx.x % kLanes;
  std::int64_t window_end = tile;
  int depth = 0;
  for (;;) {
    const std::int64_t t = window_end - kLanes + lane;
    unsigned flag = kFlagPrefix;
    Acc value = carry;  // tiles before the first: the carry, an inclusive prefix
    if (t >= 0) {
      do {
        status.read(t, flag, value);
      } while (flag == kFlagInvalid);
    }
    __syncwarp();
    const unsigned prefixes = __ballot_sync(~0u, flag == kFlagPrefix);
    if (prefixes != 0) {
      const int nearest = 31 - __clz(prefixes);
      Acc acc = shuffle(value, nearest);
      for (int j = nearest + 1; j < kLanes; ++j) acc = carry_op(op, acc, shuffle(value, j));
      for (int d = depth - 1; d >= 0; --d) {
        for (int j = 0; j < kLanes; ++j) acc = carry_op(op, acc, shared.window[d][j]);
      }
      return acc;
    }
    if (depth < kLookbackDepth) {
      shared.window[depth][lane] = value;
      __syncwarp();
      ++depth;
      window_end -= kLanes;
    }
  }
}

/// Loads the four elements of `lane` in one row (row_valid of the row's 128 are real).
template <class Op>
__device__ __forceinline__ void load_row(const Op& op, const typename Op::Input* row, int row_valid,
                                         int lane, bool vector_ok, typename Op::Acc (&out)[kVec]) {
  using Input = typename Op::Input;
  const Input* p = row + lane * kVec;
  if (vector_ok && row_valid == kRowElements) {
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

  __device__ __forceinline__ void operator()(const Op& op, std::int64_t first, int count,
                                             bool vector_ok,
                                             const typename Op::Acc (&values)[kVec]) const {
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
    if (vector_ok && count == kVec && sizeof(buffer) % 16 == 0) {
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
__global__ void __launch_bounds__(kThreads)
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
      int row_valid = valid - row_begin;
      row_valid = row_valid < 0 ? 0 : (row_valid > kRowElements ? kRowElements : row_valid);
      load_row(op, input + tile_begin + row_begin, row_valid, lane, input_vector_ok, local[r]);
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
      Acc exclusive_prefix = carry;
      if (tile > 0) {
        if (lane == 0) status.publish(tile, kFlagAggregate, aggregate);
        exclusive_prefix = look_back(op, status, tile, carry, shared);
      }
      const Acc inclusive_prefix = carry_op(op, exclusive_prefix, aggregate);
      if (lane == 0) {
        status.publish(tile, kFlagPrefix, inclusive_prefix);
        if (tile == tiles - 1 && total_out != nullptr) *total_out = inclusive_prefix;
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
      const int n = valid - first < kVec ? valid - first : kVec;
      store(op, tile_begin + first, n, output_vector_ok, out);
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
/// on `stream`. `carry_in` (device, may be null) is P[-1]; `total_out` (device, may be null)
/// receives the last tile's inclusive prefix; `index_base` offsets the overflow report's
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
  check_cuda(cudaMemsetAsync(tile_counter, 0, 8 + TileStatus<Op>::flag_bytes(tiles), stream),
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
      TileStatus<Op>::at(status_area, tiles), tile_counter, carry_in, total_out);
  check_cuda(cudaGetLastError(), "launch of decoupled_lookback_kernel");
}

}  // namespace gpukit::primitives::scan_engine
