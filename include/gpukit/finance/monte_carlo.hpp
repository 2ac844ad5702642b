#pragma once
// Monte Carlo prices of European and barrier options under geometric Brownian motion (seed 000,
// slides 16-39; seed 003, "Application 3: Option Pricing"), on the CPU or a CUDA device, in double
// (default) or float, with antithetic variates, a control variate and bump-and-reprice Greeks.
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
// With antithetic variates, sample i is the pair of paths driven by Z_i and -Z_i.
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
// delta and vega by central bump-and-reprice with common random numbers (spot bumped by 1%,
// volatility by max(1% of sigma, 1e-4)).

#include <cstdint>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/european_book.hpp"

namespace gpukit::finance {

enum class BarrierType : std::uint8_t { none, down_out, down_in, up_out, up_in };
enum class BarrierMonitoring { discrete, continuous };

/// Samples per statistics tile (32 lanes x 16 quads x 4 paths); part of the result's definition.
inline constexpr std::int64_t kMonteCarloTileSamples = 2048;
/// The largest number of monitoring steps a row may have.
inline constexpr std::uint32_t kMonteCarloMaxSteps = 1u << 20;

/// A book in host memory; barrier_type, barrier and steps may be null (all European, one step).
struct MonteCarloBookView {
  std::int64_t count = 0;
  const std::uint8_t* is_put = nullptr;  // 0 call, 1 put
  const double* spot = nullptr;
  const double* strike = nullptr;
  const double* maturity = nullptr;
  PerOption<double> rate, volatility, dividend;
  const BarrierType* barrier_type = nullptr;
  const double* barrier = nullptr;  // read only where barrier_type != none
  const std::uint32_t* steps = nullptr;
};

struct MonteCarloOptions {
  std::int64_t paths = 1 << 20;  // per option; even with antithetic variates
  std::uint64_t seed = 2008;
  BarrierMonitoring monitoring = BarrierMonitoring::discrete;
  bool antithetic = false;
  bool control_variate = false;  // the discounted terminal price, of known mean S e^{-qT}
  bool greeks = false;           // delta and vega
  bool variance_reduction_factors = false;
  Precision precision = Precision::float64;
  /// The Philox option index of the book's first row: a book priced in parts, each part with the
  /// index of its first row here, gets the numbers (and the bits) of the whole book.
  std::uint32_t first_option_index = 0;
};

struct MonteCarloBookResult {
  std::vector<double> price, std_error, ci_low, ci_high;
  std::vector<double> paths;  // simulated paths per option (as a double for the output writer)
  std::vector<double> delta, vega;                  // with greeks
  std::vector<double> vrf_antithetic, vrf_control;  // with variance_reduction_factors and
                                                    // the matching technique
};

/// Prices `book` on `context`. Throws InvalidInput for paths < 2 (odd with antithetic), steps
/// outside [1, kMonteCarloMaxSteps], or a barrier row whose barrier is not > 0; CudaError and
/// OutOfMemory from the device. Option i uses Philox option index first_option_index + i (so a
/// row's numbers do not depend on the other rows); inputs are rounded to float first with
/// Precision::float32.
MonteCarloBookResult price_monte_carlo_book(const Context& context, const MonteCarloBookView& book,
                                            const MonteCarloOptions& options);

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
