// tests/docs/examples/monte_carlo.cpp: the example of docs/library.md, built and run by ctest.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/finance/monte_carlo.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  // One down-and-out call, monitored on 252 dates.
  const std::uint8_t is_put[] = {0};
  const double spot[] = {100}, strike[] = {100}, maturity[] = {1}, barrier[] = {90};
  const finance::BarrierType type[] = {finance::BarrierType::down_out};
  const std::uint32_t steps[] = {252};
  finance::MonteCarloBookView book;
  book.count = 1;
  book.is_put = is_put;
  book.spot = spot;
  book.strike = strike;
  book.maturity = maturity;
  book.rate.scalar = 0.05;
  book.volatility.scalar = 0.2;
  book.barrier_type = type;
  book.barrier = barrier;
  book.steps = steps;
  finance::MonteCarloOptions options;
  options.paths = 1 << 16;  // per option; the standard error falls as 1 / sqrt(paths)
  options.seed = 7;         // the same seed gives the same bits on any backend and thread count
  options.control_variate = true;
  const finance::MonteCarloBookResult r = finance::price_monte_carlo_book(context, book, options);
  // The closed form for 252 dates: Haug's formula at the Broadie-Glasserman-Kou shifted barrier.
  const double shifted = finance::discrete_barrier_shift(type[0], barrier[0], 0.2, 1.0, 252);
  const double exact =
      finance::barrier_price_analytic(type[0], false, 100, 100, shifted, 1, 0.05, 0, 0.2);
  std::printf("price %.4f +- %.4f (95%%: %.4f..%.4f), closed form %.4f\n", r.price[0],
              r.std_error[0], r.ci_low[0], r.ci_high[0], exact);
  // Within 4 standard errors, plus the shift's own accuracy (the library's test allows the same).
  return std::abs(r.price[0] - exact) <= 4 * r.std_error[0] + 0.05 ? 0 : 1;
}
