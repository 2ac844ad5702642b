#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench rng`: samples/s of every generator in the rng registry (gpukit's Philox streams
/// and MT19937 streams, cuRAND's Philox, MTGP32, MT19937 and XORWOW) for each output it makes,
/// into device memory (1 GiB per fill), gpukit's rows checked against the CPU backend first;
/// plus the CPU backend.
void run_rng_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
