// tests/docs/examples/black_scholes.cpp: the example of docs/library.md, built and run by ctest.
#include <cmath>
#include <cstdio>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/finance/black_scholes.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  // A book as structure-of-arrays; rate and volatility given once for the whole book.
  std::vector<double> spot = {100, 100}, strike = {90, 110}, maturity = {0.5, 2.0};
  std::vector<double> call(2), put(2), delta(2);
  finance::BlackScholesInputs<double> in;
  in.count = 2;
  in.spot = spot.data();
  in.strike = strike.data();
  in.maturity = maturity.data();
  in.rate.scalar = 0.05;
  in.volatility.scalar = 0.2;
  finance::BlackScholesOutputs<double> out;  // null outputs are not computed
  out.call = call.data();
  out.put = put.data();
  out.call_delta = delta.data();
  finance::price_black_scholes(context, in, out);  // accurate N(d) through erfc by default
  std::printf("call %.6f put %.6f delta %.6f\n", call[0], put[0], delta[0]);
  // Put-call parity: call - put = S - K exp(-rT) (no dividend).
  for (int i = 0; i < 2; ++i) {
    const double parity = spot[i] - strike[i] * std::exp(-0.05 * maturity[i]);
    if (std::abs(call[i] - put[i] - parity) > 1e-9) return 1;
  }
  return 0;
}
