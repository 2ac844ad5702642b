#pragma once
// Internal: the early-exercise (Longstaff-Schwartz) engine behind price_monte_carlo_book: a row's
// plan, its CPU and CUDA backends, and the routing of a book's early-exercise rows (used by
// monte_carlo.cpp and the tests). See include/gpukit/finance/monte_carlo_american.hpp for the
// contract.

#include <cstdint>
#include <vector>

#include "finance/monte_carlo_american_paths.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::mc {

/// One early-exercise row's pricing: its constants, the paths of each pass, the seed, and the
/// rule of each date (discount and at_maturity set by american_plan; the coefficients written by
/// pass 1, then read by pass 2; the caller may read them afterwards).
template <class Real>
struct AmericanPlan {
  AmericanParams<Real> params;
  std::int64_t regression_paths = 0;  // pass 1 (american_regression_paths)
  std::int64_t paths = 0;             // pass 2
  std::uint64_t seed = 0;
  std::vector<DateRule<Real>> rules;  // params.dates of them
};

/// Whether row i of `book` has exercise bermudan or american; whether some row has.
bool is_early_exercise(const MonteCarloBookView& book, std::int64_t i);
bool has_early_exercise(const MonteCarloBookView& book);

/// The path-dates an early-exercise row of `steps` dates simulates at `paths` paths (both passes):
/// its weight beside a European row's paths times steps.
double american_work(std::int64_t paths, std::uint32_t steps);

/// Pass 2's moments (in units of the strike) of early-exercise row i of `book` in each of its
/// scenarios (mc::scenarios of the row: 1, or 5 with Greeks, each refitting its rule on the same
/// pass 1 numbers), on `context`; InvalidInput as american_plan. A row's moments do not depend on
/// the book's other rows: they travel between devices and processes as a block's
/// (monte_carlo_blocks.cpp).
template <class Real>
std::vector<Moments<double>> american_scenario_moments(const Context& context,
                                                       const MonteCarloBookView& book,
                                                       std::int64_t i,
                                                       const MonteCarloOptions& options,
                                                       const WorkDone& work_done = {});

/// A row's estimate from pass 2's moments: price = strike * mean, std_error = strike * the
/// samples' standard deviation / sqrt(samples) (samples: paths, or antithetic pairs), and with
/// `antithetic` the pairs' variance reduction factor.
Estimate american_estimate(const OptionInputs& in, const Moments<double>& moments, bool antithetic);

/// Reads and validates early-exercise row `i` of `book` (InvalidInput naming the row: a barrier,
/// Asian or Heston row, a strike or spot not > 0, steps outside [1, kAmericanMaxDates], or
/// options the engine does not offer on such rows), its inputs rounded to Real.
template <class Real>
AmericanPlan<Real> american_plan(const MonteCarloBookView& book, std::int64_t i,
                                 const MonteCarloOptions& options);

/// Both passes of `plan` on the CPU (`threads` 0: all), or on CUDA device `device` (in a build
/// without CUDA: DeviceUnavailable): pass 2's moments of the discounted payoff in units of the
/// strike; plan.rules gets the fitted coefficients. The bits depend on neither the thread count
/// nor the launch shape. `work_done`, when set, is told the path-dates done (american_work counts
/// them) after pass 1's paths, after each date's regression and after each group of pass 2's
/// tiles, from the calling thread with nothing in flight (a GPU then waits for each date's
/// launches); what it throws stops the row and propagates.
template <class Real>
Moments<double> american_moments_cpu(AmericanPlan<Real>& plan, int threads,
                                     const WorkDone& work_done = {});
template <class Real>
Moments<double> american_moments_cuda(AmericanPlan<Real>& plan, int device,
                                      const WorkDone& work_done = {});

/// The tiles' regression sums (partials[k * tiles + t]: sum k of tile t, k < count) folded in the
/// fixed order of the contract: slot j of kAmericanFoldSlots adds tiles j, j + 256, ... in order,
/// then the slots go through the tile tree.
void fold_regression_sums(const double* partials, std::int64_t tiles, int count, double sums[]);

/// The root of Monte Carlo's fixed tile tree from the roots of its aligned chunks of
/// `chunk_tiles` tiles (a power of two; the last chunk may be short), merged with the device's
/// fused multiply-add, so that a GPU's chunked pass 2 gets the bits of one tree.
Moments<double> merge_chunk_roots_as_the_device(const std::vector<Moments<double>>& roots,
                                                std::int64_t chunk_tiles);

/// price_monte_carlo_book of a book with early-exercise rows: its European rows priced as a book
/// of their own (each on its own stream key, so with the bits it has in any book), its
/// early-exercise rows one at a time by the engine, the results merged in row order. Every row is
/// validated before any is priced.
MonteCarloBookResult price_book_with_early_exercise(const Context& context,
                                                    const MonteCarloBookView& book,
                                                    const MonteCarloOptions& options);

}  // namespace gpukit::finance::mc
