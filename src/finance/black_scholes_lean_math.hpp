#pragma once
// Internal: call and put of one option with the least arithmetic we know how to do at the same
// accuracy as detail::price_option (black_scholes_math.hpp), for the `lean-math` CUDA variant.
// Kept host-and-device so the CPU tests check it against price_option on extreme books.
//
// What it saves over price_option, per option:
// - sqrt(T) and two divisions become one reciprocal square root and reciprocals:
//   1/(sigma sqrt T) = rsqrt(T) (1/sigma); F/K = F (1/K).
// - Hull's CND needs phi(d) for both d1 and d2; the identity F phi(d1) = K phi(d2) (F = S e^{-qT},
//   K = X e^{-rT}, since d1^2 - d2^2 = 2 ln(F/K)) gives both from one exponential.
// - Both prices come from the two small tails F N(-|d1|) and K N(-|d2|) (the large tails by one
//   subtraction each), not from four CND values; neither price loses relative accuracy to the
//   cancellation in 1 - N(d), as in price_option.
// - In double, exp and log are lean_exp_double and lean_log_double below (within 1 ulp, measured
//   by the CPU tests; the library's beyond their ranges), whose coefficients cost no extra
//   instructions.
// - Options with sigma, T or sigma sqrt T below the smallest normal number are priced as the
//   discounted intrinsic value: the formula differs from it by at most 0.4 sigma sqrt T
//   max(F, K), below any rounding of the price. (price_option does so for exact zeros only.)
// NaN inputs give NaN outputs, as in price_option.
//
// The float fast mode (NormalCdf::hull_polynomial_fast_math) on the GPU uses the single hardware
// instructions behind __expf and __logf and the approximate reciprocal and reciprocal square root
// (each within 2 ulp, about 2^-22 relative), without __expf's handling of results below 2^-126:
// those are flushed to zero, below the price's rounding.

#include <math.h>

#include <bit>
#include <cstdint>
#include <limits>

#include "finance/black_scholes_math.hpp"

namespace gpukit::finance::detail {

template <class Real>
struct CallPut {
  Real call, put;
};

inline constexpr double kLog2E = 1.4426950408889634073599246810019;
inline constexpr double kLn2 = 0.69314718055994530941723212145818;

// ---------------------------------------------------------------------------------------------
// Double exp and log for the lean path. The FP64 units are not what limits a double kernel: each
// 64-bit constant of libdevice's polynomials is an immediate that costs two move instructions
// next to its DFMA, so the issue slots run out first. These functions read their coefficients
// from constant memory (one DFMA operand) and skip the range handling for arguments that never
// need it; anything else goes to the library.
struct LeanDoubleCoefficients {
  double exp_taylor[14];  // 1/k!, k = 0..13
  double log_series[7];   // fdlibm's e_log.c Lg1..Lg7 (log(1+f) = f - f^2/2 + s(f^2/2 + R(s^2)))
  double hull[5];         // Hull's polynomial, highest power first
  double exp_ln2[2];      // ln 2 = hi + lo, hi to full precision (the reduction's FMA is exact)
  double log_ln2[2];      // ln 2 = hi + lo, hi with 32 trailing zero bits (k hi is exact)
};
inline constexpr LeanDoubleCoefficients kLeanDoubleCoefficients = {
    {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
     1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800},
    {6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
     2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
     1.479819860511658591e-01},
    {1.330274429, -1.821255978, 1.781477937, -0.356563782, 0.31938153},
    {0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56},
    {6.93147180369123816490e-01, 1.90821492927058770002e-10}};
#if defined(__CUDACC__)
// A __constant__ copy: the compiler cannot fold its values into immediates.
static __constant__ LeanDoubleCoefficients kLeanDoubleCoefficientsOnDevice =
    kLeanDoubleCoefficients;
#endif
GPUKIT_HD_INLINE const LeanDoubleCoefficients& lean_double_coefficients() {
#if defined(__CUDA_ARCH__)
  return kLeanDoubleCoefficientsOnDevice;
#else
  return kLeanDoubleCoefficients;
#endif
}

GPUKIT_HD_INLINE double double_from_words(std::int32_t hi, std::uint32_t lo) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(hi, static_cast<int>(lo));
#else
  return std::bit_cast<double>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(hi)) << 32) |
                               lo);
