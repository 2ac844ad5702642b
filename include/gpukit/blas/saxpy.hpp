#pragma once
// SAXPY / DAXPY (seed 003, "End-to-End Example: SAXPY"): out = alpha * x + y, element by
// element, for float and double arrays in host memory or on a CUDA device.
//
// Contract (the same on every backend, tested in tests/blas/saxpy_test.cpp):
// - Sizes: x, y and out hold the same number of elements, std::int64_t; 0 is valid (nothing is
//   done) and 2^31 elements and more work.
// - Aliasing: out may be y (BLAS's in-place y = alpha * x + y), and x may be y; otherwise out must
//   not overlap x or y (InvalidInput, checked from the addresses before anything runs).
// - Rounding: the CUDA backend computes each element with one fused multiply-add, so every output
//   is round(alpha * x + y), the exact value rounded once to T. The CPU backend calls OpenBLAS
//   (cblas_saxpy / cblas_daxpy), whose kernel for the CPU it runs on may fuse or not: each output
//   is then round(alpha * x + y) or round(round(alpha * x) + y). The AxpyRounding of each
//   implementation is in saxpy_reference.hpp, which checks results exactly against it.
// - alpha == 0: out = y bit for bit and x is not read, BLAS's quick return (reference BLAS and
//   OpenBLAS return early), so a NaN or an infinity in x does not reach the output then. The API
//   applies this rule itself on both backends, before any kernel runs.
// - Otherwise NaN and infinities propagate as IEEE arithmetic says: a NaN in x or y gives NaN,
//   inf - inf gives NaN, a finite result that overflows gives an infinity. Payloads are not
//   promised.
// - Determinism: the bits depend on neither the thread count nor the launch shape. On the CPU,
//   OpenBLAS's choice between the two roundings depends on the CPU model and, per element, on
//   where its vector body ends; gpukit hands it pieces of a fixed size, so that is fixed too.

#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::blas {

/// out = alpha * x + y for arrays in host memory, on the context's backend. On a CUDA context the
/// arrays move in chunks through pinned staging buffers (copies in, the default variant, copies
/// out, overlapped); on the CPU, OpenBLAS runs on fixed pieces spread over the context's OpenMP
/// threads (it sets OpenBLAS's own, process-wide thread count to 1). Throws InvalidInput for sizes
/// that differ or a forbidden overlap (the contract above), OutOfMemory with the bytes asked when a
/// staging buffer cannot be allocated, DeviceUnavailable / CudaError for the device. T is float or
/// double.
template <class T>
void axpy(const Context& context, T alpha, std::span<const T> x, std::span<const T> y,
          std::span<T> out);

/// out = alpha * x + y for `count` elements already in device memory (any alignment of T; 16-byte
/// aligned arrays, or arrays equally misaligned, take the vector path), with the default variant
/// (saxpy_variants.hpp), enqueued on `stream`; nothing waits (docs/design-notes.md, the
/// `*_on_device` convention). Throws InvalidInput on the host, before anything is enqueued, for a
/// negative count, a null pointer with count > 0, or a forbidden overlap.
template <class T>
void axpy_on_device(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                    StreamHandle stream);

/// The seed's spelling for float: y = alpha * x + y in host memory.
inline void saxpy(const Context& context, float alpha, std::span<const float> x,
                  std::span<float> y) {
  axpy<float>(context, alpha, x, y, y);
}
/// The same for double.
inline void daxpy(const Context& context, double alpha, std::span<const double> x,
                  std::span<double> y) {
  axpy<double>(context, alpha, x, y, y);
}

}  // namespace gpukit::blas
