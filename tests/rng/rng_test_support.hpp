#pragma once
// Shared by the rng tests: an independent long-double normal quantile, ulp distances and sample
// moments with their standard errors.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/rng/normal.hpp"

namespace gpukit::rng::testing {

/// P(Z <= x) and P(Z > x) in long double (64-bit significand on x86), through erfcl.
inline long double normal_cdf_ld(long double x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); }
inline long double normal_pdf_ld(long double x) {
  return std::exp(-0.5L * x * x) / std::sqrt(2.0L * 3.141592653589793238462643383279502884L);
}

/// The normal quantile of p in (0, 1) to long-double accuracy: Newton's method on erfcl from
/// `start`, in the tail where p is small so the residual keeps its relative accuracy (for
/// p > 1/2 the quantile of 1 - p, which is exact in double, mirrored).
inline long double reference_normal_quantile(double p, long double start) {
  if (p > 0.5) return -reference_normal_quantile(1.0 - p, -start);
  long double x = start;
  for (int i = 0; i < 6; ++i) {
    x -= (normal_cdf_ld(x) - static_cast<long double>(p)) / normal_pdf_ld(x);
  }
  return x;
}

/// cos(pi x) and sin(pi x) in long double. The angle is reduced exactly first (x = n/2 + t,
/// |t| <= 1/4), so that near a zero of sin or cos the reference keeps its relative accuracy; the
/// plain cosl(2 pi u) does not (its rounded angle is off by ~1e-19, which is hundreds of double
/// ulps of a result near 1e-5).
struct CosSin {
  long double cos, sin;
};
inline CosSin cos_sin_pi_ld(long double x) {
  const long double quarter_turns = std::rint(2 * x);
  const long double t = x - quarter_turns / 2;
  const long double angle = 3.141592653589793238462643383279502884L * t;
  const long double c = std::cos(angle), s = std::sin(angle);
  switch (static_cast<long long>(quarter_turns) & 3) {
    case 0:
      return {c, s};
    case 1:
      return {-s, c};
    case 2:
      return {-c, -s};
    default:
      return {s, -c};
  }
}

/// The spacing of T at |x| (the ulp of x), computed in long double.
template <class T>
long double ulp_of(long double x) {
  const T rounded = static_cast<T>(std::fabs(x));
  return static_cast<long double>(std::nextafter(rounded, std::numeric_limits<T>::infinity())) -
         static_cast<long double>(rounded);
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// |a - b| in ulps of the larger of the two (0 for the same bits).
template <class T>
double ulp_distance(T a, T b) {
  if (same_bits(a, b)) return 0;
  const long double scale = ulp_of<T>(
      std::max(std::fabs(static_cast<long double>(a)), std::fabs(static_cast<long double>(b))));
  return static_cast<double>(std::fabs(static_cast<long double>(a) - b) / scale);
}

/// How far a backend's normals may be from the host's definition (normal.hpp, generate.hpp): the
/// CPU computes the definition itself (bitwise). CUDA's float normals are computed in double and
/// rounded once, as on the host, so they differ only where the exact value lies within ~1e-15 of
/// a rounding boundary: at most one ulp. Double normals carry the platforms' log and sin/cos
/// differences: the host Box-Muller is within 6 ulps of exact (normal_test.cpp), the device's
/// within 8 (CUDA's log 1 ulp, sincospi 2 ulps, the square root and the product correctly
/// rounded), so they are within 14 of each other. The inverse CDF differs only through log in its
/// tails: a 2-ulp change of log p moves r = sqrt(-log p) by about an ulp and x ~ sqrt(2) r by
/// about 3, plus rounding: 8.
template <class T>
double normal_ulps_allowed(Backend backend, NormalTransform transform) {
  if (backend == Backend::cpu) return 0;
  if (sizeof(T) == sizeof(float)) return 1;
  return transform == NormalTransform::box_muller ? 14 : 8;
}

/// Mean, variance, skewness and excess kurtosis of a sample (two passes, long double).
struct Moments {
  long double mean = 0, variance = 0, skewness = 0, excess_kurtosis = 0;
};
template <class T>
Moments sample_moments(std::span<const T> x) {
  const auto n = static_cast<long double>(x.size());
  long double sum = 0;
  for (T v : x) sum += v;
  Moments m;
  m.mean = sum / n;
  long double m2 = 0, m3 = 0, m4 = 0;
  for (T v : x) {
    const long double d = v - m.mean;
    m2 += d * d, m3 += d * d * d, m4 += d * d * d * d;
  }
  m2 /= n, m3 /= n, m4 /= n;
  m.variance = m2;
  m.skewness = m3 / std::pow(m2, 1.5L);
  m.excess_kurtosis = m4 / (m2 * m2) - 3;
  return m;
}

/// Kolmogorov-Smirnov statistic sqrt(n) D_n of a sample against the standard normal CDF. Under
/// the null hypothesis P(sqrt(n) D_n > 1.95) is about 0.001 (asymptotic Kolmogorov distribution).
template <class T>
double ks_statistic_against_normal(std::span<const T> sample) {
  std::vector<long double> sorted(sample.begin(), sample.end());
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<long double>(sorted.size());
  long double d = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const long double cdf = normal_cdf_ld(sorted[i]);
    d = std::max(
        {d, cdf - static_cast<long double>(i) / n, static_cast<long double>(i + 1) / n - cdf});
  }
  return static_cast<double>(std::sqrt(n) * d);
}

}  // namespace gpukit::rng::testing
