#pragma once
// Internal: the Monte Carlo CPU backend's entry (cpu/monte_carlo_kernels.cpp), used by the
// dispatch in monte_carlo.cpp and by the tests; the CUDA twin is cuda/monte_carlo_launchers.hpp.

#include <cstdint>
#include <vector>

#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_statistics.hpp"

namespace gpukit::finance::mc {

/// The merged moments of every option on the CPU (OpenMP over tiles; `threads` 0 = all), computing
/// `chunk_tiles` tile moments at a time (the bits do not depend on it: the tests vary it).
template <class Real>
std::vector<Moments<double>> cpu_moments(const std::vector<PathParams<Real>>& params,
                                         std::int64_t samples, std::uint64_t seed, bool antithetic,
                                         bool control, int threads,
                                         std::int64_t chunk_tiles = kMonteCarloCpuChunkTiles,
                                         const WorkDone& work_done = {});

}  // namespace gpukit::finance::mc
