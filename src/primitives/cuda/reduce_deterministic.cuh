#pragma once
// Internal: the API's default reduction: the deterministic engine
// (gpukit/primitives/cuda/reduce.cuh) instantiated for gpukit's operations. One launch: the blocks
// reduce tiles and hand the tile sums on (flagged when there are few, folded into lanes of the
// level above when there are many; see the engine's LaunchPlan), and one block finishes the tree
// and writes the result.
//
// Tuning (H200, `gpukit bench reduce` and the same timing through CUDA graphs): 1024 threads a
// block while the tiles do not fill the SMs, 512 otherwise (reduce_agent::default_block_threads).
// 128, 256 and 512/1024 are instantiated for sums so that tests can show the result does not
// depend on the block size. The reduce_deterministic_<type>.cu files instantiate this, one
// element type each, so that the many kernels compile in parallel.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda/check.hpp"
#include "gpukit/primitives/cuda/detail/reduce_agent.cuh"
#include "primitives/cuda/reduce_ladder_common.cuh"
#include "primitives/cuda/reduce_launchers.hpp"
#include "primitives/reduce_dispatch.hpp"

namespace gpukit::primitives::cuda_detail {

namespace reduce_agent = device::detail::reduce_agent;

namespace {

// The chunked host path's kernel (tile sums only; any block size gives the same bits).
constexpr int kChunkThreads = 512;

template <class T, class Acc>
struct WriteResult {
  reduce_result_t<T>* result;
  int* overflow_flag;
  __device__ void operator()(const Acc& root) const {
    bool overflow = false;
    *result = detail::finalize<T>(root, overflow);
    if (overflow_flag != nullptr) *overflow_flag = overflow ? 1 : 0;
  }
};

// Calls f.template operator()<kThreads>() for the block size; sums get every size (the tests'
// block_threads), other operations the tuned ones.
template <class F>
void with_block_threads(int threads, ReduceOp op, const F& f) {
  if (threads == 512) return f.template operator()<512>();
  if (threads == 1024) return f.template operator()<1024>();
  if (op == ReduceOp::sum && threads == 128) return f.template operator()<128>();
  if (op == ReduceOp::sum && threads == 256) return f.template operator()<256>();
  throw InvalidInput(op == ReduceOp::sum
                         ? "reduce: block_threads must be 128, 256, 512 or 1024"
                         : "reduce: block_threads must be 512 or 1024 for this operation");
}

bool aligned_16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// The level above the tiles, one of its tiles a block: block g reduces tile sums [g kTile,
// min((g + 1) kTile, tiles)) as that tile (its lanes from the identity, then the adjacent-pair
// tree: the same block_reduce_lanes block_reduce_levels runs) and writes the accumulator to
// out[g]. A level-1 value even for a group of one sum (op(identity, sum)), as the tree has it.
template <int kThreads, class Op>
__global__ void __launch_bounds__(kThreads)
    reduce_groups_kernel(typename Op::Acc* sums, std::int64_t tiles, typename Op::Acc* out, Op op) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_values[kThreads / 32];
  const std::int64_t begin = std::int64_t{blockIdx.x} * canonical::kTile;
  const std::int64_t size = reduce_agent::tile_size(tiles - begin);
  const Acc* group = sums + begin;
  const Acc value = reduce_agent::block_reduce_lanes<kThreads, canonical::kLanes / kThreads, true>(
      group, size, 0, op,
      [group](std::int64_t i) { return device::detail::load_through_l2(group + i); },
      [](const Acc& a) { return a; }, size == canonical::kTile, warp_values);
  if (threadIdx.x == 0) out[blockIdx.x] = value;
}

}  // namespace

template <class T>
std::size_t deterministic_scratch_bytes(std::int64_t count, ReduceOp op,
                                        const ReduceOptions& options) {
  return detail::with_canonical_op<T>(op, options.accurate_sum, count, [&](auto op_functor) {
    return static_cast<std::size_t>(reduce_agent::scratch_values(canonical::tile_count(count))) *
           sizeof(typename decltype(op_functor)::Acc);
  });
}

template <class T>
void launch_deterministic(const T* input, std::int64_t count, ReduceOp op,
                          reduce_result_t<T>* result, ReduceWorkspace& workspace,
                          StreamHandle stream, const ReduceOptions& options) {
  if (count == 0 && op == ReduceOp::sum) {
    // The empty sum is +0 (all-zero bytes in every result type), not the engine's -0.0.
    workspace.reserve(0);
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof *result, stream));
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(workspace.overflow_flag(), 0, sizeof(int), stream));
    return;
  }
  detail::with_canonical_op<T>(op, options.accurate_sum, count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Finish = WriteResult<T, typename Op::Acc>;
    const int sm_count = current_sm_count();
    const int threads = options.block_threads > 0 ? options.block_threads
                                                  : reduce_agent::default_block_threads(
                                                        canonical::tile_count(count), sm_count);
    with_block_threads(threads, op, [&]<int kThreads>() {
      // The finish holds the overflow flag, which the dispatch's reserve may move: made after it.
      reduce_agent::dispatch<kThreads, Op>(
          input, count, sm_count, options.grid_blocks, workspace,
          [&] {
            return Finish{result, workspace.overflow_flag()};
          },
          [](auto kernel, int block_threads) { return blocks_per_sm(kernel, block_threads); },
          stream);
    });
  });
}

