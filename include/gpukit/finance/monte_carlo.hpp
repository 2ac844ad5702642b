#pragma once
// Monte Carlo prices of European, barrier and Asian options under geometric Brownian motion
// (seed 000, slides 16-39; seed 003, "Application 3: Option Pricing") or Heston's stochastic
// variance (issue 33), on the CPU or a CUDA device, in double (default) or float, with antithetic
// variates, a control variate and Greeks (pathwise or by central differences: "Greeks" below).
//
// Asian rows (OptionBookView::average): the average A of S at the `steps` fixings t_i = i T /
// steps, i = 1..steps, arithmetic (the mean of S_{t_i}) or geometric (exp of the mean of
// ln S_{t_i}); payoff max(A - K, 0) for a call, max(K - A, 0) for a put. An Asian row has no
// barrier. The control variate of an arithmetic Asian row under Black-Scholes is the geometric
// Asian's payoff on the same path, whose mean is known in closed form (Kemna and Vorst 1990 with
// discrete fixings: ln G is normal with mean ln S + (r - q - sigma^2/2) T (n+1)/(2n) and variance
// sigma^2 T (n+1)(2n+1)/(6 n^2), n = steps); every other row keeps the discounted terminal price.
//
// Heston rows (OptionBookView::model): dv = kappa (theta - v) dt + sigma_v sqrt(v) dW2, dS / S =
// (r - q) dt + sqrt(v) dW1, d<W1, W2> = rho dt, from v0 (the row's volatility is not read), by
// Andersen's quadratic-exponential scheme (2008: psi_c = 1.5, gamma1 = gamma2 = 1/2, and his
// martingale correction of the log-price's drift, so that E[S_{t+dt} | S_t, v_t] = S_t e^{(r-q)dt}
// on every step and the terminal price stays an exact control variate) on `steps` equal steps.
// sigma_v = 0 makes the variance deterministic (the spot's normal then carries all of it). The
// payoff of a heston row is European, a discretely monitored barrier (on the `steps` dates:
// continuous monitoring is refused, its Brownian-bridge correction needs a constant volatility)
// or an Asian average on the `steps` fixings.
//
// Model: under the risk-neutral measure ln S moves by (r - q - sigma^2/2) dt + sigma sqrt(dt) Z on
// each of `steps` equal steps to maturity (exact for GBM, so a European row needs one step). A
// barrier row is monitored on those `steps` dates (discrete) or continuously, through the
// Brownian-bridge probability exp(-2 (x_i - b)(x_{i+1} - b) / (sigma^2 dt)) that the log-price
// touched the barrier b between two dates on the same side (the path's payoff is weighted by its
// survival probability: an unbiased estimator of the continuously monitored price). A barrier
// already breached at the start (down: S <= B; up: S >= B) knocks every path: knock-out rows are
// 0, knock-in rows the vanilla. Knock-in payoffs are the vanilla times (1 - survival), so with the
// same random numbers knock-in + knock-out == vanilla to rounding.
//
// Random numbers (the contract that makes results reproducible and the CPU and GPU comparable):
// Philox4x32-10 (rng/philox.hpp) with key = seed and counter = (option, quad, block, ...): the
// normals of paths 4q..4q+3 at step s come from the words of (seed, option index, q, s) (float:
// one Philox call, two Box-Muller pairs) or of (seed, option, q, 2s) and (seed, option, q, 2s+1)
// (double: one Box-Muller pair of double uniforms per call). They never depend on a thread id.
// A heston row draws two normals a path a step: at step s the variance's Z_v are the normals of
// step word 2s and the spot's Z_s those of step word 2s + 1 (the exponential branch's uniform is
// U = Phi(Z_v)); with steps <= 2^20 the words stay below 2^22.
// With antithetic variates, sample i is the pair of paths driven by Z_i and -Z_i (both normals
// of a heston step flipped).
//
// A row's random stream is its 64-bit stream key k: by default its row number (first_option_index
// + i), or OptionBookView::stream (gpukit mc: monte_carlo_stream_key of the row's `id`, so a
// trade keeps its price wherever it sits in whichever book). Philox's counter words are (quad,
// k's bits 32-63, step word, k's bits 0-31): quads stay below 2^32 (paths <= kMonteCarloMaxPaths),
// so distinct keys never share a number, and a key below 2^32 gives exactly the counters of the
// row-number layout above. The key takes the two words Philox's first round only XORs, so it costs
// the kernels no multiply.
//
// Statistics: samples are grouped in fixed tiles of kMonteCarloTileSamples (32 lanes, each lane
// summing a fixed set of samples from a shifted origin), each tile reduced to (count, mean, M2,
// co-moments) by a fixed tree, and tiles merged with Chan's pairwise formula in a fixed tree over
// the tile index. No sum of squares is ever differenced, and the bits of a result do not depend on
// the thread count, block size, grid size or on the kernel chosen (one block per option or
// several blocks and a reduction, or a block per tile for long paths; a kernel specialized for
// one path kind or not). CPU and GPU double results differ only by the last bits of
// exp/log/sin/cos in the paths (and of products and sums the GPU fuses); float kernels use the
// hardware's approximate log2/sqrt/sin/cos/exp2 (the CPU float path the accurate functions), so
// they differ by float rounding.
//
// Each result: price (discounted mean), standard error (sample standard deviation / sqrt(n), of
// the control-variate residual when that is on), the 95% interval price +- 1.96 std_error, the
// number of simulated paths (an antithetic pair counts as two), and on request the variance
// reduction factors (the plain estimator's variance over the reduced one's, at equal paths) and
// delta, gamma and vega.
//
// Greeks (options.greeks), each on the row's own random numbers (common random numbers: every
// book of a row reuses its stream), with h = 1% of the spot and h_v = max(1% of sigma, 1e-4)
// (of sqrt(v0) on heston rows):
// - European and Asian rows under Black-Scholes (Philox): pathwise delta and vega, the mean of a
//   book whose per-path sample is the derivative of the discounted payoff, +-1{in the money} dU
//   for U the terminal price or the average: dU/dS0 = U / S0, dS_t/dsigma = S_t (ln(S_t / S0) -
//   (r - q + sigma^2/2) t) / sigma (summed over the fixings for an arithmetic average; G times
//   the mean of those exponents for a geometric one); gamma = (delta(S0 + h) - delta(S0 - h)) /
//   (2h) of pathwise deltas. A row of volatility 0 has vega 0.
// - European and Asian heston rows: pathwise delta (the QE log-price increment does not depend on
//   S0, so S_T is proportional to S0) and its gamma as above; vega is dP/d sqrt(v0) (kappa, theta,
//   sigma_v and rho fixed), (P(sqrt(v0) + h_v) - P(sqrt(v0) - h_v)) / (2 h_v), v0 bumped as the
//   square.
// - Barrier rows (either model), every row with the sobol sampler, and early exercise
//   (monte_carlo_american.hpp): central differences of prices, delta = (P(S0 + h) - P(S0 - h)) /
//   (2h), gamma = (P(S0 + h) - 2 P(S0) + P(S0 - h)) / h^2, vega = (P(sigma + h_v) - P(sigma -
//   h_v)) / (2 h_v) (the lower bump floored at 0; sqrt(v0) on heston rows).
// A pricing with Greeks simulates monte_carlo_scenarios(book, options) books (5, or 6 with a
// European or Asian heston row; gpukit/finance/monte_carlo_blocks.hpp). No standard error is
// reported for a Greek, and --check does not check them.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/european_book.hpp"
#include "gpukit/finance/instrument.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"

