#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench gemm`: the seed's table (16384^2 float32: MatrixMult0, 1, 2 at 16 and 32, the
/// steps beyond them, cuBLAS), then every variant beyond the seed's against cuBLAS at 4096^3 and
/// 8192^3 in float32, tf32, bf16 and float64, and the ragged 4097^3 and 1000 x 3000 x 700 in
/// float32 and bf16; each row verified (sampled elements of C against a long double dot product,
/// within gemm_error_bound) before it is timed; plus the CPU backend (OpenBLAS). --size N runs
/// N^3 instead of every size.
void run_gemm_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
