#pragma once
// Arithmetic whose rounding the compiler may not change, for code compiled for both the CPU and
// CUDA kernels that must give the same bits on both (rng's normal transforms, the Monte Carlo
// paths and statistics).
//
// add, sub, mul and div round once each, on both sides: on the device through the _rn
// intrinsics, which nvcc never contracts into fused multiply-adds; on the CPU as plain operators,
// which the including code must compile without contraction (g++ in ISO C++ mode does not
// contract; gpukit_rng's CMake target passes -ffp-contract=off on to its users, and the Monte
// Carlo CPU file sets it too).
//
// mul_add is the one operation that does NOT round alike: a * b + c is fused (one rounding) on
// the device, and a rounded product plus a rounded sum (two roundings) on the CPU. The CPU does
// not assume an FMA instruction (std::fma without one is a slow library call), and the device
// keeps its fused form because it is both cheaper and the arithmetic the kernels were measured
// and pinned with. Code that uses it therefore agrees between the backends within a rounding
// bound, not to the bit; each backend alone is deterministic.

#include "gpukit/core/host_device.hpp"

namespace gpukit::rounded {

GPUKIT_HD_INLINE float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUKIT_HD_INLINE double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

GPUKIT_HD_INLINE float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
GPUKIT_HD_INLINE double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

GPUKIT_HD_INLINE float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUKIT_HD_INLINE double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

GPUKIT_HD_INLINE float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

GPUKIT_HD_INLINE double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

/// a * b + c: fused on the device, a rounded product then a rounded sum on the CPU (see above).
GPUKIT_HD_INLINE float mul_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return a * b + c;
#endif
}
GPUKIT_HD_INLINE double mul_add(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return a * b + c;
#endif
}

}  // namespace gpukit::rounded
