#pragma once
// The deterministic reduction engine on CUDA: reduce_canonical.hpp's fixed tree, one tile per
// block iteration, in one launch. This header is CUDA source (include it from .cu files only);
// it is public so that a user's own associative, commutative operation (a type with `Input`,
// `Acc`, static `identity()` and `load(Input)`, and `operator()(Acc, Acc)`, all
// __host__ __device__) can run on the same engine: `launch` at the end of this file reduces
// device data with it in one launch, with the same tree, so the same bits, as the CPU's
// canonical::reduce_canonical (tests/primitives/reduce_engine_gpu_test.cu).
//
// Block shape: kThreads threads hold the tile's 1024 lanes, kLanes / kThreads contiguous lanes
// per thread, so one row of a tile is one coalesced sweep of 16-byte loads (4 floats a thread at
// 256 threads) and a tile is 16 such rows, all issued before the first add needs them.
// Napkin math (float): 64 KiB per tile; 2-3 resident blocks per SM keep ~150 KiB in flight per
// SM, far above the ~25 KiB that Little's law asks for at 4.4 TB/s and ~700 ns of latency.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"

namespace gpukit::primitives::cuda_engine {

using canonical::kLanes;
using canonical::kRows;
using canonical::kTile;

/// Elements of the tile that starts `remaining` elements before the end (std::min would bind a
/// reference to kTile, which device code cannot take).
__device__ __forceinline__ std::int64_t tile_size(std::int64_t remaining) {
  return remaining < kTile ? remaining : kTile;
}

/// Shuffles any 4-byte-multiple value down the warp, word by word.
template <class T>
__device__ __forceinline__ T shuffle_down(const T& value, int offset) {
  static_assert(sizeof(T) % 4 == 0, "shuffled values must be a multiple of 4 bytes");
  constexpr int kWords = sizeof(T) / 4;
  unsigned words[kWords];
  std::memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_down_sync(0xffffffffu, words[w], offset);
  T result;
  std::memcpy(&result, words, sizeof(T));
  return result;
}

/// Reads a value another block wrote in this launch: through L2 (ld.global.cg), never a stale L1.
template <class T>
__device__ __forceinline__ T load_through_l2(const T* p) {
  static_assert(sizeof(T) % 4 == 0, "values must be a multiple of 4 bytes");
  constexpr int kWords = sizeof(T) / 4;
  unsigned words[kWords];
  const auto* source = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __ldcg(source + w);
  T result;
  std::memcpy(&result, words, sizeof(T));
  return result;
}

template <bool kThroughL2, class S>
__device__ __forceinline__ S load_through_l2_or_ldg(const S* p) {
  if constexpr (kThroughL2) {
    return load_through_l2(p);
  } else {
    return __ldg(p);
  }
}

/// Loads N contiguous elements with the widest aligned loads (16, 8 or 4 bytes): through the
/// read-only path, or (kThroughL2) through L2 for data other blocks wrote in this launch.
/// `source` must be aligned to the chunk width used.
template <bool kThroughL2, class Chunk>
__device__ __forceinline__ Chunk load_chunk(const Chunk* p) {
  if constexpr (kThroughL2) {
    return __ldcg(p);
  } else {
    return __ldg(p);
  }
}

template <bool kThroughL2, class S, int N>
__device__ __forceinline__ void load_contiguous(S (&destination)[N], const S* source) {
  constexpr int kBytes = N * static_cast<int>(sizeof(S));
  if constexpr (kBytes % 16 == 0) {
    uint4 chunks[kBytes / 16];
#pragma unroll
    for (int c = 0; c < kBytes / 16; ++c) {
      chunks[c] = load_chunk<kThroughL2>(reinterpret_cast<const uint4*>(source) + c);
    }
    std::memcpy(destination, chunks, kBytes);
  } else if constexpr (kBytes % 8 == 0) {
    uint2 chunks[kBytes / 8];
#pragma unroll
    for (int c = 0; c < kBytes / 8; ++c) {
      chunks[c] = load_chunk<kThroughL2>(reinterpret_cast<const uint2*>(source) + c);
    }
    std::memcpy(destination, chunks, kBytes);
  } else {
    static_assert(sizeof(S) == 4 || sizeof(S) == 8 || sizeof(S) % 16 == 0);
#pragma unroll
    for (int j = 0; j < N; ++j) destination[j] = load_through_l2_or_ldg<kThroughL2>(source + j);
  }
}

/// The widest load the lanes of one thread use, in bytes (the data pointer must be aligned to
/// it for the vector path).
template <int kThreads, class S>
constexpr int vector_bytes() {
  constexpr int bytes = (kLanes / kThreads) * static_cast<int>(sizeof(S));
  return bytes % 16 == 0 ? 16 : bytes % 8 == 0 ? 8 : static_cast<int>(sizeof(S));
}

/// Combines the block's per-thread values (one per thread, in lane order) as the adjacent-pair
/// tree: shuffles within each warp, then the same over the warps. The result is valid in thread
/// 0. `warp_values` is kThreads / 32 Accs of shared memory; the block is synchronized on return.
template <int kThreads, class Op>
__device__ __forceinline__ typename Op::Acc block_pairwise_tree(typename Op::Acc value,
                                                                const Op& op,
                                                                typename Op::Acc* warp_values) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // Lane t takes (t, t + offset): for the lanes the tree reads (multiples of 2 * offset) that is
  // exactly the next level of adjacent pairs; the others compute values nobody reads.
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) value = op(value, shuffle_down(value, offset));
  if (lane == 0) warp_values[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kWarps ? warp_values[lane] : Op::identity();
#pragma unroll
    for (int offset = 1; offset < kWarps; offset *= 2) {
      value = op(value, shuffle_down(value, offset));
    }
  }
  __syncthreads();  // warp_values may be reused as soon as this returns
  return value;
}