#endif
}
GPUKIT_HD_INLINE std::int32_t high_word(double x) {
#if defined(__CUDA_ARCH__)
  return __double2hiint(x);
#else
  return static_cast<std::int32_t>(std::bit_cast<std::uint64_t>(x) >> 32);
#endif
}
GPUKIT_HD_INLINE std::int32_t low_word(double x) {
#if defined(__CUDA_ARCH__)
  return __double2loint(x);
#else
  return static_cast<std::int32_t>(std::bit_cast<std::uint64_t>(x) & 0xffffffffu);
#endif
}

/// e^x within about 1 ulp: x = n ln 2 + r (|r| <= ln2 / 2, Cody-Waite with an FMA), e^r from its
/// Taylor series to r^13 (truncation below 2^-57 relative), times 2^n. |x| >= 708 and NaN take
/// the library's exp.
GPUKIT_HD_INLINE double lean_exp_double(double x) {
  if (!(math_abs(x) < 708.0)) return math_exp(x);
  constexpr double kShifter = 0x1.8p52;  // adding it rounds x log2 e to an integer
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  const double shifted = fma(x, kLog2E, kShifter);
  const double n = shifted - kShifter;
  const double r = fma(-n, coefficients.exp_ln2[1], fma(-n, coefficients.exp_ln2[0], x));
  const double* c = coefficients.exp_taylor;
  double p = c[13];
  for (int k = 12; k >= 0; --k) p = fma(p, r, c[k]);
  // |n| <= 1022: 2^n is a normal number, built from its exponent bits.
  return p * double_from_words((low_word(shifted) + 1023) << 20, 0);
}

/// ln x within about 1 ulp for normal positive x (fdlibm's e_log.c algorithm, its coefficients);
/// zero, subnormals, negatives, infinities and NaN take the library's log.
GPUKIT_HD_INLINE double lean_log_double(double x) {
  if (!(x >= std::numeric_limits<double>::min() && x <= std::numeric_limits<double>::max())) {
    return math_log(x);
  }
  // x = 2^k m with m in [sqrt(2)/2, sqrt(2)).
  const std::int32_t hi = high_word(x);
  std::int32_t k = (hi >> 20) - 1023;
  std::int32_t m_hi = (hi & 0x000fffff) | 0x3ff00000;
  if (m_hi >= 0x3ff6a09f) m_hi -= 0x00100000, k += 1;
  const double f = double_from_words(m_hi, static_cast<std::uint32_t>(low_word(x))) - 1.0;
  const double half_f_squared = 0.5 * f * f;
#if defined(__CUDA_ARCH__)
  const double s = f * __drcp_rn(2.0 + f);  // 1 ulp here moves the result by < 0.05 ulp
#else
  const double s = f / (2.0 + f);
#endif
  const double z = s * s;
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  const double* c = coefficients.log_series;
  double r = c[6];
  for (int i = 5; i >= 0; --i) r = fma(r, z, c[i]);
  r *= z;
  const double dk = static_cast<double>(k);
  return dk * coefficients.log_ln2[0] -
         ((half_f_squared - (s * (half_f_squared + r) + dk * coefficients.log_ln2[1])) - f);
}

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

/// Hull's polynomial without phi: N(-|d|) = phi(d) hull_series(1 / (1 + 0.2316419 |d|)).
template <class Real>
GPUKIT_HD_INLINE Real hull_series(Real k) {
  if constexpr (sizeof(Real) == sizeof(double)) {
    const double* c = lean_double_coefficients().hull;
    return k * fma(fma(fma(fma(c[0], k, c[1]), k, c[2]), k, c[3]), k, c[4]);
  } else {
    return k * (Real(0.31938153) +
                k * (Real(-0.356563782) +
                     k * (Real(1.781477937) + k * (Real(-1.821255978) + k * Real(1.330274429)))));
  }
}

