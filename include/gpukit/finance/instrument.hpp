#pragma once
// What is priced, apart from how (QuantLib's instrument/engine split): the terms of a book of
// European and barrier options as structure-of-arrays views in host memory, read by every pricing
// engine (Black-Scholes: price_european_book; Monte Carlo: price_monte_carlo_book) and produced
// by the readers (io::instrument_view of a CSV option book). Only plain types: the io layer
// includes this header to name the barrier types it reads, without linking the pricers.

#include <cstdint>

namespace gpukit::finance {

/// The precision a book is priced in (the pricers round each input to it first).
enum class Precision { float32, float64 };

/// A barrier option's kind; none for a European row. The one enumeration of barrier kinds: the
/// CSV reader stores it and the pricers read it.
enum class BarrierType : std::uint8_t { none, down_out, down_in, up_out, up_in };

/// An Asian (average price) row's average over its `steps` equally spaced fixings t_i = i T /
/// steps, i = 1..steps; none for every other row.
enum class AverageType : std::uint8_t { none, arithmetic, geometric };

/// When a row may be exercised: at maturity only, or at each of its `steps` equally spaced dates
/// (american is the Bermudan approximation on those dates).
enum class ExerciseStyle : std::uint8_t { european, bermudan, american };

/// The underlying's model: geometric Brownian motion at the row's volatility, or Heston's
/// stochastic variance (the row's v0, kappa, theta, sigma_v and rho; its volatility is ignored).
enum class AssetModel : std::uint8_t { black_scholes, heston };

/// A market parameter given per option (`values` non-null, `count` entries) or once for the book.
template <class Real>
struct PerOption {
  const Real* values = nullptr;
  Real scalar = 0;
};

/// A book of European and barrier options: the one view of what is priced, read by every engine
/// (each takes what it prices and refuses what it cannot: the Black-Scholes engine refuses a
/// barrier row). The columns are parallel arrays of `count` entries in host memory.
/// barrier_type, barrier and steps may be null (all European, one step); average, exercise and
/// model may be null (no average, European exercise, Black-Scholes), and the Heston parameters are
/// read only on heston rows.
struct OptionBookView {
  std::int64_t count = 0;
  const std::uint8_t* is_put = nullptr;  // 0 call, 1 put
  const double* spot = nullptr;
  const double* strike = nullptr;
  const double* maturity = nullptr;  // years
  PerOption<double> rate, volatility, dividend;
  const BarrierType* barrier_type = nullptr;
  const double* barrier = nullptr;  // read only where barrier_type != none
  const std::uint32_t* steps = nullptr;
  /// Each row's random stream key for Monte Carlo (e.g. monte_carlo_stream_key of its id); null:
  /// the row number, MonteCarloOptions::first_option_index + i.
  const std::uint64_t* stream = nullptr;
  // Asian, early-exercise and Heston rows: after the older fields, so that positional
  // initialisations of those keep their meaning.
  const AverageType* average = nullptr;
  const ExerciseStyle* exercise = nullptr;
  const AssetModel* model = nullptr;
  /// Heston: initial variance, mean-reversion speed, long-run variance, volatility of variance and
  /// the correlation of the variance's and the spot's Brownian motions.
  PerOption<double> v0{}, kappa{}, theta{}, sigma_v{}, rho{};
};

/// Rows [first, first + count) of `book` as a book of their own: every per-row array offset by
/// `first`, book-wide parameters kept. Precondition: 0 <= first, count >= 0, first + count <=
/// book.count. Monte Carlo keys a row without `stream` by its row number: price such rows with
/// MonteCarloOptions::first_option_index increased by `first` to keep their numbers.
inline OptionBookView book_rows(const OptionBookView& book, std::int64_t first,
                                std::int64_t count) {
  const auto at = [first](const auto* p) { return p != nullptr ? p + first : p; };
  OptionBookView rows = book;
  rows.count = count;
  rows.is_put = at(book.is_put);
  rows.spot = at(book.spot);
  rows.strike = at(book.strike);
  rows.maturity = at(book.maturity);
  rows.rate.values = at(book.rate.values);
  rows.volatility.values = at(book.volatility.values);
  rows.dividend.values = at(book.dividend.values);
  rows.barrier_type = at(book.barrier_type);
  rows.barrier = at(book.barrier);
  rows.steps = at(book.steps);
  rows.average = at(book.average);
  rows.exercise = at(book.exercise);
  rows.model = at(book.model);
  rows.v0.values = at(book.v0.values);
  rows.kappa.values = at(book.kappa.values);
  rows.theta.values = at(book.theta.values);
  rows.sigma_v.values = at(book.sigma_v.values);
  rows.rho.values = at(book.rho.values);
  rows.stream = at(book.stream);
  return rows;
}

}  // namespace gpukit::finance
