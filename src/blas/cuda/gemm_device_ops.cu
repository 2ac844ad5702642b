// Small element-wise kernels of the GEMM plan: C = beta * C for K = 0 or alpha = 0, and the
// rounding of float operands to bf16 for the BF16 variants.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "blas/cuda/gemm_launchers.hpp"
#include "core/cuda/check.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; the grid-stride loops take the rest.
constexpr std::int64_t kMaxBlocks = 4096;

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <class T>
__global__ void scale_c_kernel(T* c, std::int64_t m, std::int64_t n, std::int64_t ldc, T beta) {
  const std::int64_t count = m * n;
  for (std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < count;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    T& x = c[(e / n) * ldc + e % n];
    x = beta == T(0) ? T(0) : beta * x;  // beta = 0 never reads C
  }
}

__global__ void round_to_bf16_kernel(const float* matrix, std::int64_t rows, std::int64_t columns,
                                     std::int64_t ld, __nv_bfloat16* packed) {
  const std::int64_t count = rows * columns;
  for (std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < count;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    packed[e] = __float2bfloat16_rn(matrix[(e / columns) * ld + e % columns]);
  }
}

}  // namespace

void launch_scale_c(const GemmLaunch& launch) {
  const std::int64_t count = launch.m * launch.n;
  if (count == 0) return;
  if (launch.precision == GemmPrecision::float64) {
    scale_c_kernel<double><<<blocks_for(count), kThreads, 0, launch.stream>>>(
        static_cast<double*>(launch.c), launch.m, launch.n, launch.ldc, launch.beta);
  } else {
    scale_c_kernel<float><<<blocks_for(count), kThreads, 0, launch.stream>>>(
        static_cast<float*>(launch.c), launch.m, launch.n, launch.ldc,
        static_cast<float>(launch.beta));
  }
  GPUKIT_CUDA_CHECK_LAUNCH("scale_c_kernel");
}

void launch_round_to_bf16(const float* matrix, std::int64_t rows, std::int64_t columns,
                          std::int64_t ld, void* packed, StreamHandle stream) {
  const std::int64_t count = rows * columns;
  if (count == 0) return;
  round_to_bf16_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      matrix, rows, columns, ld, static_cast<__nv_bfloat16*>(packed));
  GPUKIT_CUDA_CHECK_LAUNCH("round_to_bf16_kernel");
}

}  // namespace gpukit::blas::cuda_detail
