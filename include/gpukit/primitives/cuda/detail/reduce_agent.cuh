#pragma once
// Internal: the deterministic reduction engine (device::deterministic_reduce in reduce.cuh):
// reduce_canonical.hpp's fixed tree in one launch, its tile values handed on by one of three
// plans (LaunchPlan; see reduce.cuh).

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <cuda/atomic>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/cuda/detail/caller_storage.cuh"
#include "gpukit/primitives/cuda/detail/check.cuh"
#include "gpukit/primitives/cuda/detail/ptx.cuh"
#include "gpukit/primitives/cuda/detail/tile_state.cuh"
#include "gpukit/primitives/cuda/detail/warp.cuh"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"

namespace gpukit::primitives::device::detail::reduce_agent {

using canonical::kLanes;
using canonical::kRows;
using canonical::kTile;

/// Elements of the tile that starts `remaining` elements before the end (std::min would bind a
/// reference to kTile, which device code cannot take).
__device__ __forceinline__ std::int64_t tile_size(std::int64_t remaining) {
  return remaining < kTile ? remaining : kTile;
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

/// The widest load one thread's kPerThread contiguous lanes use, in bytes (the data pointer must
/// be aligned to it for the vector path).
template <int kPerThread, class S>
constexpr int vector_bytes() {
  constexpr int bytes = kPerThread * static_cast<int>(sizeof(S));
  return bytes % 16 == 0 ? 16 : bytes % 8 == 0 ? 8 : static_cast<int>(sizeof(S));
}

/// Combines the block's per-thread values (one per thread, in lane order) as the adjacent-pair
/// tree: shuffles within each warp, then the same over the warps. The result is valid in thread
/// 0. `warp_values` is kThreads / 32 Accs of shared memory; the block is synchronized on return.
template <int kThreads, class Op>
__device__ __forceinline__ typename Op::Acc block_pairwise_tree(typename Op::Acc value,
                                                                const Op& op,
                                                                typename Op::Acc* warp_values) {
  static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0);
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

/// Lanes [first_lane, first_lane + kThreads * kPerThread) of one tile (`count` <= kTile elements
/// at `tile`): each lane combines its rows in order from the identity, then the lanes combine as
/// the adjacent-pair tree. first_lane is a multiple of kThreads * kPerThread (a power of two),
/// so that tree is a subtree of the tile's. The result is valid in thread 0.
/// `read_at(i)` turns the tile's element i into an Acc; `vector_ok` says the tile is full and
/// aligned for vector_bytes<kPerThread, Source>(), and `convert` turns a vector-loaded element
/// into an Acc. kThroughL2: the tile was written by other blocks of this launch.
template <int kThreads, int kPerThread, bool kThroughL2, class Op, class Source, class ReadAt,
          class Convert>
__device__ __forceinline__ typename Op::Acc block_reduce_lanes(
    const Source* tile, std::int64_t count, int first_lane, const Op& op, const ReadAt& read_at,
    const Convert& convert, bool vector_ok, typename Op::Acc* warp_values) {
  static_assert(kPerThread >= 1 && (kPerThread & (kPerThread - 1)) == 0 &&
                kThreads * kPerThread <= kLanes);
  using Acc = typename Op::Acc;
  Acc lanes[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) lanes[j] = Op::identity();
  const int thread_lane = first_lane + static_cast<int>(threadIdx.x) * kPerThread;
  if (vector_ok) {
    // All rows' loads are independent of the adds, so the compiler issues them up front.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      Source values[kPerThread];
      load_contiguous<kThroughL2>(values, tile + r * kLanes + thread_lane);
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) lanes[j] = op(lanes[j], convert(values[j]));
    }
  } else {
    // Short tiles (ragged ends, the levels above): rows past the end are skipped whole, and each
    // row's reads are all issued before the first add waits for one.
    const int rows = static_cast<int>((count + kLanes - 1) / kLanes);
    for (int r = 0; r < rows; ++r) {
      Acc values[kPerThread];
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const std::int64_t i = std::int64_t{r} * kLanes + thread_lane + j;
        values[j] = i < count ? read_at(i) : Op::identity();
      }
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        if (std::int64_t{r} * kLanes + thread_lane + j < count) lanes[j] = op(lanes[j], values[j]);
      }
    }
  }
  const Acc value = canonical::pairwise_tree(lanes, kPerThread, op);
  return block_pairwise_tree<kThreads>(value, op, warp_values);
}

