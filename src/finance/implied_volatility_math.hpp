#pragma once
// Internal: the implied volatility arithmetic for one row, shared verbatim by the CPU loop and the
// CUDA kernel (one arithmetic; the backends differ only in their math libraries: erfc, exp, log,
// and erfcx and the inverse normal CDF, which CUDA provides and the host gets from below).
//
// Lognormal models: Peter Jaeckel, "Let's Be Rational" (Wilmott, January 2015; revised 2017).
// A price is normalised to beta = B / sqrt(F K) (B the undiscounted price) and x = ln(F/K);
// put-call parity maps every row to an out-of-the-money call (x <= 0, time value only), whose
// normalised price b(x, s) (s = sigma sqrt(T)) is inverted: a rational initial guess on four
// branches (a transformed lower map, two rational cubic middle segments, a transformed upper map),
// then Householder steps of third order on an objective chosen per branch so that each step is
// accurate where b is tiny or near its bound. b is evaluated on four regions so that it keeps its
// relative accuracy: an asymptotic expansion for h = x/s very negative, an expansion in t = s/2
// for small t, and two closed forms through erfc / erfcx, arranged to neither overflow nor cancel.
// Normal (Bachelier) model: Peter Jaeckel, "Implied Normal Volatility" (Wilmott, March 2017): the
// out-of-the-money price as a function of z = -|F - K| / (sigma sqrt T), inverted by his rational
// initial guess and one step of third order.
//
// The accuracy each row reaches is stated (and tested) in implied_volatility_reference.hpp: the
// error in sigma is a few units of rounding of Real in sigma plus the price's own rounding carried
// through 1/vega. The analysis behind the arithmetic: a relative error d in b moves s by d b / b',
// and s b' / b grows like h^2 where the regions that lose accuracy to cancellation lose it (the
// small-t series and the asymptotic expansion lose about h^2 units), so the losses stay inside
// the contract in either precision. Every step is done in Real: float rows in float arithmetic,
// which meets float's contract on every branch (measured: worst 0.15 of the bound), so no branch
// is done in double; the one exception is the host's inverse normal CDF (AS 241 below, evaluated
// in double for both), which only the initial guesses use.

#include <math.h>

#include <cstdint>
#include <limits>

#include "finance/black_scholes_math.hpp"  // math_exp, math_log, math_sqrt, math_erfc, parameter_at
#include "gpukit/core/host_device.hpp"
#include "gpukit/finance/implied_volatility.hpp"

namespace gpukit::finance::detail {

GPUKIT_HD_INLINE float math_log1p(float x) { return log1pf(x); }
GPUKIT_HD_INLINE double math_log1p(double x) { return log1p(x); }
GPUKIT_HD_INLINE float math_expm1(float x) { return expm1f(x); }
GPUKIT_HD_INLINE double math_expm1(double x) { return expm1(x); }
GPUKIT_HD_INLINE float math_cbrt(float x) { return cbrtf(x); }
GPUKIT_HD_INLINE double math_cbrt(double x) { return cbrt(x); }
GPUKIT_HD_INLINE float math_fma(float a, float b, float c) { return fmaf(a, b, c); }
GPUKIT_HD_INLINE double math_fma(double a, double b, double c) { return fma(a, b, c); }
GPUKIT_HD_INLINE bool math_isfinite(float x) { return isfinite(x); }
GPUKIT_HD_INLINE bool math_isfinite(double x) { return isfinite(x); }

template <class Real>
GPUKIT_HD_INLINE Real max_of(Real a, Real b) {
  return a > b ? a : b;
}

inline constexpr double kPi = 3.14159265358979323846264338327950288;
inline constexpr double kSqrt2Pi = 2.50662827463100050241576528481104525;
inline constexpr double kSqrtPiOver2 = 1.25331413731550025120788264240552263;
inline constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876373;
inline constexpr double kInvSqrtPi = 0.56418958354775628694807945156077259;
inline constexpr double kSqrt3 = 1.73205080756887729352744634150587237;

// ------------------------------------------------------------------------------------------------
// Special functions

/// Phi(z), the standard normal CDF, through erfc so that the lower tail keeps its relative
/// accuracy.
template <class Real>
GPUKIT_HD_INLINE Real normal_cdf(Real z) {
  return Real(0.5) * math_erfc(-z * Real(kInvSqrt2));
}

/// Where erfcx switches to its asymptotic series on the host: erfc(y) is still a normal number
/// there and exp(y^2) finite.
template <class Real>
inline constexpr Real kErfcxAsymptoticFrom = sizeof(Real) == sizeof(float) ? Real(9) : Real(26);

/// erfcx(y) = exp(y^2) erfc(y), for y >= -1 (all the callers need). CUDA has it; the host
/// computes exp(y^2) erfc(y) with y^2 split exactly into hi + lo (so the exponent carries no
/// rounding: exp(hi) (1 + lo)), and for large y the asymptotic series
///   erfcx(y) = 1/(y sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2 y^2)^k,
/// whose terms below the switch are under Real's rounding after 8 of them.
template <class Real>
GPUKIT_HD_INLINE Real scaled_erfc(Real y) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == sizeof(float)) {
    return erfcxf(y);
  } else {
    return erfcx(y);
  }
