#pragma once
// pde's building blocks, internal but installed (detail/: not the public API; it may change with
// any version; see ../../detail/poisson_building_blocks.hpp): what the Poisson solvers on CUDA
// (pde's variants on one device, gpukit_scale_out's cuFFT slabs) share of cuFFT: its types and
// executions per precision, and its status as a gpukit error (GPUKIT_CUFFT_CHECK). Host code
// only, but it includes cufft.h, so it is a .cuh: a user's C++ never meets a CUDA header.

#include <cufft.h>

#define GPUKIT_CUFFT_CHECK(call)                                                           \
  do {                                                                                     \
    const cufftResult gpukit_cufft_status_ = (call);                                       \
    if (gpukit_cufft_status_ != CUFFT_SUCCESS)                                             \
      ::gpukit::pde::cuda_detail::throw_cufft_error(gpukit_cufft_status_, #call, __FILE__, \
                                                    __LINE__);                             \
  } while (0)

namespace gpukit::pde::cuda_detail {

/// Throws a cuFFT status as CudaError naming the call, file and line (OutOfMemory for
/// CUFFT_ALLOC_FAILED); defined in gpukit_pde (src/pde/cuda/poisson_device_ops.cu).
[[noreturn]] void throw_cufft_error(cufftResult status, const char* call, const char* file,
                                    int line);

/// cuFFT's calls per precision: Cufft<float> (C2C, R2C, C2R) and Cufft<double> (Z2Z, D2Z, Z2D).
template <class Real>
struct Cufft;
template <>
struct Cufft<float> {
  using Complex = cufftComplex;  // float2
  static constexpr cufftType c2c = CUFFT_C2C, r2c = CUFFT_R2C, c2r = CUFFT_C2R;
  static cufftResult forward(cufftHandle p, Complex* in, Complex* out) {
    return cufftExecC2C(p, in, out, CUFFT_FORWARD);
  }
  static cufftResult inverse(cufftHandle p, Complex* in, Complex* out) {
    return cufftExecC2C(p, in, out, CUFFT_INVERSE);
  }
  static cufftResult real_to_complex(cufftHandle p, float* in, Complex* out) {
    return cufftExecR2C(p, in, out);
  }
  static cufftResult complex_to_real(cufftHandle p, Complex* in, float* out) {
    return cufftExecC2R(p, in, out);
  }
};
template <>
struct Cufft<double> {
  using Complex = cufftDoubleComplex;  // double2
  static constexpr cufftType c2c = CUFFT_Z2Z, r2c = CUFFT_D2Z, c2r = CUFFT_Z2D;
  static cufftResult forward(cufftHandle p, Complex* in, Complex* out) {
    return cufftExecZ2Z(p, in, out, CUFFT_FORWARD);
  }
  static cufftResult inverse(cufftHandle p, Complex* in, Complex* out) {
    return cufftExecZ2Z(p, in, out, CUFFT_INVERSE);
  }
  static cufftResult real_to_complex(cufftHandle p, double* in, Complex* out) {
    return cufftExecD2Z(p, in, out);
  }
  static cufftResult complex_to_real(cufftHandle p, Complex* in, double* out) {
    return cufftExecZ2D(p, in, out);
  }
};

}  // namespace gpukit::pde::cuda_detail
