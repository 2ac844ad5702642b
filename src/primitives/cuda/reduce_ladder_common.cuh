#pragma once
// Internal: what the ladder kernels share: dynamic shared memory of Acc, the op wrapper for
// passes after the first (their input is the previous pass's Acc partials), the multi-pass
// driver, and the kernel that turns the final Acc into the API's result.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "core/cuda/launch_shape.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "primitives/reduce_dispatch.hpp"

namespace gpukit::primitives::cuda_detail {

/// The block's dynamic shared memory viewed as Acc (16-byte aligned for every Acc).
template <class Acc>
__device__ __forceinline__ Acc* shared_accumulators() {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  return reinterpret_cast<Acc*>(dynamic_shared);
}

/// Op for passes after the first: the input is already Acc.
template <class Op>
struct PartialsOp : Op {
  using Input = typename Op::Acc;
  __host__ __device__ __forceinline__ static typename Op::Acc load(const Input& a) { return a; }
};

template <class T, class Acc>
__global__ void write_result_kernel(const Acc* root, reduce_result_t<T>* result) {
  bool overflow = false;
  *result = detail::finalize<T>(*root, overflow);
}

template <class T, class Op>
__global__ void write_identity_kernel(reduce_result_t<T>* result) {
  bool overflow = false;
  auto value = detail::finalize<T>(Op::identity(), overflow);
  if (value == 0) value = 0;  // the empty sum is +0.0, not the additive identity -0.0
  *result = value;
}

using gpukit::cuda::detail::current_sm_count;

/// Resident blocks per SM of `kernel` (asked once per device and kernel).
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads) {
  return gpukit::cuda::detail::resident_blocks_per_sm(reinterpret_cast<const void*>(kernel),
                                                      threads);
}

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Runs `pass(op, in, count, out) -> partial count` until one partial is left, ping-ponging
/// between two halves of the workspace, then writes the result. `max_partials(count)` bounds
/// the first pass's output. This is the seed's recursive kernel invocation (000 slide 68).
template <class T, class Op, class Pass, class MaxPartials>
void reduce_in_passes(const T* input, std::int64_t count, reduce_result_t<T>* result,
                      ReduceWorkspace& workspace, StreamHandle stream, const Pass& pass,
                      const MaxPartials& max_partials) {
  using Acc = typename Op::Acc;
  if (count == 0) {
    write_identity_kernel<T, Op><<<1, 1, 0, stream>>>(result);
    GPUKIT_CUDA_CHECK_LAUNCH("write_identity_kernel");
    return;
  }
  const std::int64_t capacity = std::max<std::int64_t>(max_partials(count), 1);
  workspace.reserve(2 * static_cast<std::size_t>(capacity) * sizeof(Acc));
  Acc* buffers[2] = {static_cast<Acc*>(workspace.scratch()),
                     static_cast<Acc*>(workspace.scratch()) + capacity};
  std::int64_t remaining = pass(Op{}, input, count, buffers[0], stream);
  int current = 0;
  while (remaining > 1) {
    remaining = pass(PartialsOp<Op>{}, buffers[current], remaining, buffers[1 - current], stream);
    current = 1 - current;
  }
  write_result_kernel<T><<<1, 1, 0, stream>>>(buffers[current], result);
  GPUKIT_CUDA_CHECK_LAUNCH("write_result_kernel");
}

/// Kernels that reduce `threads * elements_per_thread` elements per block to one partial (or,
/// when `max_blocks` > 0 caps the grid, a grid-stride share of the input). `launch_kernel(op,
/// in, n, out, blocks, threads, stream)` launches one pass.
template <class T, class LaunchKernel>
void reduce_block_partials(const T* input, std::int64_t count, ReduceOp op,
                           reduce_result_t<T>* result, ReduceWorkspace& workspace,
                           StreamHandle stream, int threads, int elements_per_thread,
                           std::int64_t max_blocks, const LaunchKernel& launch_kernel) {
  detail::with_ladder_op<T>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    const std::int64_t per_block = std::int64_t{threads} * elements_per_thread;
    const auto blocks_for = [&](std::int64_t n) {
      const std::int64_t blocks = ceil_div(n, per_block);
      return max_blocks > 0 ? std::min(blocks, max_blocks) : blocks;
    };
    const auto pass = [&](auto pass_op, const auto* in, std::int64_t n, Acc* out, StreamHandle s) {
      const std::int64_t blocks = blocks_for(n);
      launch_kernel(pass_op, in, n, out, blocks, threads, s);
      return blocks;
    };
    reduce_in_passes<T, Op>(input, count, result, workspace, stream, pass, blocks_for);
  });
}

}  // namespace gpukit::primitives::cuda_detail