#else
  if (y < kErfcxAsymptoticFrom<Real>) {
    const Real hi = y * y;
    const Real lo = math_fma(y, y, -hi);
    return math_erfc(y) * math_exp(hi) * (Real(1) + lo);
  }
  const Real w = Real(1) / (Real(2) * y * y);
  Real sum = Real(1);
  // Horner from the 8th term down: term_k / term_{k-1} = -(2k-1) w.
  for (int k = 8; k >= 1; --k) sum = Real(1) - Real(2 * k - 1) * w * sum;
  return sum / (y * Real(1.7724538509055160272981674833411));  // sqrt(pi)
#endif
}

/// Phi^-1(p) for 0 < p <= 1/2 (all the callers need). CUDA has it; the host evaluates Wichura's
/// algorithm AS 241 (Applied Statistics 37, 1988: PPND16, relative accuracy about 1e-16) in
/// double. Only the initial guesses use it: the Householder steps remove its error.
template <class Real>
GPUKIT_HD_INLINE Real inverse_normal_cdf(Real p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == sizeof(float)) {
    return normcdfinvf(p);
  } else {
    return normcdfinv(p);
  }
#else
  const double q = static_cast<double>(p) - 0.5;
  if (q >= -0.425) {
    const double r = 0.180625 - q * q;
    return static_cast<Real>(
        q *
        (((((((2509.0809287301226727 * r + 33430.575583588128105) * r + 67265.770927008700853) * r +
             45921.953931549871457) *
                r +
            13731.693765509461125) *
               r +
           1971.5909503065514427) *
              r +
          133.14166789178437745) *
             r +
         3.3871328727963666080) /
        (((((((5226.4952788528545610 * r + 28729.085735721942674) * r + 39307.895800092710610) * r +
             21213.794301586595867) *
                r +
            5394.1960214247511077) *
               r +
           687.18700749205790830) *
              r +
          42.313330701600911252) *
             r +
         1.0));
  }
  double r = sqrt(-log(static_cast<double>(p)));
  double value;
  if (r <= 5) {
    r -= 1.6;
    value = (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r +
                  2.41780725177450611770e-1) *
                     r +
                 1.27045825245236838258) *
                    r +
                3.64784832476320460504) *
                   r +
               5.76949722146069140550) *
                  r +
              4.63033784615654529590) *
                 r +
             1.42343711074968357734) /
            (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r +
                  1.51986665636164571966e-2) *
                     r +
                 1.48103976427480074590e-1) *
                    r +
                6.89767334985100004550e-1) *
                   r +
               1.67638483018380384940) *
                  r +
              2.05319162663775882187) *
                 r +
             1.0);
  } else {
    r -= 5;
    value = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r +
                  1.24266094738807843860e-3) *
                     r +
                 2.65321895265761230930e-2) *
                    r +
                2.96560571828504891230e-1) *
                   r +
               1.78482653991729133580) *
                  r +
              5.46378491116411436990) *
                 r +
             6.65790464350110377720) /
            (((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r +
                  1.84631831751005468180e-5) *
                     r +
                 7.86869131145613259100e-4) *
                    r +
                1.48753612908506148525e-2) *
                   r +
               1.36929880922735805310e-1) *
                  r +
              5.99832206555887937690e-1) *
                 r +
             1.0);
  }
  return static_cast<Real>(-value);
#endif
}

// ------------------------------------------------------------------------------------------------
// The normalised Black function of an out-of-the-money call, x = ln(F/K) <= 0, s = sigma sqrt(T):
//   b(x, s) = e^{x/2} Phi(h + t) - e^{-x/2} Phi(h - t),   h = x / s, t = s / 2,
// and with Y(z) = Phi(z) / phi(z) (so Y' = 1 + z Y):
//   b(x, s) = e^{-(h^2 + t^2)/2} / sqrt(2 pi) [Y(h + t) - Y(h - t)].

/// The thresholds of the regions (Jaeckel's): h below kAsymptoticBelow takes the asymptotic
/// expansion, t below kSmallT the series in t, h + t above kUpperRegion the closed form whose first
/// term dominates.
inline constexpr double kAsymptoticBelow = -10;
inline constexpr double kSmallT = 0.21022410381342863;  // 2 eps(double)^(1/16)
inline constexpr double kUpperRegion = 0.85;

/// (2k-1)!! and binomial coefficients as compile-time constants.
constexpr double odd_double_factorial(int k) {
  double f = 1;
  for (int j = 1; j <= k; ++j) f *= 2 * j - 1;
  return f;
}
constexpr double binomial(int n, int r) {
  double c = 1;
  for (int j = 1; j <= r; ++j) c = c * (n - r + j) / j;
  return c;
}

/// The asymptotic expansion's coefficients. With Y(z) ~ -1/z sum_k (-1)^k (2k-1)!! z^{-2k} for
/// z -> -inf, the difference Y(h+t) - Y(h-t) is, term by term,
///   (-1)^k (2k-1)!! [(h-t)^{-n} - (h+t)^{-n}],  n = 2k+1,
///   = (t/r) 2 (-1)^k (2k-1)!! q^k sum_m C(n, 2m+1) e^m,   r = h^2 - t^2, q = h^2/r^2, e = t^2/h^2,
/// a form without cancellation between the two arguments.
template <int k, int m>
inline constexpr double kAsymptoticCoefficient = 2 * (k % 2 == 0 ? 1 : -1) *
                                                 odd_double_factorial(k) *
                                                 binomial(2 * k + 1, 2 * m + 1);

