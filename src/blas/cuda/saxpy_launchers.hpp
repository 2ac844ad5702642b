#pragma once
// Internal: the CUDA axpy launchers (defined in the .cu files of this folder), callable from plain
// C++. Each enqueues out = alpha * x + y for `count` elements of device memory on `stream` and
// returns without waiting; out may be y, or overlap neither input.

#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::blas::cuda_detail {

#define GPUKIT_DECLARE_AXPY_LAUNCHER(name) \
  template <class T>                       \
  void name(T alpha, const T* x, const T* y, T* out, std::int64_t count, StreamHandle stream);

// The ladder (saxpy_kernels.cu).
GPUKIT_DECLARE_AXPY_LAUNCHER(launch_axpy_seed)
GPUKIT_DECLARE_AXPY_LAUNCHER(launch_axpy_grid_stride)
GPUKIT_DECLARE_AXPY_LAUNCHER(launch_axpy_vector16)
GPUKIT_DECLARE_AXPY_LAUNCHER(launch_axpy_vector16_unrolled)
// cuBLAS's axpy, the vendor row (saxpy_cublas.cu).
GPUKIT_DECLARE_AXPY_LAUNCHER(launch_axpy_cublas)

#undef GPUKIT_DECLARE_AXPY_LAUNCHER

}  // namespace gpukit::blas::cuda_detail
