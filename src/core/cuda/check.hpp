#pragma once
// Internal: every CUDA runtime call goes through GPUKIT_CUDA_CHECK, which throws CudaError naming
// the call, the reason and the source line.

#include <cuda_runtime_api.h>

#include "gpukit/core/error.hpp"

namespace gpukit::cuda::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line) {
  throw CudaError(call, cudaGetErrorString(status), file, line);
}

}  // namespace gpukit::cuda::detail

#define GPUKIT_CUDA_CHECK(call)                                                            \
  do {                                                                                     \
    const cudaError_t gpukit_status_ = (call);                                             \
    if (gpukit_status_ != cudaSuccess)                                                     \
      ::gpukit::cuda::detail::throw_cuda_error(gpukit_status_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: reports a bad launch configuration at the launch site.
#define GPUKIT_CUDA_CHECK_LAUNCH(kernel_name)                                                      \
  do {                                                                                             \
    const cudaError_t gpukit_status_ = cudaGetLastError();                                         \
    if (gpukit_status_ != cudaSuccess)                                                             \
      ::gpukit::cuda::detail::throw_cuda_error(gpukit_status_, "launch of " kernel_name, __FILE__, \
                                               __LINE__);                                          \
  } while (0)