template <class Real, int k, int m>
GPUKIT_HD_INLINE Real asymptotic_inner(Real e) {
  if constexpr (m == k) {
    return Real(kAsymptoticCoefficient<k, m>);
  } else {
    return Real(kAsymptoticCoefficient<k, m>) + e * asymptotic_inner<Real, k, m + 1>(e);
  }
}

template <class Real, int k, int kTerms>
GPUKIT_HD_INLINE Real asymptotic_sum(Real q, Real e) {
  if constexpr (k == kTerms - 1) {
    return asymptotic_inner<Real, k, 0>(e);
  } else {
    return asymptotic_inner<Real, k, 0>(e) + q * asymptotic_sum<Real, k + 1, kTerms>(q, e);
  }
}

/// Terms of the asymptotic expansion: for h < -10 the k-th is below (2k-1)!! / 10^{2k} of the
/// first, so 17 reach double's rounding and 8 float's.
template <class Real>
inline constexpr int kAsymptoticTerms = sizeof(Real) == sizeof(float) ? 8 : 17;

/// Region 1: h < -10 and t small against |h|. `vega` is e^{-(h^2+t^2)/2} / sqrt(2 pi), which
/// every region shares with b' (normalised_black).
template <class Real>
GPUKIT_HD_INLINE Real black_asymptotic(Real h, Real t, Real vega) {
  const Real e = (t / h) * (t / h);
  const Real r = (h + t) * (h - t);
  const Real q = (h / r) * (h / r);
  const Real sum = asymptotic_sum<Real, 0, kAsymptoticTerms<Real>>(q, e);
  return vega * (t / r) * sum;
}

/// Terms of the series in t: the k-th against the first is below t^{2k} / (2k+1)!! at h = 0 and
/// smaller for h < 0, so with t < 0.21, 7 terms reach double's rounding and 4 float's.
template <class Real>
inline constexpr int kSmallTTerms = sizeof(Real) == sizeof(float) ? 4 : 7;

/// Region 2: t < 0.21. Y(h+t) - Y(h-t) = 2 sum_k Y^{(2k+1)}(h) t^{2k+1} / (2k+1)!, with the
/// derivatives from Y' = 1 + h Y by the recurrence Y^{(n+1)} = h Y^{(n)} + n Y^{(n-1)}. Every
/// derivative of Y is positive, so the sum does not cancel; 1 + h Y loses about h^2 units to
/// cancellation, which the contract allows (see the file's head).
template <class Real>
GPUKIT_HD_INLINE Real black_small_t(Real h, Real t, Real vega) {
  const Real y0 = Real(kSqrtPiOver2) * scaled_erfc(-h * Real(kInvSqrt2));  // Y(h)
  Real previous = y0;                                                      // Y^{(n-1)}
  Real current = Real(1) + h * y0;                                         // Y^{(n)}, n = 1
  const Real t2 = t * t;
  Real sum = current;
  Real weight = Real(1);  // t^{2k} / (2k+1)!
  for (int k = 1; k < kSmallTTerms<Real>; ++k) {
    const int n = 2 * k - 1;                             // current holds Y^{(n)}
    const Real even = h * current + Real(n) * previous;  // Y^{(n+1)}
    const Real odd = h * even + Real(n + 1) * current;   // Y^{(n+2)}
    previous = even;
    current = odd;
    weight *= t2 / Real((n + 1) * (n + 2));
    sum += weight * current;
  }
  return Real(2) * t * vega * sum;
}

/// Regions 3 and 4: the closed form. The second term e^{-x/2} Phi(h - t) is always taken as
/// e^{-(h^2+t^2)/2} erfcx((t - h)/sqrt 2) / 2, which cannot overflow. Where h + t > 0.85 the first
/// term dominates and is taken as e^{x/2} Phi(h + t); elsewhere both terms are erfcx's, so that no
/// exponent with rounding multiplies a term that then cancels.
template <class Real>
GPUKIT_HD_INLINE Real black_closed_form(Real x, Real h, Real t, Real vega) {
  const Real scale = Real(kSqrtPiOver2) * vega;  // e^{-(h^2+t^2)/2} / 2
  const Real second = scale * scaled_erfc((t - h) * Real(kInvSqrt2));
  const Real first = h + t > Real(kUpperRegion) ? math_exp(Real(0.5) * x) * normal_cdf(h + t)
                                                : scale * scaled_erfc(-(h + t) * Real(kInvSqrt2));
  return max_zero(first - second);
}

/// b(x, s) and b'(x, s) = d b / d s = e^{-(h^2+t^2)/2} / sqrt(2 pi), for x <= 0, s >= 0: the
/// Householder steps need both at each point, and every region's b carries b' as a factor, so the
/// exponential is taken once.
template <class Real>
struct NormalisedBlack {
  Real value, vega;
};

