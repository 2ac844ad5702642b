#pragma once
// Internal: a book's double columns (OptionBookView, ImpliedVolatilityBookView) in the Real a
// book is computed in: a double book's own arrays (nothing copied), a float book's rounded copies
// (the rounding is what computing in float means). Shared by price_european_book and
// implied_volatility_book.

#include <cstdint>
#include <type_traits>
#include <vector>

#include "gpukit/finance/instrument.hpp"

namespace gpukit::finance::detail {

/// The `n` values at `values` as Real: `values` itself in double, else a rounded copy held in
/// `storage`.
template <class Real>
const Real* book_column(const double* values, std::int64_t n, std::vector<Real>& storage) {
  if constexpr (std::is_same_v<Real, double>) {
    return values;
  } else {
    storage.assign(values, values + n);
    return storage.data();
  }
}

/// A per-row or book-wide parameter as Real, its per-row values through book_column.
template <class Real>
PerOption<Real> book_parameter(const PerOption<double>& p, std::int64_t n,
                               std::vector<Real>& storage) {
  if (p.values == nullptr) return PerOption<Real>{nullptr, static_cast<Real>(p.scalar)};
  return PerOption<Real>{book_column(p.values, n, storage), 0};
}

}  // namespace gpukit::finance::detail
