#pragma once
// The seed's Monte Carlo run (seed 000, slides 20-25; the CUDA SDK "MonteCarlo" sample): a book of
// European calls priced with a very large number of paths each, every price printed beside
// Black-Scholes with the absolute and relative differences.

#include <cstdint>
#include <string>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/finance/european_book.hpp"

namespace gpukit::bench {

struct MonteCarloDemo {
  std::string device;
  std::int64_t options = 0, paths = 0;
  finance::Precision precision = finance::Precision::float64;
  double seconds = 0;  // pricing, the whole book (host to host)
  std::vector<double> spot, strike, maturity;
  double rate = 0.06, volatility = 0.10;  // the SDK sample's book-wide values
  std::vector<double> mc, std_error, black_scholes;
};

/// The SDK sample's random book (S in [5, 50], X in [10, 25], T in [1, 5], calls), deterministic
/// in (options, seed), priced with `paths` paths per option on `context`.
MonteCarloDemo run_monte_carlo_demo(const Context& context, std::int64_t options,
                                    std::int64_t paths, finance::Precision precision,
                                    std::uint64_t seed);

}  // namespace gpukit::bench