/// One tile: `count` <= kTile elements at `tile`. `read(p)` turns the element at p into an Acc;
/// `vector_ok` says the tile is full and aligned for vector_bytes<kThreads, Source>(), and
/// `convert` turns a vector-loaded element into an Acc. kThroughL2: the tile was written by
/// other blocks of this launch.
template <int kThreads, bool kThroughL2, class Op, class Source, class Read, class Convert>
__device__ __forceinline__ typename Op::Acc block_reduce_tile(
    const Source* tile, std::int64_t count, const Op& op, const Read& read, const Convert& convert,
    bool vector_ok, typename Op::Acc* warp_values) {
  static_assert(kLanes % kThreads == 0 && kThreads % 32 == 0 && kThreads <= kLanes);
  using Acc = typename Op::Acc;
  constexpr int kPerThread = kLanes / kThreads;
  Acc lanes[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) lanes[j] = Op::identity();
  const int first_lane = threadIdx.x * kPerThread;
  if (vector_ok) {
    // All rows' loads are independent of the adds, so the compiler issues them up front.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      Source values[kPerThread];
      load_contiguous<kThroughL2>(values, tile + r * kLanes + first_lane);
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) lanes[j] = op(lanes[j], convert(values[j]));
    }
  } else {
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const std::int64_t i = std::int64_t{r} * kLanes + first_lane + j;
        if (i < count) lanes[j] = op(lanes[j], read(tile + i));
      }
    }
  }
  const Acc value = canonical::pairwise_tree(lanes, kPerThread, op);
  return block_pairwise_tree<kThreads>(value, op, warp_values);
}

/// Classic last-block detection (every thread of the block calls it): publishes this block's
/// global writes, takes a ticket, and returns true in every thread of the last block to arrive,
/// after which that block sees all other blocks' writes. `flag` is a __shared__ bool. The counter
/// must be 0 when the launch starts; atomicInc wraps it back to 0 for the next launch.
__device__ __forceinline__ bool is_last_block_to_finish(unsigned* counter, bool& flag) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) flag = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
  __syncthreads();
  if (!flag) return false;
  __threadfence();
  return true;
}

/// The upper levels, by one block: `sums[0..count)` (written by other blocks of this launch or
/// of an earlier one) reduce in place, level by level; returns the root (valid in thread 0).
/// In place is safe: tile t's result goes to index t, which lies in a tile already consumed.
template <int kThreads, class Op>
__device__ typename Op::Acc block_reduce_levels(typename Op::Acc* sums, std::int64_t count,
                                                const Op& op, typename Op::Acc* warp_values) {
  using Acc = typename Op::Acc;
  const auto read = [](const Acc* p) { return load_through_l2(p); };
  const auto same = [](const Acc& a) { return a; };
  if (count == 0) return Op::identity();
  while (count > 1) {
    const std::int64_t next = canonical::tile_count(count);
    for (std::int64_t t = 0; t < next; ++t) {
      const std::int64_t begin = t * kTile;
      const std::int64_t size = tile_size(count - begin);
      // Full tiles take the vector path, so one L2 latency covers a whole tile.
      const Acc value = block_reduce_tile<kThreads, true>(sums + begin, size, op, read, same,
                                                          size == kTile, warp_values);
      if (threadIdx.x == 0) sums[t] = value;
      __syncthreads();  // the next level reads what thread 0 just wrote
    }
    count = next;
  }
  return load_through_l2(sums);
}

