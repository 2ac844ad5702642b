#pragma once
// Internal: the Black-Scholes-Merton arithmetic for one option, shared verbatim by the CPU loop
// and every CUDA kernel, so the backends differ only in their math libraries.

#include <math.h>

#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/finance/black_scholes.hpp"

namespace gpukit::finance::detail {

// Overloads that pick the float or double library function on both host and device.
GPUKIT_HD_INLINE float math_exp(float x) { return expf(x); }
GPUKIT_HD_INLINE double math_exp(double x) { return exp(x); }
GPUKIT_HD_INLINE float math_log(float x) { return logf(x); }
GPUKIT_HD_INLINE double math_log(double x) { return log(x); }
GPUKIT_HD_INLINE float math_sqrt(float x) { return sqrtf(x); }
GPUKIT_HD_INLINE double math_sqrt(double x) { return sqrt(x); }
GPUKIT_HD_INLINE float math_erfc(float x) { return erfcf(x); }
GPUKIT_HD_INLINE double math_erfc(double x) { return erfc(x); }
GPUKIT_HD_INLINE float math_abs(float x) { return fabsf(x); }
GPUKIT_HD_INLINE double math_abs(double x) { return fabs(x); }

// The seed SDK's fast path: in float device code, the hardware approximations (relative error
// about 2^-21 each); everywhere else (double, the CPU) the accurate functions.
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real fast_exp(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) return __expf(x);
#endif
  return math_exp(x);
}
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real fast_log(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) return __logf(x);
#endif
  return math_log(x);
}
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real fast_divide(Real a, Real b) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) return __fdividef(a, b);
#endif
  return a / b;
}

inline constexpr double kInvSqrt2Pi = 0.39894228040143267793994605993438;
inline constexpr double kInvSqrt2 = 0.70710678118654752440084436210485;

/// N(d) and N(-d).
template <class Real>
struct NormalTails {
  Real lower;  // N(d)
  Real upper;  // N(-d) = 1 - N(d)
};

/// Both tails from one evaluation on the small tail N(-|d|), so neither loses relative accuracy
/// to the cancellation in 1 - N(d).
template <class Real, NormalCdf Cdf>
GPUKIT_HD_INLINE NormalTails<Real> normal_tails(Real d) {
  constexpr bool kFast = Cdf == NormalCdf::hull_polynomial_fast_math;
  Real small_tail;
  if constexpr (Cdf == NormalCdf::erfc) {
    small_tail = Real(0.5) * math_erfc(math_abs(d) * Real(kInvSqrt2));
  } else {
    // The seed's CND (Hull): six decimal places from a 5th-degree polynomial.
    const Real k = fast_divide<kFast>(Real(1), Real(1) + Real(0.2316419) * math_abs(d));
    small_tail =
        Real(kInvSqrt2Pi) * fast_exp<kFast>(Real(-0.5) * d * d) *
        (k * (Real(0.31938153) +
              k * (Real(-0.356563782) +
                   k * (Real(1.781477937) + k * (Real(-1.821255978) + k * Real(1.330274429))))));
  }
  const Real large_tail = Real(1) - small_tail;
  return d > 0 ? NormalTails<Real>{large_tail, small_tail}
               : NormalTails<Real>{small_tail, large_tail};
}

/// One option's results on its own side.
template <class Real>
struct OptionResult {
  Real price;
  Real delta, gamma, vega, theta, rho;
};

/// max(x, 0) that keeps a NaN (and never returns -0).
template <class Real>
GPUKIT_HD_INLINE Real max_zero(Real x) {
  return x > Real(0) ? x : (x != x ? x : Real(0));
}