/// Classic last-block detection, called by every thread of the block after its thread 0 wrote
/// all of the block's results: thread 0 publishes them and takes a ticket, and every thread of
/// the last block to arrive gets true; that block then sees all other blocks' results (thread
/// 0's acquire fence, then the barrier). `flag` is a __shared__ bool. The counter must be 0 when
/// the launch starts; atomicInc wraps it back to 0 for the next launch.
__device__ __forceinline__ bool is_last_block_to_finish(unsigned* counter, bool& flag) {
  if (threadIdx.x == 0) {
    __threadfence();
    const bool last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
    if (last) __threadfence();
    flag = last;
  }
  __syncthreads();
  return flag;
}

/// The levels above the tiles, by one block: `sums[0..count)` (written by other blocks of this
/// launch or of an earlier one) reduce in place, level by level; returns the root (valid in
/// thread 0; the identity for count 0). In place is safe: level tile t's result goes to index t,
/// which lies in a tile already consumed. The last level's result stays in a register.
template <int kThreads, class Op>
__device__ typename Op::Acc block_reduce_levels(typename Op::Acc* sums, std::int64_t count,
                                                const Op& op, typename Op::Acc* warp_values) {
  using Acc = typename Op::Acc;
  constexpr int kPerThread = kLanes / kThreads;
  const auto same = [](const Acc& a) { return a; };
  if (count <= 1) return count == 0 ? Op::identity() : load_through_l2(sums);
  for (;;) {
    const std::int64_t next = canonical::tile_count(count);
    for (std::int64_t t = 0; t < next; ++t) {
      const std::int64_t begin = t * kTile;
      const std::int64_t size = tile_size(count - begin);
      // Full tiles take the vector path, so one L2 latency covers a whole tile.
      const Acc value = block_reduce_lanes<kThreads, kPerThread, true>(
          sums + begin, size, 0, op,
          [&](std::int64_t i) { return load_through_l2(sums + begin + i); }, same, size == kTile,
          warp_values);
      if (next == 1) return value;
      if (threadIdx.x == 0) sums[t] = value;
      __syncthreads();  // the next level reads what thread 0 just wrote
    }
    count = next;
  }
}

/// The finish of a launch with folded lanes, by one block: lanes[g * kLanes + l] holds lane l of
/// tile g of the level above the tiles (its rows already combined in order); lanes that tile does
/// not reach were never written and count as the identity. Combines each such tile's lanes as
/// the adjacent-pair tree, then the levels above; returns the root (valid in thread 0).
/// `tiles` >= 2 (one tile has no level above).
template <int kThreads, class Op>
__device__ typename Op::Acc block_reduce_folded(typename Op::Acc* lanes, std::int64_t tiles,
                                                const Op& op, typename Op::Acc* warp_values) {
  using Acc = typename Op::Acc;
  constexpr int kPerThread = kLanes / kThreads;
  const std::int64_t groups = canonical::tile_count(tiles);
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t reached = tile_size(tiles - g * kTile);  // > kLanes: every lane
    const Acc* group = lanes + g * kLanes;
    const int first = static_cast<int>(threadIdx.x) * kPerThread;
    Acc values[kPerThread];
    if (reached >= kLanes) {
      load_contiguous<true>(values, group + first);
    } else {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        values[j] = first + j < reached ? load_through_l2(group + first + j) : Op::identity();
      }
    }
    const Acc value = block_pairwise_tree<kThreads>(
        canonical::pairwise_tree(values, kPerThread, op), op, warp_values);
    if (groups == 1) return value;
    if (threadIdx.x == 0) lanes[g] = value;  // index g < g * kLanes: that group is consumed
    __syncthreads();
  }
  return block_reduce_levels<kThreads>(lanes, groups, op, warp_values);
}

