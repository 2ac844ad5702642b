// The device work around a variant's solve: the sums of the mean rule (deterministic), the corner
// gauge, cuFFT plans and checks shared by the variants.

#include <algorithm>
#include <cmath>
#include <string>

#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_device_ops.hpp"

namespace gpukit::pde::cuda_detail {

namespace {

constexpr int kSumBlocks = 512;  // fixed: the bracketing, and so the bits, never change
constexpr int kSumThreads = 256;

struct Neumaier {
  double sum = 0, compensation = 0;
  __device__ void add(double x) {
    const double t = sum + x;
    compensation += fabs(sum) >= fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  __device__ double value() const { return sum + compensation; }
};

// Block b sums the elements i = b * kSumThreads + t + k * (kSumBlocks * kSumThreads), each
// thread in order with compensation, then a fixed shared-memory tree.
template <class Real>
__global__ void __launch_bounds__(kSumThreads)
    partial_sums_kernel(const Real* __restrict__ f, std::int64_t n, double* __restrict__ partial) {
  __shared__ double s_sum[kSumThreads], s_abs[kSumThreads];
  Neumaier sum, abs_sum;
  const std::int64_t stride = std::int64_t{kSumBlocks} * kSumThreads;
  for (std::int64_t i = std::int64_t{blockIdx.x} * kSumThreads + threadIdx.x; i < n; i += stride) {
    const double x = static_cast<double>(f[i]);
    sum.add(x);
    abs_sum.add(fabs(x));
  }
  s_sum[threadIdx.x] = sum.value();
  s_abs[threadIdx.x] = abs_sum.value();
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_sum[threadIdx.x] += s_sum[threadIdx.x + half];
      s_abs[threadIdx.x] += s_abs[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = s_sum[0];
    partial[2 * blockIdx.x + 1] = s_abs[0];
  }
}

__global__ void __launch_bounds__(kSumBlocks)
    final_sums_kernel(const double* __restrict__ partial, double* __restrict__ result) {
  __shared__ double s_sum[kSumBlocks], s_abs[kSumBlocks];
  s_sum[threadIdx.x] = partial[2 * threadIdx.x];
  s_abs[threadIdx.x] = partial[2 * threadIdx.x + 1];
  __syncthreads();
  for (int half = kSumBlocks / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_sum[threadIdx.x] += s_sum[threadIdx.x + half];
      s_abs[threadIdx.x] += s_abs[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    result[0] = s_sum[0];
    result[1] = s_abs[0];
  }
}

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

template <class Real>
void device_sums(const Real* f, std::int64_t n, double* scratch, StreamHandle stream, double& sum,
                 double& sum_abs) {
  partial_sums_kernel<Real><<<kSumBlocks, kSumThreads, 0, stream>>>(f, n, scratch);
  GPUKIT_CUDA_CHECK_LAUNCH("partial_sums_kernel");
  final_sums_kernel<<<1, kSumBlocks, 0, stream>>>(scratch, scratch + 2 * kSumBlocks);
  GPUKIT_CUDA_CHECK_LAUNCH("final_sums_kernel");
  double result[2];
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(result, scratch + 2 * kSumBlocks, sizeof result,
                                    cudaMemcpyDeviceToHost, stream));
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  sum = result[0];
  sum_abs = result[1];
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

template void device_sums<float>(const float*, std::int64_t, double*, StreamHandle, double&,
                                 double&);
template void device_sums<double>(const double*, std::int64_t, double*, StreamHandle, double&,
                                  double&);
template void subtract_corner<float>(float*, std::int64_t, float*, StreamHandle);
template void subtract_corner<double>(double*, std::int64_t, double*, StreamHandle);

}  // namespace gpukit::pde::cuda_detail
