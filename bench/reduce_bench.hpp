#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench reduce`: the seed's table (2^22 int32), the CS 152 table (2^30 int32), and the
/// default variant against CUB from 2^20 to 2^30 (int32, float, float accurate), each variant
/// verified before it is timed; plus the CPU backend.
void run_reduce_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
