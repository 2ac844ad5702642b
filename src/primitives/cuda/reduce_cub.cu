// The vendor row: CUB's DeviceReduce (CCCL, shipped with the CUDA toolkit). Sums go through
// DeviceReduce::Sum into the result type (int64 for int32, as gpukit returns), the other
// operations through DeviceReduce::Reduce with gpukit's functors, so both compute the same thing.

#include <cub/device/device_reduce.cuh>

#include "primitives/cuda/reduce_ladder_common.cuh"
#include "primitives/cuda/reduce_launchers.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

template <class T, class Op>
__global__ void finalize_in_place_kernel(typename Op::Acc* root, reduce_result_t<T>* result) {
  bool overflow = false;
  *result = detail::finalize<T>(*root, overflow);
}

}  // namespace

template <class T>
void launch_cub(const T* input, std::int64_t count, ReduceOp op, reduce_result_t<T>* result,
                ReduceWorkspace& workspace, StreamHandle stream, const ReduceOptions&) {
  if (op == ReduceOp::sum) {
    std::size_t temp_bytes = 0;
    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, input, result, count, stream));
    workspace.reserve(temp_bytes);
    GPUKIT_CUDA_CHECK(
        cub::DeviceReduce::Sum(workspace.scratch(), temp_bytes, input, result, count, stream));
    return;  // as CUB leaves it: a NaN keeps whatever payload the hardware gives it
  }
  detail::with_ladder_op<T>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    // The Acc result sits after CUB's temporary storage, 16-byte aligned.
    std::size_t temp_bytes = 0;
    Acc* root = nullptr;
    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, temp_bytes, input, root, count, op_functor,
                                                Op::identity(), stream));
    const std::size_t root_offset = (temp_bytes + 15) / 16 * 16;
    workspace.reserve(root_offset + sizeof(Acc));
    root = reinterpret_cast<Acc*>(static_cast<unsigned char*>(workspace.scratch()) + root_offset);
    GPUKIT_CUDA_CHECK(cub::DeviceReduce::Reduce(workspace.scratch(), temp_bytes, input, root, count,
                                                op_functor, Op::identity(), stream));
    finalize_in_place_kernel<T, Op><<<1, 1, 0, stream>>>(root, result);
    GPUKIT_CUDA_CHECK_LAUNCH("finalize_in_place_kernel");
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_cub)

}  // namespace gpukit::primitives::cuda_detail
