// The seed's seven reduction kernels (000 slides 63-96, 001; Harris, "Optimizing Parallel
// Reduction in CUDA", 2007), written for any op and accumulator. Each kernel reduces a block's
// elements to one partial; the driver launches it again on the partials until one is left, as
// the seed does. They stay faithful to the seed's shapes, including what makes them slow on
// today's GPU; two changes are forced by correctness:
// - warp-synchronous code (kernels 5-7) needs __syncwarp() since Volta's independent thread
//   scheduling: a warp no longer runs in lock step, so the seed's volatile-only version races;
// - indices are 64-bit, so 2^31 elements and more work.

#include <cuda_runtime.h>

#include "primitives/cuda/reduce_ladder_common.cuh"
#include "primitives/cuda/reduce_launchers.hpp"
#include "primitives/reduce_dispatch.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

constexpr int kSeedThreads = 128;       // "Block Size = 128 threads for all tests" (000 slide 69)
constexpr int kSeedKernel7Blocks = 64;  // the SDK sample's maxBlocks for kernel 7

template <class Op>
__device__ __forceinline__ typename Op::Acc load_or_identity(const typename Op::Input* input,
                                                             std::int64_t count, std::int64_t i) {
  return i < count ? Op::load(input[i]) : Op::identity();
}

// Kernel 1: interleaved addressing; `tid % (2*s)` makes every warp diverge.
template <class Op>
__global__ void reduce_interleaved_divergent_kernel(const typename Op::Input* input,
                                                    std::int64_t count, typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + tid;
  const Op op;
  sdata[tid] = load_or_identity<Op>(input, count, i);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Kernel 2: strided index, no divergence, but 2-way and worse shared-memory bank conflicts.
template <class Op>
__global__ void reduce_interleaved_bank_conflicts_kernel(const typename Op::Input* input,
                                                         std::int64_t count,
                                                         typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + tid;
  const Op op;
  sdata[tid] = load_or_identity<Op>(input, count, i);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] = op(sdata[index], sdata[index + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Kernel 3: sequential addressing, conflict free; half the threads idle from the first step.
template <class Op>
__global__ void reduce_sequential_addressing_kernel(const typename Op::Input* input,
                                                    std::int64_t count, typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + tid;
  const Op op;
  sdata[tid] = load_or_identity<Op>(input, count, i);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Kernel 4: each thread adds two elements while loading; half the blocks.
template <class Op>
__global__ void reduce_first_add_during_load_kernel(const typename Op::Input* input,
                                                    std::int64_t count, typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * (blockDim.x * 2) + tid;
  const Op op;
  sdata[tid] =
      op(load_or_identity<Op>(input, count, i), load_or_identity<Op>(input, count, i + blockDim.x));
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The last six steps inside one warp. Each step reads into a register, then all lanes write:
// since Volta a warp may not run in lock step, so reads and writes of one step are separated by
// __syncwarp() (the seed relied on lock step and `volatile` alone).
template <class Op>
__device__ __forceinline__ void warp_reduce_shared(typename Op::Acc* sdata, unsigned tid,
                                                   unsigned block_size) {
  const Op op;
#pragma unroll
  for (unsigned s = 32; s > 0; s >>= 1) {
    if (block_size >= 2 * s) {
      const typename Op::Acc value = op(sdata[tid], sdata[tid + s]);
      __syncwarp();
      sdata[tid] = value;
      __syncwarp();
    }
  }
}

// Kernel 5: kernel 4 with the last warp unrolled (no __syncthreads, no loop overhead).
template <class Op>
__global__ void reduce_unroll_last_warp_kernel(const typename Op::Input* input, std::int64_t count,
                                               typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * (blockDim.x * 2) + tid;
  const Op op;
  sdata[tid] =
      op(load_or_identity<Op>(input, count, i), load_or_identity<Op>(input, count, i + blockDim.x));
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid < 32) warp_reduce_shared<Op>(sdata, tid, blockDim.x);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The block-level tree of kernels 6 and 7, fully unrolled for a compile-time block size.
template <unsigned kBlockSize, class Op>
__device__ __forceinline__ void block_reduce_unrolled(typename Op::Acc* sdata, unsigned tid) {
  const Op op;
  if constexpr (kBlockSize >= 1024) {
    if (tid < 512) sdata[tid] = op(sdata[tid], sdata[tid + 512]);
    __syncthreads();
  }
  if constexpr (kBlockSize >= 512) {
    if (tid < 256) sdata[tid] = op(sdata[tid], sdata[tid + 256]);
    __syncthreads();
  }
  if constexpr (kBlockSize >= 256) {
    if (tid < 128) sdata[tid] = op(sdata[tid], sdata[tid + 128]);
    __syncthreads();
  }
  if constexpr (kBlockSize >= 128) {
    if (tid < 64) sdata[tid] = op(sdata[tid], sdata[tid + 64]);
    __syncthreads();
  }
  if (tid < 32) warp_reduce_shared<Op>(sdata, tid, kBlockSize);
}

// Kernel 6: completely unrolled with the block size as a template parameter.
template <unsigned kBlockSize, class Op>
__global__ void __launch_bounds__(kBlockSize)
    reduce_completely_unrolled_kernel(const typename Op::Input* input, std::int64_t count,
                                      typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * (kBlockSize * 2) + tid;
  const Op op;
  sdata[tid] =
      op(load_or_identity<Op>(input, count, i), load_or_identity<Op>(input, count, i + kBlockSize));
  __syncthreads();
  block_reduce_unrolled<kBlockSize, Op>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Kernel 7: algorithm cascading, each thread adds many elements (grid-stride) before the tree.
template <unsigned kBlockSize, class Op>
__global__ void __launch_bounds__(kBlockSize)
    reduce_multiple_elements_per_thread_kernel(const typename Op::Input* input, std::int64_t count,
                                               typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc* sdata = shared_accumulators<Acc>();
  const unsigned tid = threadIdx.x;
  const std::int64_t grid_size = std::int64_t{kBlockSize} * 2 * gridDim.x;
  const Op op;
  Acc sum = Op::identity();
  for (std::int64_t i = std::int64_t{blockIdx.x} * (kBlockSize * 2) + tid; i < count;
       i += grid_size) {
    sum = op(sum, op(Op::load(input[i]), load_or_identity<Op>(input, count, i + kBlockSize)));
  }
  sdata[tid] = sum;
  __syncthreads();
  block_reduce_unrolled<kBlockSize, Op>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

}  // namespace

int seed_block_threads(const ReduceOptions& options, int fallback) {
  const int threads = options.block_threads > 0 ? options.block_threads : fallback;
  if (threads < 64 || threads > 1024 || (threads & (threads - 1)) != 0) {
    throw InvalidInput("reduce: the seed kernels need a power-of-two block size in [64, 1024]");
  }
  return threads;
}

// Kernels 1-5 for the pass's op: they differ in their kernel and in how many elements a thread
// loads (kernels 4 and 5 add two while loading).
template <SeedReduceKernel kKernel, class Op>
constexpr auto seed_kernel() {
  if constexpr (kKernel == SeedReduceKernel::interleaved_divergent) {
    return &reduce_interleaved_divergent_kernel<Op>;
  } else if constexpr (kKernel == SeedReduceKernel::interleaved_bank_conflicts) {
    return &reduce_interleaved_bank_conflicts_kernel<Op>;
  } else if constexpr (kKernel == SeedReduceKernel::sequential_addressing) {
    return &reduce_sequential_addressing_kernel<Op>;
  } else if constexpr (kKernel == SeedReduceKernel::first_add_during_load) {
    return &reduce_first_add_during_load_kernel<Op>;
  } else {
    return &reduce_unroll_last_warp_kernel<Op>;
  }
}
constexpr const char* kSeedKernelLaunches[] = {"launch of reduce_interleaved_divergent_kernel",
                                               "launch of reduce_interleaved_bank_conflicts_kernel",
                                               "launch of reduce_sequential_addressing_kernel",
                                               "launch of reduce_first_add_during_load_kernel",
                                               "launch of reduce_unroll_last_warp_kernel"};

template <class T, SeedReduceKernel kKernel>
void launch_seed_kernel(const T* input, std::int64_t count, ReduceOp op, reduce_result_t<T>* result,
                        ReduceWorkspace& workspace, StreamHandle stream,
                        const ReduceOptions& options) {
  constexpr int kElementsPerThread = kKernel == SeedReduceKernel::first_add_during_load ||
                                             kKernel == SeedReduceKernel::unroll_last_warp
                                         ? 2
                                         : 1;
  const int threads = seed_block_threads(options, kSeedThreads);
  reduce_block_partials<T>(
      input, count, op, result, workspace, stream, threads, kElementsPerThread, 0,
      [](auto pass_op, const auto* in, std::int64_t n, auto* out, std::int64_t blocks,
         int block_threads, StreamHandle s) {
        using PassOp = decltype(pass_op);
        seed_kernel<kKernel, PassOp>()<<<static_cast<unsigned>(blocks), block_threads,
                                         block_threads * sizeof(typename PassOp::Acc), s>>>(in, n,
                                                                                            out);
        const cudaError_t status = cudaGetLastError();
        if (status != cudaSuccess) {
          gpukit::cuda::detail::throw_cuda_error(
              status, kSeedKernelLaunches[static_cast<int>(kKernel)], __FILE__, __LINE__);
        }
      });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_seed_kernel,
                            SeedReduceKernel::interleaved_divergent)
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_seed_kernel,
                            SeedReduceKernel::interleaved_bank_conflicts)
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_seed_kernel,
                            SeedReduceKernel::sequential_addressing)
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_seed_kernel,
                            SeedReduceKernel::first_add_during_load)
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_seed_kernel,
                            SeedReduceKernel::unroll_last_warp)

// Kernels 6 and 7 take the block size as a template parameter: the seed's 128 only.
template <class T>
void launch_completely_unrolled(const T* input, std::int64_t count, ReduceOp op,
                                reduce_result_t<T>* result, ReduceWorkspace& workspace,
                                StreamHandle stream, const ReduceOptions&) {
  reduce_block_partials<T>(input, count, op, result, workspace, stream, kSeedThreads, 2, 0,
                           [](auto pass_op, const auto* in, std::int64_t n, auto* out,
                              std::int64_t blocks, int, StreamHandle s) {
                             using PassOp = decltype(pass_op);
                             reduce_completely_unrolled_kernel<kSeedThreads, PassOp>
                                 <<<static_cast<unsigned>(blocks), kSeedThreads,
                                    kSeedThreads * sizeof(typename PassOp::Acc), s>>>(in, n, out);
                             GPUKIT_CUDA_CHECK_LAUNCH("reduce_completely_unrolled_kernel");
                           });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_completely_unrolled)

template <class T>
void launch_multiple_elements_per_thread(const T* input, std::int64_t count, ReduceOp op,
                                         reduce_result_t<T>* result, ReduceWorkspace& workspace,
                                         StreamHandle stream, const ReduceOptions&) {
  reduce_block_partials<T>(input, count, op, result, workspace, stream, kSeedThreads, 2,
                           kSeedKernel7Blocks,
                           [](auto pass_op, const auto* in, std::int64_t n, auto* out,
                              std::int64_t blocks, int, StreamHandle s) {
                             using PassOp = decltype(pass_op);
                             reduce_multiple_elements_per_thread_kernel<kSeedThreads, PassOp>
                                 <<<static_cast<unsigned>(blocks), kSeedThreads,
                                    kSeedThreads * sizeof(typename PassOp::Acc), s>>>(in, n, out);
                             GPUKIT_CUDA_CHECK_LAUNCH("reduce_multiple_elements_per_thread_kernel");
                           });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_multiple_elements_per_thread)

}  // namespace gpukit::primitives::cuda_detail
