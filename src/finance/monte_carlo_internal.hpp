#pragma once
// Internal: the steps of price_monte_carlo_book that the GPU tests and the benchmark reuse.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"

namespace gpukit::finance::mc {

/// An option's inputs, rounded to the computing precision (so float runs price what they see).
struct OptionInputs {
  bool is_put = false;
  double spot = 0, strike = 0, maturity = 0, rate = 0, volatility = 0, dividend = 0;
  BarrierType barrier_type = BarrierType::none;
  double barrier = 0;
  std::uint32_t steps = 1;
  AverageType average = AverageType::none;
  AssetModel model = AssetModel::black_scholes;
  double v0 = 0, kappa = 0, theta = 0, sigma_v = 0, rho = 0;  // heston rows only
  PathSample sample = PathSample::price;  // what a path's sample is (a Greek's scenario)
  bool early_exercise = false;  // priced by the Longstaff-Schwartz engine (its Greeks: differences)
};

/// Throws InvalidInput for a book or options price_monte_carlo_book refuses (its contract).
void check_book_and_options(const MonteCarloBookView& book, const MonteCarloOptions& options);

/// Throws InvalidInput naming the first row whose exercise is not european: for the paths that
/// price European rows only (`what`: "a book in blocks"), which would
/// otherwise price such a row as a European option.
void check_european_exercise(const MonteCarloBookView& book, std::string_view what);

/// Samples per option: the paths, or the antithetic pairs.
inline std::int64_t samples_per_option(const MonteCarloOptions& options) {
  return options.antithetic ? options.paths / 2 : options.paths;
}

/// Whether a barrier row's barrier is breached at the start (down: spot <= barrier; up: spot >=
/// barrier), so that every path is knocked at once; false for a European row.
bool knocked_at_start(const OptionInputs& in);

/// Reads and validates row `i` (InvalidInput for a bad barrier or step count, an Asian barrier,
/// Heston parameters out of range, or an exercise style the enumeration does not name).
template <class Real>
OptionInputs option_inputs(const MonteCarloBookView& book, std::int64_t i);

/// Andersen's constants of a heston row's step (monte_carlo_path_params.hpp), computed in double
/// and rounded once to Real.
template <class Real>
HestonStep<Real> heston_step_params(const OptionInputs& in);

/// An option's path parameters; `stream_key` is its random stream (monte_carlo.hpp).
template <class Real>
PathParams<Real> path_params(const OptionInputs& in, std::uint64_t stream_key,
                             BarrierMonitoring monitoring);

/// Throws InvalidInput for the first of rows [first, first + count) of `book` that the pricing
/// with `options` refuses (option_inputs, a heston row's options, the sobol sampler's dimensions),
/// naming its row in `book`; early-exercise rows are left to their engine (american_plan). Called
/// before a book's rows are priced as books of their own (the European rows of a book with early
/// exercise, a range of blocks), whose errors would name their place there.
template <class Real>
void check_rows(const MonteCarloBookView& book, std::int64_t first, std::int64_t count,
                const MonteCarloOptions& options);

/// Every row of `book` (option_inputs).
template <class Real>
std::vector<OptionInputs> book_inputs(const MonteCarloBookView& book);

/// The path parameters of `rows` (the book's rows, or a bumped copy of them), each on its row's
/// stream key: book.stream[i], or options.first_option_index + i.
template <class Real>
std::vector<PathParams<Real>> book_path_params(const MonteCarloBookView& book,
                                               const std::vector<OptionInputs>& rows,
                                               const MonteCarloOptions& options);

/// Told the path-steps just simulated (for progress reports); may be empty.
using WorkDone = std::function<void(double path_steps)>;

/// Path-steps of one chunk of the CPU backend when progress is reported, so about how often
/// MonteCarloOptions::progress is called, and so how soon a person watching hears (the CLI) and
/// how soon a callback that throws (Python's Ctrl-C) stops a call: about 0.05 s on 16 cores, a
/// second or so on two busy ones. A chunk is a parallel region and an in-order merge, cheap beside
/// this much work. The bits do not depend on it.
inline constexpr std::int64_t kMonteCarloCpuProgressPathSteps = std::int64_t{1} << 24;

/// Tiles per chunk of the CPU backend on `params` when progress is reported (the backend calls
/// work_done once a chunk): about kMonteCarloCpuProgressPathSteps path-steps of the longest rows
/// (so that one row of many steps reports too), never fewer than 4 tiles a thread (the tile is
/// the unit of work: a row of 2^20 steps reports every 4 tiles a thread), never more than
/// kMonteCarloCpuChunkTiles.
template <class Real>
std::int64_t cpu_progress_chunk_tiles(std::span<const PathParams<Real>> params, int threads) {
  std::uint32_t most_steps = 1;
  for (const PathParams<Real>& p : params) most_steps = std::max(most_steps, p.steps);
  return std::clamp<std::int64_t>(
      kMonteCarloCpuProgressPathSteps / (kMonteCarloTileSamples * std::int64_t{most_steps}),
      4 * std::int64_t{threads}, kMonteCarloCpuChunkTiles);
}

/// Progress of a launch over the rows `part`: each tile done is kMonteCarloTileSamples paths of
/// the rows' mean steps a path. Empty when work_done is (the launcher then need not wait). Holds
/// its own copy of work_done.
template <class Real>
std::function<void(std::int64_t tiles)> tile_progress(std::span<const PathParams<Real>> part,
                                                      const WorkDone& work_done) {
  if (!work_done) return {};
  double steps = 0;
  for (const PathParams<Real>& p : part) steps += p.steps;
  steps /= double(part.size());
  return [work_done, steps](std::int64_t tiles) {
    work_done(double(tiles) * double(kMonteCarloTileSamples) * steps);
  };
}

struct Estimate {
  double price = 0, std_error = 0, vrf_antithetic = 0, vrf_control = 0;
};

/// E[max(+-(G - K), 0)] / S0 for the geometric average G of S at the row's `steps` fixings t_i =
/// i T / steps under Black-Scholes (Kemna and Vorst 1990 with discrete fixings), undiscounted:
/// the mean of an arithmetic Asian row's control variate.
double geometric_asian_expected_payoff(const OptionInputs& in);

/// The variance reduction factor of antithetic variates from the moments of n pairs' means (x)
/// and half differences (d): the variance of the plain estimator of 2n paths over the pairs'.
double antithetic_variance_reduction(const Moments<double>& m);

/// Price and standard error from an option's moments (x in units of the spot, undiscounted).
Estimate estimate(const Moments<double>& m, const OptionInputs& in, bool antithetic, bool control);

}  // namespace gpukit::finance::mc

