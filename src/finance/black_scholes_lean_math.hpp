#pragma once
// Internal: the price of one option on its side with the least arithmetic we know how to do at the
// same accuracy as detail::price_option (black_scholes_math.hpp), for the `lean-math` CUDA variant.
// Kept host-and-device so the CPU tests check it against price_option on extreme books.
//
// What it saves over price_option, per option:
// - sqrt(T) and two divisions become one reciprocal square root and reciprocals:
//   1/(sigma sqrt T) = rsqrt(T) (1/sigma); F/K = F (1/K).
// - Hull's CND needs phi(d) for both d1 and d2; the identity F phi(d1) = K phi(d2) (F = S e^{-qT},
//   K = X e^{-rT}, since d1^2 - d2^2 = 2 ln(F/K)) gives both from one exponential.
// - Either side's price comes from the two small tails F N(-|d1|) and K N(-|d2|) (the large tails
//   by one subtraction each), not from four CND values; neither side loses relative accuracy to
//   the cancellation in 1 - N(d), as in price_option. The side picks two of the four terms and
//   subtracts once, the subtraction each side had when both were computed: the same bits.
// - In double, exp and log are lean_exp_double and lean_log_double (lean_math/lean_double_math.hpp:
//   within 1 ulp, measured by the CPU tests; the library's beyond their ranges), whose
//   coefficients cost no extra instructions.
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

#include <cstdint>
#include <limits>

#include "finance/black_scholes_math.hpp"
#include "finance/lean_math/lean_double_math.hpp"
#include "finance/lean_math/lean_double_tables.hpp"
#include "finance/lean_math/lean_math.hpp"

