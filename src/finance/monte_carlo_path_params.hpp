#pragma once
// Internal: what the Monte Carlo CPU backend and CUDA kernels know of an option (PathParams,
// computed once on the host), the kinds of path loop, the compile-time statistics mode and the
// tile geometry. See include/gpukit/finance/monte_carlo.hpp for the contract.

#include <cstddef>
#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::mc {

inline constexpr int kLanes = 32;
inline constexpr int kQuadsPerLane = 16;
static_assert(kLanes * kQuadsPerLane * 4 == kMonteCarloTileSamples);

/// A heston row's step of Andersen's QE scheme (monte_carlo.hpp), precomputed in double and
/// rounded to Real: with dt = T / steps and e = exp(-kappa dt), the conditional mean of the next
/// variance is m = theta + (v - theta) e and its variance s^2 = v c1 + c2; the log-price moves by
/// K0 + K1 v + K2 v' + sqrt(K3 v + K4 v') Z_s beside (r - q) dt (gamma1 = gamma2 = 1/2), or with
/// the martingale correction by C - K3 v / 2 + K2 v' + ..., C from A = K2 + K4 / 2.
template <class Real>
struct HestonStep {
  Real v0 = 0, theta = 0;
  Real decay = 0;  // e^{-kappa dt}
  Real variance_c1 = 0, variance_c2 = 0;
  Real carry_dt = 0;  // (r - q) dt
  Real k0 = 0, k1 = 0, k2 = 0, k3 = 0, k4 = 0;
  Real a = 0, half_k3 = 0;  // K2 + K4 / 2; K3 / 2
};

/// What a path's sample is (PathParams::sample): its payoff, or the pathwise derivative of the
/// payoff with respect to the spot (delta) or the volatility (vega), for the Greeks of the rows
/// whose payoff is differentiable (European and Asian: monte_carlo.hpp). All in units of the spot,
/// undiscounted, as payoffs are: the estimate's scaling by S0 e^{-rT} gives vega; delta is that
/// over S0.
enum class PathSample : std::uint8_t { price, delta, vega };

/// One option, precomputed on the host in double and rounded once to Real, so the CPU and the
/// GPU start from the same numbers. Log-prices are relative to the spot: y = ln(S / S0).
template <class Real>
struct PathParams {
  Real strike_over_spot = 0;  // payoffs are computed in units of the spot
  Real drift_dt = 0;          // (r - q - sigma^2/2) dt
  Real vol_sqrt_dt = 0;       // sigma sqrt(dt)
  Real log_barrier = 0;       // ln(B / S0)
  Real bridge_scale = 0;      // -2 / (sigma^2 dt): the bridge crossing exponent's factor
  Real inv_steps = 1;         // 1 / steps: an Asian row's average of its fixings
  // Pathwise vega (sample vega, Black-Scholes rows): dS_t / dsigma = S_t (y_t - (r - q +
  // sigma^2/2) t) / sigma, with y_t = ln(S_t / S0).
  Real vega_drift_dt = 0;  // (r - q + sigma^2/2) dt (an arithmetic average's fixing i: i times it)
  Real vega_offset = 0;    // (r - q + sigma^2/2) times T, or a geometric average's mean fixing time
  Real inv_vol = 0;        // 1 / sigma (0 where sigma is 0: the vega of a deterministic path)
  std::uint32_t steps = 1;
  std::uint32_t option_index = 0;  // the Philox option word: the stream key's bits 0-31
  std::uint32_t stream_high = 0;   // the stream key's bits 32-63 (0 for row numbers)
  std::uint8_t is_put = 0;
  std::uint8_t barrier = 0;  // BarrierType
  std::uint8_t knocked_at_start = 0;
  std::uint8_t continuous = 0;
  std::uint8_t average = 0;  // AverageType
  std::uint8_t heston = 0;   // AssetModel::heston: the `heston` fields drive the paths
  std::uint8_t sample = 0;   // PathSample
  HestonStep<Real> heston_step;
};

/// The loop a path takes. Kernels are specialized for one kind when every option of a run has it
/// (`mixed`: each tile dispatches on its option's kind); the arithmetic, hence the bits, is the
/// same either way.
enum class PathKind : std::uint8_t {
  mixed,
  european_one_step,
  european,  // several steps (only their sum matters)
  discrete_barrier,
  continuous_barrier,
  asian_arithmetic,  // the mean of S at the steps fixings (no barrier: the reader's rule)
  asian_geometric,   // exp of the mean of ln S at the fixings
  heston,            // Heston's QE paths, any payoff but a continuous barrier
};

template <class Real>
GPUKIT_HD_INLINE PathKind path_kind(const PathParams<Real>& p) {
  if (p.heston != 0) return PathKind::heston;
  if (p.average == static_cast<std::uint8_t>(AverageType::arithmetic)) {
    return PathKind::asian_arithmetic;
  }
  if (p.average == static_cast<std::uint8_t>(AverageType::geometric)) {
    return PathKind::asian_geometric;
  }
  if (p.barrier == static_cast<std::uint8_t>(BarrierType::none)) {
    return p.steps == 1 ? PathKind::european_one_step : PathKind::european;
  }
  return p.continuous ? PathKind::continuous_barrier : PathKind::discrete_barrier;
}

/// The kind every option shares, or mixed (host side: picks the kernel of a run).
template <class Real>
inline PathKind common_path_kind(const PathParams<Real>* params, std::size_t count) {
  if (count == 0) return PathKind::mixed;
  const PathKind first = path_kind(params[0]);
  for (std::size_t i = 1; i < count; ++i) {
    if (path_kind(params[i]) != first) return PathKind::mixed;
  }
  return first;
}

/// The flags that select a kernel's statistics (all compile-time, so the plain path pays for none).
template <bool kAntithetic, bool kControl>
struct Mode {
  static constexpr bool antithetic = kAntithetic;
  static constexpr bool control = kControl;
};

}  // namespace gpukit::finance::mc