template <class Real>
GPUKIT_HD_INLINE NormalisedBlack<Real> normalised_black(Real x, Real s) {
  if (!(s > Real(0))) return {Real(0), Real(0)};
  const Real h = x / s, t = Real(0.5) * s;
  const Real vega = Real(kInvSqrt2Pi) * math_exp(Real(-0.5) * (h * h + t * t));
  if (h < Real(kAsymptoticBelow) && t < Real(kSmallT) + (-h) + Real(kAsymptoticBelow)) {
    return {black_asymptotic(h, t, vega), vega};
  }
  if (t < Real(kSmallT)) return {black_small_t(h, t, vega), vega};
  return {black_closed_form(x, h, t, vega), vega};
}

/// b_max - b(x, s) = e^{x/2} Phi(-(h+t)) + e^{-x/2} Phi(h-t), a sum: where b nears b_max = e^{x/2}
/// its difference from b_max keeps its relative accuracy, so the upper objective's steps stay
/// meaningful at trial points where b itself has rounded to b_max. With b' as normalised_black.
template <class Real>
GPUKIT_HD_INLINE NormalisedBlack<Real> normalised_black_complement(Real x, Real s) {
  const Real h = x / s, t = Real(0.5) * s;
  const Real vega = Real(kInvSqrt2Pi) * math_exp(Real(-0.5) * (h * h + t * t));
  return {math_exp(Real(0.5) * x) * normal_cdf(-(h + t)) +
              Real(kSqrtPiOver2) * vega * scaled_erfc((t - h) * Real(kInvSqrt2)),
          vega};
}

// ------------------------------------------------------------------------------------------------
// Rational cubic interpolation (Delbourgo and Gregory 1985), the shape of the middle guesses and
// of the transformed maps: on [x_l, x_r] with values y, slopes d and control parameter r,
//   y(u) = [y_r u^3 + (r y_r - w d_r) u^2 (1-u) + (r y_l + w d_l) u (1-u)^2 + y_l (1-u)^3]
//          / [1 + (r - 3) u (1 - u)],   u = (x - x_l) / w, w = x_r - x_l;
// r = 3 is the cubic Hermite interpolant, r -> infinity the straight line.

template <class Real>
inline constexpr Real kRationalCubicLinear = Real(2) / (std::numeric_limits<Real>::epsilon() *
                                                        std::numeric_limits<Real>::epsilon());
/// Just above -1, where the denominator would vanish: -(1 - sqrt(eps)).
template <class Real>
inline constexpr Real kRationalCubicLowest = sizeof(Real) == sizeof(float)
                                                 ? Real(-(1 - 3.4526698e-4))
                                                 : Real(-(1 - 1.4901161193847656e-8));

template <class Real>
GPUKIT_HD_INLINE Real rational_cubic(Real at, Real x_l, Real x_r, Real y_l, Real y_r, Real d_l,
                                     Real d_r, Real r) {
  const Real w = x_r - x_l;
  if (!(math_abs(w) > Real(0))) return Real(0.5) * (y_l + y_r);
  const Real u = (at - x_l) / w;
  if (!(r < kRationalCubicLinear<Real>)) return y_r * u + y_l * (Real(1) - u);
  const Real v = Real(1) - u, u2 = u * u, v2 = v * v;
  return (y_r * u2 * u + (r * y_r - w * d_r) * u2 * v + (r * y_l + w * d_l) * u * v2 +
          y_l * v2 * v) /
         (Real(1) + (r - Real(3)) * u * v);
}

/// The least control parameter that keeps the interpolant monotone where the data are, and convex
/// or concave where the data are (Delbourgo and Gregory's conditions (3.8) and (3.18)).
template <class Real>
GPUKIT_HD_INLINE Real minimum_control(Real d_l, Real d_r, Real slope, bool prefer_shape) {
  const bool monotone = d_l * slope >= Real(0) && d_r * slope >= Real(0);
  const bool convex = d_l <= slope && slope <= d_r;
  const bool concave = d_l >= slope && slope >= d_r;
  if (!monotone && !convex && !concave) return kRationalCubicLowest<Real>;
  Real r1 = -std::numeric_limits<Real>::max(), r2 = r1;
  if (monotone) {
    if (slope != Real(0)) {
      r1 = (d_r + d_l) / slope;
    } else if (prefer_shape) {
      r1 = kRationalCubicLinear<Real>;
    }
  }
  if (convex || concave) {
    const Real right_gap = d_r - slope, left_gap = slope - d_l;
    if (right_gap != Real(0) && left_gap != Real(0)) {
      r2 = max_of(math_abs((d_r - d_l) / right_gap), math_abs((d_r - d_l) / left_gap));
    } else if (prefer_shape) {
      r2 = kRationalCubicLinear<Real>;
    }
  } else if (monotone && prefer_shape) {
    r2 = kRationalCubicLinear<Real>;
  }
  return max_of(kRationalCubicLowest<Real>, max_of(r1, r2));
}

