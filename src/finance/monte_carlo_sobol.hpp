#pragma once
// Internal: the Sobol sampler of price_monte_carlo_book (MonteCarloSampler::sobol): its checks,
// the rows of every replicate with their tables, the backends' moments of each replicate, and
// the randomized-QMC estimate over the replicates. The paths: monte_carlo_sobol_paths.hpp.

#include <cstdint>
#include <string_view>
#include <vector>

#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_sobol_paths.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/rng/brownian_bridge.hpp"

namespace gpukit::finance::mc {

/// Throws InvalidInput for options the sobol sampler refuses (monte_carlo.hpp's contract); does
/// nothing for the philox sampler.
void check_sobol_options(const MonteCarloOptions& options);

/// Throws InvalidInput naming option `i` for a row whose path needs more Sobol dimensions than
/// there are (rng::kSobolMaxDimensions).
void check_sobol_row(const OptionInputs& in, std::int64_t i);

/// Throws InvalidInput "monte carlo: {what} takes the philox sampler only, not sobol (yet)" for
/// the sobol sampler: the paths that do not price it say so rather than ignore it.
void check_philox_sampler(const MonteCarloOptions& options, std::string_view what);

/// Samples the backends simulate per row, the tiles' padding included (progress reports).
double padded_samples_per_row(const MonteCarloOptions& options);

/// Every replicate of every row (row i's replicate r at i * replicates + r) and the tables they
/// read; `samples` per replicate.
template <class Real>
struct SobolBook {
  std::vector<SobolRow<Real>> rows;
  std::vector<std::uint32_t> directions;
  std::vector<rng::BrownianBridgeNode<Real>> bridge;
  std::int64_t samples = 0;
};

/// The replicates of `rows` (inputs) with their path parameters `params` (book_path_params: the
/// stream keys). Throws InvalidInput for a barrier row of more steps than Sobol dimensions.
template <class Real>
SobolBook<Real> sobol_book(const std::vector<OptionInputs>& rows,
                           const std::vector<PathParams<Real>>& params,
                           const MonteCarloOptions& options);

/// The moments of each replicate on the CPU (OpenMP over tiles; `threads` 0 = all).
template <class Real>
std::vector<Moments<double>> cpu_sobol_moments(const SobolBook<Real>& book, bool antithetic,
                                               bool control, int threads,
                                               const WorkDone& work_done);

/// The kernel (cuda/monte_carlo_sobol_kernels.cu): the moments of (replicate, tile) pairs first
/// .. first + count - 1 (pair j: replicate j / tiles_for(samples), its tile j % tiles) into
/// device_tiles[0 .. count - 1], on `stream`. Every pointer in device memory.
template <class Real>
void launch_sobol_tiles(const SobolRow<Real>* device_rows, const SobolTables<Real>& device_tables,
                        std::int64_t samples, std::int64_t first, std::int64_t count,
                        bool antithetic, bool control, Moments<double>* device_tiles,
                        StreamHandle stream);

/// Each row's estimate from its replicates' moments (moments[i * replicates + r]): the price is
/// the mean of the replicates' prices, the standard error their standard deviation /
/// sqrt(replicates); the variance reduction factors are those of the replicates' samples pooled.
std::vector<Estimate> sobol_estimates(const std::vector<OptionInputs>& rows,
                                      const std::vector<Moments<double>>& moments,
                                      const MonteCarloOptions& options);

/// The moments of each entry of `book` (a replicate of a row) on `context` (on a CUDA device: on
/// *callers_stream, or on a stream of its own when callers_stream is null). An entry's moments do
/// not depend on the other entries: a book cut to some of its entries (the blocks of several
/// devices, monte_carlo_blocks.cpp) gives those entries' bits.
template <class Real>
std::vector<Moments<double>> sobol_moments_on(const Context& context, const SobolBook<Real>& book,
                                              const MonteCarloOptions& options,
                                              const WorkDone& work_done,
                                              const StreamHandle* callers_stream);

/// The estimates of `rows` on `context` (sobol_moments_on of their sobol_book, then
/// sobol_estimates).
template <class Real>
std::vector<Estimate> sobol_estimates_on(const Context& context,
                                         const std::vector<OptionInputs>& rows,
                                         const std::vector<PathParams<Real>>& params,
                                         const MonteCarloOptions& options,
                                         const WorkDone& work_done,
                                         const StreamHandle* callers_stream);

}  // namespace gpukit::finance::mc
