#pragma once
// Internal: the lean math primitives in float or double: reciprocal, reciprocal square root,
// exp of a product and log. In float fast mode on the device each is one hardware (MUFU)
// approximation; in double, lean_double_math.hpp's functions; elsewhere the IEEE reciprocal and
// the library's functions.

#include <math.h>

#include "finance/black_scholes_math.hpp"  // math_exp, math_log, math_sqrt
#include "finance/lean_math/lean_double_math.hpp"
#include "finance/lean_math/lean_double_tables.hpp"
#include "gpukit/core/host_device.hpp"

namespace gpukit::finance::detail {

// The lean primitives: single MUFU instructions in float fast mode on the device, the IEEE
// round-to-nearest reciprocal and the library's functions elsewhere.
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_rcp(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == sizeof(float)) {
    if constexpr (kFast) {
      float r;
      asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
      return r;
    } else {
      return __frcp_rn(x);
    }
  } else {
    return __drcp_rn(x);
  }
#else
  return Real(1) / x;
#endif
}

template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_rsqrt(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == sizeof(float)) {
    if constexpr (kFast) {
      float r;
      asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
      return r;
    } else {
      return rsqrtf(x);
    }
  } else {
    return rsqrt(x);
  }
#else
  return Real(1) / math_sqrt(x);
#endif
}

/// exp(a b); in float fast mode 2^(a (b log2 e)), so a `b` shared by several options (the rate)
/// or a constant costs one multiplication less.
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_exp_product(Real a, Real b) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a * (b * float(kLog2E))));
    return r;
  }
#endif
  if constexpr (sizeof(Real) == sizeof(double)) {
    return lean_exp_double(a * b);
  } else {
    return math_exp(a * b);
  }
}

/// log2(x) in fast float mode on the device, ln(x) elsewhere; lean_log_scale is the factor that
/// turns the result into ln(x) (folded by the caller into a multiplication it does anyway).
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_log_unscaled(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) {
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
  }
#endif
  if constexpr (sizeof(Real) == sizeof(double)) {
    return lean_log_double(x);
  } else {
    return math_log(x);
  }
}
template <bool kFast, class Real>
GPUKIT_HD_INLINE constexpr Real lean_log_scale() {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) return Real(kLn2);
#endif
  return Real(1);
}

}  // namespace gpukit::finance::detail