/// Flagged launches have at most this many tiles, so the level above is one row of lanes.
inline constexpr std::int64_t kMaxFlaggedTiles = kLanes;

/// The finish of a flagged launch, by one block: waits for this launch's `tiles` (at most
/// kMaxFlaggedTiles) tile sums in `slots` and combines them as the level above (one row of
/// lanes); returns the root (valid in thread 0). Each thread loads all words of its lanes before
/// it waits for any.
template <int kThreads, class Op>
__device__ typename Op::Acc block_reduce_flagged(FlaggedSlot<typename Op::Acc>* slots,
                                                 std::int64_t tiles, unsigned epoch, const Op& op,
                                                 typename Op::Acc* warp_values) {
  using Acc = typename Op::Acc;
  constexpr int kPerThread = kLanes / kThreads;
  constexpr int kWords = static_cast<int>(sizeof(Acc) / 4);
  const int first = static_cast<int>(threadIdx.x) * kPerThread;
  unsigned long long tagged[kPerThread][kWords];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      tagged[j][k] = first + j < tiles
                         ? ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
                               slots[first + j].words[k])
                               .load(::cuda::memory_order_relaxed)
                         : 0;
    }
  }
  Acc values[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    values[j] = Op::identity();
    if (first + j < tiles) {
      unsigned words[kWords];
#pragma unroll
      for (int k = 0; k < kWords; ++k) {
        words[k] = settle_flagged(&slots[first + j].words[k], tagged[j][k], epoch);
      }
      std::memcpy(&values[j], words, sizeof(Acc));
    }
  }
  if (tiles == 1) return values[0];  // one tile: its sum is the root (thread 0 holds it)
  // The level above: lane l = op(identity, tile l) for l < tiles, then the adjacent-pair tree.
  Acc lanes[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    lanes[j] = first + j < tiles ? op(Op::identity(), values[j]) : Op::identity();
  }
  return block_pairwise_tree<kThreads>(canonical::pairwise_tree(lanes, kPerThread, op), op,
                                       warp_values);
}

/// A block folds at most this many lanes of the level above (shared memory), so a folding grid
/// has at least kLanes / kMaxFoldedLanes blocks.
inline constexpr int kMaxFoldedLanes = 8;

/// Launch bounds: 1024 resident threads per SM caps registers at 64 per thread; unbounded, the
/// compiler hoisted every load of a tile (167 registers, one block per SM) and lost ~15% of the
/// bandwidth at 2^30 floats on an H200.
template <int kThreads>
inline constexpr int kMinResidentBlocks = 1024 / kThreads;