namespace gpukit::finance::detail {

/// A constant of the formula: in double from the coefficient block (constant memory on the
/// device), in float the immediate.
template <class Real>
GPUKIT_HD_INLINE Real lean_constant(double value, double LeanDoubleCoefficients::*field) {
  if constexpr (sizeof(Real) == sizeof(double)) {
    return lean_double_coefficients().*field;
  } else {
    return Real(value);
  }
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

/// The side's two terms of the price from F N(d1), F N(-d1), K N(d2) and K N(-d2), one
/// subtraction: call F N(d1) - K N(d2), put K N(-d2) - F N(-d1).
template <class Real>
GPUKIT_HD_INLINE Real side_difference(bool is_put, Real fwd_n_d1, Real fwd_n_md1, Real pv_n_d2,
                                      Real pv_n_md2) {
  return is_put ? pv_n_md2 - fwd_n_md1 : fwd_n_d1 - pv_n_d2;
}

/// inv_volatility is lean_rcp<kFast>(volatility), computed by the caller so a book-wide volatility
/// costs one reciprocal per thread, not one per option.
template <class Real, NormalCdf Cdf>
GPUKIT_HD_INLINE Real price_lean(Real spot, Real strike, Real maturity, Real rate, Real volatility,
                                 Real inv_volatility, Real dividend, bool is_put) {
  constexpr bool kFast = Cdf == NormalCdf::hull_polynomial_fast_math;
  constexpr Real kTiny = std::numeric_limits<Real>::min();  // smallest normal number
  const Real rsqrt_t = lean_rsqrt<kFast>(maturity);
  const Real vol_sqrt_t = volatility * (maturity * rsqrt_t);
  const Real rate_discount = lean_exp_product<kFast>(maturity, -rate);
  Real fwd = spot;  // F = S e^{-qT}
  if (dividend != Real(0)) fwd *= lean_exp_product<kFast>(maturity, -dividend);
  const Real pv = strike * rate_discount;  // K = X e^{-rT}
  // `!(x < tiny)` rather than `x >= tiny` so a NaN takes the formula path and gives NaN.
  if (!(maturity < kTiny) && !(volatility < kTiny) && !(vol_sqrt_t < kTiny) && strike != Real(0)) {
    // sigma >= the smallest normal keeps 1/sigma finite, sigma sqrt T >= it the product.
    const Real inv_vol_sqrt_t = rsqrt_t * inv_volatility;
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
          fwd * lean_constant<Real>(kInvSqrt2Pi, &LeanDoubleCoefficients::inv_sqrt_2pi) *
          lean_exp_product<kFast>(d1 * d1, Real(-0.5));
      const Real hull_scale = lean_constant<Real>(0.2316419, &LeanDoubleCoefficients::hull_scale);
      const Real hull_d1 = Real(1) + hull_scale * math_abs(d1);
      const Real hull_d2 = Real(1) + hull_scale * math_abs(d2);
      Real k1, k2;  // 1 / hull_d1, 1 / hull_d2
      if constexpr (sizeof(Real) == sizeof(double)) {
        // One reciprocal for both: k1 = b / (a b), k2 = a / (a b), within 2 ulp. A product past
        // 2^1000 (an |d| beyond 2^500), infinite or NaN takes one reciprocal each.
        const double product = hull_d1 * hull_d2;
        if (product < 0x1p1000) {
          const double inv_product = lean_rcp_moderate(product);
          k1 = inv_product * hull_d2, k2 = inv_product * hull_d1;
        } else {
          k1 = lean_rcp<kFast>(hull_d1), k2 = lean_rcp<kFast>(hull_d2);
        }
      } else {
        k1 = lean_rcp<kFast>(hull_d1), k2 = lean_rcp<kFast>(hull_d2);
      }
      fwd_tail = density_weight * hull_series(k1);
      pv_tail = density_weight * hull_series(k2);
    }
    const Real fwd_rest = fwd - fwd_tail, pv_rest = pv - pv_tail;
    const Real fwd_n_d1 = d1 > Real(0) ? fwd_rest : fwd_tail;   // F N(d1)
    const Real fwd_n_md1 = d1 > Real(0) ? fwd_tail : fwd_rest;  // F N(-d1)
    const Real pv_n_d2 = d2 > Real(0) ? pv_rest : pv_tail;      // K N(d2)
    const Real pv_n_md2 = d2 > Real(0) ? pv_tail : pv_rest;     // K N(-d2)
    return max_zero(side_difference(is_put, fwd_n_d1, fwd_n_md1, pv_n_d2, pv_n_md2));
  }
  return max_zero(is_put ? pv - fwd : fwd - pv);
}

template <class Real, NormalCdf Cdf>
GPUKIT_HD_INLINE Real price_lean(Real spot, Real strike, Real maturity, Real rate, Real volatility,
                                 Real dividend, bool is_put) {
  return price_lean<Real, Cdf>(spot, strike, maturity, rate, volatility,
                               lean_rcp<Cdf == NormalCdf::hull_polynomial_fast_math>(volatility),
                               dividend, is_put);
}

/// The prices of N options on their sides at once, double precision, Hull's CND: price_lean's
/// arithmetic with no branch before the end, so the N options' chains of dependent FP64
/// instructions interleave, and with the range checks of every step folded into one test for all
/// N. An option whose inputs fall outside the ranges below takes price_lean.
///
/// The fast path takes ln(F/K) as ln(S (1/X)) + (r - q) T, so the logarithm does not wait for the
/// discount factors. Its ranges: S, X, T and sigma in [2^-256, 2^256) (every product and quotient
/// below stays a normal number), |r T| and |q T| below 500 (the discount factors within 2^+-722),
/// |d1| below 37 (phi(d1) above e^-686 and Hull's product of the two (1 + 0.23 |d|) below 2^400).
/// Inside them every step is a normal number, so the primitives run without their range checks.
/// inv_volatility may be lean_rcp_moderate(volatility): it is used only inside the ranges.
template <int N, bool kDividend>
GPUKIT_HD_INLINE void price_lean_hull_double(const double (&spot)[N], const double (&strike)[N],
                                             const double (&maturity)[N], const double (&rate)[N],
                                             const double (&volatility)[N],
                                             const double (&inv_volatility)[N],
                                             const double (&dividend)[N], const bool (&is_put)[N],
                                             double (&price)[N]) {
  // High words of 2^-256 and of the range's span: a span of a power of two lets one OR of the
  // four offsets stand for four compares.
  constexpr std::uint32_t kRangeBase = (1023u - 256u) << 20;
  constexpr std::uint32_t kRangeSpan = 512u << 20;
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  // Each option's own range test decides its arithmetic, so that its bits do not depend on which
  // options share its vector (a chunk boundary or the array's length moves them).
  bool in_range = true;
  bool option_in_range[N];
  for (int i = 0; i < N; ++i) {
    const std::uint32_t offsets =
        (static_cast<std::uint32_t>(high_word(spot[i])) - kRangeBase) |
        (static_cast<std::uint32_t>(high_word(strike[i])) - kRangeBase) |
        (static_cast<std::uint32_t>(high_word(maturity[i])) - kRangeBase) |
        (static_cast<std::uint32_t>(high_word(volatility[i])) - kRangeBase);
    const double rate_time = rate[i] * maturity[i];
    double fwd = spot[i];      // F = S e^{-qT}
    double drift = rate_time;  // (r - q) T
    bool exponents_in_range = math_abs(rate_time) < 500.0;
    if constexpr (kDividend) {
      const double dividend_time = dividend[i] * maturity[i];
      fwd *= lean_exp_double_in_range(-dividend_time);
      drift -= dividend_time;
      exponents_in_range = exponents_in_range & (math_abs(dividend_time) < 500.0);
    }
    const double pv = strike[i] * lean_exp_double_in_range(-rate_time);  // K = X e^{-rT}
    const double rsqrt_t = lean_rsqrt_moderate(maturity[i]);
    const double vol_sqrt_t = volatility[i] * (maturity[i] * rsqrt_t);
    const double log_fwd_over_pv =
        lean_log_double_normal(spot[i] * lean_rcp_moderate(strike[i])) + drift;
    const double d1 = fma(log_fwd_over_pv, rsqrt_t * inv_volatility[i], 0.5 * vol_sqrt_t);
    const double d2 = d1 - vol_sqrt_t;
    option_in_range[i] = (offsets < kRangeSpan) & exponents_in_range & (math_abs(d1) < 37.0);
    in_range = in_range & option_in_range[i];
    // F phi(d1) = K phi(d2) and Hull's two reciprocals from one, as in price_lean;
    // phi(d1) from one exponential of -d1^2/2 - ln sqrt(2 pi).
    const double density_weight =
        fwd * lean_exp_double_in_range(fma(d1 * -0.5, d1, coefficients.log_inv_sqrt_2pi));
    const double hull_d1 = 1.0 + coefficients.hull_scale * math_abs(d1);
    const double hull_d2 = 1.0 + coefficients.hull_scale * math_abs(d2);
    const double inv_product = lean_rcp_moderate(hull_d1 * hull_d2);
    const double fwd_tail = density_weight * hull_series(inv_product * hull_d2);  // F N(-|d1|)
    const double pv_tail = density_weight * hull_series(inv_product * hull_d1);   // K N(-|d2|)
    const double fwd_rest = fwd - fwd_tail, pv_rest = pv - pv_tail;
    const double fwd_n_d1 = d1 > 0.0 ? fwd_rest : fwd_tail;   // F N(d1)
    const double fwd_n_md1 = d1 > 0.0 ? fwd_tail : fwd_rest;  // F N(-d1)
    const double pv_n_d2 = d2 > 0.0 ? pv_rest : pv_tail;      // K N(d2)
    const double pv_n_md2 = d2 > 0.0 ? pv_tail : pv_rest;     // K N(-d2)
    // Finite inside the ranges, so max(x, 0) needs no NaN test.
    const double difference = side_difference(is_put[i], fwd_n_d1, fwd_n_md1, pv_n_d2, pv_n_md2);
    price[i] = difference > 0.0 ? difference : 0.0;
  }
  if (!in_range) {
    for (int i = 0; i < N; ++i) {
      if (option_in_range[i]) continue;
      price[i] = price_lean<double, NormalCdf::hull_polynomial>(
          spot[i], strike[i], maturity[i], rate[i], volatility[i], dividend[i], is_put[i]);
    }
  }
}

}  // namespace gpukit::finance::detail
