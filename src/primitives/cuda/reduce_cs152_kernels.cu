// CS 152's reduction methods 0, 4 and 5 (seed 003, "Application 2: Parallel Reduction"; its
// methods 1-3 are the seed's kernels 1, 2/3 and 4 at 1024 threads). 1024 threads per block, as
// in the lecture; the launch shapes are the lecture's best ones.

#include <cuda_runtime.h>

#include "primitives/cuda/reduce_ladder_common.cuh"
#include "primitives/cuda/reduce_launchers.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

constexpr int kCs152Threads = 1024;
constexpr int kMethod0ElementsPerThread = 64;  // "Peak performance when ~64 elements per thread"
constexpr int kMethod4ElementsPerThread = 8;   // 131072 blocks for 2^30: "8.52 ms! 504 GB/s!"
constexpr int kMethod5Blocks = 8192;           // "8192 blocks: 7.8 ms, 550 GB/s"

// Method 0: each thread sums `work` consecutive elements and writes its own partial; the output
// is one partial per thread, reduced again by the same kernel.
template <class Op>
__global__ void __launch_bounds__(kCs152Threads)
    reduce_consecutive_work_blocks_kernel(const typename Op::Input* input, std::int64_t count,
                                          std::int64_t thread_count, typename Op::Acc* out) {
  const std::int64_t idx = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (idx >= thread_count) return;
  const std::int64_t work = (count + thread_count - 1) / thread_count;
  const Op op;
  typename Op::Acc partial = Op::identity();
  for (std::int64_t i = work * idx; i < count && i < work * (idx + 1); ++i) {
    partial = op(partial, Op::load(input[i]));
  }
  out[idx] = partial;
}

template <class Op>
__device__ __forceinline__ void sequential_addressing_tree(typename Op::Acc* sdata, unsigned tid) {
  const Op op;
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
}

// Method 4: consecutive work per thread, then method 2's tree in shared memory.
template <class Op>
__global__ void __launch_bounds__(kCs152Threads)
    reduce_work_blocks_tree_kernel(const typename Op::Input* input, std::int64_t count,
                                   typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t idx = std::int64_t{blockIdx.x} * blockDim.x + tid;
  const std::int64_t thread_count = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t work = (count + thread_count - 1) / thread_count;
  const Op op;
  Acc partial = Op::identity();
  for (std::int64_t i = work * idx; i < count && i < work * (idx + 1); ++i) {
    partial = op(partial, Op::load(input[i]));
  }
  sdata[tid] = partial;
  __syncthreads();
  sequential_addressing_tree<Op>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Method 5: the stride is the whole grid, so a warp's loads are always contiguous.
template <class Op>
__global__ void __launch_bounds__(kCs152Threads)
    reduce_grid_stride_consecutive_kernel(const typename Op::Input* input, std::int64_t count,
                                          typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const Op op;
  Acc partial = Op::identity();
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + tid; i < count; i += stride) {
    partial = op(partial, Op::load(input[i]));
  }
  sdata[tid] = partial;
  __syncthreads();
  sequential_addressing_tree<Op>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

}  // namespace

template <class T>
void launch_consecutive_work_blocks(const T* input, std::int64_t count, ReduceOp op,
                                    reduce_result_t<T>* result, ReduceWorkspace& workspace,
                                    StreamHandle stream, const ReduceOptions&) {
  detail::with_ladder_op<T>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    const auto partials_for = [](std::int64_t n) { return ceil_div(n, kMethod0ElementsPerThread); };
    const auto pass = [&](auto pass_op, const auto* in, std::int64_t n, Acc* out, StreamHandle s) {
      using PassOp = decltype(pass_op);
      const std::int64_t threads = partials_for(n);
      reduce_consecutive_work_blocks_kernel<PassOp>
          <<<static_cast<unsigned>(ceil_div(threads, kCs152Threads)), kCs152Threads, 0, s>>>(
              in, n, threads, out);
      GPUKIT_CUDA_CHECK_LAUNCH("reduce_consecutive_work_blocks_kernel");
      return threads;
    };
    reduce_in_passes<T, Op>(input, count, result, workspace, stream, pass, partials_for);
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_consecutive_work_blocks)

template <class T>
void launch_work_blocks_tree(const T* input, std::int64_t count, ReduceOp op,
                             reduce_result_t<T>* result, ReduceWorkspace& workspace,
                             StreamHandle stream, const ReduceOptions&) {
  reduce_block_partials<T>(
      input, count, op, result, workspace, stream, kCs152Threads, kMethod4ElementsPerThread, 0,
      [](auto pass_op, const auto* in, std::int64_t n, auto* out, std::int64_t blocks, int threads,
         StreamHandle s) {
        using PassOp = decltype(pass_op);
        reduce_work_blocks_tree_kernel<PassOp>
            <<<static_cast<unsigned>(blocks), threads, threads * sizeof(typename PassOp::Acc), s>>>(
                in, n, out);
        GPUKIT_CUDA_CHECK_LAUNCH("reduce_work_blocks_tree_kernel");
      });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_work_blocks_tree)

template <class T>
void launch_grid_stride_consecutive(const T* input, std::int64_t count, ReduceOp op,
                                    reduce_result_t<T>* result, ReduceWorkspace& workspace,
                                    StreamHandle stream, const ReduceOptions&) {
  reduce_block_partials<T>(
      input, count, op, result, workspace, stream, kCs152Threads, 1, kMethod5Blocks,
      [](auto pass_op, const auto* in, std::int64_t n, auto* out, std::int64_t blocks, int threads,
         StreamHandle s) {
        using PassOp = decltype(pass_op);
        reduce_grid_stride_consecutive_kernel<PassOp>
            <<<static_cast<unsigned>(blocks), threads, threads * sizeof(typename PassOp::Acc), s>>>(
                in, n, out);
        GPUKIT_CUDA_CHECK_LAUNCH("reduce_grid_stride_consecutive_kernel");
      });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_grid_stride_consecutive)

}  // namespace gpukit::primitives::cuda_detail