/// Reduces `count` elements at `data`, a tile per block iteration; thread 0 of each block hands
/// on its values in one of three ways:
/// - flagged (`flagged.slots` not null; first_tile == 0, at most kMaxFlaggedTiles tiles): tile
///   sums go to flagged.slots[i], tagged with the launch's epoch; the block that took the last
///   ticket at its start finishes, waiting for each value, and advances the epoch;
/// - fold_lanes (needs kLanes % gridDim.x == 0, kLanes / gridDim.x <= kMaxFoldedLanes,
///   first_tile == 0 and at least two tiles): the lane values of the level above,
///   sums[(t / kTile) * kLanes + t % kLanes] for the lanes tiles t reach; the last block to
///   finish ends with block_reduce_folded;
/// - otherwise: sums[i] for this call's tile i (tile first_tile + i of an input of
///   `total_tiles` tiles that arrives in chunks); the last block to finish ends with
///   block_reduce_levels over all of them.
/// The finish runs when `done_counter` is not null (it must be 0 on entry and is 0 again on
/// exit) and calls finish(root) in thread 0.
template <int kThreads, class Op, class Finish>
__global__ void __launch_bounds__(kThreads, kMinResidentBlocks<kThreads>)
    reduce_canonical_kernel(const typename Op::Input* data, std::int64_t count, bool aligned,
                            typename Op::Acc* sums, std::int64_t first_tile,
                            std::int64_t total_tiles, unsigned* done_counter, bool fold_lanes,
                            FlaggedRegion<typename Op::Acc> flagged, Op op, Finish finish) {
  using Acc = typename Op::Acc;
  using Input = typename Op::Input;
  __shared__ Acc warp_values[kThreads / 32];
  __shared__ Acc folded[kMaxFoldedLanes];  // thread 0's running lane values
  __shared__ bool is_last_block;
  __shared__ unsigned block_epoch;
  const std::int64_t tiles = canonical::tile_count(count);
  const auto convert = [](const Input& x) { return Op::load(x); };
  // Flagged: the epoch load's and the ticket's round trips overlap the tile's loads. The block
  // that starts last finishes: every other block has started by then, so its wait ends.
  unsigned ticket = 0, epoch = 0;
  if (flagged.slots != nullptr && threadIdx.x == 0) {
    epoch = flagged.current_epoch();
    ticket = atomicInc(done_counter, gridDim.x - 1);
  }
  if (fold_lanes && threadIdx.x == 0) {
    for (int m = 0; m < kMaxFoldedLanes; ++m) folded[m] = Op::identity();
  }
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t begin = tile * kTile;
    const std::int64_t size = tile_size(count - begin);
    const Input* source = data + begin;
    const Acc value = block_reduce_lanes<kThreads, kLanes / kThreads, false>(
        source, size, 0, op, [source](std::int64_t i) { return Op::load(__ldg(source + i)); },
        convert, aligned && size == kTile, warp_values);
    if (threadIdx.x == 0) {
      if (flagged.slots != nullptr) {
        publish_flagged(flagged.slots + tile, value, epoch);
      } else if (fold_lanes) {
        // Tiles t and t + kLanes are rows r and r + 1 of the same lane (until r == kRows - 1),
        // and this block gets both, in that order.
        const int lane = static_cast<int>(tile % kLanes);
        Acc& running = folded[lane / static_cast<int>(gridDim.x)];
        running = op(running, value);
        if ((tile / kLanes) % kRows == kRows - 1 || tile + kLanes >= tiles) {
          sums[tile / kTile * kLanes + lane] = running;
          running = Op::identity();
        }
      } else {
        sums[tile] = value;
      }
    }
  }
  Acc root;
  if (flagged.slots != nullptr) {
    if (threadIdx.x == 0) {
      is_last_block = ticket == gridDim.x - 1;
      block_epoch = epoch;
    }
    __syncthreads();
    if (!is_last_block) return;
    root = block_reduce_flagged<kThreads>(flagged.slots, total_tiles, block_epoch, op, warp_values);
    // Every slot of this epoch has been read (the tree ended with a barrier); every block that
    // published read the epoch first. The next launch gets a new one.
    flagged.advance_epoch(block_epoch);
  } else {
    if (done_counter == nullptr || !is_last_block_to_finish(done_counter, is_last_block)) return;
    root = fold_lanes
               ? block_reduce_folded<kThreads>(sums, total_tiles, op, warp_values)
               : block_reduce_levels<kThreads>(sums - first_tile, total_tiles, op, warp_values);
  }
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