template <class Real, NormalCdf Cdf>
GPUKIT_HD_INLINE CallPut<Real> price_call_put_lean(Real spot, Real strike, Real maturity, Real rate,
                                                   Real volatility, Real dividend) {
  constexpr bool kFast = Cdf == NormalCdf::hull_polynomial_fast_math;
  constexpr Real kTiny = std::numeric_limits<Real>::min();  // smallest normal number
  const Real rsqrt_t = lean_rsqrt<kFast>(maturity);
  const Real vol_sqrt_t = volatility * (maturity * rsqrt_t);
  const Real rate_discount = lean_exp_product<kFast>(maturity, -rate);
  const Real dividend_discount =
      dividend != Real(0) ? lean_exp_product<kFast>(maturity, -dividend) : Real(1);
  const Real fwd = spot * dividend_discount;  // F = S e^{-qT}
  const Real pv = strike * rate_discount;     // K = X e^{-rT}
  // `!(x < tiny)` rather than `x >= tiny` so a NaN takes the formula path and gives NaN.
  if (!(maturity < kTiny) && !(volatility < kTiny) && !(vol_sqrt_t < kTiny) && strike != Real(0)) {
    // sigma >= the smallest normal keeps 1/sigma finite, sigma sqrt T >= it the product.
    const Real inv_vol_sqrt_t = rsqrt_t * lean_rcp<kFast>(volatility);
    const Real ratio = fwd * lean_rcp<kFast>(pv);  // F / K
    const Real d1 =
        lean_log_unscaled<kFast>(ratio) * (lean_log_scale<kFast, Real>() * inv_vol_sqrt_t) +
        Real(0.5) * vol_sqrt_t;
    const Real d2 = d1 - vol_sqrt_t;
    Real fwd_tail, pv_tail;  // F N(-|d1|), K N(-|d2|)
    if constexpr (Cdf == NormalCdf::erfc) {
      fwd_tail = fwd * (Real(0.5) * math_erfc(math_abs(d1) * Real(kInvSqrt2)));
      pv_tail = pv * (Real(0.5) * math_erfc(math_abs(d2) * Real(kInvSqrt2)));
    } else {
      // F phi(d1) = K phi(d2). Where phi(d1) underflows, F phi(d1) < F 2^-126 (float): below
      // any price's rounding, so evaluating at d1 alone loses nothing.
      const Real density_weight =
          fwd * Real(kInvSqrt2Pi) * lean_exp_product<kFast>(d1 * d1, Real(-0.5));
      fwd_tail =
          density_weight * hull_series(lean_rcp<kFast>(Real(1) + Real(0.2316419) * math_abs(d1)));
      pv_tail =
          density_weight * hull_series(lean_rcp<kFast>(Real(1) + Real(0.2316419) * math_abs(d2)));
    }
    const Real fwd_rest = fwd - fwd_tail, pv_rest = pv - pv_tail;
    const Real fwd_n_d1 = d1 > Real(0) ? fwd_rest : fwd_tail;   // F N(d1)
    const Real fwd_n_md1 = d1 > Real(0) ? fwd_tail : fwd_rest;  // F N(-d1)
    const Real pv_n_d2 = d2 > Real(0) ? pv_rest : pv_tail;      // K N(d2)
    const Real pv_n_md2 = d2 > Real(0) ? pv_tail : pv_rest;     // K N(-d2)
    return {max_zero(fwd_n_d1 - pv_n_d2), max_zero(pv_n_md2 - fwd_n_md1)};
  }
  return {max_zero(fwd - pv), max_zero(pv - fwd)};
}

}  // namespace gpukit::finance::detail
