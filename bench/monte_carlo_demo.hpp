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
  /// Per option: |mc - black_scholes|, and that over |black_scholes|.
  std::vector<double> abs_difference, rel_difference;
  /// Over the book: the largest of each difference, the largest |mc - black_scholes| in standard
  /// errors (options with a zero standard error left out), and the options whose Black-Scholes
  /// price lies inside the Monte Carlo 95% interval (|mc - black_scholes| <= 1.96 std_error).
  double max_abs_difference = 0, max_rel_difference = 0, max_difference_in_std_errors = 0;
  std::int64_t inside_95_interval = 0;

  double paths_per_second() const { return double(paths) * double(options) / seconds; }
  double percent_inside_95_interval() const {
    return options > 0 ? 100.0 * double(inside_95_interval) / double(options) : 0.0;
  }
};

/// The SDK sample's random book (S in [5, 50], X in [10, 25], T in [1, 5], calls), deterministic
/// in (options, seed), priced with `paths` paths per option on `context`, beside Black-Scholes
/// (CPU, double), with the statistics of their differences.
MonteCarloDemo run_monte_carlo_demo(const Context& context, std::int64_t options,
                                    std::int64_t paths, finance::Precision precision,
                                    std::uint64_t seed);

}  // namespace gpukit::bench
