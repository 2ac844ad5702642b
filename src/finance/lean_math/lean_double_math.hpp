#pragma once
// Internal: double-precision exp, log, reciprocal and reciprocal square root within about 1 ulp,
// with the least arithmetic on the GPU for the ranges their callers guarantee (the `lean-math`
// Black-Scholes variant). Host-and-device, so the CPU tests measure their accuracy; on the CPU
// exp and log are these same polynomials, the reciprocals are IEEE divisions.

#include <math.h>

#include <cstdint>

#include "finance/black_scholes_math.hpp"  // math_abs, math_exp, math_log, math_sqrt
#include "finance/lean_math/lean_double_tables.hpp"
#include "gpukit/core/host_device.hpp"

namespace gpukit::finance::detail {

/// e^x within about 1 ulp for |x| < 708 (callers guarantee it): x = (64 m + j) ln2/64 + r
/// (|r| <= ln2/128, Cody-Waite with an FMA), e^x = 2^m 2^(j/64) e^r with 2^(j/64) = hi + lo from a
/// table and e^r - 1 from its Taylor series to r^5 (truncation below 2^-56 relative). On the
/// device the table is in shared memory (lean_load_tables_to_shared).
GPUKIT_HD_INLINE double lean_exp_double_in_range(double x) {
  constexpr double kShifter = 0x1.8p52;  // adding it rounds x 64 log2 e to an integer
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  const double shifted = fma(x, coefficients.exp_64_log2e, kShifter);
  const double n = shifted - kShifter;
  const double r = fma(-n, coefficients.exp_ln2_64[1], fma(-n, coefficients.exp_ln2_64[0], x));
  const double* c = coefficients.exp_series;
  const double q = fma(fma(fma(fma(c[0], r, c[1]), r, c[2]), r, 0.5), r, 1.0);
  const std::int32_t n_int = low_word(shifted);  // n, exactly (|n| < 2^17)
  const Exp2Fraction t = exp2_fraction(n_int & 63);
  const double scaled = fma(t.hi, r * q, t.lo) + t.hi;  // 2^(j/64) e^r, in [0.99, 2.02)
  // |x| < 708 keeps n >> 6 in [-1022, 1021] and the product a normal number, so scaling is an
  // addition to the exponent field.
  return double_from_words(high_word(scaled) + ((n_int >> 6) << 20),
                           static_cast<std::uint32_t>(low_word(scaled)));
}

/// e^x within about 1 ulp (lean_exp_double_in_range); |x| >= 708 and NaN take the library's exp.
GPUKIT_HD_INLINE double lean_exp_double(double x) {
  if (!(math_abs(x) < 708.0)) return math_exp(x);
  return lean_exp_double_in_range(x);
}

/// 1/x within 1 ulp for |x| in [2^-1000, 2^1000] (callers guarantee it), without __drcp_rn's
/// range check: the hardware seed y (its high word only, so e = 1 - x y takes one rounding) and
/// y (1 + e + e^2 + e^3) (error e^4, below 2^-80 for the seed's 2^-20).
GPUKIT_HD_INLINE double lean_rcp_moderate(double x) {
#if defined(__CUDA_ARCH__)
  double seed;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(seed) : "d"(x));
  const double y = double_from_words(high_word(seed), 0u);
  const double e = fma(-x, y, 1.0);
  return fma(y, fma(e, fma(e, e, e), e), y);
#else
  return 1.0 / x;
#endif
}

/// 1/sqrt(x) within about 1 ulp for x in [2^-1000, 2^1000] (callers guarantee it), without the
/// library's range handling: the hardware seed, kept to its high word so that y^2 is exact and
/// e = 1 - x y^2 takes one rounding, then one Newton step with its cubic term
/// (y (1 + e/2 + 3e^2/8), error 5e^3/16).
GPUKIT_HD_INLINE double lean_rsqrt_moderate(double x) {
#if defined(__CUDA_ARCH__)
  double seed;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(seed) : "d"(x));
  const double y = double_from_words(high_word(seed), 0u);
  const double e = fma(-x, y * y, 1.0);
  return fma(y * e, fma(e, 0.375, 0.5), y);
#else
  return 1.0 / math_sqrt(x);
#endif
}

/// ln x within about 1 ulp for normal positive x (callers guarantee it): x = 2^k z (z in
/// [0.707, 1.414)), ln x = k ln 2 - ln(1/c) + log1p(r) with 1/c and ln(1/c) from a 128-entry table
/// (shared memory on the device, see lean_load_tables_to_shared), r = z/c - 1 exact, |r| < 2^-7,
/// and log1p(r) from its Taylor series to r^8 (truncation below 2^-58 relative).
GPUKIT_HD_INLINE double lean_log_double_normal(double x) {
  const std::int32_t hi = high_word(x);
  // The high word of sqrt(2)/2 rounded down to the table's 2^13 steps: the offset splits the
  // exponent k from z and indexes the interval with the top 7 bits of what is left.
  const std::int32_t offset = hi - 0x3fe6a000;
  const std::int32_t k = offset >> 20;  // arithmetic shift: k < 0 below sqrt(2)/2
  const LogTableEntry e = log_table_entry((offset >> 13) & 127);
  const double z = double_from_words(
      static_cast<std::int32_t>(static_cast<std::uint32_t>(hi) -
                                (static_cast<std::uint32_t>(offset) & 0xfff00000u)),
      static_cast<std::uint32_t>(low_word(x)));
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  const double r = fma(z, e.inv_c, -1.0);
  // k as a double from its bits (2^52 + 2^31 + k, less the constant): an integer add and a
  // DADD, where a conversion instruction issues at a quarter of the FP64 rate.
  constexpr double kBias = 0x1.000008p52;  // 2^52 + 2^31
  const double dk =
      double_from_words(0x43300000, static_cast<std::uint32_t>(k) ^ 0x80000000u) - kBias;
  const double w = fma(dk, coefficients.log_ln2[0], e.log_hi);  // exact
  // w + r = sum + rest exactly: |w| >= |r| wherever w is not zero (the table keeps |ln(1/c)|
  // above |r| for k = 0).
  const double sum = w + r;
  const double rest = (w - sum) + r;
  const double* c = coefficients.log1p_series;
  const double p =
      fma(fma(fma(fma(fma(fma(-0.125, r, c[0]), r, c[1]), r, c[2]), r, -0.25), r, c[3]), r, -0.5);
  const double small = fma(dk, coefficients.log_ln2[1], e.log_lo);
  return sum + (rest + fma(r * r, p, small));
}

/// ln x within about 1 ulp (lean_log_double_normal); zero, subnormals, negatives, infinities and
/// NaN take the library's log.
GPUKIT_HD_INLINE double lean_log_double(double x) {
  // Normal positive x: high word in [0x00100000, 0x7fefffff] (one integer compare; NaN, the
  // infinities, zero, subnormals and negatives fall outside).
  const std::int32_t hi = high_word(x);
  if (!(static_cast<std::uint32_t>(hi) - 0x00100000u < 0x7fe00000u)) return math_log(x);
  return lean_log_double_normal(x);
}

}  // namespace gpukit::finance::detail
