// tests/docs/examples/black_scholes.cpp: the example of docs/library.md, built and run by ctest.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/finance/black_scholes.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  // A book as structure-of-arrays: a call and a put on the same terms; rate and volatility given
  // once for the whole book, the side per option.
  std::vector<double> spot = {100, 100}, strike = {95, 95}, maturity = {0.5, 0.5};
  std::vector<std::uint8_t> is_put = {0, 1};
  std::vector<double> price(2), delta(2);
  finance::BlackScholesInputs<double> in;
  in.count = 2;
  in.spot = spot.data();
  in.strike = strike.data();
  in.maturity = maturity.data();
  in.rate.scalar = 0.05;
  in.volatility.scalar = 0.2;
  in.is_put.values = is_put.data();          // each option's own side is computed and written
  finance::BlackScholesOutputs<double> out;  // null outputs are not computed
  out.price = price.data();
  out.delta = delta.data();
  finance::price_black_scholes(context, in, out);  // accurate N(d) through erfc by default
  std::printf("call %.6f put %.6f, delta %.6f and %.6f\n", price[0], price[1], delta[0], delta[1]);
  // Put-call parity: call - put = S - K exp(-rT) (no dividend), and the deltas differ by 1.
  const double parity = spot[0] - strike[0] * std::exp(-0.05 * maturity[0]);
  const bool parity_holds = std::abs(price[0] - price[1] - parity) <= 1e-9;
  return parity_holds && std::abs(delta[0] - delta[1] - 1) <= 1e-12 ? 0 : 1;
}
