#pragma once
// Internal: the CPU backend of axpy, OpenBLAS's cblas_saxpy / cblas_daxpy.

#include <cstdint>

namespace gpukit::blas::cpu_detail {

/// out = alpha * x + y for `count` elements of host memory on `threads` threads (at least 1). out
/// may be y, or x when x is y; arguments are checked by the caller.
template <class T>
void axpy_openblas(T alpha, const T* x, const T* y, T* out, std::int64_t count, int threads);

}  // namespace gpukit::blas::cpu_detail
