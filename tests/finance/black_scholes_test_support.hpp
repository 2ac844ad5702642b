#pragma once
// Shared by the Black-Scholes CPU and GPU tests: random books, and the library's long-double
// closed form (the independent oracle) and derived bound under the tests' names.

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/instrument.hpp"

namespace gpukit::finance::testing {

struct Book {
  std::vector<double> spot, strike, maturity, rate, volatility, dividend;
  std::size_t size() const { return spot.size(); }
};

/// `b` as the book price_european_book takes, each row's side from `is_put` (b.size() entries).
inline OptionBookView book_view(const Book& b, const std::uint8_t* is_put) {
  return {static_cast<std::int64_t>(b.size()),
          is_put,
          b.spot.data(),
          b.strike.data(),
          b.maturity.data(),
          {b.rate.data()},
          {b.volatility.data()},
          {b.dividend.data()}};
}

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

// The oracle and the bound live in the library (black_scholes_reference.hpp), shared with
// `gpukit bs --check` and the demo.
using ClosedForm = ReferencePrices;

/// The float fast-math intrinsics' share of black_scholes_price_bound, relative to the scale.
template <class Real>
double fast_math_error(NormalCdf cdf) {
  return cdf == NormalCdf::hull_polynomial_fast_math && sizeof(Real) == 4 ? 64 * 0x1p-21 : 0.0;
}

inline ClosedForm closed_form(long double S, long double X, long double T, long double r,
                              long double v, long double q) {
  return black_scholes_reference(S, X, T, r, v, q);
}

template <class Real>
double price_tolerance(double S, double X, double T, double r, double q, NormalCdf cdf) {
  return black_scholes_price_bound<Real>(S, X, T, r, q, cdf);
}

}  // namespace gpukit::finance::testing
