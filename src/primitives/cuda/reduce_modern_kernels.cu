// The steps past the seeds on a Hopper GPU:
// - vector-loads: the grid sized from the SM count (occupancy x SMs, not the seed's 64 blocks),
//   16-byte loads, four of them in flight per thread before the first add, kernel 7's unrolled
//   shared-memory tree, and a second (one-block) pass;
// - warp-shuffle-one-pass: the same loads, the tree in registers (warp shuffles, or redux.sync
//   for 32-bit integer min/max/and/or/xor), and a last-block finish: one launch, no second pass.
// Neither fixes the order of floating-point additions; the deterministic engine does.

#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

#include "gpukit/primitives/cuda/detail/reduce_agent.cuh"
#include "primitives/cuda/reduce_ladder_common.cuh"
#include "primitives/cuda/reduce_launchers.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

constexpr int kModernThreads = 256;
constexpr int kVectorsInFlight = 4;  // 4 x 16 B per thread: ~64 KiB in flight per 1024 threads

// Each thread's share of a grid-stride sweep, with 16-byte loads: a scalar head up to the first
// 16-byte boundary, the aligned body kVectorsInFlight vectors at a time, a scalar tail.
template <class Op>
__device__ __forceinline__ typename Op::Acc thread_vector_sweep(const typename Op::Input* input,
                                                                std::int64_t count) {
  using T = typename Op::Input;
  using Acc = typename Op::Acc;
  constexpr int kWidth = 16 / sizeof(T);
  const Op op;
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const auto misalignment = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(input) % 16);
  const std::int64_t head = std::min<std::int64_t>(count, ((16 - misalignment) % 16) / sizeof(T));
  Acc acc = Op::identity();
  if (thread < head) acc = op(acc, Op::load(input[thread]));
  const auto* body = reinterpret_cast<const uint4*>(input + head);
  const std::int64_t vectors = (count - head) / kWidth;
  const auto add_vector = [&](const uint4& chunk) {
    T values[kWidth];
    std::memcpy(values, &chunk, sizeof chunk);
#pragma unroll
    for (int j = 0; j < kWidth; ++j) acc = op(acc, Op::load(values[j]));
  };
  std::int64_t v = thread;
  for (; v + (kVectorsInFlight - 1) * stride < vectors; v += kVectorsInFlight * stride) {
    uint4 chunks[kVectorsInFlight];
#pragma unroll
    for (int u = 0; u < kVectorsInFlight; ++u) chunks[u] = __ldg(body + v + u * stride);
#pragma unroll
    for (int u = 0; u < kVectorsInFlight; ++u) add_vector(chunks[u]);
  }
  for (; v < vectors; v += stride) add_vector(__ldg(body + v));
  const std::int64_t tail = head + vectors * kWidth + thread;
  if (tail < count) acc = op(acc, Op::load(input[tail]));
  return acc;
}

template <class Op>
__global__ void __launch_bounds__(kModernThreads)
    reduce_vector_loads_kernel(const typename Op::Input* input, std::int64_t count,
                               typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  __shared__ Acc sdata[kModernThreads];
  const unsigned tid = threadIdx.x;
  const Op op;
  sdata[tid] = thread_vector_sweep<Op>(input, count);
  __syncthreads();
#pragma unroll
  for (unsigned s = kModernThreads / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Hardware warp reduction (redux.sync, sm_80+) exists for 32-bit integer min/max/and/or/xor.
template <class Op>
constexpr bool kHasRedux = sizeof(typename Op::Acc) == 4 && std::is_integral_v<typename Op::Acc> &&
                           (std::is_same_v<Op, detail::MinOp<typename Op::Input>> ||
                            std::is_same_v<Op, detail::MaxOp<typename Op::Input>> ||
                            std::is_same_v<Op, detail::AndOp<typename Op::Input>> ||
                            std::is_same_v<Op, detail::OrOp<typename Op::Input>> ||
                            std::is_same_v<Op, detail::XorOp<typename Op::Input>>);

template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc value) {
  using Acc = typename Op::Acc;
  using Input = typename Op::Input;
  if constexpr (kHasRedux<Op>) {
    if constexpr (std::is_same_v<Op, detail::MinOp<Input>>) {
      return __reduce_min_sync(0xffffffffu, value);
    } else if constexpr (std::is_same_v<Op, detail::MaxOp<Input>>) {
      return __reduce_max_sync(0xffffffffu, value);
    } else if constexpr (std::is_same_v<Op, detail::AndOp<Input>>) {
      return static_cast<Acc>(__reduce_and_sync(0xffffffffu, static_cast<unsigned>(value)));
    } else if constexpr (std::is_same_v<Op, detail::OrOp<Input>>) {
      return static_cast<Acc>(__reduce_or_sync(0xffffffffu, static_cast<unsigned>(value)));
    } else {
      return static_cast<Acc>(__reduce_xor_sync(0xffffffffu, static_cast<unsigned>(value)));
    }
  } else {
    const Op op;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      value = op(value, device::detail::shuffle_down(value, offset));
    }
    return value;  // valid in lane 0
  }
}

