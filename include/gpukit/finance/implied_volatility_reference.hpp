#pragma once
// The independent check of implied volatilities (`gpukit iv --check`, the tests): each row's
// status recomputed in long double, and for each row both sides call ok, the exact volatility
// of its (Real-rounded) inputs solved in long double by bracketed Newton on the model's price,
// evaluated in a different arrangement from the library's (no Let's-Be-Rational branch, series or
// rational guess: the out-of-the-money price as e^{-(h^2+t^2)/2} / sqrt(2 pi) times the integral
// of Y'(z) over [h - t, h + t] by Gauss-Legendre quadrature, Y(z) = Phi(z) / phi(z) from erfc or
// its continued fraction); and the bound a correct volatility stays within.
//
// The bound. Write sigma* for the exact volatility of the inputs as rounded to Real, vega* for the
// price's derivative in sigma there, and eps for Real's machine epsilon. A volatility computed in
// Real is off by its own rounding and by the price's rounding carried through 1/vega
// (d sigma = d price / vega): the inputs reach the inversion as a normalised price with a few
// roundings, and as a log-moneyness x = ln(F/K) (F - K for Bachelier) with a few roundings of
// |x| (and of |(r - q) T| for black_scholes, whose x is ln(S/K) + (r - q) T); the price moves by
// M = |d price / d x| times x's error, with M = D (F N(d1) + K N(d2)) / 2 on the row's side
// (D N(z) |F - K| per unit of relative error for Bachelier). So the scale of the price's error is
//   P = price + M (|x| + |(r - q) T|) + D max(F, K) tiny / eps      (tiny: Real's least normal),
// the last term the floor below which Real cannot hold a normalised price. A volatility sigma
// computed in Real passes when either
//   |sigma - sigma*|          <= kImpliedVolatilityBoundUnits eps (sigma* + P / vega*)   or
//   |price(sigma) - price|    <= kImpliedVolatilityBoundUnits eps (P + sigma* vega*),
// the same bound in volatility and in price (d sigma = d price / vega). They agree where the price
// is linear in sigma over the error; the price form is what holds where it is not: a price within
// a few units of rounding of its intrinsic value is repriced by sigma = 0 as well as by sigma*
// (the price does not tell them apart), and near the upper bound by any large sigma. The check
// reports the smaller of the two ratios. Where the price carries the information,
// P / (sigma* vega*) <= 27, the volatility form is within 1e-13 of sigma* in double (the issue's
// bar); deep in the money or at tiny vega it widens as the price's conditioning does. The tests
// measure the worst ratio on a grid of every branch in both precisions (printed; the header of
// implied_volatility.hpp quotes it).
//
// Statuses near a boundary: rounding decides a price within a few units of rounding of the
// intrinsic value or of the upper bound, so where the long double price lies within
// kImpliedVolatilityBoundUnits eps (DF + DK) (1 + |rT| + |qT|) of one, either side of it agrees.

#include <cstdint>
#include <functional>
#include <span>

#include "gpukit/finance/implied_volatility.hpp"

namespace gpukit::finance {

/// The units of rounding the bound allows (see above).
inline constexpr double kImpliedVolatilityBoundUnits = 16;

/// One row to invert, in long double: the spot (black_scholes) or forward as `underlying`.
struct ImpliedVolatilityQuote {
  VolatilityModel model = VolatilityModel::black_scholes;
  long double price = 0, underlying = 0, strike = 0, maturity = 0, rate = 0, dividend = 0;
  bool is_put = false;
};

/// The row's price at `volatility` in long double: the discounted intrinsic value plus the
/// out-of-the-money price computed as described above (`quote.price` is not read). The tests
/// generate prices from known volatilities with it.
long double implied_volatility_model_price(const ImpliedVolatilityQuote& quote,
                                           long double volatility);

/// A row's exact answer in long double, and what the bound needs.
struct ImpliedVolatilityReference {
  ImpliedVolatilityStatus status = ImpliedVolatilityStatus::invalid_input;
  /// Whether the price lies within the margin of the intrinsic value or of the upper bound, where
  /// rounding may decide the status either way.
  bool near_intrinsic = false, near_bound = false;
  long double volatility = 0;   // sigma* (ok rows)
  long double vega = 0;         // d price / d sigma at sigma*
  long double price_scale = 0;  // P

  /// Whether a library's `status` for the row agrees: the status, or one rounding may give.
  bool accepts(ImpliedVolatilityStatus given) const {
    return given == status ||
           (near_intrinsic && (given == ImpliedVolatilityStatus::below_intrinsic ||
                               given == ImpliedVolatilityStatus::ok)) ||
           (near_bound && (given == ImpliedVolatilityStatus::above_maximum ||
                           given == ImpliedVolatilityStatus::ok));
  }
};

/// The reference for one row (its inputs as rounded to the Real the library computed in,
/// `precision`, which also sets the boundary margin). `start`: where Newton starts if it lies
/// inside the bracket (the volatility being checked, so that the solve is short); the answer does
/// not depend on it beyond long double's rounding. Without `solve`, the status alone (volatility,
/// vega and price_scale left 0): what the check needs for a row the library gave no volatility.
ImpliedVolatilityReference implied_volatility_reference(const ImpliedVolatilityQuote& quote,
                                                        Precision precision, long double start = -1,
                                                        bool solve = true);

/// The error of `volatility` for an ok row against its bound: the smaller of the ratios of the
/// volatility form and of the price form (see above); pass is <= 1. NaN for a NaN volatility.
double implied_volatility_error_ratio(const ImpliedVolatilityQuote& quote,
                                      const ImpliedVolatilityReference& reference,
                                      Precision precision, double volatility);

/// The outcome of checking a book's implied volatilities.
struct ImpliedVolatilityCheck {
  double worst_ratio = 0;         // max over ok rows of |sigma - sigma*| / bound (NaN if any NaN)
  std::int64_t worst_index = -1;  // the row where it occurs
  /// Rows whose status differs from the long double status (beyond the boundary margin), and the
  /// first of them.
  std::int64_t status_mismatches = 0;
  std::int64_t first_mismatch = -1;
  /// Rows that are not ok whose volatility is not NaN.
  std::int64_t volatility_not_nan = 0;
  bool passed = false;  // worst_ratio <= 1 and no mismatch
};

/// Checks `volatility` and `status` (one per row) of `book` inverted in `precision` under `model`:
/// the inputs are rounded to the precision first, as implied_volatility_book does. Runs on
/// `threads` OpenMP threads (0: all); the result does not depend on it. `progress`, when set, is
/// told the fraction of the rows checked, from the calling thread, every 2^16 rows and at the end;
/// what it throws stops the check and propagates. Throws InvalidInput when the spans' sizes
/// differ from the book's count.
ImpliedVolatilityCheck check_implied_volatility_book(
    const ImpliedVolatilityBookView& book, Precision precision, VolatilityModel model,
    std::span<const double> volatility, std::span<const ImpliedVolatilityStatus> status,
    int threads = 0, const std::function<void(double)>& progress = {});

}  // namespace gpukit::finance
