#pragma once
// A test oracle, not part of the engine: the European option price under Heston's model by its
// semi-analytic formula, in long double. The characteristic function of ln S_T in the form of
// Albrecher, Mayer, Schoutens and Tistaert ("The little Heston trap", Wilmott 2007), which stays
// on the principal branch of the complex logarithm for every maturity; the two probabilities of
// Heston (1993) integrated over [0, inf) by an adaptive Gauss-Kronrod (7, 15) rule after the
// change of variable u = t / (1 - t).

#include <cmath>
#include <complex>
#include <cstdint>

namespace gpukit::finance::testing {

struct HestonTerms {
  bool put = false;
  long double spot = 100, strike = 100, maturity = 1, rate = 0, dividend = 0;
  long double v0 = 0.04, kappa = 1, theta = 0.04, sigma_v = 0.3, rho = -0.5;
};

namespace heston_detail {

using LD = long double;
using Complex = std::complex<LD>;

// E[exp(i u ln S_T)] for complex u (Albrecher et al.'s form: d with Re d >= 0 and g = (b - d) /
// (b + d), so that |g e^{-dT}| < 1 and the logarithm needs no branch tracking).
inline Complex characteristic(const HestonTerms& h, Complex u) {
  const Complex i(0, 1);
  const LD s2 = h.sigma_v * h.sigma_v;
  const Complex b = h.kappa - h.rho * h.sigma_v * i * u;
  const Complex d = std::sqrt(b * b + s2 * (i * u + u * u));
  const Complex g = (b - d) / (b + d);
  const Complex e = std::exp(-d * h.maturity);
  const Complex drift = i * u * (std::log(h.spot) + (h.rate - h.dividend) * h.maturity);
  const Complex mean_reversion =
      h.kappa * h.theta / s2 *
      ((b - d) * h.maturity - LD(2) * std::log((LD(1) - g * e) / (LD(1) - g)));
  const Complex variance = h.v0 / s2 * (b - d) * (LD(1) - e) / (LD(1) - g * e);
  return std::exp(drift + mean_reversion + variance);
}

// Re[exp(-i u ln K) f(u) / (i u)] with f the characteristic function shifted for P1 (measure of
// the stock) or not (P2).
inline LD integrand(const HestonTerms& h, LD u, bool stock_measure) {
  const Complex i(0, 1);
  const LD log_strike = std::log(h.strike);
  Complex f;
  if (stock_measure) {
    const Complex forward = characteristic(h, Complex(0, -1));  // E[S_T]
    f = characteristic(h, Complex(u, -1)) / forward;
  } else {
    f = characteristic(h, Complex(u, 0));
  }
  return std::real(std::exp(-i * u * log_strike) * f / (i * u));
}

// The 15-point Kronrod rule and its embedded 7-point Gauss rule on [a, b].
template <class F>
void gauss_kronrod(const F& f, LD a, LD b, LD& kronrod, LD& gauss) {
  static constexpr LD kNodes[8] = {
      0.991455371120812639206854697526329L, 0.949107912342758524526189684047851L,
      0.864864423359769072789712788640926L, 0.741531185599394439863864773280788L,
      0.586087235467691130294144845693013L, 0.405845151377397166906606412076961L,
      0.207784955007898467600689403773245L, 0.000000000000000000000000000000000L};
  static constexpr LD kKronrod[8] = {
      0.022935322010529224963732008058970L, 0.063092092629978553290700663189204L,
      0.104790010322250183839876322541518L, 0.140653259715525918745189590510238L,
      0.169004726639267902826583426598550L, 0.190350578064785409913256402421014L,
      0.204432940075298892414161999234649L, 0.209482141084727828012999174891714L};
  static constexpr LD kGauss[4] = {
      0.129484966168869693270611432679082L, 0.279705391489276667901467771423780L,
      0.381830050505118944950369775488975L, 0.417959183673469387755102040816327L};
  const LD center = (a + b) / 2, half = (b - a) / 2;
  const LD f0 = f(center);
  kronrod = kKronrod[7] * f0;
  gauss = kGauss[3] * f0;
  for (int k = 0; k < 7; ++k) {
    const LD sum = f(center - half * kNodes[k]) + f(center + half * kNodes[k]);
    kronrod += kKronrod[k] * sum;
    if (k % 2 == 1) gauss += kGauss[k / 2] * sum;
  }
  kronrod *= half, gauss *= half;
}

// Adaptive: split an interval until its Kronrod and Gauss estimates agree within `tolerance`
// (absolute, shared out by width) or 18 halvings (an interval of 2^-18 of [0, 1)).
template <class F>
LD adaptive(const F& f, LD a, LD b, LD tolerance, int depth = 0) {
  LD kronrod = 0, gauss = 0;
  gauss_kronrod(f, a, b, kronrod, gauss);
  if (std::fabs(kronrod - gauss) <= tolerance || depth >= 18) return kronrod;
  const LD middle = (a + b) / 2;
  return adaptive(f, a, middle, tolerance / 2, depth + 1) +
         adaptive(f, middle, b, tolerance / 2, depth + 1);
}

// P = 1/2 + 1/pi int_0^inf integrand(u) du, with u = t / (1 - t), du = dt / (1 - t)^2.
inline LD probability(const HestonTerms& h, bool stock_measure, LD tolerance) {
  const auto transformed = [&](LD t) {
    if (t >= 1) return LD(0);
    const LD u = t / (1 - t);  // > 0: the rule's nodes are inside the interval
    return integrand(h, u, stock_measure) / ((1 - t) * (1 - t));
  };
  constexpr LD kPi = 3.14159265358979323846264338327950288L;
  return LD(0.5) + adaptive(transformed, LD(0), LD(1), tolerance) / kPi;
}

}  // namespace heston_detail

/// The discounted price of a European call or put under Heston (S, v: dS = (r - q) S dt +
/// sqrt(v) S dW1, dv = kappa (theta - v) dt + sigma_v sqrt(v) dW2, d<W1, W2> = rho dt).
/// Preconditions: sigma_v > 0, kappa > 0, maturity > 0, strike > 0. `tolerance`: the absolute
/// error asked of each probability's integral (a small sigma_v makes the characteristic function
/// lose digits to cancellation: ask no more than it has).
inline long double heston_price(const HestonTerms& h, long double tolerance = 1e-15L) {
  using heston_detail::LD;
  const LD p1 = heston_detail::probability(h, true, tolerance);
  const LD p2 = heston_detail::probability(h, false, tolerance);
  const LD call = h.spot * std::exp(-h.dividend * h.maturity) * p1 -
                  h.strike * std::exp(-h.rate * h.maturity) * p2;
  if (!h.put) return call;
  return call - h.spot * std::exp(-h.dividend * h.maturity) +
         h.strike * std::exp(-h.rate * h.maturity);
}

}  // namespace gpukit::finance::testing