/// The control parameter that matches `curvature` (the second derivative) at the left or right end,
/// raised to minimum_control's where that would break the shape.
template <class Real>
GPUKIT_HD_INLINE Real control_for_curvature(bool at_left, Real x_l, Real x_r, Real y_l, Real y_r,
                                            Real d_l, Real d_r, Real curvature, bool prefer_shape) {
  const Real w = x_r - x_l, slope = (y_r - y_l) / w;
  const Real numerator = Real(0.5) * w * curvature + (d_r - d_l);
  const Real denominator = at_left ? slope - d_l : d_r - slope;
  Real r;
  if (numerator == Real(0)) {
    r = Real(0);
  } else if (denominator == Real(0)) {
    r = numerator > Real(0) ? kRationalCubicLinear<Real> : kRationalCubicLowest<Real>;
  } else {
    r = numerator / denominator;
  }
  return max_of(r, minimum_control(d_l, d_r, slope, prefer_shape));
}

// ------------------------------------------------------------------------------------------------
// Let's Be Rational: s from beta for x < 0, 0 < beta < b_max = e^{x/2}.

/// Householder's third-order step from Newton's step and the objective's g''/g' and g'''/g'.
template <class Real>
GPUKIT_HD_INLINE Real householder_step(Real newton, Real halley, Real third) {
  return newton * (Real(1) + Real(0.5) * halley * newton) /
         (Real(1) + newton * (halley + third * newton / Real(6)));
}

/// Householder steps after the initial guess: LBR's guess is close enough that two third-order
/// steps reach double's rounding on every branch (Jaeckel 2017); the iteration stops early once a
/// step is below a unit of rounding of s. Float needs the two as well: with one, a few rows in
/// 10^4 of the test grid (far in the money, s ~ 6) end outside the bound (measured: 1.6 of it).
template <class Real>
inline constexpr int kHouseholderSteps = 2;

enum class Objective { lower, middle, upper };

