#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench saxpy`: the ladder for float (2^28) and double (2^27), y = alpha x + y in place,
/// against the device-to-device copy and cuBLAS measured in the same run; the default variant
/// against cuBLAS from 2^20 to 2^28 floats; the CPU backend (OpenBLAS). Every row is checked
/// element by element against the exact reference before it is timed.
void run_saxpy_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