/// Prices one option on its side (`is_put`); Greeks only when `kGreeks` (the compiler drops them
/// otherwise). Each side's expressions are the ones both sides shared when every option was priced
/// as a call and a put, so a side's bits do not depend on the other being asked for.
template <class Real, NormalCdf Cdf, bool kGreeks>
GPUKIT_HD_INLINE OptionResult<Real> price_option(Real spot, Real strike, Real maturity, Real rate,
                                                 Real volatility, Real dividend, bool is_put) {
  constexpr bool kFast = Cdf == NormalCdf::hull_polynomial_fast_math;
  const Real sqrt_t = math_sqrt(maturity);
  const Real vol_sqrt_t = volatility * sqrt_t;
  const Real rate_discount = fast_exp<kFast>(-rate * maturity);
  // Most books pay no dividend: exp(-0) is exactly 1, so skipping it changes no result and saves
  // an exponential per option where the kernels are arithmetic-bound.
  const Real dividend_discount =
      dividend != Real(0) ? fast_exp<kFast>(-dividend * maturity) : Real(1);
  const Real fwd_spot = spot * dividend_discount;  // S e^{-qT}
  const Real pv_strike = strike * rate_discount;   // X e^{-rT}
  OptionResult<Real> r{};
  // `!= 0` rather than `> 0` so a NaN input takes the formula path and gives NaN.
  if (vol_sqrt_t != Real(0) && strike != Real(0)) {
    const Real d1 =
        fast_divide<kFast>(fast_log<kFast>(fast_divide<kFast>(fwd_spot, pv_strike)), vol_sqrt_t) +
        Real(0.5) * vol_sqrt_t;
    const Real d2 = d1 - vol_sqrt_t;
    const NormalTails<Real> n1 = normal_tails<Real, Cdf>(d1);
    const NormalTails<Real> n2 = normal_tails<Real, Cdf>(d2);
    r.price = is_put ? max_zero(pv_strike * n2.upper - fwd_spot * n1.upper)
                     : max_zero(fwd_spot * n1.lower - pv_strike * n2.lower);
    if constexpr (kGreeks) {
      const Real density = Real(kInvSqrt2Pi) * math_exp(Real(-0.5) * d1 * d1);
      const Real time_decay = -fwd_spot * density * volatility / (Real(2) * sqrt_t);
      r.delta = is_put ? -dividend_discount * n1.upper : dividend_discount * n1.lower;
      r.gamma = dividend_discount * density / (spot * vol_sqrt_t);
      r.vega = fwd_spot * density * sqrt_t;
      r.theta = is_put ? time_decay + rate * pv_strike * n2.upper - dividend * fwd_spot * n1.upper
                       : time_decay - rate * pv_strike * n2.lower + dividend * fwd_spot * n1.lower;
      r.rho = is_put ? -maturity * pv_strike * n2.upper : maturity * pv_strike * n2.lower;
    }
  } else {
    // No diffusion left (or a zero strike): the discounted intrinsic value of the forward.
    const bool in_the_money = is_put ? pv_strike > fwd_spot : fwd_spot > pv_strike;
    r.price = is_put ? max_zero(pv_strike - fwd_spot) : max_zero(fwd_spot - pv_strike);
    if constexpr (kGreeks) {
      r.delta = in_the_money ? (is_put ? -dividend_discount : dividend_discount) : Real(0);
      r.gamma = Real(0);
      r.vega = Real(0);
      r.theta = in_the_money ? (is_put ? rate * pv_strike - dividend * fwd_spot
                                       : dividend * fwd_spot - rate * pv_strike)
                             : Real(0);
      r.rho = in_the_money ? (is_put ? -maturity * pv_strike : maturity * pv_strike) : Real(0);
    }
  }
  return r;
}

template <class Real>
GPUKIT_HD_INLINE Real parameter_at(const PerOption<Real>& p, std::int64_t i) {
  return p.values != nullptr ? p.values[i] : p.scalar;
}

/// Whether option `i` is a put.
GPUKIT_HD_INLINE bool is_put_at(const PerOption<std::uint8_t>& is_put, std::int64_t i) {
  return parameter_at(is_put, i) != 0;
}

/// Writes the requested outputs of option `i`.
template <class Real, bool kGreeks>
GPUKIT_HD_INLINE void store_result(const BlackScholesOutputs<Real>& out, std::int64_t i,
                                   const OptionResult<Real>& r) {
  if (out.price) out.price[i] = r.price;
  if constexpr (kGreeks) {
    if (out.delta) out.delta[i] = r.delta;
    if (out.gamma) out.gamma[i] = r.gamma;
    if (out.vega) out.vega[i] = r.vega;
    if (out.theta) out.theta[i] = r.theta;
    if (out.rho) out.rho[i] = r.rho;
  }
}

/// Loads, prices and stores option `i` (the scalar path of every backend).
template <class Real, NormalCdf Cdf, bool kGreeks>
GPUKIT_HD_INLINE void price_and_store(const BlackScholesInputs<Real>& in,
                                      const BlackScholesOutputs<Real>& out, std::int64_t i) {
  const OptionResult<Real> r = price_option<Real, Cdf, kGreeks>(
      in.spot[i], in.strike[i], in.maturity[i], parameter_at(in.rate, i),
      parameter_at(in.volatility, i), parameter_at(in.dividend, i), is_put_at(in.is_put, i));
  store_result<Real, kGreeks>(out, i, r);
}

}  // namespace gpukit::finance::detail
