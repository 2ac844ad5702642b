#include "bench/monte_carlo_demo.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::bench {

namespace {

// SplitMix64 to a double in [lo, hi): the same book on every platform.
double uniform(std::uint64_t& state, double lo, double hi) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * static_cast<double>(z >> 11) * 0x1p-53;
}

}  // namespace

MonteCarloDemo run_monte_carlo_demo(const Context& context, std::int64_t options,
                                    std::int64_t paths, finance::Precision precision,
                                    std::uint64_t seed) {
  MonteCarloDemo demo;
  demo.device = context.describe();
  demo.options = options;
  demo.paths = paths;
  demo.precision = precision;
  const auto n = static_cast<std::size_t>(options);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; ++i) {
    demo.spot.push_back(uniform(state, 5.0, 50.0));
    demo.strike.push_back(uniform(state, 10.0, 25.0));
    demo.maturity.push_back(uniform(state, 1.0, 5.0));
  }
  const std::vector<std::uint8_t> calls(n, 0);
  finance::MonteCarloBookView book;
  book.count = options;
  book.is_put = calls.data(), book.spot = demo.spot.data(), book.strike = demo.strike.data();
  book.maturity = demo.maturity.data();
  book.rate = {nullptr, demo.rate}, book.volatility = {nullptr, demo.volatility};
  book.dividend = {nullptr, 0.0};
  finance::MonteCarloOptions mc_options;
  mc_options.paths = paths;
  mc_options.seed = seed;
  mc_options.precision = precision;
  const auto start = std::chrono::steady_clock::now();
  const finance::MonteCarloBookResult r =
      finance::price_monte_carlo_book(context, book, mc_options);
  demo.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  demo.mc = r.price;
  demo.std_error = r.std_error;
  const finance::OptionBookView bs_view{options,
                                        calls.data(),
                                        demo.spot.data(),
                                        demo.strike.data(),
                                        demo.maturity.data(),
                                        {nullptr, demo.rate},
                                        {nullptr, demo.volatility},
                                        {nullptr, 0.0}};
  demo.black_scholes = finance::price_european_book(Context::cpu(context.cpu_threads), bs_view,
                                                    finance::Precision::float64, false)
                           .price;
  demo.abs_difference.resize(n), demo.rel_difference.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double abs = std::abs(demo.mc[i] - demo.black_scholes[i]);
    const double rel = abs / std::abs(demo.black_scholes[i]);
    demo.abs_difference[i] = abs, demo.rel_difference[i] = rel;
    demo.max_abs_difference = std::max(demo.max_abs_difference, abs);
    demo.max_rel_difference = std::max(demo.max_rel_difference, rel);
    if (demo.std_error[i] > 0) {
      demo.max_difference_in_std_errors =
          std::max(demo.max_difference_in_std_errors, abs / demo.std_error[i]);
    }
    if (abs <= 1.96 * demo.std_error[i]) ++demo.inside_95_interval;
  }
  return demo;
}

}  // namespace gpukit::bench
