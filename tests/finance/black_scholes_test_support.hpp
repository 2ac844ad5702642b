#pragma once
// Shared by the Black-Scholes CPU and GPU tests: random books, the long-double closed form that
// serves as the independent oracle, and the derived tolerance.

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpukit/finance/black_scholes.hpp"

namespace gpukit::finance::testing {

struct Book {
  std::vector<double> spot, strike, maturity, rate, volatility, dividend;
  std::size_t size() const { return spot.size(); }
  /// Double-precision views of every column, per-option parameters included.
  BlackScholesInputs<double> inputs() const {
    return {static_cast<std::int64_t>(size()),
            spot.data(),
            strike.data(),
            maturity.data(),
            {rate.data()},
            {volatility.data()},
            {dividend.data()}};
  }
};

/// The seed's ranges (slide 12) with per-option rate, volatility and dividend.
inline Book seed_like_book(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> s(5, 30), x(1, 100), t(0.25, 10), r(0.0, 0.08),
      v(0.1, 0.6), q(0.0, 0.05);
  Book b;
  for (std::size_t i = 0; i < n; ++i) {
    b.spot.push_back(s(rng)), b.strike.push_back(x(rng)), b.maturity.push_back(t(rng));
    b.rate.push_back(r(rng)), b.volatility.push_back(v(rng)), b.dividend.push_back(q(rng));
  }
  return b;
}

/// Deep in and out of the money, 1-day to 30-year maturities, volatilities 0.01-3, dividends.
inline Book extreme_book(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, u(rng)); };
  Book b;
  for (std::size_t i = 0; i < n; ++i) {
    const double spot = log_uniform(1, 1000);
    b.spot.push_back(spot);
    b.strike.push_back(spot * std::exp(-3 + 6 * u(rng)));
    const int kind = static_cast<int>(i % 4);
    b.maturity.push_back(kind == 0 ? 1.0 / 365 : kind == 1 ? 30.0 : log_uniform(1.0 / 365, 30));
    b.volatility.push_back(log_uniform(0.01, 3));
    b.rate.push_back(-0.02 + 0.12 * u(rng));
    b.dividend.push_back(0.08 * u(rng));
  }
  return b;
}

template <class Real>
double fast_math_error(NormalCdf cdf) {
  return cdf == NormalCdf::hull_polynomial_fast_math && sizeof(Real) == 4 ? 64 * 0x1p-21 : 0.0;
}

struct ClosedForm {
  long double call, put;
};

/// Independent oracle: the forward-price form of Black-Scholes-Merton in long double, with N
/// from erfcl (a different arrangement and precision from the library's).
inline ClosedForm closed_form(long double S, long double X, long double T, long double r,
                              long double v, long double q) {
  const long double forward = S * std::exp((r - q) * T);
  const long double discount = std::exp(-r * T);
  const long double s = v * std::sqrt(T);
  if (s == 0 || X == 0) {
    return {discount * std::max(forward - X, 0.0L), discount * std::max(X - forward, 0.0L)};
  }
  const long double d1 = (std::log(forward / X) + s * s / 2) / s;
  const long double d2 = d1 - s;
  auto N = [](long double d) { return 0.5L * std::erfc(-d / std::sqrt(2.0L)); };
  return {discount * (forward * N(d1) - X * N(d2)), discount * (X * N(-d2) - forward * N(-d1))};
}

/// Bound on |computed - exact| for one option: each of the ~30 roundings and library calls
/// (erfc <= 4 ulp, exp/log <= 2 ulp) perturbs a term of size S e^{-qT} or X e^{-rT} by a few
/// ulps; 64 ulps of their sum covers them. The seed's polynomial adds its 7.5e-8 absolute error
/// in each N, weighted by the same two terms.
/// Float fast math (GPU only) adds a few dozen of the intrinsics' 2^-21 relative errors.
template <class Real>
double price_tolerance(double S, double X, double T, double r, double q, NormalCdf cdf) {
  const double scale = S * std::exp(-q * T) + X * std::exp(-r * T);
  const double cdf_error = cdf != NormalCdf::erfc ? 7.5e-8 : 0.0;
  return 64 * std::numeric_limits<Real>::epsilon() * scale + cdf_error * scale +
         fast_math_error<Real>(cdf) * scale;
}

}  // namespace gpukit::finance::testing
