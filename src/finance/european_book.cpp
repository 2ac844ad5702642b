#include "gpukit/finance/european_book.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <type_traits>

#include "finance/book_columns.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::finance {

namespace {

// The book's columns in Real: a double book's own arrays (nothing copied), a float book's rounded
// copies (the rounding is what pricing in float means).
template <class Real>
struct BookColumns {
  std::vector<Real> spot, strike, maturity, rate, volatility, dividend;  // float only
  BlackScholesInputs<Real> inputs;

  BookColumns(const BookColumns&) = delete;
  BookColumns& operator=(const BookColumns&) = delete;
  explicit BookColumns(const OptionBookView& book) {
    const std::int64_t n = book.count;
    inputs = {n,
              detail::book_column(book.spot, n, spot),
              detail::book_column(book.strike, n, strike),
              detail::book_column(book.maturity, n, maturity),
              detail::book_parameter(book.rate, n, rate),
              detail::book_parameter(book.volatility, n, volatility),
              detail::book_parameter(book.dividend, n, dividend),
              {book.is_put, 0}};
  }
};

template <class Real>
EuropeanBookResult price_in(const Context& context, const OptionBookView& book, bool greeks,
                            const BlackScholesOptions& options) {
  const auto n = static_cast<std::size_t>(book.count);
  const BookColumns<Real> columns(book);
  // Each row's own side straight into the result's columns: in double the result's own arrays,
  // in float arrays of float widened after.
  EuropeanBookResult result;
  std::vector<double>* outputs[] = {&result.price, &result.delta, &result.gamma,
                                    &result.vega,  &result.theta, &result.rho};
  const std::size_t count = greeks ? std::size(outputs) : 1;
  std::vector<std::vector<Real>> computed(std::is_same_v<Real, double> ? 0 : count);
  Real* BlackScholesOutputs<Real>::*const members[] = {
      &BlackScholesOutputs<Real>::price, &BlackScholesOutputs<Real>::delta,
      &BlackScholesOutputs<Real>::gamma, &BlackScholesOutputs<Real>::vega,
      &BlackScholesOutputs<Real>::theta, &BlackScholesOutputs<Real>::rho};
  BlackScholesOutputs<Real> out;
  for (std::size_t k = 0; k < count; ++k) {
    outputs[k]->resize(n);
    if constexpr (std::is_same_v<Real, double>) {
      out.*members[k] = outputs[k]->data();
    } else {
      computed[k].resize(n);
      out.*members[k] = computed[k].data();
    }
  }
  price_black_scholes(context, columns.inputs, out, options);
  for (std::size_t k = 0; k < computed.size(); ++k) {
    std::copy(computed[k].begin(), computed[k].end(), outputs[k]->begin());
  }
  return result;
}

}  // namespace

EuropeanBookResult price_european_book(const Context& context, const OptionBookView& book,
                                       Precision precision, bool greeks,
                                       const BlackScholesOptions& options) {
  // What the closed form cannot price: Monte Carlo prices those rows.
  for (std::int64_t i = 0; i < book.count; ++i) {
    const char* what = nullptr;
    if (book.barrier_type != nullptr && book.barrier_type[i] != BarrierType::none) {
      what = "a barrier option";
    } else if (book.average != nullptr && book.average[i] != AverageType::none) {
      what = "an Asian option";
    } else if (book.exercise != nullptr && book.exercise[i] != ExerciseStyle::european) {
      what = "an option with early exercise";
    } else if (book.model != nullptr && book.model[i] != AssetModel::black_scholes) {
      what = "a heston row";
    }
    if (what != nullptr) {
      throw InvalidInput("Black-Scholes prices European options only: row " + std::to_string(i) +
                         " of the book is " + what + " (Monte Carlo prices those)");
    }
  }
  return precision == Precision::float32 ? price_in<float>(context, book, greeks, options)
                                         : price_in<double>(context, book, greeks, options);
}

}  // namespace gpukit::finance