template <class Real>
GPUKIT_HD_INLINE Real normalised_implied_s_otm(Real beta, Real x) {
  constexpr Real eps = std::numeric_limits<Real>::epsilon();
  const Real b_max = math_exp(Real(0.5) * x);
  Real s_left = Real(0), s_right = std::numeric_limits<Real>::infinity();
  Real s;
  Objective objective = Objective::middle;
  if (x == Real(0)) {
    // At the money b = 2 Phi(s/2) - 1 = erf(s / sqrt 8): s = -2 Phi^-1((1 - beta)/2), which loses
    // relative accuracy as beta -> 0, where b ~ s / sqrt(2 pi) takes over; the steps finish.
    s = max_of(Real(-2) * inverse_normal_cdf(Real(0.5) * (Real(1) - beta)), beta * Real(kSqrt2Pi));
  } else {
    const Real s_c = math_sqrt(Real(-2) * x);
    const NormalisedBlack<Real> at_c = normalised_black(x, s_c);
    const Real b_c = at_c.value, v_c = at_c.vega;
    if (beta < b_c) {
      const Real s_l = s_c - b_c / v_c;
      const NormalisedBlack<Real> at_l = normalised_black(x, s_l);
      const Real b_l = at_l.value, v_l = at_l.vega;
      if (beta < b_l) {
        // The lower map f(s) = A Phi(-z)^3, z = |x| / (sqrt 3 s), A = 2 pi |x| / sqrt 27: f ~ b as
        // b -> 0, so a rational cubic in beta of f through (0, 0) slope 1 and (b_l, f_l) with its
        // slope and curvature, inverted in closed form.
        const Real ax = -x, z = ax / (Real(kSqrt3) * s_l);
        const Real a_map = Real(2 * kPi / (3 * kSqrt3)) * ax;
        const Real cdf = normal_cdf(-z);
        const Real f_l = a_map * cdf * cdf * cdf;
        const Real erfcx_z = scaled_erfc(z * Real(kInvSqrt2));
        // df/dbeta = (df/ds) / b' = 2 pi z^2 Phi(-z)^2 e^{z^2 + s^2/8}, with Phi(-z) e^{z^2/2} =
        // erfcx(z / sqrt 2) / 2 so that nothing overflows.
        const Real fp_l = Real(kPi / 2) * z * z * erfcx_z * erfcx_z * math_exp(s_l * s_l / Real(8));
        // d^2f/dbeta^2 = (df/dbeta) d ln(df/dbeta)/ds / b'; the control fit needs it times b_l.
        const Real log_slope =
            (Real(2) * z * Real(kSqrt2OverPi) / erfcx_z - Real(2) * z * z - Real(2)) / s_l +
            s_l / Real(4);
        const Real fpp_times_b_l = fp_l * log_slope * (b_l / v_l);
        Real f = Real(0);
        if (math_isfinite(fpp_times_b_l)) {
          // Curvature at the right end times its width b_l is what the control fit uses.
          const Real slope = f_l / b_l;
          const Real numerator = Real(0.5) * fpp_times_b_l + (fp_l - Real(1));
          const Real denominator = fp_l - slope;
          Real r =
              numerator == Real(0) ? Real(0)
              : denominator == Real(0)
                  ? (numerator > Real(0) ? kRationalCubicLinear<Real> : kRationalCubicLowest<Real>)
                  : numerator / denominator;
          r = max_of(r, minimum_control(Real(1), fp_l, slope, true));
          f = rational_cubic(beta, Real(0), b_l, Real(0), f_l, Real(1), fp_l, r);
        }
        if (!(f > Real(0))) {
          // Rounding at extreme |x|: the quadratic through f(0) = 0 with f'(0) = 1 and (b_l, f_l).
          const Real u = beta / b_l;
          f = (f_l * u + b_l * (Real(1) - u)) * u;
        }
        s = ax / (Real(kSqrt3) * -inverse_normal_cdf(math_cbrt(f / a_map)));
        s_right = s_l;
        objective = Objective::lower;
      } else {
        const Real r = control_for_curvature(false, b_l, b_c, s_l, s_c, Real(1) / v_l,
                                             Real(1) / v_c, Real(0), false);
        s = rational_cubic(beta, b_l, b_c, s_l, s_c, Real(1) / v_l, Real(1) / v_c, r);
        s_left = s_l;
        s_right = s_c;
      }
    } else {
      const Real s_h = v_c > std::numeric_limits<Real>::min() ? s_c + (b_max - b_c) / v_c : s_c;
      const NormalisedBlack<Real> at_h = normalised_black(x, s_h);
      const Real b_h = at_h.value, v_h = at_h.vega;
      if (beta <= b_h) {
        const Real r = control_for_curvature(true, b_c, b_h, s_c, s_h, Real(1) / v_c, Real(1) / v_h,
                                             Real(0), false);
        s = rational_cubic(beta, b_c, b_h, s_c, s_h, Real(1) / v_c, Real(1) / v_h, r);
        s_left = s_c;
        s_right = s_h;
      } else {
        // The upper map f(s) = Phi(-s/2): f -> 0 as b -> b_max with slope -1/2 there.
        const Real h = x / s_h, w = h * h;
        const Real f_h = normal_cdf(Real(-0.5) * s_h);
        const Real fp_h = Real(-0.5) * math_exp(Real(0.5) * w);
        const Real fpp_h = Real(kSqrtPiOver2) * math_exp(w + s_h * s_h / Real(8)) * w / s_h;
        Real f = Real(0);
        if (math_isfinite(fpp_h)) {
          const Real r =
              control_for_curvature(true, b_h, b_max, f_h, Real(0), fp_h, Real(-0.5), fpp_h, true);
          f = rational_cubic(beta, b_h, b_max, f_h, Real(0), fp_h, Real(-0.5), r);
        }
        if (!(f > Real(0))) {
          // The quadratic through (b_h, f_h) and (b_max, 0) with slope -1/2 at b_max; at beta
          // within rounding of b_max, the least normal f (s ~ 75 in double, 26 in float).
          const Real width = b_max - b_h, u = (beta - b_h) / width;
          f = max_of((f_h * (Real(1) - u) + Real(0.5) * width * u) * (Real(1) - u),
                     std::numeric_limits<Real>::min());
        }
        s = Real(-2) * inverse_normal_cdf(f);
        s_left = s_h;
        if (beta > Real(0.5) * b_max) objective = Objective::upper;
      }
    }
  }

  const Real log_beta = objective == Objective::lower ? math_log(beta) : Real(0);
  const Real target_gap = b_max - beta;  // the upper objective's target
  constexpr Real infinity = std::numeric_limits<Real>::infinity();
  for (int step = 0; step < kHouseholderSteps<Real>; ++step) {
    // The midpoint of the bracket, or twice its left end while it is open to the right.
    const Real bisection =
        s_right < infinity ? Real(0.5) * (s_left + s_right) : max_of(Real(2) * s_left, s);
    // A guess outside its segment (NaN at extreme |x|), or a step that left the bracket or
    // stalled on its edge, is replaced by bisection.
    const bool inside = step == 0 ? s >= s_left && s <= s_right : s > s_left && s < s_right;
    if (!inside) s = bisection;
    // The derivatives of b: b''/b' = x^2/s^3 - s/4, b'''/b' = (b''/b')^2 - 3 x^2/s^4 - 1/4.
    const Real h = x / s;
    const Real curvature = h * h / s - s / Real(4);
    const Real third = curvature * curvature - Real(3) * (h / s) * (h / s) - Real(0.25);
    // Each objective's own value decides which side of the root s lies on, so that the bracket
    // and the step agree where the value is within rounding of its target.
    Real ds;
    if (objective == Objective::upper) {
      // g = ln((b_max - beta) / (b_max - b)): close to linear where b nears its bound.
      const NormalisedBlack<Real> complement = normalised_black_complement(x, s);
      const Real gap = complement.value, bp = complement.vega;
      if (gap < target_gap && s < s_right) {
        s_right = s;
      } else if (gap > target_gap && s > s_left) {
        s_left = s;
      }
      if (!(gap > Real(0)) || !(bp > Real(0))) {
        ds = Real(0.5) * (s_left + s) - s;
      } else {
        const Real g = math_log(target_gap / gap), gp = bp / gap;
        const Real halley = curvature + gp;
        const Real hh3 = third + gp * (Real(2) * gp + Real(3) * curvature);
        ds = householder_step(-g / gp, halley, hh3);
      }
    } else {
      const NormalisedBlack<Real> at_s = normalised_black(x, s);
      const Real b = at_s.value, bp = at_s.vega;
      if (b > beta && s < s_right) {
        s_right = s;
      } else if (b < beta && s > s_left) {
        s_left = s;
      }
      if (!(b > Real(0)) || !(bp > Real(0))) {
        // b underflowed: bisect.
        ds = (s_right < infinity ? Real(0.5) * (s_left + s_right) : Real(2) * s) - s;
      } else if (objective == Objective::lower) {
        // g = 1/ln b - 1/ln beta: close to linear in s where b is tiny.
        const Real log_b = math_log(b), ratio = bp / b;
        const Real newton = (log_beta - log_b) * log_b / log_beta / ratio;
        const Real factor = Real(1) + Real(2) / log_b;
        const Real halley = curvature - ratio * factor;
        const Real hh3 =
            third +
            Real(2) * ratio * ratio * (Real(1) + Real(3) / log_b * (Real(1) + Real(1) / log_b)) -
            Real(3) * curvature * ratio * factor;
        ds = householder_step(newton, halley, hh3);
      } else {
        ds = householder_step((beta - b) / bp, curvature, third);
      }
    }
    ds = max_of(ds, Real(-0.5) * s);
    s += ds;
    if (!(math_abs(ds) > eps * s)) break;
  }
  return s;
}

