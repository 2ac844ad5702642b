#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// `gpukit bench poisson`: every CUDA variant of the spectral Poisson solver against the vendor
/// row (cuFFT R2C/C2R) on 2D grids 1024^2 to 8192^2 and 3D boxes 128^3 to 512^3, float (and
/// double for the default variant, r2c and the vendor); device-resident f and u, each variant
/// verified before it is timed; plus the CPU (FFTW) at the small sizes. --size N keeps the 2D
/// grid N x N only.
void run_poisson_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
