#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench implied_volatility`: a realistic chain's quotes (expiries 1 day to 5 years,
/// strikes 0.5 to 2 times the forward, volatilities 10% to 80%, prices from the library's
/// Black-Scholes pricing) inverted device-resident (with the Black-Scholes pricing kernel on the
/// same book in the same run, the ratio of implied volatilities to options priced per second in
/// the note), host to host through the chunked pipeline, and on the CPU backend; float and
/// double. Every row verified by the independent long double check on every k-th row.
void run_implied_volatility_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
