#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench scan`: the seed's CPU-vs-GPU table (1024 to 16,777,216 floats), the ladder at
/// 2048 elements, the default against CUB from 2^20 to 2^30 (int32; float at 2^24 and 2^28),
/// compaction against CUB DeviceSelect, each variant verified before it is timed; plus the CPU
/// backend.
void run_scan_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
