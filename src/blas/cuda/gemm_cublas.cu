// The vendor row: cuBLAS. float32 through cublasSgemm (SIMT, no tensor cores: the handle keeps
// CUBLAS_DEFAULT_MATH), float64 through cublasDgemm, tf32 through cublasGemmEx on float data
// with CUBLAS_COMPUTE_32F_FAST_TF32, bf16 through cublasGemmEx on bf16 copies of A and B (made by
// launch_round_to_bf16 in the plan's workspace) with float32 accumulation and a float32 C. The
// 64-bit entry points (cublas*_64) take every size gemm.hpp admits.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "blas/cuda/cublas_check.hpp"
#include "blas/cuda/gemm_launchers.hpp"
#include "core/cuda/check.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

// The bf16 copy of B starts at this alignment after A's in the workspace.
constexpr std::size_t kWorkspaceAlignment = 256;

}  // namespace

std::size_t bf16_workspace_b_offset(std::int64_t m, std::int64_t k) {
  const std::size_t a_bytes = static_cast<std::size_t>(m * k) * sizeof(__nv_bfloat16);
  return (a_bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

void* create_cublas_handle() {
  cublasHandle_t handle = nullptr;
  GPUKIT_CUBLAS_CHECK(cublasCreate(&handle));
  return handle;
}

void destroy_cublas_handle(void* handle) noexcept {
  cublasDestroy(static_cast<cublasHandle_t>(handle));
}

void launch_cublas(const GemmLaunch& launch) {
  const auto handle = static_cast<cublasHandle_t>(launch.cublas_handle);
  GPUKIT_CUBLAS_CHECK(cublasSetStream(handle, launch.stream));
  // cuBLAS is column-major. The row-major C (M x N, ldc) is the column-major C^T (N x M, ldc) =
  // op(B)^T op(A)^T, and a row-major stored operand is the column-major storage of its
  // transpose: so B comes first, A second, each with its own transpose flag and leading
  // dimension.
  const cublasOperation_t op_a = launch.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = launch.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  switch (launch.precision) {
    case GemmPrecision::float32: {
      const float alpha = static_cast<float>(launch.alpha), beta = static_cast<float>(launch.beta);
      GPUKIT_CUBLAS_CHECK(cublasSgemm_64(handle, op_b, op_a, launch.n, launch.m, launch.k, &alpha,
                                         static_cast<const float*>(launch.b), launch.ldb,
                                         static_cast<const float*>(launch.a), launch.lda, &beta,
                                         static_cast<float*>(launch.c), launch.ldc));
      return;
    }
    case GemmPrecision::float64: {
      GPUKIT_CUBLAS_CHECK(cublasDgemm_64(
          handle, op_b, op_a, launch.n, launch.m, launch.k, &launch.alpha,
          static_cast<const double*>(launch.b), launch.ldb, static_cast<const double*>(launch.a),
          launch.lda, &launch.beta, static_cast<double*>(launch.c), launch.ldc));
      return;
    }
    case GemmPrecision::tf32: {
      const float alpha = static_cast<float>(launch.alpha), beta = static_cast<float>(launch.beta);
      GPUKIT_CUBLAS_CHECK(cublasGemmEx_64(handle, op_b, op_a, launch.n, launch.m, launch.k, &alpha,
                                          launch.b, CUDA_R_32F, launch.ldb, launch.a, CUDA_R_32F,
                                          launch.lda, &beta, launch.c, CUDA_R_32F, launch.ldc,
                                          CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
      return;
    }
    case GemmPrecision::bf16: {
      // The stored (row-major) A is M x K, or K x M when transposed; B is K x N, or N x K. The
      // packed copies keep that shape with the column count as leading dimension.
      const std::int64_t a_rows = launch.transpose_a ? launch.k : launch.m;
      const std::int64_t a_columns = launch.transpose_a ? launch.m : launch.k;
      const std::int64_t b_rows = launch.transpose_b ? launch.n : launch.k;
      const std::int64_t b_columns = launch.transpose_b ? launch.k : launch.n;
      auto* a_bf16 = static_cast<std::byte*>(launch.workspace);
      auto* b_bf16 = a_bf16 + bf16_workspace_b_offset(launch.m, launch.k);
      launch_round_to_bf16(static_cast<const float*>(launch.a), a_rows, a_columns, launch.lda,
                           a_bf16, launch.stream);
      launch_round_to_bf16(static_cast<const float*>(launch.b), b_rows, b_columns, launch.ldb,
                           b_bf16, launch.stream);
      const float alpha = static_cast<float>(launch.alpha), beta = static_cast<float>(launch.beta);
      GPUKIT_CUBLAS_CHECK(cublasGemmEx_64(handle, op_b, op_a, launch.n, launch.m, launch.k, &alpha,
                                          b_bf16, CUDA_R_16BF, b_columns, a_bf16, CUDA_R_16BF,
                                          a_columns, &beta, launch.c, CUDA_R_32F, launch.ldc,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      return;
    }
  }
}

}  // namespace gpukit::blas::cuda_detail
