#pragma once
// The independent reference that checks Black-Scholes prices (`gpukit bs --check`, the
// Black-Scholes demo and the tests): the forward-price form of Black-Scholes-Merton in long
// double with N from erfc on long double, a different arrangement and precision from the
// library's kernels, and the bound a correct price stays within, derived from the precision and
// the normal CDF variant.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>

#include "gpukit/core/verify.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/european_book.hpp"

namespace gpukit::finance {

struct ReferencePrices {
  long double call, put;
};

/// Call and put in long double: F = S e^{(r-q)T}, d1 = (ln(F/X) + s^2/2) / s with s = v sqrt(T),
/// call = e^{-rT} (F N(d1) - X N(d2)), N(d) = erfc(-d / sqrt 2) / 2 on long double; the
/// discounted intrinsic value when s == 0 or X == 0.
ReferencePrices black_scholes_reference(long double spot, long double strike, long double maturity,
                                        long double rate, long double volatility,
                                        long double dividend);

/// The absolute error of the seed's polynomial normal CDF (Hull; Abramowitz and Stegun 26.2.17:
/// |error| < 7.5e-8 for every d).
inline constexpr double kHullCdfAbsoluteError = 7.5e-8;

/// Bound on |computed - exact| for one option priced in Real with `cdf`, the exact price taken
/// on the inputs as rounded to Real. Each of the ~30 roundings and library calls (erfc <= 4 ulp,
/// exp/log <= 2 ulp) perturbs a term of size S e^{-qT} or X e^{-rT} by a few ulps: 64 ulps of
/// their sum (`scale`) covers them. Hull's polynomial adds its error in each of the two N, weighted
/// by the same two terms; the GPU's float fast math adds a few dozen of the intrinsics' 2^-21
/// relative errors. Relative to the option's scale, so a book of spot 25000 gets a bound 1000
/// times that of spot 25.
template <class Real>
double black_scholes_price_bound(double spot, double strike, double maturity, double rate,
                                 double dividend, NormalCdf cdf) {
  const double scale = spot * std::exp(-dividend * maturity) + strike * std::exp(-rate * maturity);
  const double cdf_error = cdf != NormalCdf::erfc ? kHullCdfAbsoluteError : 0.0;
  const double fast_math_error =
      cdf == NormalCdf::hull_polynomial_fast_math && sizeof(Real) == sizeof(float) ? 64 * 0x1p-21
                                                                                   : 0.0;
  return (64 * std::numeric_limits<Real>::epsilon() + cdf_error + fast_math_error) * scale;
}

/// The outcome of checking prices against black_scholes_reference.
struct BlackScholesCheck {
  ErrorMetrics metrics;           // the seeds' L1 norm and max abs error against the reference
  double worst_ratio = 0;         // max over prices of |price - reference| / bound (NaN if any NaN)
  std::int64_t worst_index = -1;  // the price (option) where it occurs
  bool passed = false;            // worst_ratio <= 1: every price within its own bound
};

/// Checks the prices of a book priced in Real (one per option, each on its own side:
/// inputs.is_put), each against the reference on the same (Real) inputs within
/// black_scholes_price_bound<Real>.
template <class Real>
BlackScholesCheck check_black_scholes_prices(const BlackScholesInputs<Real>& inputs,
                                             std::span<const Real> price, NormalCdf cdf,
                                             int threads = 0);

/// Checks the prices of price_european_book (one per option, its own side) the same way; the
/// inputs are rounded to the precision the book was priced in first, as price_european_book does.
/// Both run the reference on `threads` OpenMP threads (0: all); the result does not depend on it.
/// `progress`, when set, is told the fraction of the rows checked, from the calling thread, every
/// 2^16 rows and at the end (a large book's check takes a while: about a microsecond a row on a
/// core); what it throws stops the check and propagates.
BlackScholesCheck check_european_book_prices(const OptionBookView& book, Precision precision,
                                             NormalCdf cdf, std::span<const double> price,
                                             int threads = 0,
                                             const std::function<void(double)>& progress = {});

}  // namespace gpukit::finance