/// Tiles of `data` (tile i of this call is stored at tile_sums[i]); when `done_counter` is not
/// null, the last block to finish reduces all `total_tiles` sums (tile_sums[-first_tile ...])
/// and calls finish(root) in thread 0. The counter must be 0 on entry; it is 0 again on exit
/// (atomicInc wraps at gridDim.x).
/// Launch bounds: 1024 resident threads per SM caps registers at 64 per thread; unbounded, the
/// compiler hoisted every load of a tile (167 registers, one block per SM) and lost ~15% of the
/// bandwidth at 2^30 floats on an H200.
template <int kThreads>
inline constexpr int kMinResidentBlocks = 1024 / kThreads;

template <int kThreads, class Op, class Finish>
__global__ void __launch_bounds__(kThreads, kMinResidentBlocks<kThreads>)
    reduce_canonical_kernel(const typename Op::Input* data, std::int64_t count, bool aligned,
                            typename Op::Acc* tile_sums, std::int64_t first_tile,
                            std::int64_t total_tiles, unsigned* done_counter, Op op,
                            Finish finish) {
  using Acc = typename Op::Acc;
  using Input = typename Op::Input;
  __shared__ Acc warp_values[kThreads / 32];
  __shared__ bool is_last_block;
  const std::int64_t tiles = canonical::tile_count(count);
  const auto read = [](const Input* p) { return Op::load(__ldg(p)); };
  const auto convert = [](const Input& x) { return Op::load(x); };
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t begin = tile * kTile;
    const std::int64_t size = tile_size(count - begin);
    const Acc value = block_reduce_tile<kThreads, false>(data + begin, size, op, read, convert,
                                                         aligned && size == kTile, warp_values);
    if (threadIdx.x == 0) tile_sums[tile] = value;
  }
  if (done_counter == nullptr || !is_last_block_to_finish(done_counter, is_last_block)) return;
  const Acc root =
      block_reduce_levels<kThreads>(tile_sums - first_tile, total_tiles, op, warp_values);
  if (threadIdx.x == 0) finish(root);
}

/// Only the upper levels, one block (for sums gathered by several launches).
template <int kThreads, class Op, class Finish>
__global__ void __launch_bounds__(kThreads)
    reduce_canonical_levels_kernel(typename Op::Acc* sums, std::int64_t count, Op op,
                                   Finish finish) {
  __shared__ typename Op::Acc warp_values[kThreads / 32];
  const auto root = block_reduce_levels<kThreads>(sums, count, op, warp_values);
  if (threadIdx.x == 0) finish(root);
}

// --- host side -----------------------------------------------------------------------------------

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw CudaError(what, cudaGetErrorString(status), __FILE__, __LINE__);
}

/// Writes the root to device memory.
template <class Acc>
struct StoreRoot {
  Acc* result;
  __device__ void operator()(const Acc& root) const { *result = root; }
};

/// Reduces `count` elements at `data` (device memory, any alignment of Input) with `Op` into
/// `*result` (device memory) on `stream`, in one launch of 256-thread blocks: the tile sums go
/// to the workspace's scratch, and the last block to finish reduces them. Nothing waits; the
/// empty input gives Op::identity(). A workspace is used by one stream at a time.
template <class Op>
void launch(const typename Op::Input* data, std::int64_t count, typename Op::Acc* result,
            ReduceWorkspace& workspace, cudaStream_t stream) {
  using Acc = typename Op::Acc;
  constexpr int kThreads = 256;
  if (count < 0) throw InvalidInput("reduce engine: negative count");
  const std::int64_t tiles = canonical::tile_count(count);
  workspace.reserve(static_cast<std::size_t>(tiles > 0 ? tiles : 1) * sizeof(Acc));
  const auto kernel = reduce_canonical_kernel<kThreads, Op, StoreRoot<Acc>>;
  int device = 0, sms = 0, per_sm = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(SM count)");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  std::int64_t grid = std::int64_t{sms} * (per_sm > 0 ? per_sm : 1);
  if (grid > tiles) grid = tiles > 0 ? tiles : 1;
  const bool aligned = reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
  kernel<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(
      data, count, aligned, static_cast<Acc*>(workspace.scratch()), 0, tiles, workspace.counters(),
      Op{}, StoreRoot<Acc>{result});
  check_cuda(cudaGetLastError(), "launch of reduce_canonical_kernel");
}

}  // namespace gpukit::primitives::cuda_engine
