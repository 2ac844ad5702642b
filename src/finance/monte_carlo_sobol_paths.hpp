#pragma once
// Internal: the Sobol sampler's paths (MonteCarloSampler::sobol, monte_carlo.hpp), shared by the
// CPU backend (cpu/monte_carlo_sobol_kernels.cpp) and the CUDA kernel
// (cuda/monte_carlo_sobol_kernels.cu): a lane's moments of one replicate of one row, through the
// Philox engine's tiles and statistics (monte_carlo_tiles.hpp, monte_carlo_statistics.hpp), so the
// bits do not depend on the thread count or the launch.
//
// Sample i of a replicate is Sobol point i (quad q: points 4q .. 4q+3), coordinate d scrambled by
// the replicate's dimension seed d (rng/sobol.hpp), mapped to a normal by AS241 in double (float
// runs round the normal once). A European row uses one coordinate: ln(S_T / S0) = (r - q -
// sigma^2/2) T + sigma sqrt(T) z_0. A barrier row builds its Brownian path on its dates with the
// bridge of its step count (rng/brownian_bridge.hpp, on unit steps: B(m) at date m), w_m =
// m drift_dt + vol_sqrt_dt B(m) in the barrier's direction, and monitors it as the Philox paths
// do; an Asian row builds the same w (direction 1) and averages it as the Philox paths do. A
// heston row walks two bridges of its step count side by side, the variance's on dimensions 2d
// and the spot's on 2d + 1 (d the bridge's dimension: both factors' largest scales on the best
// coordinates), and feeds the QE step (monte_carlo_paths.hpp heston_step) the increments
// B(m) - B(m - 1) as its two normals. The antithetic mirror of a path is the path of the negated
// normals: the bridge is linear and every operation is sign-symmetric, so its B is exactly -B.

#include <cstdint>
#include <limits>

#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_paths.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"
#include "gpukit/rng/brownian_bridge.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/sobol.hpp"

