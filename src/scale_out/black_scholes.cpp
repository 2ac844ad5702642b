// price_black_scholes_book: Black-Scholes rows over the job's workers (black_scholes.hpp).

#include "gpukit/scale_out/black_scholes.hpp"

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "gpukit/finance/option_book_bytes.hpp"
#include "gpukit/scale_out/rows.hpp"

namespace gpukit::scale_out {

namespace {

// A European book's rows as compute_rows (rows.hpp) takes them.
struct BlackScholesRows {
  using View = finance::OptionBookView;
  using Packed = finance::PackedOptionBook;
  using Result = finance::EuropeanBookResult;

  finance::Precision precision;
  bool greeks;
  const finance::BlackScholesOptions& options;

  View rows(const View& book, std::int64_t first, std::int64_t count) const {
    return finance::book_rows(book, first, count);
  }
  std::vector<std::byte> pack(const View& book, std::int64_t first, std::int64_t count) const {
    return finance::pack_option_book(book, first, count);
  }
  Result compute(const Context& context, const View& book) const {
    return finance::price_european_book(context, book, precision, greeks, options);
  }
  static auto columns(Result& result) {
    return std::tie(result.price, result.delta, result.gamma, result.vega, result.theta,
                    result.rho);
  }
};

}  // namespace

finance::EuropeanBookResult price_black_scholes_book(const Job& job,
                                                     const finance::OptionBookView& book,
                                                     finance::Precision precision, bool greeks,
                                                     const finance::BlackScholesOptions& options,
                                                     Results results) {
  return compute_rows(job, book, BlackScholesRows{precision, greeks, options}, results);
}

}  // namespace gpukit::scale_out