// ------------------------------------------------------------------------------------------------
// Jaeckel's implied normal volatility: Phi~(z) = Phi(z) + phi(z)/z for z < 0 (so that the
// out-of-the-money Bachelier price is |F - K| (-Phi~(z)) discounted, z = -|F-K|/(sigma sqrt T)).

template <class Real>
GPUKIT_HD_INLINE Real normal_pdf(Real z) {
  return Real(kInvSqrt2Pi) * math_exp(Real(-0.5) * z * z);
}

/// Solves Phi~(z) = target (target < 0) for z < 0: his rational guesses (equations 2.1-2.5 of the
/// paper) and one step of his third-order correction (2.6-2.7), which reaches double's rounding.
template <class Real>
GPUKIT_HD_INLINE Real inverse_phi_tilde(Real target) {
  Real z;
  if (target < Real(-0.001882039271)) {
    const Real g = Real(1) / (target - Real(0.5)), g2 = g * g;
    const Real xi =
        (Real(0.032114372355) -
         g2 * (Real(0.016969777977) - g2 * (Real(0.002620733246) - Real(0.000096066952861) * g2))) /
        (Real(1) -
         g2 * (Real(0.6635646938) - g2 * (Real(0.14528712196) - Real(0.010472855461) * g2)));
    z = g * (Real(kInvSqrt2Pi) + xi * g2);
  } else {
    const Real h = math_sqrt(-math_log(-target));
    z = (Real(9.4883409779) -
         h * (Real(9.6320903635) - h * (Real(0.58556997323) + Real(2.1464093351) * h))) /
        (Real(1) -
         h * (Real(0.65174820867) + h * (Real(1.5120247828) + Real(0.000066437847132) * h)));
  }
  const Real density = normal_pdf(z);
  if (!(density > Real(0))) return z;  // beyond Real's range: the guess is all there is
  // q = (Phi~(z) - target) / phi(z) = a(z)/z - target/phi(z), a(z) = 1 + z Phi(z)/phi(z) taken
  // through erfcx: Phi(z) + phi(z)/z directly would carry the rounding of the exponents of erfc
  // and exp (about z^2/2 units each, not cancelling), this form only a(z)'s cancellation, which
  // moves z by a unit of its own rounding.
  const Real a = Real(1) + z * Real(kSqrtPiOver2) * scaled_erfc(-z * Real(kInvSqrt2));
  const Real q = a / z - target / density, z2 = z * z;
  return z +
         Real(3) * q * z2 * (Real(2) - q * z * (Real(2) + z2)) /
             (Real(6) +
              q * z * (Real(-12) + z * (Real(6) * q + z * (Real(-6) + q * z * (Real(3) + z2)))));
}

// ------------------------------------------------------------------------------------------------
// One row.

template <class Real>
struct ImpliedVolatilityRow {
  Real volatility;
  ImpliedVolatilityStatus status;
};

/// ln(a/b) for a, b > 0 with relative accuracy also near a == b: log1p of the exact difference
/// over the smaller of the two (Sterbenz: a - b is exact when they are within a factor 2).
template <class Real>
GPUKIT_HD_INLINE Real log_ratio(Real a, Real b) {
  return a >= b ? math_log1p((a - b) / b) : -math_log1p((b - a) / a);
}

template <class Real>
GPUKIT_HD_INLINE bool negative_or_nan(Real v) {
  return !(v >= Real(0)) || !math_isfinite(v);
}

