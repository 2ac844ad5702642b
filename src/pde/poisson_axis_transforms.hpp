#pragma once
// Internal: the real-to-real transforms of one axis that the Poisson solver with walls needs,
// built from a real FFT (cuFFT has no real-to-real transforms), as index maps and twiddles that
// the CUDA kernels (cuda/poisson_walls.cu) apply around cuFFT's R2C and C2R and that
// tests/pde/poisson_axis_transforms_test.cpp checks on the host against the transforms' sums.
// Each transform is FFTW's unnormalised one of the same name (FFTW's manual, "1d Real-even DFTs
// (DCTs)" and "1d Real-odd DFTs (DSTs)"), so that the CPU backend (FFTW) and the CUDA one
// compute the same coefficients:
//
//   REDFT10 (DCT-II, neumann forward), Makhoul 1980: v[m] = x[neumann_source(m)] (the even
//     samples in order, then the odd ones reversed); V = DFT(v) (length n, R2C);
//     X[k] = 2 Re(exp(-i pi k / 2n) V[k]) with V[k] = conj(V[n - k]) for k > n / 2.
//   REDFT01 (DCT-III, its inverse up to 2n): V[k] = exp(i pi k / 2n) (X[k] - i X[n - k]),
//     X[n] = 0, for k = 0 .. n / 2 (Hermitian, so C2R takes it); v = C2R(V);
//     x[neumann_source(m)] = v[m].
//   RODFT00 (DST-I, dirichlet both ways, its own inverse up to 2(n + 1)): the odd extension
//     z = (0, x[0 .. n-1], 0, -x[n-1 .. 0]) of length 2(n + 1); Z = DFT(z) (R2C);
//     X[k] = -Im Z[k + 1].
//   periodic (R2HC-like): V = DFT(x) (R2C); X[k] = Re V[k] for k <= n / 2, Im V[n - k] above;
//     the inverse unpacks and C2R (n times x). Both halves of a frequency share its eigenvalue.

#include <cmath>
#include <cstdint>
#include <numbers>

#include "gpukit/core/host_device.hpp"
#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde::walls {

/// An axis' boundary (the public enumeration: periodic, dirichlet, neumann).
using AxisKind = Boundary;

/// The real FFT's length for an axis of n points: 2(n + 1) for the DST-I's odd extension.
GPUKIT_HD_INLINE std::int64_t fft_length(AxisKind kind, std::int64_t n) {
  return kind == AxisKind::dirichlet ? 2 * (n + 1) : n;
}

/// Makhoul's reordering: the sample of x that v[m] holds.
GPUKIT_HD_INLINE std::int64_t neumann_source(std::int64_t m, std::int64_t n) {
  return m < (n + 1) / 2 ? 2 * m : 2 * (n - 1 - m) + 1;
}

/// Where x's sample p sits in Makhoul's order (the inverse of neumann_source).
GPUKIT_HD_INLINE std::int64_t neumann_position(std::int64_t p, std::int64_t n) {
  return p % 2 == 0 ? p / 2 : n - 1 - (p - 1) / 2;
}

/// The odd extension's sample t of x (sign and index; index -1: a zero).
GPUKIT_HD_INLINE std::int64_t dirichlet_source(std::int64_t t, std::int64_t n, int& sign) {
  const std::int64_t m = n + 1;
  sign = 1;
  if (t == 0 || t == m) return -1;
  if (t < m) return t - 1;
  sign = -1;
  return 2 * m - 1 - t;
}

/// Sample t (< fft_length) of the sequence an axis' FFT takes, `x(j)` being the axis' sample j:
/// Makhoul's order (neumann), the odd extension (dirichlet), x itself (periodic).
template <class Real, class X>
GPUKIT_HD_INLINE Real axis_gathered(AxisKind kind, std::int64_t t, std::int64_t n, X x) {
  if (kind == AxisKind::periodic) return x(t);
  if (kind == AxisKind::neumann) return x(neumann_source(t, n));
  int sign = 1;
  const std::int64_t j = dirichlet_source(t, n, sign);
  if (j < 0) return Real(0);
  const Real sample = x(j);
  return sign < 0 ? -sample : sample;
}

/// cos and sin of the angle pi k / 2n (Makhoul's twiddle exp(-i pi k / 2n) is c - i s), in
/// double.
GPUKIT_HD_INLINE void quarter_twiddle(std::int64_t k, std::int64_t n, double& c, double& s) {
#if defined(__CUDA_ARCH__)
  sincospi(double(k) / (2.0 * double(n)), &s, &c);
#else
  const double angle = std::numbers::pi * double(k) / (2.0 * double(n));
  c = std::cos(angle), s = std::sin(angle);
#endif
}

/// Coefficient j (< n) of the axis' forward transform from its FFT: `at(k)` is the R2C output's
/// V[k], k < fft_length / 2 + 1 (a complex with .x and .y).
template <class Real, class At>
GPUKIT_HD_INLINE Real axis_coefficient(AxisKind kind, std::int64_t j, std::int64_t n, At at) {
  if (kind == AxisKind::periodic) return 2 * j <= n ? at(j).x : at(n - j).y;
  if (kind == AxisKind::dirichlet) return -at(j + 1).y;
  const bool low = 2 * j <= n;
  const auto v = at(low ? j : n - j);
  const Real imaginary = low ? v.y : -v.y;  // V[j] = conj(V[n - j]) above n / 2
  double c, s;
  quarter_twiddle(j, n, c, s);
  return Real(2) * (static_cast<Real>(c) * v.x + static_cast<Real>(s) * imaginary);
}

/// Entry k (< n / 2 + 1) of the spectrum whose C2R inverts a periodic or neumann axis'
/// coefficients, `x(j)` being X[j]: periodic X[k] + i X[n - k] (no imaginary part at 0 and at
/// n / 2), neumann exp(i pi k / 2n) (X[k] - i X[n - k]) with X[n] = 0.
template <class Complex, class Real, class X>
GPUKIT_HD_INLINE Complex axis_spectrum(AxisKind kind, std::int64_t k, std::int64_t n, X x) {
  const Real re = x(k);
  Complex v;
  if (kind == AxisKind::periodic) {
    v.x = re;
    v.y = k == 0 || 2 * k == n ? Real(0) : x(n - k);
    return v;
  }
  const Real im = k == 0 ? Real(0) : x(n - k);
  double c, s;
  quarter_twiddle(k, n, c, s);
  const Real cr = static_cast<Real>(c), sr = static_cast<Real>(s);
  v.x = re * cr + im * sr;
  v.y = re * sr - im * cr;
  return v;
}

/// The factor an inverse of the axis leaves on x after its forward transform: n (periodic),
/// 2(n + 1) (DST-I twice), 2n (DCT-III after DCT-II).
GPUKIT_HD_INLINE double round_trip_factor(AxisKind kind, std::int64_t n) {
  return kind == AxisKind::periodic    ? double(n)
         : kind == AxisKind::dirichlet ? 2.0 * double(n + 1)
                                       : 2.0 * double(n);
}

}  // namespace gpukit::pde::walls
