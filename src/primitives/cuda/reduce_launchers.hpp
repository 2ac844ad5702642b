#pragma once
// Internal: the CUDA reduction launchers (defined in the .cu files of this folder), callable
// from plain C++. Every launcher reduces `count` elements at `input` (device memory) on `stream`
// and writes the result to `result` (device memory); none waits for the device.

#include <cstdint>

#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_variants.hpp"

namespace gpukit::primitives::cuda_detail {

// The seed's kernels 1-7 (reduce_seed_kernels.cu). Kernels 1-5 take any power-of-two block size
// and share one launcher, the kernel its parameter; 6 and 7 take the seed's 128 threads.
enum class SeedReduceKernel {
  interleaved_divergent,
  interleaved_bank_conflicts,
  sequential_addressing,
  first_add_during_load,
  unroll_last_warp,
};
template <class T, SeedReduceKernel kKernel>
ReduceLaunch<T> launch_seed_kernel;
template <class T>
ReduceLaunch<T> launch_completely_unrolled;
template <class T>
ReduceLaunch<T> launch_multiple_elements_per_thread;
// CS 152's methods 0, 4 and 5 (reduce_cs152_kernels.cu).
template <class T>
ReduceLaunch<T> launch_consecutive_work_blocks;
template <class T>
ReduceLaunch<T> launch_work_blocks_tree;
template <class T>
ReduceLaunch<T> launch_grid_stride_consecutive;
// Hopper steps (reduce_modern_kernels.cu).
template <class T>
ReduceLaunch<T> launch_vector_loads;
template <class T>
ReduceLaunch<T> launch_warp_shuffle_one_pass;
// The deterministic engine, the API's default (reduce_deterministic.cu).
template <class T>
ReduceLaunch<T> launch_deterministic;
// CUB's DeviceReduce, the vendor row (reduce_cub.cu).
template <class T>
ReduceLaunch<T> launch_cub;

/// Workspace scratch bytes launch_deterministic<T> reserves for these arguments.
template <class T>
std::size_t deterministic_scratch_bytes(std::int64_t count, ReduceOp op,
                                        const ReduceOptions& options);

/// The deterministic engine in pieces, for data that arrives in chunks: each chunk's tiles go
/// to `tile_sums` (an array of the op's accumulator, `first_tile` the chunk's first tile; chunks
/// must start on tile boundaries), then one launch reduces all `total_tiles` sums.
/// `total_count` (the whole array's size) picks the accumulator, so every call must get it.
template <class T>
std::size_t deterministic_accumulator_size(ReduceOp op, bool accurate_sum,
                                           std::int64_t total_count);
template <class T>
void launch_deterministic_chunk(const T* input, std::int64_t count, ReduceOp op, bool accurate_sum,
                                std::int64_t total_count, void* tile_sums, std::int64_t first_tile,
                                StreamHandle stream);
template <class T>
void launch_deterministic_levels(void* tile_sums, std::int64_t total_tiles, ReduceOp op,
                                 bool accurate_sum, std::int64_t total_count,
                                 reduce_result_t<T>* result, int* overflow_flag,
                                 StreamHandle stream);
/// The level above the tiles only: the value of each group of canonical::kTile consecutive tile
/// sums (the last group short) as one tile of that level, an accumulator each, to
/// `group_values` (device memory, ceil(total_tiles / kTile) accumulators). The partials of a
/// reduction split at level 1 (gpukit/primitives/reduce_partials.hpp).
template <class T>
void launch_deterministic_groups(void* tile_sums, std::int64_t total_tiles, ReduceOp op,
                                 bool accurate_sum, std::int64_t total_count, void* group_values,
                                 StreamHandle stream);

}  // namespace gpukit::primitives::cuda_detail
