#pragma once
// Internal: every cuBLAS call of the blas module goes through GPUKIT_CUBLAS_CHECK, which throws
// CudaError naming the call, cuBLAS's reason and the source line (out of device memory said so).

#include <cublas_v2.h>

#include "gpukit/core/error.hpp"

namespace gpukit::blas::cuda_detail {

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call,
                                            const char* file, int line) {
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    throw CudaError(call, "cuBLAS could not allocate its resources (out of device memory)", file,
                    line);
  }
  throw CudaError(call, cublasGetStatusString(status), file, line);
}

}  // namespace gpukit::blas::cuda_detail

#define GPUKIT_CUBLAS_CHECK(call)                                                                 \
  do {                                                                                            \
    const cublasStatus_t gpukit_status_ = (call);                                                 \
    if (gpukit_status_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::gpukit::blas::cuda_detail::throw_cublas_error(gpukit_status_, #call, __FILE__, __LINE__); \
  } while (0)