/// Threads per block: a tile per 1024-thread block (one lane a thread) while the tiles do not
/// fill the SMs (launch-bound calls: 2^20 elements are 64 tiles on 132 SMs), 512 otherwise (2
/// lanes a thread, so a row of floats is one 8-byte load per thread and the 16 rows' loads fit
/// in 64 registers; two resident blocks per SM). Measured on the H200 (reduce.md).
inline int default_block_threads(std::int64_t tiles, int sm_count) {
  return tiles <= sm_count ? 1024 : 512;
}

/// How one launch of reduce_canonical_kernel hands on tile values (see reduce.cuh).
struct LaunchPlan {
  std::int64_t grid = 1;  // blocks
  bool fold_lanes = false;
  bool flagged = false;
};

/// The plan for `tiles` tiles with `resident` blocks of the kernel fitting on the GPU at once;
/// `requested_grid` > 0 overrides the grid (tests). `single_launch`: the launch sees all of the
/// input and finishes it (no chunks).
inline LaunchPlan plan_launch(std::int64_t tiles, std::int64_t resident,
                              std::int64_t requested_grid, bool single_launch) {
  LaunchPlan plan;
  resident = resident > 0 ? resident : 1;
  std::int64_t folding_grid = 1;  // the largest power of two <= resident
  while (folding_grid * 2 <= resident) folding_grid *= 2;
  const bool can_fold = single_launch && tiles > 1;
  if (requested_grid > 0) {
    plan.grid = requested_grid;
  } else if (can_fold && tiles > folding_grid && kLanes % folding_grid == 0 &&
             kLanes / folding_grid <= kMaxFoldedLanes) {
    plan.grid = folding_grid;  // a few percent of the resident slots idle, no tail, small finish
  } else {
    plan.grid = tiles < resident ? tiles : resident;
  }
  plan.grid = plan.grid < 1 ? 1 : plan.grid > (1 << 30) ? (1 << 30) : plan.grid;
  plan.fold_lanes = can_fold && kLanes % plan.grid == 0 && kLanes / plan.grid <= kMaxFoldedLanes;
  plan.flagged = single_launch && !plan.fold_lanes && tiles >= 1 && tiles <= kMaxFlaggedTiles;
  return plan;
}

/// Accs of scratch a launch of `tiles` tiles may write (tile sums, or the folded lanes of every
/// tile of the level above).
inline std::int64_t scratch_values(std::int64_t tiles) { return (tiles > 0 ? tiles : 1) + kLanes; }

/// Bytes before the flagged slots in their region: the epoch state.
inline constexpr std::size_t kFlaggedStateBytes = 16;

/// Where a launch over `count` elements keeps its state in a caller's temporary storage.
template <class Acc>
ReduceStorageLayout storage_layout(std::int64_t count) {
  const std::int64_t tiles = canonical::tile_count(count);
  ReduceStorageLayout layout;
  if (tiles >= 1 && tiles <= kMaxFlaggedTiles) {
    layout.flagged_bytes = align_storage(kFlaggedStateBytes + static_cast<std::size_t>(tiles) *
                                                                  sizeof(FlaggedSlot<Acc>));
  }
  layout.scratch_bytes =
      align_storage(static_cast<std::size_t>(scratch_values(tiles)) * sizeof(Acc));
  return layout;
}

/// Writes the root to device memory.
template <class Acc>
struct StoreRoot {
  Acc* result;
  __device__ void operator()(const Acc& root) const { *result = root; }
};

