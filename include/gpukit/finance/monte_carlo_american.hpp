#pragma once
// Early exercise in price_monte_carlo_book: rows whose OptionBookView::exercise is bermudan or
// american are priced by Longstaff and Schwartz's least-squares Monte Carlo (Longstaff and
// Schwartz 2001, "Valuing American options by simulation: a simple least-squares approach"), on
// the CPU or a CUDA device, in double or float, under Black-Scholes (geometric Brownian motion) or
// Heston (Andersen's QE paths with the martingale correction, as Monte Carlo's heston rows).
//
// Dates: a row may be exercised at its `steps` equally spaced dates t_i = i T / steps, i = 1 ..
// steps (t_steps = T is maturity; not at t_0 = now). `american` is the Bermudan approximation on
// those dates: the same price as `bermudan`; more steps approach the American price (a put's
// Bermudan price rises towards it by O(1/steps)).
//
// Method, in units of the strike K (s = S / K, payoff h(s) = max(s - 1, 0) for a call,
// max(1 - s, 0) for a put):
// - Pass 1 (regression) simulates R paths of ln s on the dates (R below). Backwards from
//   maturity, each path carries V, the discounted cash flow of the rule fitted so far. At each
//   date t_i, i = steps - 1 .. 1, the discounted continuation value V of the in-the-money paths
//   (h > 0) is regressed on the basis 1, x, x^2, x^3 in the scaled spot x = s - 1 = S / K - 1
//   (the polynomial is centred at the strike, where the exercise boundary lies, so that the
//   powers are not nearly collinear as those of S / K near 1 are); a path exercises where h
//   exceeds the fitted continuation, and its V becomes h. On heston rows the continuation also
//   depends on the variance: the basis adds u and u x in u = v / max(v0, theta) - 1 (the variance
//   scaled by its level at the start or in the long run, so that u is of order 1 and centred near
//   0, as x is). Where u carries no information (sigma_v = 0 with v0 = theta: u is constant) the
//   pivot rule below drops it.
// - The least-squares problem (4 functions; 6 on heston rows) is solved by the normal equations
//   in double with Jacobi (diagonal) scaling and a Cholesky factorisation that drops a basis
//   function whose pivot falls below 1e-12 of its diagonal (a date with fewer than 4 distinct
//   in-the-money spots fits the functions it can). Why not QR: the normal equations need only 11
//   sums per date (the power sums of x^0 .. x^6 and of V x^0 .. x^3; 21 on heston rows, adding
//   u x^0 .. x^4, u^2 x^0 .. x^2, V u and V u x), which reduce across threads, blocks and GPUs in
//   a fixed tree without storing the design matrix (QR would need it, or a tree of small QRs),
//   and the scaled 4 x 4 (6 x 6) system is small enough that double's 16 digits leave its
//   rounding far below the regression's sampling error (the tests fit the bases exactly to 1e-8).
// - Pass 2 (pricing) simulates options.paths new, independent paths and exercises each at the
//   first date where the fitted rule says so (at maturity where in the money): the mean of the
//   discounted payoffs is the price (a low-biased estimator: the fitted rule is one rule, no
//   better than the optimal one, and it is applied to paths it was not fitted on), and
//   std_error is this pass's (sample standard deviation / sqrt(paths)).
// - Antithetic variates (options.antithetic) act on pass 2: it prices paths / 2 pairs, pair 4q +
//   j driven by the normals of path 4q + j of a plain row and its mirror by the same normals
//   negated (both normals of a date on heston rows), each path exercised by the rule on its own;
//   a sample is the pair's mean 0.5 (a + b) in double, std_error the samples' standard deviation
//   / sqrt(pairs), and the variance reduction factor Monte Carlo's (monte_carlo.hpp) from the
//   pairs' means and half differences. Pass 1 is unchanged (the rule is fitted on plain paths).
//
// Random numbers: pass 2 draws exactly the normals a European row of the same stream key draws
// (monte_carlo.hpp's layout: Philox counter (quad, key high, step word, key low)); pass 1 draws
// them with the step word increased by kAmericanRegressionStepOffset (2^30: float step words
// 2^30 + i, double 2^31 + 2i and 2^31 + 2i + 1), which no European or pass-2 number uses (their
// step words are below 2^21), so the two passes are independent. A heston row draws two normals a
// date as a European heston row does (step words 2i for the variance, 2i + 1 for the spot, plus
// the offset in pass 1).
//
// Determinism: paths (pass 2's samples: pairs with antithetic variates) are cut in tiles of
// kAmericanTilePaths; each tile's sums (regression sums, and pass 2's mean and then its centred
// sum of squares) are formed by one fixed tree (a warp's
// shuffle-down tree over 32 quads, then over the 8 warps); the regression sums of the tiles are
// folded in a fixed order (slot k of 256 adds tiles k, k + 256, ... in order, then the slots by
// the tile tree), and pass 2's tile moments merge by Monte Carlo's fixed stride-doubling tree.
// The bits depend on neither the thread count nor the block or grid size; the CPU and a GPU
// differ by the rounding of exp in the paths (and float kernels use the hardware's
// approximations, as European float rows do).
//
// Memory: pass 1 stores every regression path's s on every date, plus a value per path: R
// paths with R = min(paths, floor(kAmericanMaxRegressionPathDates / (steps *
// kAmericanTilePaths)) * kAmericanTilePaths) rounded up to a tile, so at most 2^26 stored spots
// (256 MiB in float, 512 MiB in double) whatever the paths; 2^20 paths on 50 dates all regress
// (200 MiB in float). A heston row stores each path's variance beside its spot (twice the
// memory). Rows are priced one at a time. A row with more than kAmericanMaxDates dates
// (fewer than a tile of regression paths would fit) is refused.
//
// Greeks (options.greeks): delta, gamma and vega by central differences on common random numbers,
// with Monte Carlo's bumps (spot by h = 1%, volatility by max(1% of sigma, 1e-4)): delta = (P(S +
// h) - P(S - h)) / (2h), gamma = (P(S + h) - 2 P(S) + P(S - h)) / h^2; each bumped row refits its
// rule on the same pass 1 numbers and prices on the same pass 2 numbers (five pricings).
//
// Not available on early-exercise rows (InvalidInput naming the row): barrier and Asian rows
// (early exercise of a barrier or an average is a row error) and the control variate.
//
// Tested in tests/finance/monte_carlo_american_test.cpp against a binomial tree (Cox, Ross and
// Rubinstein, 10,000+ steps, long double, exercise only at the tree nodes on the row's dates),
// itself tested against Black-Scholes and published American put values.