template <class T>
std::size_t deterministic_accumulator_size(ReduceOp op, bool accurate_sum,
                                           std::int64_t total_count) {
  return detail::with_canonical_op<T>(op, accurate_sum, total_count, [](auto op_functor) {
    return sizeof(typename decltype(op_functor)::Acc);
  });
}

template <class T>
void launch_deterministic_chunk(const T* input, std::int64_t count, ReduceOp op, bool accurate_sum,
                                std::int64_t total_count, void* tile_sums, std::int64_t first_tile,
                                StreamHandle stream) {
  if (count == 0) return;
  detail::with_canonical_op<T>(op, accurate_sum, total_count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    using Finish = WriteResult<T, Acc>;
    const auto kernel = reduce_agent::reduce_canonical_kernel<kChunkThreads, Op, Finish>;
    const std::int64_t tiles = canonical::tile_count(count);
    const reduce_agent::LaunchPlan plan = reduce_agent::plan_launch(
        tiles, std::int64_t{blocks_per_sm(kernel, kChunkThreads)} * current_sm_count(), 0, false);
    kernel<<<static_cast<unsigned>(plan.grid), kChunkThreads, 0, stream>>>(
        input, count, aligned_16(input), static_cast<Acc*>(tile_sums) + first_tile, first_tile,
        tiles, nullptr, false, device::detail::FlaggedRegion<Acc>{}, Op{},
        Finish{nullptr, nullptr});
    GPUKIT_CUDA_CHECK_LAUNCH("reduce_canonical_kernel (chunk)");
  });
}

template <class T>
void launch_deterministic_levels(void* tile_sums, std::int64_t total_tiles, ReduceOp op,
                                 bool accurate_sum, std::int64_t total_count,
                                 reduce_result_t<T>* result, int* overflow_flag,
                                 StreamHandle stream) {
  detail::with_canonical_op<T>(op, accurate_sum, total_count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    using Finish = WriteResult<T, Acc>;
    reduce_agent::reduce_canonical_levels_kernel<kChunkThreads, Op, Finish>
        <<<1, kChunkThreads, 0, stream>>>(static_cast<Acc*>(tile_sums), total_tiles, Op{},
                                          Finish{result, overflow_flag});
    GPUKIT_CUDA_CHECK_LAUNCH("reduce_canonical_levels_kernel");
  });
}

template <class T>
void launch_deterministic_groups(void* tile_sums, std::int64_t total_tiles, ReduceOp op,
                                 bool accurate_sum, std::int64_t total_count, void* group_values,
                                 StreamHandle stream) {
  if (total_tiles == 0) return;
  detail::with_canonical_op<T>(op, accurate_sum, total_count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    const std::int64_t groups = canonical::tile_count(total_tiles);
    reduce_groups_kernel<kChunkThreads, Op>
        <<<static_cast<unsigned>(groups), kChunkThreads, 0, stream>>>(
            static_cast<Acc*>(tile_sums), total_tiles, static_cast<Acc*>(group_values), Op{});
    GPUKIT_CUDA_CHECK_LAUNCH("reduce_groups_kernel");
  });
}

}  // namespace gpukit::primitives::cuda_detail

#define GPUKIT_INSTANTIATE_DETERMINISTIC(T)                                                       \
  template ReduceLaunch<T> launch_deterministic<T>;                                               \
  template std::size_t deterministic_scratch_bytes<T>(std::int64_t, ReduceOp,                     \
                                                      const ReduceOptions&);                      \
  template std::size_t deterministic_accumulator_size<T>(ReduceOp, bool, std::int64_t);           \
  template void launch_deterministic_chunk<T>(const T*, std::int64_t, ReduceOp, bool,             \
                                              std::int64_t, void*, std::int64_t, StreamHandle);   \
  template void launch_deterministic_levels<T>(void*, std::int64_t, ReduceOp, bool, std::int64_t, \
                                               reduce_result_t<T>*, int*, StreamHandle);          \
  template void launch_deterministic_groups<T>(void*, std::int64_t, ReduceOp, bool, std::int64_t, \
                                               void*, StreamHandle);