/// The implied volatility of one row under `kModel` (see implied_volatility.hpp for the statuses).
/// `underlying` is the spot (black_scholes) or the forward.
template <class Real, VolatilityModel kModel>
GPUKIT_HD_INLINE ImpliedVolatilityRow<Real> implied_volatility_of(Real price, Real underlying,
                                                                  Real strike, Real maturity,
                                                                  Real rate, Real dividend,
                                                                  bool is_put) {
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  const bool uses_dividend = kModel == VolatilityModel::black_scholes;
  if (negative_or_nan(price) || negative_or_nan(underlying) || negative_or_nan(strike) ||
      negative_or_nan(maturity) || !math_isfinite(rate) ||
      (uses_dividend && !math_isfinite(dividend))) {
    return {nan, ImpliedVolatilityStatus::invalid_input};
  }
  if (maturity == Real(0)) return {nan, ImpliedVolatilityStatus::zero_maturity};
  const Real discount = math_exp(-rate * maturity);
  const Real sqrt_t = math_sqrt(maturity);

  if constexpr (kModel == VolatilityModel::bachelier) {
    const Real moneyness = underlying - strike;  // F - K
    const Real undiscounted_intrinsic = max_zero(is_put ? -moneyness : moneyness);
    // Compared undiscounted, as the time value below is taken, so that the two agree.
    const Real undiscounted = price / discount;
    if (undiscounted < undiscounted_intrinsic) {
      return {nan, ImpliedVolatilityStatus::below_intrinsic};
    }
    if (undiscounted == undiscounted_intrinsic) return {Real(0), ImpliedVolatilityStatus::ok};
    if (moneyness == Real(0)) {
      return {undiscounted * Real(kSqrt2Pi) / sqrt_t, ImpliedVolatilityStatus::ok};
    }
    const Real time_value = undiscounted - undiscounted_intrinsic;
    if (!(time_value > Real(0))) return {Real(0), ImpliedVolatilityStatus::ok};
    const Real distance = math_abs(moneyness);
    const Real z = inverse_phi_tilde(-time_value / distance);
    return {distance / (-z * sqrt_t), ImpliedVolatilityStatus::ok};
  } else {
    // The discounted forward and strike, and x = ln(F/K) from the inputs themselves so that it
    // keeps its relative accuracy near the money.
    Real discounted_forward, x;
    if constexpr (kModel == VolatilityModel::black_scholes) {
      discounted_forward = underlying * math_exp(-dividend * maturity);
      x = underlying > Real(0) && strike > Real(0)
              ? log_ratio(underlying, strike) + (rate - dividend) * maturity
              : Real(0);
    } else {
      discounted_forward = discount * underlying;
      x = underlying > Real(0) && strike > Real(0) ? log_ratio(underlying, strike) : Real(0);
    }
    const Real discounted_strike = discount * strike;
    const Real bound = is_put ? discounted_strike : discounted_forward;
    if (!(discounted_forward > Real(0)) || !(discounted_strike > Real(0))) {
      // A zero forward or strike: no volatility moves the price, which is its intrinsic value (one
      // of the two terms, exactly, or 0) and at once the bound or 0.
      const Real intrinsic = max_zero(is_put ? discounted_strike - discounted_forward
                                             : discounted_forward - discounted_strike);
      if (price < intrinsic) return {nan, ImpliedVolatilityStatus::below_intrinsic};
      if (price == intrinsic) return {Real(0), ImpliedVolatilityStatus::ok};
      return {nan, ImpliedVolatilityStatus::above_maximum};
    }
    // The intrinsic value is compared in normalised form, D sqrt(F K) (e^{|x|/2} - e^{-|x|/2})
    // from the accurate x: D F - D K directly would carry a rounding of D F, far more than the
    // time value of a deep in-the-money row holds.
    const Real root = math_sqrt(discounted_forward) * math_sqrt(discounted_strike);
    Real beta = price / root;
    const bool in_the_money = is_put ? x < Real(0) : x > Real(0);
    const Real ax = math_abs(x);
    const Real iota =
        in_the_money ? math_expm1(Real(0.5) * ax) - math_expm1(Real(-0.5) * ax) : Real(0);
    if (beta < iota) return {nan, ImpliedVolatilityStatus::below_intrinsic};
    if (beta == iota) return {Real(0), ImpliedVolatilityStatus::ok};
    if (price >= bound) return {nan, ImpliedVolatilityStatus::above_maximum};
    // Parity: the out-of-the-money side's normalised price.
    beta -= iota;
    // Rounding can leave beta at b_max where the unnormalised test said below it: the largest
    // beta below it keeps the answer finite (vega there is ~0; the contract allows any large s).
    const Real b_max = math_exp(Real(-0.5) * ax);
    const Real below_max = b_max * (Real(1) - std::numeric_limits<Real>::epsilon());
    if (beta > below_max) beta = below_max;
    return {normalised_implied_s_otm(beta, -ax) / sqrt_t, ImpliedVolatilityStatus::ok};
  }
}

/// Loads row `i`, inverts it and stores the results (the scalar path of every backend).
template <class Real, VolatilityModel kModel>
GPUKIT_HD_INLINE void implied_volatility_and_store(const ImpliedVolatilityInputs<Real>& in,
                                                   const ImpliedVolatilityOutputs<Real>& out,
                                                   std::int64_t i) {
  const ImpliedVolatilityRow<Real> row = implied_volatility_of<Real, kModel>(
      in.price[i], in.underlying[i], in.strike[i], in.maturity[i], parameter_at(in.rate, i),
      parameter_at(in.dividend, i), is_put_at(in.is_put, i));
  out.volatility[i] = row.volatility;
  if (out.status != nullptr) out.status[i] = row.status;
}

}  // namespace gpukit::finance::detail
