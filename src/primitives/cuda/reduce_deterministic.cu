// The API's default reduction: the deterministic engine (reduce_engine.cuh) instantiated for
// gpukit's operations. One launch: a persistent grid walks the tiles, the last block to finish
// reduces the tile sums and writes the result.
//
// Tuning (H200, measured with `gpukit bench reduce`): 256 threads, 4 lanes (one 16-byte load of
// floats) per thread and row; the grid is the occupancy limit times the SM count, so every SM
// streams tiles until the input is done and no launch tail is left. 128 and 512 threads are
// instantiated for sums so that tests can show the result does not depend on the block size.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "gpukit/primitives/cuda/reduce_engine.cuh"
#include "primitives/cuda/reduce_ladder_common.cuh"
#include "primitives/cuda/reduce_launchers.hpp"
#include "primitives/reduce_dispatch.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

constexpr int kDefaultThreads = 256;

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

// Calls f.template operator()<kThreads>() for the requested block size. Only sums get the
// alternative sizes (they are what the determinism tests are about); other ops use 256.
template <class Op, class F>
void with_block_threads(int requested, ReduceOp op, const F& f) {
  const int threads = requested > 0 ? requested : kDefaultThreads;
  if (threads != 128 && threads != 256 && threads != 512) {
    throw InvalidInput("reduce: block_threads must be 128, 256 or 512");
  }
  if (op == ReduceOp::sum && threads == 128) return f.template operator()<128>();
  if (op == ReduceOp::sum && threads == 512) return f.template operator()<512>();
  return f.template operator()<kDefaultThreads>();
}

bool aligned_16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

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
    using Acc = typename Op::Acc;
    const std::int64_t tiles = canonical::tile_count(count);
    workspace.reserve(static_cast<std::size_t>(std::max<std::int64_t>(tiles, 1)) * sizeof(Acc));
    // A grid that cannot fill the GPU (fewer tiles than SMs, e.g. 2^20 elements) gets 512
    // threads a block: twice the loads in flight per tile, same tree, same bits.
    const int threads = options.block_threads > 0                           ? options.block_threads
                        : tiles < current_sm_count() && op == ReduceOp::sum ? 512
                                                                            : 0;
    with_block_threads<Op>(threads, op, [&]<int kThreads>() {
      using Finish = WriteResult<T, Acc>;
      const auto kernel = cuda_engine::reduce_canonical_kernel<kThreads, Op, Finish>;
      std::int64_t grid = options.grid_blocks > 0
                              ? options.grid_blocks
                              : std::int64_t{blocks_per_sm(kernel, kThreads)} * current_sm_count();
      if (options.grid_blocks <= 0) grid = std::min(grid, tiles);
      grid = std::clamp<std::int64_t>(grid, 1, 1 << 30);
      kernel<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(
          input, count, aligned_16(input), static_cast<Acc*>(workspace.scratch()), 0, tiles,
          workspace.counters(), Op{}, Finish{result, workspace.overflow_flag()});
      GPUKIT_CUDA_CHECK_LAUNCH("reduce_canonical_kernel");
    });
  });
}
GPUKIT_INSTANTIATE_REDUCE_LAUNCHER(launch_deterministic)

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
    const auto kernel = cuda_engine::reduce_canonical_kernel<kDefaultThreads, Op, Finish>;
    const std::int64_t tiles = canonical::tile_count(count);
    const std::int64_t grid = std::min<std::int64_t>(
        tiles, std::int64_t{blocks_per_sm(kernel, kDefaultThreads)} * current_sm_count());
    kernel<<<static_cast<unsigned>(grid), kDefaultThreads, 0, stream>>>(
        input, count, aligned_16(input), static_cast<Acc*>(tile_sums) + first_tile, first_tile,
        tiles, nullptr, Op{}, Finish{nullptr, nullptr});
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
    cuda_engine::reduce_canonical_levels_kernel<kDefaultThreads, Op, Finish>
        <<<1, kDefaultThreads, 0, stream>>>(static_cast<Acc*>(tile_sums), total_tiles, Op{},
                                            Finish{result, overflow_flag});
    GPUKIT_CUDA_CHECK_LAUNCH("reduce_canonical_levels_kernel");
  });
}

#define GPUKIT_INSTANTIATE_PIECES(T)                                                              \
  template std::size_t deterministic_accumulator_size<T>(ReduceOp, bool, std::int64_t);           \
  template void launch_deterministic_chunk<T>(const T*, std::int64_t, ReduceOp, bool,             \
                                              std::int64_t, void*, std::int64_t, StreamHandle);   \
  template void launch_deterministic_levels<T>(void*, std::int64_t, ReduceOp, bool, std::int64_t, \
                                               reduce_result_t<T>*, int*, StreamHandle);
GPUKIT_INSTANTIATE_PIECES(std::int32_t)
GPUKIT_INSTANTIATE_PIECES(std::int64_t)
GPUKIT_INSTANTIATE_PIECES(std::uint32_t)
GPUKIT_INSTANTIATE_PIECES(float)
GPUKIT_INSTANTIATE_PIECES(double)
#undef GPUKIT_INSTANTIATE_PIECES

}  // namespace gpukit::primitives::cuda_detail
