#pragma once
// The deterministic reduction engine on CUDA: reduce_canonical.hpp's fixed tree in one launch.
// This header is CUDA source (include it from .cu files only); it is public so that a user's own
// associative, commutative operation (gpukit::primitives::StatelessOperation, operation.hpp: a
// type with `Input`, `Acc`, static `identity()` and `load(Input)`, and `operator()(Acc, Acc)`, all
// __host__ __device__) can run on the same engine:
// deterministic_reduce below reduces device data with it in one launch, with the same
// tree, so the same bits, as the CPU's canonical::reduce_canonical
// (tests/primitives/reduce_engine_gpu_test.cu).
//
// Block shape: kThreads threads hold a tile's 1024 lanes, kLanes / kThreads contiguous lanes per
// thread, so one row is one coalesced sweep of vector loads (8 bytes a thread for floats at 512
// threads) and a tile is 16 such rows, all issued before the first add needs them. Napkin math
// (float): 64 KiB per tile; 2 resident 512-thread blocks per SM keep far more in flight than the
// ~25 KiB per SM that Little's law asks for at 4.4 TB/s and ~700 ns of latency.
//
// How a launch hands the tile values on (LaunchPlan; every plan gives the same bits):
// - few tiles (at most 1024, 2^24 elements): "flagged" (FlaggedSlot, NCCL's LL protocol): each
//   32-bit word of a tile sum travels with the launch's epoch in one 8-byte store, and the block
//   that started last waits for the words. No fence or atomic round trip lies between the last
//   tile and the finish, which is what a launch-bound call (2^20 elements: 64 tiles) waits for.
// - many tiles: a persistent, power-of-two grid that divides kLanes. Block b then gets exactly the
//   tiles of lanes b, b + grid, ... of every tile of the level above (tile t is lane t % 1024,
//   row (t / 1024) % 16 there) in increasing row order, so it folds those rows itself, in order,
//   as the level above would, and writes one value per lane instead of 16 tile sums. The last
//   block then reads 1/16 of the tile sums (2^30 floats: 4096 lane values, not 65536 tile
//   sums), and all blocks end together (the tiles divide evenly over the grid).
// - otherwise (other grids, chunked input): one sum per tile; the last block to finish does
//   every level above.
//
// Measured and dropped (docs/case-studies/reduce.md): splitting a tile's lanes over 2 or 4
// blocks when tiles are scarce (exact, but slower at 2^20 than one 512- or 1024-thread block per
// tile), and L2::256B / evict_first load hints (8% slower streaming at 2^30).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpukit/primitives/cuda/detail/reduce_agent.cuh"
#include "gpukit/primitives/operation.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives::device {

/// Reduces `count` elements at `data` (device memory, any alignment of Input) with `Op` into
/// `*result` (device memory) on `stream`, in one launch whose last (or last started) block
/// finishes the tree. Nothing waits; the empty input gives Op::identity(). A workspace is used
/// by one stream at a time. Throws InvalidInput for a negative count.
template <StatelessOperation Op>
void deterministic_reduce(const typename Op::Input* data, std::int64_t count,
                          typename Op::Acc* result, ReduceWorkspace& workspace,
                          cudaStream_t stream) {
  detail::reduce_agent::launch<Op>(data, count, result, workspace, stream);
}

/// The same with the caller's temporary storage (CUB's two-phase contract): with `temp_storage`
/// null, sets `temp_storage_bytes` to the bytes a reduction of `count` elements needs and does
/// nothing else; else reduces with the `temp_storage_bytes` at `temp_storage` (device memory on
/// a 16-byte boundary; throws InvalidInput when too small), which may hold anything: the call
/// zeroes its counters and flagged slots with one memset on `stream` (the ReduceWorkspace form
/// needs none).
template <StatelessOperation Op>
void deterministic_reduce(void* temp_storage, std::size_t& temp_storage_bytes,
                          const typename Op::Input* data, std::int64_t count,
                          typename Op::Acc* result, cudaStream_t stream) {
  if (count < 0) throw InvalidInput("deterministic_reduce: negative count");
  const auto layout = detail::reduce_agent::storage_layout<typename Op::Acc>(count);
  if (temp_storage == nullptr) {
    temp_storage_bytes = layout.total_bytes();
    return;
  }
  detail::check_storage("deterministic_reduce", temp_storage, temp_storage_bytes,
                        layout.total_bytes());
  detail::check_cuda(cudaMemsetAsync(temp_storage, 0, layout.zeroed_bytes(), stream),
                     "cudaMemsetAsync(reduce temporary storage)");
  detail::CallerReduceStorage storage(temp_storage, temp_storage_bytes, layout);
  detail::reduce_agent::launch<Op>(data, count, result, storage, stream);
}

}  // namespace gpukit::primitives::device
