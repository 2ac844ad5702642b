#pragma once
// Uniforms to standard normal numbers, as functions for the CPU and for CUDA kernels.
//
// box_muller: the seed's trigonometric Box-Muller transform (seed 000, slide 22): two uniforms
//   u1, u2 in (0, 1) give the independent normals r cos(2 pi u2) and r sin(2 pi u2) with
//   r = sqrt(-2 ln u1). The angle goes through sincospi(2 u2), so 2 pi u2 is never rounded.
// inverse_normal_cdf: Wichura's algorithm AS241, PPND16 (Applied Statistics 37(3), 1988,
//   477-484), a rational approximation in three regions whose own error is about 1e-16 relative.
//   Evaluated with unfused operations (below) it is within 1e-15 relative of the exact quantile
//   for p in [1e-300, 1 - 2^-53] (tested against a long-double Newton reference; the worst case
//   seen is 6.3 ulps). It needs one uniform per normal and preserves their order, which
//   variance reduction and quasi-random points use. The seed names Beasley-Springer-Moro as the
//   alternative; AS241 replaced Beasley and Springer's AS111 and is far more accurate than Moro's
//   refinement of it (about 3e-9 absolute).
//
// Precision. The double functions use the platform's log and sin/cos (sincospi on the GPU), so
// Box-Muller is within 6 ulps of the exact transform on the CPU, and the CPU and GPU results
// differ in the last bits. The float functions compute in double and round once, so they are the
// correctly rounded float of the transform except when the exact value lies within about 1e-15
// relative of a rounding boundary (a few in 10^8), and the CPU and GPU agree but for those rare
// cases. AS241's rational functions are written with explicit, unfused multiplications and
// additions (intrinsics on the GPU; on the CPU the including code must be compiled without FP
// contraction: g++ fuses across statements where FMA instructions are enabled, -march=haswell and
// later or aarch64, unless given -ffp-contract=off, which gpukit's own code that calls these is
// compiled with), so its central region (0.075 < p < 0.925, no log involved) gives the same bits
// on both; the tails differ only through log.
//
// Outputs are bounded by the uniforms (uniform.hpp): float normals lie within about +-5.8 (Box-
// Muller) and +-5.3 (inverse CDF), double normals within +-8.6 and +-8.3.
// inverse_normal_cdf(0) = -inf, (1) = +inf, NaN -> NaN; outside [0, 1] it returns -inf / +inf.

#include <cmath>
#include <limits>

#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"

namespace gpukit::rng {

/// How the flat streams (generate.hpp) and the pricing kernels turn uniforms into normals.
enum class NormalTransform {
  box_muller,   // two uniforms per pair of normals (the seed)
  inverse_cdf,  // one uniform per normal (AS241)
};

template <class Real>
struct NormalPair {
  Real first, second;
};

namespace detail {

/// c0 + x (c1 + x (c2 + ...)), unfused.
GPUKIT_HD_INLINE double horner(double, double c0) { return c0; }
template <class... Rest>
GPUKIT_HD_INLINE double horner(double x, double c0, Rest... rest) {
  return rounded::add(c0, rounded::mul(x, horner(x, rest...)));
}

GPUKIT_HD_INLINE double log(double x) {
#if defined(__CUDA_ARCH__)
  return ::log(x);
#else
  return std::log(x);
#endif
}
GPUKIT_HD_INLINE double sqrt(double x) {  // correctly rounded on both
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
GPUKIT_HD_INLINE double infinity() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff0000000000000LL);
#else
  return std::numeric_limits<double>::infinity();
#endif
}

/// sin(pi x) and cos(pi x) for 0 <= x <= 2 without rounding pi x. The CPU has no sincospi: x is
/// split exactly into a quarter-turn count n and |t| <= 1/4, where sin and cos of the rounded
/// pi t keep their relative accuracy (about 1 ulp), and the quadrant is a sign flip and swap.
GPUKIT_HD_INLINE void sincospi(double x, double* sine, double* cosine) {
#if defined(__CUDA_ARCH__)
  ::sincospi(x, sine, cosine);
#else
  const double quarter_turns = std::rint(2.0 * x);
  const double t = x - 0.5 * quarter_turns;  // exact (Sterbenz)
  const double angle = 3.141592653589793238462643383279502884 * t;
  const double s = std::sin(angle);
  const double c = std::cos(angle);
  switch (static_cast<long long>(quarter_turns) & 3) {
    case 0:
      *sine = s, *cosine = c;
      break;
    case 1:
      *sine = c, *cosine = -s;
      break;
    case 2:
      *sine = -s, *cosine = -c;
      break;
    default:
      *sine = -c, *cosine = s;
      break;
  }
#endif
}

}  // namespace detail

/// Two independent standard normals from two uniforms in (0, 1).
GPUKIT_HD_INLINE NormalPair<double> box_muller(double u1, double u2) {
  const double radius = detail::sqrt(-2.0 * detail::log(u1));
  double sine, cosine;
  detail::sincospi(2.0 * u2, &sine, &cosine);
  return {radius * cosine, radius * sine};
}

/// The float transform: computed in double, each normal rounded once.
GPUKIT_HD_INLINE NormalPair<float> box_muller(float u1, float u2) {
  const NormalPair<double> z = box_muller(static_cast<double>(u1), static_cast<double>(u2));
  return {static_cast<float>(z.first), static_cast<float>(z.second)};
}

/// The standard normal quantile: x with P(Z <= x) = p (AS241 PPND16).
GPUKIT_HD_INLINE double inverse_normal_cdf(double p) {
  if (p != p) return p;
  if (p <= 0.0) return -detail::infinity();
  if (p >= 1.0) return detail::infinity();
  using detail::horner;
  using rounded::add;
  using rounded::div;
  using rounded::mul;
  const double q = p - 0.5;  // exact for p in [0.25, 1]; below that it only selects the branch
  if (q <= 0.425 && q >= -0.425) {
    const double r = add(0.180625, -mul(q, q));
    const double numerator =
        horner(r, 3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
               1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
               3.3430575583588128105e+4, 2.5090809287301226727e+3);
    const double denominator =
        horner(r, 1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
               2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
               5.2264952788528545610e+3);
    return div(mul(q, numerator), denominator);
  }
  // Tails: r = sqrt(-ln(min(p, 1 - p))); 1 - p is exact for p > 1/2.
  double r = detail::sqrt(-detail::log(q < 0.0 ? p : 1.0 - p));
  double x;
  if (r <= 5.0) {
    r = r - 1.6;
    x = div(horner(r, 1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
                   3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
                   2.27238449892691845833e-2, 7.74545014278341407640e-4),
            horner(r, 1.0, 2.05319162663775882187e0, 1.67638483018380384940e0,
                   6.89767334985100004550e-1, 1.48103976427480074590e-1, 1.51986665636164571966e-2,
                   5.47593808499534494600e-4, 1.05075007164441684324e-9));
  } else {
    r = r - 5.0;
    x = div(horner(r, 6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
                   2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
                   2.71155556874348757815e-5, 2.01033439929228813265e-7),
            horner(r, 1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1,
                   1.48753612908506148525e-2, 7.86869131145613259100e-4, 1.84631831751005468180e-5,
                   1.42151175831644588870e-7, 2.04426310338993978564e-15));
  }
  return q < 0.0 ? -x : x;
}

/// The float quantile: computed in double, rounded once.
GPUKIT_HD_INLINE float inverse_normal_cdf(float p) {
  return static_cast<float>(inverse_normal_cdf(static_cast<double>(p)));
}

}  // namespace gpukit::rng
