#pragma once
// Prices a book of European options, each a call or a put, in float or double: the operation
// behind `gpukit bs`. Inputs are double (as read from a file); results are returned as double
// whatever the computing precision.

#include <cstdint>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/instrument.hpp"

namespace gpukit::finance {

/// Each option's own price and, when asked, its own Greeks (a put's delta is the put delta).
struct EuropeanBookResult {
  std::vector<double> price;
  std::vector<double> delta, gamma, vega, theta, rho;  // empty unless Greeks were asked for
};

/// Prices `book` (finance/instrument.hpp) on `context`, each row its own side (only that side is
/// computed). float64 prices the book's own columns, without a copy: the call allocates its result
/// columns and nothing else of the book's size. float32 rounds the inputs to float first (a copy
/// in float). Same contract and errors as price_black_scholes, and InvalidInput for a row it
/// cannot price (Monte Carlo prices those): a barrier row (barrier_type other than none), an Asian
/// row (average other than none), early exercise (exercise other than european) or a heston row;
/// steps, stream and the Heston parameters are not read.
EuropeanBookResult price_european_book(const Context& context, const OptionBookView& book,
                                       Precision precision, bool greeks,
                                       const BlackScholesOptions& options = {});

}  // namespace gpukit::finance