template <class Op>
__device__ __forceinline__ typename Op::Acc block_reduce_shuffle(typename Op::Acc value,
                                                                 typename Op::Acc* warp_values) {
  constexpr int kWarps = kModernThreads / 32;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  value = warp_reduce<Op>(value);
  if (lane == 0) warp_values[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = warp_reduce<Op>(lane < kWarps ? warp_values[lane] : Op::identity());
  }
  return value;  // valid in thread 0
}

template <class T, class Op>
__global__ void __launch_bounds__(kModernThreads)
    reduce_warp_shuffle_one_pass_kernel(const T* input, std::int64_t count,
                                        typename Op::Acc* partials, unsigned* done_counter,
                                        reduce_result_t<T>* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_values[kModernThreads / 32];
  __shared__ bool is_last_block;
  Acc value = block_reduce_shuffle<Op>(thread_vector_sweep<Op>(input, count), warp_values);
  if (threadIdx.x == 0) partials[blockIdx.x] = value;
  if (!device::detail::reduce_agent::is_last_block_to_finish(done_counter, is_last_block)) return;
  const Op op;
  value = Op::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kModernThreads) {
    value = op(value, device::detail::load_through_l2(partials + b));
  }
  __syncthreads();  // warp_values is reused
  value = block_reduce_shuffle<Op>(value, warp_values);
  if (threadIdx.x == 0) {
    bool overflow = false;
    *result = detail::finalize<T>(value, overflow);
  }
}

template <class T, class Op>
std::int64_t modern_grid(std::int64_t count) {
  constexpr int kWidth = 16 / sizeof(T);
  const std::int64_t useful = ceil_div(ceil_div(count, kWidth), kModernThreads);
  const std::int64_t resident =
      std::int64_t{blocks_per_sm(reduce_vector_loads_kernel<Op>, kModernThreads)} *
      current_sm_count();
  return std::clamp<std::int64_t>(useful, 1, resident);
}

}  // namespace

template <class T>
void launch_vector_loads(const T* input, std::int64_t count, ReduceOp op,
                         reduce_result_t<T>* result, ReduceWorkspace& workspace,
                         StreamHandle stream, const ReduceOptions&) {
  detail::with_ladder_op<T>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    const auto blocks_for = [](std::int64_t n) { return modern_grid<T, Op>(n); };
    const auto pass = [&](auto pass_op, const auto* in, std::int64_t n, Acc* out, StreamHandle s) {
      using PassOp = decltype(pass_op);
      const std::int64_t blocks = blocks_for(n);
      reduce_vector_loads_kernel<PassOp>
          <<<static_cast<unsigned>(blocks), kModernThreads, 0, s>>>(in, n, out);
      GPUKIT_CUDA_CHECK_LAUNCH("reduce_vector_loads_kernel");
      return blocks;
    };
    reduce_in_passes<T, Op>(input, count, result, workspace, stream, pass, blocks_for);
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_vector_loads)

template <class T>
void launch_warp_shuffle_one_pass(const T* input, std::int64_t count, ReduceOp op,
                                  reduce_result_t<T>* result, ReduceWorkspace& workspace,
                                  StreamHandle stream, const ReduceOptions&) {
  detail::with_ladder_op<T>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    if (count == 0) {
      write_identity_kernel<T, Op><<<1, 1, 0, stream>>>(result);
      GPUKIT_CUDA_CHECK_LAUNCH("write_identity_kernel");
      return;
    }
    const std::int64_t blocks = modern_grid<T, Op>(count);
    workspace.reserve(static_cast<std::size_t>(blocks) * sizeof(Acc));
    reduce_warp_shuffle_one_pass_kernel<T, Op>
        <<<static_cast<unsigned>(blocks), kModernThreads, 0, stream>>>(
            input, count, static_cast<Acc*>(workspace.scratch()), workspace.counters() + 1, result);
    GPUKIT_CUDA_CHECK_LAUNCH("reduce_warp_shuffle_one_pass_kernel");
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_warp_shuffle_one_pass)

}  // namespace gpukit::primitives::cuda_detail
