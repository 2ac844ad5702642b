#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench monte_carlo`: one option on the device (European one step: paths/s; barrier with
/// 252 discrete dates: path-steps/s), float and double, each checked against the closed form; the
/// seed's problem-size grid (options x paths, samples/s and options/s); the CPU backend.
void run_monte_carlo_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
