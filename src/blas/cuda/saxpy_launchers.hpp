#pragma once
// Internal: the CUDA axpy launchers (defined in the .cu files of this folder), callable from plain
// C++. Each enqueues out = alpha * x + y for `count` elements of device memory on `stream` and
// returns without waiting; out may be y, or overlap neither input.

#include "gpukit/blas/saxpy_variants.hpp"

namespace gpukit::blas::cuda_detail {

// The ladder (saxpy_kernels.cu).
template <class T>
SaxpyLaunch<T> launch_axpy_seed;
template <class T>
SaxpyLaunch<T> launch_axpy_grid_stride;
template <class T>
SaxpyLaunch<T> launch_axpy_vector16;
template <class T>
SaxpyLaunch<T> launch_axpy_vector16_unrolled;
// cuBLAS's axpy, the vendor row (saxpy_cublas.cu).
template <class T>
SaxpyLaunch<T> launch_axpy_cublas;

}  // namespace gpukit::blas::cuda_detail