namespace gpukit::finance::mc {

/// One replicate of one row: the row's path parameters, what its terminal value needs, and where
/// its scrambling and bridge come from.
template <class Real>
struct SobolRow {
  PathParams<Real> params;
  Real terminal_drift = 0;          // (r - q - sigma^2/2) T
  Real terminal_vol = 0;            // sigma sqrt(T)
  std::uint64_t replicate_key = 0;  // rng::sobol_replicate_key(seed, stream key, replicate)
  std::uint32_t bridge_offset = 0;  // the row's step count's nodes in SobolTables::bridge
};

/// The tables every row reads: 32 direction numbers a dimension, and the bridge nodes of each
/// distinct step count of the barrier rows, one after the other.
template <class Real>
struct SobolTables {
  const std::uint32_t* directions = nullptr;
  const rng::BrownianBridgeNode<Real>* bridge = nullptr;
};

/// The normal of coordinate `dimension` of point `point` under the replicate's scrambling.
template <class Real>
GPUKIT_HD_INLINE Real sobol_normal(const SobolTables<Real>& tables, std::uint64_t replicate_key,
                                   std::uint32_t dimension, std::uint32_t point) {
  const std::uint32_t x =
      rng::sobol_coordinate(tables.directions + std::int64_t{32} * dimension, point);
  const std::uint32_t scrambled =
      rng::owen_scramble(x, rng::sobol_dimension_seed(replicate_key, dimension));
  return static_cast<Real>(rng::inverse_normal_cdf(rng::sobol_uniform(scrambled)));
}

/// The normals of one point of a replicate, by dimension (what a bridge walk asks for).
template <class Real>
struct SobolNormals {
  const SobolTables<Real>& tables;
  std::uint64_t replicate_key;
  std::uint32_t point;
  GPUKIT_HD_INLINE Real operator()(std::uint32_t dimension) const {
    return sobol_normal(tables, replicate_key, dimension, point);
  }
};

// sobol_path of a European or barrier row under Black-Scholes.
template <bool kAntithetic, PathKind kKind, class Real>
GPUKIT_HD_INLINE void sobol_gbm_path(const SobolRow<Real>& row, const PathConstants<Real>& c,
                                     const SobolTables<Real>& tables, std::uint32_t point,
                                     Real payoff[2], Real terminal[2]) {
  constexpr int kWays = kAntithetic ? 2 : 1;
  Real y[kWays];
  Real alive[kWays];
  const SobolNormals<Real> normal{tables, row.replicate_key, point};
  if constexpr (kKind == PathKind::european_one_step || kKind == PathKind::european) {
    const Real z = normal(0);
    for (int j = 0; j < kWays; ++j) {
      y[j] = rounded::mul_add(j == 0 ? row.terminal_vol : -row.terminal_vol, z, row.terminal_drift);
    }
  } else {
    Real w[kWays], lowest[kWays];
    for (int j = 0; j < kWays; ++j) {
      w[j] = 0, lowest[j] = std::numeric_limits<Real>::infinity();
      alive[j] = c.knocked_at_start ? Real(0) : Real(1);
    }
    rng::brownian_bridge_walk(
        tables.bridge + row.bridge_offset, c.steps, normal, [&](std::uint32_t date, Real bridge) {
          const Real drift = rounded::mul(static_cast<Real>(date), c.drift);
          for (int j = 0; j < kWays; ++j) {
            const Real next = rounded::mul_add(j == 0 ? c.vol : -c.vol, bridge, drift);
            if constexpr (kKind == PathKind::discrete_barrier) {
              lowest[j] = min_of(lowest[j], next);
            } else {
              // Continuous monitoring: the bridge's crossing probability between dates.
              const Real before = rounded::sub(w[j], c.barrier);
              const Real after = rounded::sub(next, c.barrier);
              const Real crossing =
                  path_exp<false>(rounded::mul(rounded::mul(c.bridge_scale, before), after));
              alive[j] = after > Real(0) ? rounded::mul(alive[j], rounded::sub(Real(1), crossing))
                                         : Real(0);
            }
            w[j] = next;
          }
        });
    for (int j = 0; j < kWays; ++j) {
      y[j] = rounded::mul(c.direction, w[j]);
      if constexpr (kKind == PathKind::discrete_barrier) {
        alive[j] = !c.knocked_at_start && lowest[j] > c.barrier ? Real(1) : Real(0);
      }
    }
  }
  for (int j = 0; j < kWays; ++j) {
    terminal[j] = path_exp<false>(y[j]);
    Real value = vanilla_payoff(c, terminal[j]);
    if constexpr (kKind == PathKind::discrete_barrier) {
      value = (alive[j] != Real(0)) != c.knock_in ? value : Real(0);
    } else if constexpr (kKind == PathKind::continuous_barrier) {
      value = rounded::mul(value, c.knock_in ? rounded::sub(Real(1), alive[j]) : alive[j]);
    }
    payoff[j] = value;
  }
}

// sobol_path of an Asian row under Black-Scholes: y_m = m drift + vol B(m) at each fixing,
// summed as the Philox paths sum theirs.
template <bool kAntithetic, PathKind kKind, class Real>
GPUKIT_HD_INLINE void sobol_asian_path(const SobolRow<Real>& row, const PathConstants<Real>& c,
                                       const SobolTables<Real>& tables, std::uint32_t point,
                                       Real payoff[2], Real terminal[2]) {
  constexpr int kWays = kAntithetic ? 2 : 1;
  const SobolNormals<Real> normal{tables, row.replicate_key, point};
  Real y[kWays], log_sum[kWays], price_sum[kWays];
  for (int j = 0; j < kWays; ++j) y[j] = 0, log_sum[j] = 0, price_sum[j] = 0;
  rng::brownian_bridge_walk(tables.bridge + row.bridge_offset, c.steps, normal,
                            [&](std::uint32_t date, Real bridge) {
                              const Real drift = rounded::mul(static_cast<Real>(date), c.drift);
                              for (int j = 0; j < kWays; ++j) {
                                y[j] = rounded::mul_add(j == 0 ? c.vol : -c.vol, bridge, drift);
                                log_sum[j] = rounded::add(log_sum[j], y[j]);
                                if constexpr (kKind == PathKind::asian_arithmetic) {
                                  price_sum[j] = rounded::add(price_sum[j], path_exp<false>(y[j]));
                                }
                              }
                            });
  for (int j = 0; j < kWays; ++j) {
    const AsianOutcome<Real> out = asian_outcome<false, kKind == PathKind::asian_arithmetic>(
        c, y[j], log_sum[j], price_sum[j]);
    payoff[j] = out.payoff;
    terminal[j] = out.control;
  }
}

// sobol_path of a heston row: two bridges of unit steps, the variance's on Sobol dimensions 2d
// and the spot's on 2d + 1 (both factors' largest scales on the best coordinates); step m's
// normals are the increments B(m) - B(m - 1), fed to the QE step as the Philox paths feed theirs.
template <bool kAntithetic, class Real>
GPUKIT_HD_INLINE void sobol_heston_path(const SobolRow<Real>& row, const PathConstants<Real>& c,
                                        const SobolTables<Real>& tables, std::uint32_t point,
                                        Real payoff[2], Real terminal[2]) {
  constexpr int kWays = kAntithetic ? 2 : 1;
  const SobolNormals<Real> normal{tables, row.replicate_key, point};
  rng::BrownianBridgeWalker<Real> variance_bridge(tables.bridge + row.bridge_offset, c.steps);
  rng::BrownianBridgeWalker<Real> spot_bridge(tables.bridge + row.bridge_offset, c.steps);
  Real variance_before = 0, spot_before = 0;
  HestonPath<false, Real> path[kWays];
  for (int j = 0; j < kWays; ++j) path[j].start(c);
  for (std::uint32_t step = 0; step < c.steps; ++step) {
    const Real variance_now = variance_bridge.next([&](std::uint32_t d) { return normal(2 * d); });
    const Real spot_now = spot_bridge.next([&](std::uint32_t d) { return normal(2 * d + 1); });
    const Real z_v = rounded::sub(variance_now, variance_before);
    const Real z_s = rounded::sub(spot_now, spot_before);
    variance_before = variance_now, spot_before = spot_now;
    for (int j = 0; j < kWays; ++j) {
      const Real sign = j == 0 ? Real(1) : Real(-1);
      path[j].step(c, rounded::mul(sign, z_v), rounded::mul(sign, z_s));
    }
  }
  for (int j = 0; j < kWays; ++j) {
    const HestonOutcome<Real> out = path[j].outcome(c);
    payoff[j] = out.payoff;
    terminal[j] = out.terminal;
  }
}

/// The payoff and the control's sample (S_T / S0; an arithmetic Asian row's geometric Asian
/// payoff) of the path of point `point` (index 0) and of its mirror (index 1).
template <bool kAntithetic, PathKind kKind, class Real>
GPUKIT_HD_INLINE void sobol_path(const SobolRow<Real>& row, const PathConstants<Real>& c,
                                 const SobolTables<Real>& tables, std::uint32_t point,
                                 Real payoff[2], Real terminal[2]) {
  if constexpr (kKind == PathKind::asian_arithmetic || kKind == PathKind::asian_geometric) {
    sobol_asian_path<kAntithetic, kKind>(row, c, tables, point, payoff, terminal);
  } else if constexpr (kKind == PathKind::heston) {
    sobol_heston_path<kAntithetic>(row, c, tables, point, payoff, terminal);
  } else {
    sobol_gbm_path<kAntithetic, kKind>(row, c, tables, point, payoff, terminal);
  }
}

/// A quad's samples (points 4 quad .. 4 quad + 3), as quad_samples gives the Philox paths'.
template <class M, PathKind kKind, class Real>
GPUKIT_HD_INLINE QuadSamples<Real> sobol_quad_samples(const SobolRow<Real>& row,
                                                      const PathConstants<Real>& c,
                                                      const SobolTables<Real>& tables,
                                                      std::uint32_t quad) {
  QuadSamples<Real> s;
  for (int j = 0; j < 4; ++j) {
    Real payoff[2], terminal[2];
    sobol_path<M::antithetic, kKind>(row, c, tables, 4 * quad + static_cast<std::uint32_t>(j),
                                     payoff, terminal);
    if constexpr (M::antithetic) {
      s.x[j] = rounded::mul(Real(0.5), rounded::add(payoff[0], payoff[1]));
      s.control[j] = rounded::mul(Real(0.5), rounded::add(terminal[0], terminal[1]));
      s.half_difference[j] = rounded::mul(Real(0.5), rounded::sub(payoff[0], payoff[1]));
    } else {
      s.x[j] = payoff[0];
      s.control[j] = terminal[0];
      s.half_difference[j] = 0;
    }
  }
  return s;
}

/// The moments of lane `lane` of tile `tile` of a replicate of `samples` samples, for rows of
/// kind kKind.
template <class M, PathKind kKind, class Real>
GPUKIT_HD_INLINE Moments<Real> sobol_lane_moments_of(const SobolRow<Real>& row,
                                                     const SobolTables<Real>& tables,
                                                     std::int64_t samples, std::int64_t tile,
                                                     int lane) {
  const LaneQuads q = lane_quads(samples, tile, lane);
  const PathConstants<Real> c = path_constants(row.params);
  const auto first = static_cast<std::uint32_t>(q.first_quad);  // samples <= 2^32
  return accumulate_lane<M, Real>(q, [&](int i) {
    return sobol_quad_samples<M, kKind>(row, c, tables,
                                        first + static_cast<std::uint32_t>(i) * kLanes);
  });
}

/// The same, dispatched on the row's kind (European rows of any step count take one coordinate).
template <class M, class Real>
GPUKIT_HD_INLINE Moments<Real> sobol_lane_moments(const SobolRow<Real>& row,
                                                  const SobolTables<Real>& tables,
                                                  std::int64_t samples, std::int64_t tile,
                                                  int lane) {
  switch (path_kind(row.params)) {
    case PathKind::discrete_barrier:
      return sobol_lane_moments_of<M, PathKind::discrete_barrier>(row, tables, samples, tile, lane);
    case PathKind::continuous_barrier:
      return sobol_lane_moments_of<M, PathKind::continuous_barrier>(row, tables, samples, tile,
                                                                    lane);
    case PathKind::asian_arithmetic:
      return sobol_lane_moments_of<M, PathKind::asian_arithmetic>(row, tables, samples, tile, lane);
    case PathKind::asian_geometric:
      return sobol_lane_moments_of<M, PathKind::asian_geometric>(row, tables, samples, tile, lane);
    case PathKind::heston:
      return sobol_lane_moments_of<M, PathKind::heston>(row, tables, samples, tile, lane);
    default:
      return sobol_lane_moments_of<M, PathKind::european>(row, tables, samples, tile, lane);
  }
}

}  // namespace gpukit::finance::mc
