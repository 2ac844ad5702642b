#pragma once
#include "bench/harness.hpp"

namespace gpukit::bench {
/// The Poisson tables of grids with walls (part of `gpukit bench poisson` on a CUDA device): the
/// CUDA walls solver with every axis dirichlet, then neumann, beside the periodic fused solve of
/// the same grid, 4096^2, 4095^2 and 512^3 (--size N: N x N), float and double, each row verified
/// against a manufactured solution in the boundary's modes before it is timed.
void run_poisson_walls_bench(const BenchConfig& config, Report& report);
}  // namespace gpukit::bench