namespace gpukit::finance::mc {

/// The result of a book (price, standard error, interval, paths, and the variance reduction
/// factors options asks for) from each row's estimate; Greeks are the caller's.
MonteCarloBookResult book_result(const std::vector<Estimate>& estimates,
                                 const MonteCarloOptions& options);

/// How a row's Greeks are estimated (monte_carlo.hpp), hence what its Greek books (books 1, 2,
/// ... of Scenarios) hold, all on the row's random numbers (h = 1% of the spot; h_v the
/// volatility's bump):
/// - pathwise (Black-Scholes European and Asian rows, Philox): 1, 2: the pathwise delta at S0 + h
///   and S0 - h (gamma: their central difference); 3: the pathwise vega; 4: the pathwise delta.
/// - pathwise_delta (heston European and Asian rows): 1, 2 as pathwise; 3, 4: the price at
///   sqrt(v0) + h_v and sqrt(v0) - h_v (vega: their central difference); 5: the pathwise delta.
/// - differences (barrier rows; every row with the sobol sampler; early exercise): 1, 2: the
///   price at S0 + h and S0 - h; 3, 4: the price at sigma (sqrt(v0) on heston rows) + h_v and -
///   h_v. Delta, gamma and vega by central differences with the base price.
/// A row's books beyond its method's are idle: a one-step European row whose result is not read
/// (the cheapest path), so that every book has every row.
enum class GreekMethod : std::uint8_t { pathwise, pathwise_delta, differences };
GreekMethod greek_method(const OptionInputs& in, const MonteCarloOptions& options);
/// The same from a row's model and barrier (monte_carlo_scenarios reads them from a book).
GreekMethod greek_method(AssetModel model, BarrierType barrier, MonteCarloSampler sampler);
/// The Greek books a row of `method` fills: 4, or 5 for pathwise_delta.
int greek_books(GreekMethod method);

/// The books a pricing simulates: the rows as given, and with Greeks the books of each row's
/// GreekMethod, with the bumps the differences divide by.
struct Scenarios {
  std::vector<std::vector<OptionInputs>> rows;  // 1 book, or monte_carlo_scenarios' count
  std::vector<GreekMethod> method;
  std::vector<double> spot_step;
  std::vector<double> vol_up, vol_down;  // sigma, or sqrt(v0) on heston rows, bumped
};
/// The scenarios of `inputs` (a book, or some rows of one) in `books` books (1 without Greeks;
/// monte_carlo_scenarios of the whole book with them, so that a part of a book has its books).
Scenarios scenarios(const std::vector<OptionInputs>& inputs, const MonteCarloOptions& options,
                    int books);
/// The scenarios of central differences on every row (GreekMethod::differences, 5 books with
/// `greeks`): the early-exercise engine's.
Scenarios difference_scenarios(const std::vector<OptionInputs>& inputs, bool greeks);

/// The book's result from each scenario's per-row moments (moments[s][i]: scenario s, row i).
MonteCarloBookResult result_from_moments(const Scenarios& scenarios,
                                         const std::vector<std::vector<Moments<double>>>& moments,
                                         const MonteCarloOptions& options);
/// The same from each scenario's per-row estimates (the Sobol sampler's, over its replicates).
MonteCarloBookResult result_from_estimates(const Scenarios& scenarios,
                                           const std::vector<std::vector<Estimate>>& estimates,
                                           const MonteCarloOptions& options);

/// Blocks of a row with `block_tiles` tiles a block.
std::int64_t blocks_per_row(const MonteCarloOptions& options, std::int64_t block_tiles);
/// InvalidInput unless `block_tiles` is a power of two up to kMonteCarloDeviceWorkspaceTiles.
void check_block_tiles(std::int64_t block_tiles);

/// price_monte_carlo_blocks and monte_carlo_result_from_blocks with blocks of `block_tiles` tiles
/// (a power of two, at most kMonteCarloDeviceWorkspaceTiles) in place of kMonteCarloBlockTiles:
/// the tests cut small books into many blocks; the bits do not depend on the block size.
std::vector<MonteCarloBlockMoments> price_blocks(const Context& context,
                                                 const MonteCarloBookView& book,
                                                 const MonteCarloOptions& options,
                                                 std::int64_t first_block, std::int64_t block_count,
                                                 std::int64_t block_tiles);
/// How result_from_blocks folds a book's block moments: on up to `threads` CPU threads (0: the
/// OpenMP default; the thread rule, core/cpu_threads.hpp, takes fewer for few blocks), each row's
/// aligned pieces of 2^piece_level blocks side by side (2^8 blocks: about 5 us of merges on one
/// core). The bits depend on neither (the tests vary both).
struct FoldPlan {
  int threads = 0;
  int piece_level = 8;
};
MonteCarloBookResult result_from_blocks(const MonteCarloBookView& book,
                                        const MonteCarloOptions& options,
                                        std::span<const MonteCarloBlockMoments> moments,
                                        Backend computed_on, std::int64_t block_tiles,
                                        const FoldPlan& fold = {});

}  // namespace gpukit::finance::mc
