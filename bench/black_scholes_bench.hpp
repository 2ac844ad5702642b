#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench black_scholes`: every registered CUDA variant (each verified against the double
/// CPU reference before it is timed), the host-to-host paths against PCIe, and the CPU backend.
void run_black_scholes_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