#include <cstdint>

namespace gpukit::finance {

/// Pass 1's stored spots at most (paths times dates): 2^26.
inline constexpr std::int64_t kAmericanMaxRegressionPathDates = std::int64_t{1} << 26;
/// Paths per statistics tile of the early-exercise engine (256 quads: a block of 8 warps).
inline constexpr std::int64_t kAmericanTilePaths = 1024;
/// The most exercise dates (steps) an early-exercise row may have: a tile of regression paths.
inline constexpr std::uint32_t kAmericanMaxDates =
    static_cast<std::uint32_t>(kAmericanMaxRegressionPathDates / kAmericanTilePaths);
/// Added to the step word of pass 1's Philox counters (see above).
inline constexpr std::uint32_t kAmericanRegressionStepOffset = 1u << 30;

/// The regression paths pass 1 simulates for a row of `steps` dates priced with `paths` paths:
/// min(paths, floor(kAmericanMaxRegressionPathDates / (steps * kAmericanTilePaths)) *
/// kAmericanTilePaths). Precondition: 1 <= steps <= kAmericanMaxDates.
inline std::int64_t american_regression_paths(std::int64_t paths, std::uint32_t steps) {
  const std::int64_t fit =
      kAmericanMaxRegressionPathDates / (std::int64_t{steps} * kAmericanTilePaths);
  return paths < fit * kAmericanTilePaths ? paths : fit * kAmericanTilePaths;
}

}  // namespace gpukit::finance
