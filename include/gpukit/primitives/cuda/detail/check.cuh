#pragma once
// Internal: the engines' host-side check of a CUDA runtime call, reporting the caller's file and
// line (std::source_location), as GPUKIT_CUDA_CHECK does for the library's own sources.

#include <cuda_runtime.h>

#include <source_location>

#include "gpukit/core/error.hpp"

namespace gpukit::primitives::device::detail {

/// Throws CudaError naming `what`, the runtime's reason and the calling line unless `status` is
/// cudaSuccess.
inline void check_cuda(cudaError_t status, const char* what,
                       std::source_location caller = std::source_location::current()) {
  if (status != cudaSuccess) {
    throw CudaError(what, cudaGetErrorString(status), caller.file_name(),
                    static_cast<int>(caller.line()));
  }
}

}  // namespace gpukit::primitives::device::detail
