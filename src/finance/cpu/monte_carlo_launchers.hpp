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

/// The moments of blocks first_block .. first_block + block_count - 1 of `params`, as
/// launch_monte_carlo_blocks (cuda/monte_carlo_launchers.hpp) numbers them: block b is tiles
/// [k block_tiles, (k + 1) block_tiles) of option b / per_row, k = b % per_row, per_row =
/// ceil(tiles / block_tiles), each merged by the fixed tree (TileTree) to its node of the
/// option's tree. cpu_moments is the case of one block an option.
template <class Real>
std::vector<Moments<double>> cpu_block_moments(const std::vector<PathParams<Real>>& params,
                                               std::int64_t samples, std::uint64_t seed,
                                               bool antithetic, bool control, int threads,
                                               std::int64_t first_block, std::int64_t block_count,
                                               std::int64_t block_tiles,
                                               std::int64_t chunk_tiles = kMonteCarloCpuChunkTiles,
                                               const WorkDone& work_done = {});

}  // namespace gpukit::finance::mc
