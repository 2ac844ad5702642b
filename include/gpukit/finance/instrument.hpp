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

/// Calls f(array) with a reference to each per-row array member of `book` (an OptionBookView,
/// const or not; null arrays included), in one fixed order: the one list of a book's columns,
/// which book_rows and the packed books a job's processes exchange walk, so that a column the
/// view gains reaches both.
template <class View, class F>
void for_each_row_array(View& book, F&& f) {
  f(book.is_put), f(book.spot), f(book.strike), f(book.maturity), f(book.rate.values);
  f(book.volatility.values), f(book.dividend.values), f(book.barrier_type), f(book.barrier);
  f(book.steps), f(book.stream), f(book.average), f(book.exercise), f(book.model);
  f(book.v0.values), f(book.kappa.values), f(book.theta.values), f(book.sigma_v.values);
  f(book.rho.values);
}

/// Rows [first, first + count) of `book` as a book of their own: every per-row array offset by
/// `first`, book-wide parameters kept. Precondition: 0 <= first, count >= 0, first + count <=
/// book.count. Monte Carlo keys a row without `stream` by its row number: price such rows with
/// MonteCarloOptions::first_option_index increased by `first` to keep their numbers.
inline OptionBookView book_rows(const OptionBookView& book, std::int64_t first,
                                std::int64_t count) {
  OptionBookView rows = book;
  rows.count = count;
  for_each_row_array(rows, [first](auto*& values) {
    if (values != nullptr) values += first;
  });
  return rows;
}

}  // namespace gpukit::finance