/// Launches reduce_canonical_kernel<kThreads> on all `count` elements with the default plan (or
/// `requested_grid` blocks) and its finish. Reserves the workspace, which moves its counters
/// and scratch if it grows: a `finish` that points into them must be made after the same
/// reserve.
template <int kThreads, class Op, class Finish, class Workspace>
void launch_planned(const typename Op::Input* data, std::int64_t count, std::int64_t resident,
                    std::int64_t requested_grid, Workspace& workspace, Finish finish,
                    cudaStream_t stream) {
  using Acc = typename Op::Acc;
  const std::int64_t tiles = canonical::tile_count(count);
  const LaunchPlan plan = plan_launch(tiles, resident, requested_grid, true);
  workspace.reserve(static_cast<std::size_t>(scratch_values(tiles)) * sizeof(Acc));
  FlaggedRegion<Acc> flagged;
  if (plan.flagged) {
    auto* region = static_cast<unsigned char*>(workspace.flagged_slots(
        kFlaggedStateBytes + static_cast<std::size_t>(tiles) * sizeof(FlaggedSlot<Acc>)));
    flagged.state = reinterpret_cast<unsigned*>(region);
    flagged.slots = reinterpret_cast<FlaggedSlot<Acc>*>(region + kFlaggedStateBytes);
    flagged.words = reinterpret_cast<unsigned long long*>(region + kFlaggedStateBytes);
    flagged.word_count =
        static_cast<std::int64_t>((workspace.flagged_slot_bytes() - kFlaggedStateBytes) / 8);
  }
  const bool aligned = reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
  reduce_canonical_kernel<kThreads, Op, Finish>
      <<<static_cast<unsigned>(plan.grid), kThreads, 0, stream>>>(
          data, count, aligned, static_cast<Acc*>(workspace.scratch()), 0, tiles,
          workspace.counters(), plan.fold_lanes, flagged, Op{}, finish);
}

/// The one dispatch of the deterministic reduction, used by device::deterministic_reduce and by
/// the library's default path (src/primitives/cuda/reduce_deterministic.cuh): reserves the
/// workspace, then launches reduce_canonical_kernel<kThreads> on all `count` elements with the
/// default plan for `sm_count` SMs (or `requested_grid` > 0 blocks) and checks the launch.
/// `make_finish()` makes the finish once the workspace is reserved (a finish that points into the
/// workspace must be made after the reserve, which moves it when it grows);
/// `blocks_per_sm(kernel, threads)` tells how many blocks of the kernel an SM holds at once.
template <int kThreads, class Op, class MakeFinish, class BlocksPerSm, class Workspace>
void dispatch(const typename Op::Input* data, std::int64_t count, int sm_count,
              std::int64_t requested_grid, Workspace& workspace, const MakeFinish& make_finish,
              const BlocksPerSm& blocks_per_sm, cudaStream_t stream) {
  using Acc = typename Op::Acc;
  using Finish = decltype(make_finish());
  workspace.reserve(static_cast<std::size_t>(scratch_values(canonical::tile_count(count))) *
                    sizeof(Acc));
  const auto kernel = reduce_canonical_kernel<kThreads, Op, Finish>;
  launch_planned<kThreads, Op>(data, count,
                               std::int64_t{sm_count} * blocks_per_sm(kernel, kThreads),
                               requested_grid, workspace, make_finish(), stream);
  check_cuda(cudaGetLastError(), "launch of reduce_canonical_kernel");
}

/// Reduces `count` elements at `data` (device memory, any alignment of Input) with `Op` into
/// `*result` (device memory) on `stream` (device::deterministic_reduce).
template <class Op, class Workspace>
void launch(const typename Op::Input* data, std::int64_t count, typename Op::Acc* result,
            Workspace& workspace, cudaStream_t stream) {
  using Acc = typename Op::Acc;
  if (count < 0) throw InvalidInput("reduce engine: negative count");
  int device = 0, sm_count = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(SM count)");
  const auto make_finish = [result] { return StoreRoot<Acc>{result}; };
  const auto blocks_per_sm = [](auto kernel, int threads) {
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return per_sm;
  };
  if (default_block_threads(canonical::tile_count(count), sm_count) == 1024) {
    dispatch<1024, Op>(data, count, sm_count, 0, workspace, make_finish, blocks_per_sm, stream);
  } else {
    dispatch<512, Op>(data, count, sm_count, 0, workspace, make_finish, blocks_per_sm, stream);
  }
}

}  // namespace gpukit::primitives::device::detail::reduce_agent