namespace gpukit::finance {

enum class BarrierMonitoring { discrete, continuous };

/// Where a path's normals come from. philox: Philox4x32-10 (the contract above). sobol: randomized
/// quasi-Monte Carlo (src/finance/monte_carlo_sobol_paths.hpp has the details): `replicates`
/// independent Owen scramblings of Joe and Kuo's Sobol points, each keyed by (seed, the row's
/// stream key, replicate), sample i of a replicate its point i, its coordinates through the
/// inverse normal CDF (AS241) and a Brownian bridge over the row's dates (European rows under
/// Black-Scholes use one coordinate, the terminal value; barrier and Asian rows one a date; heston
/// rows two a date, a bridge for the variance's normals and one for the spot's); price = the mean
/// of the replicates' estimates, std_error = their standard deviation / sqrt(replicates).
enum class MonteCarloSampler { philox, sobol };

/// The most Sobol replicates a pricing takes (each at least one sample).
inline constexpr std::int64_t kMonteCarloMaxReplicates = std::int64_t{1} << 16;

/// Samples per statistics tile (32 lanes x 16 quads x 4 paths); part of the result's definition.
inline constexpr std::int64_t kMonteCarloTileSamples = 2048;
/// Tile moments (64 bytes each) the CPU backend computes before merging them: 4 MiB.
inline constexpr std::int64_t kMonteCarloCpuChunkTiles = std::int64_t{1} << 16;
/// Tile moments a GPU holds at most (64 MiB), and rows per part of the book on a GPU.
inline constexpr std::int64_t kMonteCarloDeviceWorkspaceTiles = std::int64_t{1} << 20;
inline constexpr std::int64_t kMonteCarloDevicePartRows = std::int64_t{1} << 20;
/// The largest number of monitoring steps a row may have.
inline constexpr std::uint32_t kMonteCarloMaxSteps = 1u << 20;
/// The largest number of paths per option, 2^34 (quads below 2^32: the counter word beside them
/// holds the stream key's high half).
inline constexpr std::int64_t kMonteCarloMaxPaths = std::int64_t{1} << 34;

/// The stream key of a trade identifier: FNV-1a 64 of its bytes (offset basis
/// 0xcbf29ce484222325, prime 0x100000001b3; the empty id hashes to the offset basis). Rows with
/// the same id bytes get the same random numbers; ids differing in any byte (" T1" vs "T1" too)
/// get independent streams.
std::uint64_t monte_carlo_stream_key(std::string_view id);

/// The stream keys of a book whose rows carry trade ids (monte_carlo_stream_key of each id), and
/// how many ids appear on more than one row: such rows get the same random numbers, which a
/// caller may want to tell the user about.
struct MonteCarloStreamKeys {
  std::vector<std::uint64_t> keys;          // one per row, for OptionBookView::stream
  std::int64_t repeated_ids = 0;            // distinct ids found on two rows or more
  std::int64_t rows_with_repeated_ids = 0;  // the rows that carry those ids
};
/// `id_of_row(i)` gives row i's id bytes, for i in [0, rows); the bytes it views must stay alive
/// until the call returns (as the fields of an io::OptionBook do). Cost: one hash per row and a
/// hash table of the distinct ids. Tested in tests/finance/monte_carlo_test.cpp.
MonteCarloStreamKeys monte_carlo_stream_keys(
    std::int64_t rows, const std::function<std::string_view(std::int64_t row)>& id_of_row);

/// A book in host memory: the one instrument view (finance/instrument.hpp).
using MonteCarloBookView = OptionBookView;

struct MonteCarloOptions {
  std::int64_t paths = 1 << 20;  // per option; even with antithetic variates
  std::uint64_t seed = 2008;
  BarrierMonitoring monitoring = BarrierMonitoring::discrete;
  bool antithetic = false;
  bool control_variate = false;  // the discounted terminal price, of known mean S e^{-qT}
  bool greeks = false;           // delta, gamma and vega
  bool variance_reduction_factors = false;
  Precision precision = Precision::float64;
  MonteCarloSampler sampler = MonteCarloSampler::philox;
  /// Sobol only: independent scramblings, each of paths / replicates paths (a whole number of
  /// samples: antithetic pairs with antithetic variates); in [2, kMonteCarloMaxReplicates].
  std::int64_t replicates = 16;
  /// The Philox option index of the book's first row: a book priced in parts, each part with the
  /// index of its first row here, gets the numbers (and the bits) of the whole book.
  std::uint32_t first_option_index = 0;
  /// Called now and then from the calling thread with the fraction of the work done, in [0, 1]
  /// (path-steps, the bumped books of the Greeks included); may be empty. It is called between
  /// blocks of work, never while work is in flight: on the CPU between chunks of tiles, outside
  /// any parallel region; on a GPU after each launch has been waited for.
  ///
  /// It may stop the call by throwing (a caller's cancellation: Python's Ctrl-C is one): the
  /// exception propagates out of price_monte_carlo_book, price_monte_carlo_book_on_device and
  /// price_monte_carlo_blocks unchanged, on every backend, with nothing left behind: no work in
  /// flight on any stream (the caller's included), every buffer and stream the call made
  /// released, and no result (the on-device outputs are not written). Tested in
  /// tests/finance/monte_carlo_interrupt_test.cpp and monte_carlo_gpu_test.cpp.
  std::function<void(double fraction_done)> progress;
};

/// What `gpukit mc` and Python's monte_carlo are asked for (their words read by choices.hpp).
struct MonteCarloRequest {
  std::int64_t paths = 1 << 20;
  std::uint64_t seed = 2008;
  BarrierMonitoring monitoring = BarrierMonitoring::discrete;
  bool antithetic = false;
  bool control_variate = false;
  bool greeks = false;
  Precision precision = Precision::float64;
  MonteCarloSampler sampler = MonteCarloSampler::philox;
  std::int64_t replicates = 16;  // read with the sobol sampler
};

/// The options both front doors price a request's book with: the request's, and the
/// variance-reduction factors reported whenever a variance reduction is on (the columns
/// vrf_antithetic and vrf_control of the techniques used).
MonteCarloOptions monte_carlo_options(const MonteCarloRequest& request);

/// The path-steps price_monte_carlo_book simulates for `book` (paths times each row's steps, an
/// early-exercise row's regression paths too; times monte_carlo_scenarios(book, options) with
/// Greeks), as a double: a measure of the work, for deciding whether a run is long enough to
/// report its progress.
double monte_carlo_path_steps(const MonteCarloBookView& book, const MonteCarloOptions& options);

struct MonteCarloBookResult {
  std::vector<double> price, std_error, ci_low, ci_high;
  std::vector<double> paths;  // simulated paths per option (as a double for the output writer)
  std::vector<double> delta, gamma, vega;           // with greeks
  std::vector<double> vrf_antithetic, vrf_control;  // with variance_reduction_factors and
                                                    // the matching technique
};

/// Prices `book` on `context`. Rows with exercise bermudan or american are priced by the
/// Longstaff-Schwartz engine (gpukit/finance/monte_carlo_american.hpp: its method, bias, limits
/// and refusals); the other rows as below, with the bits they have in a book without them.
/// Throws InvalidInput for paths outside [2, kMonteCarloMaxPaths] (odd with antithetic), steps
/// outside [1, kMonteCarloMaxSteps], a barrier row whose barrier is not > 0, an Asian row with a
/// barrier, a heston row whose v0, theta or sigma_v is not >= 0, kappa not > 0 or |rho| > 1 (or,
/// with continuous monitoring, a heston barrier row), each naming the
/// row; with the sobol sampler also for replicates outside [2, kMonteCarloMaxReplicates], samples
/// (paths, or pairs) not a multiple of replicates, more than 2^32 samples a replicate, or a row
/// whose path needs more than rng::kSobolMaxDimensions (21201) dimensions (a barrier or Asian row
/// of more than 21201 steps, a heston row of more than 10600); CudaError and OutOfMemory
/// from the device. Option i uses stream key book.stream[i], or first_option_index + i without it
/// (so a row's numbers do not depend on the other rows); inputs are rounded to float first with
/// Precision::float32.
///
/// Memory: beyond the book and the result (a few hundred bytes per row), a fixed workspace that
/// depends on neither the paths nor the rows: the tiles of an option are merged as they are
/// computed (the CPU holds kMonteCarloCpuChunkTiles tile moments at a time, a GPU at most
/// kMonteCarloDeviceWorkspaceTiles and the rows of one part of the book), in the fixed tree of the
/// header comment, so the bits do not depend on how the work is cut.
MonteCarloBookResult price_monte_carlo_book(const Context& context, const MonteCarloBookView& book,
                                            const MonteCarloOptions& options);

/// Where price_monte_carlo_book_on_device writes: arrays of book.count doubles in device memory,
/// the fields of MonteCarloBookResult; a null array is not written. delta, gamma and vega need
/// options.greeks, vrf_antithetic and vrf_control options.variance_reduction_factors and the
/// matching technique.
struct MonteCarloDeviceOutputs {
  double* price = nullptr;
  double* std_error = nullptr;
  double* ci_low = nullptr;
  double* ci_high = nullptr;
  double* paths = nullptr;
  double* delta = nullptr;
  double* gamma = nullptr;
  double* vega = nullptr;
  double* vrf_antithetic = nullptr;
  double* vrf_control = nullptr;
};

/// Prices a book whose arrays (is_put, spot, strike, maturity, the per-option rate, volatility
/// and dividend, barrier_type, barrier, steps and stream keys: those the view names) are in the
/// current device's memory, on `stream`, and writes `device_outputs`: bitwise the results of
/// price_monte_carlo_book on that device for the same book and options. It reads the book's
/// arrays back to the host on `stream` (about 70 bytes a row, little beside the paths it
/// simulates), prepares the rows and forms the estimates with the host-data API's own host code,
/// and runs the paths on `stream`. It waits for `stream` (the estimates are formed on the host,
/// the exception of the `*_on_device` convention, docs/design-notes.md) and returns when the
/// outputs are written: nothing is left in flight. Throws InvalidInput as price_monte_carlo_book
/// (the same message for a bad row), for an output `options` does not compute and for a book
/// with an exercise column (early exercise is priced by price_monte_carlo_book only);
/// DeviceUnavailable in a build without CUDA; CudaError and OutOfMemory from the device.
void price_monte_carlo_book_on_device(const MonteCarloBookView& device_book,
                                      const MonteCarloDeviceOutputs& device_outputs,
                                      StreamHandle stream, const MonteCarloOptions& options);

/// The barrier rows of `book` whose barrier is already breached at the start (down: spot <=
/// barrier; up: spot >= barrier, compared in `precision` as the pricer compares them), in
/// ascending order. Every path is knocked at once: a knock-out row prices to 0, a knock-in row to
/// the vanilla option. A user rarely means that (a down-out at 110 on a spot of 100 is usually a
/// typo): gpukit mc and the Python module warn, naming each row with
/// monte_carlo_breached_at_start_note's words. Cost: one pass. Tested in
/// tests/finance/monte_carlo_test.cpp.
std::vector<std::int64_t> monte_carlo_rows_breached_at_start(const MonteCarloBookView& book,
                                                             Precision precision);
/// "the down-out barrier 110 is breached at the start (spot 100): the option is priced as knocked
/// out (price 0)" (knock-in rows: "as knocked in (the vanilla option)"), for a row
/// monte_carlo_rows_breached_at_start named.
std::string monte_carlo_breached_at_start_note(const MonteCarloBookView& book, std::int64_t row);

/// The rows of `book`, priced by `options` into `result`, none of whose paths paid: price and
/// standard error exactly 0 (every sample's payoff 0), their interval [0, 0]. Rows whose paths
/// are not random (volatility or maturity 0) and knock-outs breached at the start are left out:
/// 0 is their price. Such a row is deep out of the money for the paths given: its price is small,
/// not 0, and [0, 0] is no confidence interval (see monte_carlo_no_paying_path_note). Ascending.
std::vector<std::int64_t> monte_carlo_rows_without_paying_path(const MonteCarloBookView& book,
                                                               const MonteCarloOptions& options,
                                                               const MonteCarloBookResult& result);
/// The words gpukit mc and the Python module warn with: "2 of 650 options had no paying path
/// among their 20000 paths (<locations>): their price, std_error and ci are 0, which is no
/// confidence interval; it says that a path pays with a probability below 0.00015 (95%
/// confidence), ..." (the rule of three over the independent samples), listing the first five of
/// `locations` (one per such row, in the caller's words: "book.csv:7", "index 6").
std::string monte_carlo_no_paying_path_note(std::span<const std::string> locations,
                                            std::int64_t rows_without, std::int64_t rows,
                                            const MonteCarloOptions& options);

/// The independent reference of price_monte_carlo_book, for gpukit mc --check and the tests: the
/// same estimator on the same random numbers (the contract above: Philox words, uniforms,
/// Box-Muller, paths, payoffs, control variate; Asian averages and the geometric Asian's closed
/// form; heston rows' QE steps), computed path by path in long double by code that
/// shares nothing with the pricer but the Philox function (checked against Random123's
/// known-answer vectors). With each price and standard error comes a bound derived from the
/// computing precision and the method: per sample, the rounding of every operation the pricer
/// performs (the documented accuracy of exp/log/sin/cos/sqrt: 2 ulps in double; the GPU's float
/// approximations as the PTX ISA states them; on heston rows log 1 ulp and erfc 5 ulps, as the
/// CUDA guide states them, and the step's constants), a discrete barrier's whole payoff where the
/// path comes within that error of the barrier, and the rounding of the pricer's sums and merges.
/// A heston step's comparisons (s^2 > 0, m > 0, psi <= psi_c, the martingale correction's
/// existence) that the bounds leave open are followed both ways, and the sample is bounded by
/// the farthest payoff of the branches (more than 64 branches on one path: an infinite bound).
/// Early-exercise rows (monte_carlo_american.hpp): both passes again on the same numbers (heston
/// rows on the QE paths above, every open branch followed, the basis' u bounded from the
/// variance; with antithetic variates each path and its mirror, the pair's mean the sample), with
/// the reference's own regression (the normal equations by Gauss-Jordan in long double, the
/// contract's drops), its own decisions and pass 2's estimate; the bound carries the spots'
/// rounding, the sums' (a path within its bound of the money enters them whole), the
/// pricer's Cholesky backward error through |G^-1| to the coefficients, and every decision whose
/// margin |h - c| is within the bounds: in pass 1 V may take either value (its bound then enters
/// the earlier dates' sums), in pass 2 the sample is bounded by every payoff the pricer could have
/// taken. A drop threshold within a pivot's perturbation leaves the date's rule unbounded (all
/// its decisions open). In double the bound is far below a standard error; in float the
/// coefficients' bounds (spots known to 1e-6, through the normal equations' conditioning) open
/// so many decisions that the bound exceeds the standard error, which monte_carlo_agreement
/// counts (rows_with_loose_bound). Memory: 32 bytes per regression path and date of such a row
/// (64 on heston rows).
/// The pricer's value on any backend lies within the bound of the exact value; Greeks and
/// variance reduction factors are not checked. The sobol sampler: each replicate path by path on
/// the same points (the points and scrambling of rng/sobol.hpp, shared; the normal quantile in
/// long double, the pricer's AS241 within its documented 1e-15 relative; the Brownian bridge on
/// unit steps from its contract, every rounding bounded), then the mean and the spread of the
/// replicates' estimates with the bound they inherit; Asian rows follow the barrier rows' path
/// and heston rows two bridges (the variance's on Sobol dimensions 2d, the spot's on 2d + 1, step
/// m's normals B(m) - B(m - 1), the mirror negating both), the layout the pricer's Sobol Asian
/// and heston paths take. InvalidInput (naming the row) for a heston barrier row under
/// continuous monitoring, a barrier or Asian row with early exercise (the pricer refuses them
/// too) and early exercise on the sobol sampler or with the control variate; for replicates and
/// paths as price_monte_carlo_book. Cost: a few times a
/// CPU pricing (OpenMP over rows and blocks of paths); memory: the book's rows and a fixed
/// workspace, whatever the paths. `progress`, when set, is called from the calling thread with the
/// fraction of the path-steps done, about every 2^21 path-steps (a fraction of a second on a few
/// cores, one row of many steps included) and with 1 at the end; what it throws stops the reference
/// and propagates (options.progress is not called: it is the pricing's). Tested in
/// tests/finance/monte_carlo_test.cpp (every path kind, mode and precision; progress) and
/// monte_carlo_heston_test.cpp (every heston payoff, mode and precision; paths on both sides of
/// psi_c; an error just over the bound is reported) and monte_carlo_american_test.cpp
/// (early-exercise rows, Black-Scholes and heston, antithetic or not, in double and float).
struct MonteCarloReference {
  std::vector<double> price, std_error;
  std::vector<double> price_bound, std_error_bound;  // |pricer - reference| <= bound
};
MonteCarloReference monte_carlo_reference(const MonteCarloBookView& book,
                                          const MonteCarloOptions& options, int threads = 0,
                                          const std::function<void(double)>& progress = {});

/// How a priced book compares with its reference (monte_carlo_agreement).
struct MonteCarloAgreement {
  std::int64_t rows = 0;
  // rows whose price or standard error is outside its bound, or whose bound is not finite (the
  // reference could not bound it, so it checks nothing)
  std::int64_t rows_over_bound = 0;
  // rows whose price bound exceeds their standard error: the check tells the pricer's value from
  // the reference's only to more than the sampling error there (float early-exercise rows: the
  // float regression's coefficients cannot be bounded tightly, monte_carlo_reference)
  std::int64_t rows_with_loose_bound = 0;
  double max_abs_price_difference = 0;
  double max_price_difference_in_std_errors = 0;
  double max_price_difference_over_bound = 0;
};
MonteCarloAgreement monte_carlo_agreement(const MonteCarloBookResult& result,
                                          const MonteCarloReference& reference);

/// The check behind gpukit mc --check, in one call: monte_carlo_reference of `book` and `options`
/// (the ones `result` was priced with, on any backend; `threads` 0 = all; `progress` as the
/// reference's), then monte_carlo_agreement of `result` with it. The book passes when
/// rows_over_bound is 0.
MonteCarloAgreement check_monte_carlo_book(const MonteCarloBookView& book,
                                           const MonteCarloOptions& options,
                                           const MonteCarloBookResult& result, int threads = 0,
                                           const std::function<void(double)>& progress = {});

/// The analytic price of a continuously monitored barrier option without rebate (Reiner and
/// Rubinstein 1991, in the form of Haug, "The Complete Guide to Option Pricing Formulas", 2nd ed.,
/// section 4.17.1), the reference the Monte Carlo tests compare with. A barrier breached at the
/// start gives 0 (out) or the Black-Scholes vanilla (in); sigma sqrt(T) == 0 gives the intrinsic
/// value of the deterministic path. For a discretely monitored barrier (m dates, dt = T/m),
/// Broadie, Glasserman and Kou (1997) shift the barrier away from the spot, B exp(+-0.5826 sigma
/// sqrt(dt)) (up: +, down: -), which is accurate to o(1/sqrt(m)).
double barrier_price_analytic(BarrierType type, bool is_put, double spot, double strike,
                              double barrier, double maturity, double rate, double dividend,
                              double volatility);
/// The Broadie-Glasserman-Kou shifted barrier for `steps` monitoring dates.
double discrete_barrier_shift(BarrierType type, double barrier, double volatility, double maturity,
                              std::uint32_t steps);

}  // namespace gpukit::finance
