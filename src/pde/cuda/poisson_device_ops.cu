// The device work around a variant's solve: the sums of the mean rule (the deterministic reduce
// engine with the CPU's operation), the corner gauge, cuFFT plans and checks shared by the
// variants.

#include <algorithm>
#include <cmath>
#include <string>

#include "gpukit/primitives/cuda/reduce.cuh"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_device_ops.hpp"

namespace gpukit::pde::cuda_detail {

namespace {

template <class Real>
__global__ void subtract_corner_kernel(Real* __restrict__ u, std::int64_t n,
                                       const Real* __restrict__ corner) {
  const Real shift = *corner;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    u[i] -= shift;
}

const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
      return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "cuFFT error";
  }
}

}  // namespace

void throw_cufft_error(cufftResult status, const char* call, const char* file, int line) {
  if (status == CUFFT_ALLOC_FAILED) {
    throw OutOfMemory(std::string(call) + " (" + file + ":" + std::to_string(line) + ")", 0);
  }
  throw CudaError(call, cufft_result_name(status), file, line);
}

std::size_t cufft_work_estimate(const Box& box, cufftType type) {
  if (box.rank == 0) return 0;
  cufftHandle handle = 0;
  GPUKIT_CUFFT_CHECK(cufftCreate(&handle));
  std::size_t bytes = 0;
  const cufftResult status = cufftGetSizeMany(handle, box.rank, const_cast<int*>(box.fft_n),
                                              nullptr, 1, 0, nullptr, 1, 0, type, 1, &bytes);
  cufftDestroy(handle);
  GPUKIT_CUFFT_CHECK(status);
  return bytes;
}

CufftPlan::CufftPlan(const Box& box, cufftType type) {
  GPUKIT_CUFFT_CHECK(cufftCreate(&handle_));
  valid_ = true;
  GPUKIT_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
  GPUKIT_CUFFT_CHECK(cufftMakePlanMany(handle_, box.rank, const_cast<int*>(box.fft_n), nullptr, 1,
                                       0, nullptr, 1, 0, type, 1, &work_bytes_));
}

CufftPlan::~CufftPlan() {
  if (valid_) cufftDestroy(handle_);
}

void CufftPlan::bind(void* work_area, cudaStream_t stream) const {
  GPUKIT_CUFFT_CHECK(cufftSetWorkArea(handle_, work_area));
  GPUKIT_CUFFT_CHECK(cufftSetStream(handle_, stream));
}

std::size_t mean_sums_workspace_bytes(std::int64_t n) {
  // What the engine may reserve, bounded from its public tree: one partial per tile plus one per
  // lane of a level, flagged slots (each 4-byte word of a partial in an 8-byte slot: twice the
  // partial) for every tile, and its counters and epoch.
  const auto tiles = static_cast<std::size_t>(primitives::canonical::tile_count(n));
  return (tiles + primitives::canonical::kLanes + 1 + 2 * tiles) * sizeof(detail::MeanSums) + 4096;
}

template <class Real>
detail::MeanSums device_mean_sums(const Real* f, std::int64_t n,
                                  primitives::ReduceWorkspace& workspace,
                                  detail::MeanSums* device_result, StreamHandle stream) {
  primitives::device::deterministic_reduce<detail::MeanSumsOp<Real>>(f, n, device_result, workspace,
                                                                     stream);
  detail::MeanSums result;
  GPUKIT_CUDA_CHECK(
      cudaMemcpyAsync(&result, device_result, sizeof result, cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

template <class Real>
void subtract_corner(Real* u, std::int64_t n, Real* scratch, StreamHandle stream) {
  // u[0] is copied aside first: the kernel also rewrites u[0].
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(scratch, u, sizeof(Real), cudaMemcpyDeviceToDevice, stream));
  const int threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((n + threads - 1) / threads, 132 * 16);
  subtract_corner_kernel<Real><<<static_cast<int>(blocks), threads, 0, stream>>>(u, n, scratch);
  GPUKIT_CUDA_CHECK_LAUNCH("subtract_corner_kernel");
}

std::size_t device_free_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  GPUKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

template detail::MeanSums device_mean_sums<float>(const float*, std::int64_t,
                                                  primitives::ReduceWorkspace&, detail::MeanSums*,
                                                  StreamHandle);
template detail::MeanSums device_mean_sums<double>(const double*, std::int64_t,
                                                   primitives::ReduceWorkspace&, detail::MeanSums*,
                                                   StreamHandle);
template void subtract_corner<float>(float*, std::int64_t, float*, StreamHandle);
template void subtract_corner<double>(double*, std::int64_t, double*, StreamHandle);

}  // namespace gpukit::pde::cuda_detail
