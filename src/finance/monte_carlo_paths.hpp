#pragma once
// Internal: the Monte Carlo path arithmetic and tile statistics shared by the CPU backend and the
// CUDA kernels (one body of code, so the two differ only where the math functions round
// differently). See include/gpukit/finance/monte_carlo.hpp for the contract.
//
// A tile is 32 lanes x kQuadsPerLane quads x 4 samples. Lane l of tile t takes quads
// t * 32 * kQuadsPerLane + i * 32 + l for i = 0 .. kQuadsPerLane - 1 and their samples 4q .. 4q+3
// in that order, accumulating from a shift (its first sample) so that no sum of squares is
// differenced far from the mean. The 32 lane moments are merged by the tree of a warp's
// shuffle-down reduction (offsets 16, 8, 4, 2, 1), and the tiles of an option by the stride-
// doubling tree merge_tiles_in_place: both trees are fixed, so the bits do not depend on who
// computes a tile.

#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/philox.hpp"
#include "gpukit/rng/uniform.hpp"

#if defined(__CUDACC__)
#include <math_constants.h>
#endif

namespace gpukit::finance::mc {

inline constexpr int kLanes = 32;
inline constexpr int kQuadsPerLane = 16;
static_assert(kLanes * kQuadsPerLane * 4 == kMonteCarloTileSamples);

/// One option, precomputed on the host in double and rounded once to Real, so the CPU and the
/// GPU start from the same numbers. Log-prices are relative to the spot: y = ln(S / S0).
template <class Real>
struct PathParams {
  Real strike_over_spot = 0;  // payoffs are computed in units of the spot
  Real drift_dt = 0;          // (r - q - sigma^2/2) dt
  Real vol_sqrt_dt = 0;       // sigma sqrt(dt)
  Real log_barrier = 0;       // ln(B / S0)
  Real bridge_scale = 0;      // -2 / (sigma^2 dt): the bridge crossing exponent's factor
  std::uint32_t steps = 1;
  std::uint32_t option_index = 0;  // the Philox option counter
  std::uint8_t is_put = 0;
  std::uint8_t barrier = 0;  // BarrierType
  std::uint8_t knocked_at_start = 0;
  std::uint8_t continuous = 0;
};

/// The flags that select a kernel's statistics (all compile-time, so the plain path pays for none).
template <bool kAntithetic, bool kControl>
struct Mode {
  static constexpr bool antithetic = kAntithetic;
  static constexpr bool control = kControl;
};

/// Moments of up to three variables over `count` samples: x (the estimator's sample: a payoff,
/// or an antithetic pair's mean), c (the control: S_T / S0, or the pair's mean) with the co-moment
/// of x and c, and d (an antithetic pair's half difference, for the variance reduction factor).
template <class T>
struct Moments {
  T count = 0;
  T mean_x = 0, m2_x = 0;
  T mean_c = 0, m2_c = 0, co_xc = 0;
  T mean_d = 0, m2_d = 0;
};

/// Chan, Golub and LeVeque's pairwise update. Empty sides return the other unchanged.
template <class M, class T>
GPUKIT_HD_INLINE Moments<T> merge(const Moments<T>& a, const Moments<T>& b) {
  if (b.count == T(0)) return a;
  if (a.count == T(0)) return b;
  Moments<T> r;
  r.count = a.count + b.count;
  const T weight_b = b.count / r.count;
  const T cross = a.count * weight_b;  // na nb / n
  const T dx = b.mean_x - a.mean_x;
  r.mean_x = a.mean_x + dx * weight_b;
  r.m2_x = a.m2_x + b.m2_x + dx * dx * cross;
  if constexpr (M::control) {
    const T dc = b.mean_c - a.mean_c;
    r.mean_c = a.mean_c + dc * weight_b;
    r.m2_c = a.m2_c + b.m2_c + dc * dc * cross;
    r.co_xc = a.co_xc + b.co_xc + dx * dc * cross;
  }
  if constexpr (M::antithetic) {
    const T dd = b.mean_d - a.mean_d;
    r.mean_d = a.mean_d + dd * weight_b;
    r.m2_d = a.m2_d + b.m2_d + dd * dd * cross;
  }
  return r;
}

template <class T, class U>
GPUKIT_HD_INLINE Moments<T> convert(const Moments<U>& m) {
  return {T(m.count), T(m.mean_x), T(m.m2_x),   T(m.mean_c),
          T(m.m2_c),  T(m.co_xc),  T(m.mean_d), T(m.m2_d)};
}

/// One lane's running sums from a shift (its first sample), turned into moments at the end.
template <class M, class Real>
struct LaneAccumulator {
  Real n = 0;
  Real shift_x = 0, sum_x = 0, sum2_x = 0;
  Real shift_c = 0, sum_c = 0, sum2_c = 0, sum_xc = 0;
  Real shift_d = 0, sum_d = 0, sum2_d = 0;

  GPUKIT_HD_INLINE void add(Real x, Real c, Real d) {
    if (n == Real(0)) {
      shift_x = x;
      if constexpr (M::control) shift_c = c;
      if constexpr (M::antithetic) shift_d = d;
    }
    n += Real(1);
    const Real ex = x - shift_x;
    sum_x += ex;
    sum2_x += ex * ex;
    if constexpr (M::control) {
      const Real ec = c - shift_c;
      sum_c += ec;
      sum2_c += ec * ec;
      sum_xc += ex * ec;
    }
    if constexpr (M::antithetic) {
      const Real ed = d - shift_d;
      sum_d += ed;
      sum2_d += ed * ed;
    }
  }

  GPUKIT_HD_INLINE Moments<Real> moments() const {
    Moments<Real> m;
    if (n == Real(0)) return m;
    m.count = n;
    const Real inv_n = Real(1) / n;
    m.mean_x = shift_x + sum_x * inv_n;
    m.m2_x = sum2_x - sum_x * sum_x * inv_n;
    if constexpr (M::control) {
      m.mean_c = shift_c + sum_c * inv_n;
      m.m2_c = sum2_c - sum_c * sum_c * inv_n;
      m.co_xc = sum_xc - sum_x * sum_c * inv_n;
    }
    if constexpr (M::antithetic) {
      m.mean_d = shift_d + sum_d * inv_n;
      m.m2_d = sum2_d - sum_d * sum_d * inv_n;
    }
    return m;
  }
};

// ---- Normals -----------------------------------------------------------------------------------

/// The four standard normals of quad `quad` at step `step` (paths 4q .. 4q+3).
/// kFast (float kernels only): the hardware's __logf / __sincosf / __fsqrt on the same uniforms.
template <bool kFast>
GPUKIT_HD_INLINE void quad_normals(const rng::Uint32x2& key, std::uint32_t option,
                                   std::uint64_t quad, std::uint32_t step, float z[4]) {
  const rng::Uint32x4 w = rng::philox4x32_10(rng::philox_counter(option, quad, step), key);
#if defined(__CUDA_ARCH__)
  if constexpr (kFast) {
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      const float u1 = rng::uniform_float(w.word[2 * pair]);
      const float u2 = rng::uniform_float(w.word[2 * pair + 1]);
      // __logf(u1) may round to >= 0 next to u1 = 1: clamp before the fast square root.
      const float radius_squared = fmaxf(-2.0f * __logf(u1), 1e-30f);
      const float radius = radius_squared * rsqrtf(radius_squared);
      // cos(2 pi u) = -cos(2 pi u - pi): the fast sine and cosine are accurate on [-pi, pi].
      float sine, cosine;
      __sincosf(__fmaf_rn(6.28318530717958647692f, u2, -3.14159265358979323846f), &sine, &cosine);
      z[2 * pair] = -radius * cosine;
      z[2 * pair + 1] = -radius * sine;
    }
  } else
#endif
  {
    for (int pair = 0; pair < 2; ++pair) {
      const rng::NormalPair<float> n = rng::box_muller(rng::uniform_float(w.word[2 * pair]),
                                                       rng::uniform_float(w.word[2 * pair + 1]));
      z[2 * pair] = n.first;
      z[2 * pair + 1] = n.second;
    }
  }
}

template <bool kFast>
GPUKIT_HD_INLINE void quad_normals(const rng::Uint32x2& key, std::uint32_t option,
                                   std::uint64_t quad, std::uint32_t step, double z[4]) {
  for (std::uint32_t block = 0; block < 2; ++block) {
    const rng::Uint32x4 w =
        rng::philox4x32_10(rng::philox_counter(option, quad, 2 * step + block), key);
    const rng::NormalPair<double> n = rng::box_muller(rng::uniform_double(w.word[0], w.word[1]),
                                                      rng::uniform_double(w.word[2], w.word[3]));
    z[2 * block] = n.first;
    z[2 * block + 1] = n.second;
  }
}

// ---- Math used per path ------------------------------------------------------------------------

template <bool kFast>
GPUKIT_HD_INLINE float path_exp(float x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast) return __expf(x);
  return expf(x);
#else
  return std::exp(x);
#endif
}
template <bool kFast>
GPUKIT_HD_INLINE double path_exp(double x) {
#if defined(__CUDA_ARCH__)
  return exp(x);
#else
  return std::exp(x);
#endif
}

// ---- Paths -------------------------------------------------------------------------------------

/// The payoff (undiscounted, in units of the spot) and S_T / S0 of the 4 paths of a quad, with the
/// normals' signs flipped when `mirror` (the antithetic partner).
template <bool kFast, class Real>
struct QuadOutcome {
  Real payoff[4];
  Real terminal[4];
};

template <bool kFast, class Real>
GPUKIT_HD_INLINE Real vanilla_payoff(const PathParams<Real>& p, Real terminal) {
  const Real intrinsic = p.is_put ? p.strike_over_spot - terminal : terminal - p.strike_over_spot;
  return intrinsic > Real(0) ? intrinsic : Real(0);
}

/// Simulates the 4 paths of `quad` (and, with kAntithetic, their 4 mirrors, into `mirror`).
template <bool kFast, bool kAntithetic, class Real>
GPUKIT_HD_INLINE void simulate_quad(const PathParams<Real>& p, const rng::Uint32x2& key,
                                    std::uint64_t quad, QuadOutcome<kFast, Real>& plain,
                                    QuadOutcome<kFast, Real>& mirror) {
  constexpr int kWays = kAntithetic ? 8 : 4;
  Real y[kWays];
  Real alive[kWays];
  const bool barrier = p.barrier != static_cast<std::uint8_t>(BarrierType::none);
  const bool down = p.barrier == static_cast<std::uint8_t>(BarrierType::down_out) ||
                    p.barrier == static_cast<std::uint8_t>(BarrierType::down_in);
  const bool knock_in = p.barrier == static_cast<std::uint8_t>(BarrierType::down_in) ||
                        p.barrier == static_cast<std::uint8_t>(BarrierType::up_in);
  for (int j = 0; j < kWays; ++j) {
    y[j] = 0;
    alive[j] = p.knocked_at_start ? Real(0) : Real(1);
  }
  if (!barrier) {
    // European: only the sum of the increments matters.
    for (std::uint32_t step = 0; step < p.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(key, p.option_index, quad, step, z);
      for (int j = 0; j < 4; ++j) {
        y[j] += p.drift_dt + p.vol_sqrt_dt * z[j];
        if constexpr (kAntithetic) y[4 + j] += p.drift_dt - p.vol_sqrt_dt * z[j];
      }
    }
  } else if (!p.continuous) {
    // Discrete monitoring: a path dies at the first date on or beyond the barrier.
    for (std::uint32_t step = 0; step < p.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(key, p.option_index, quad, step, z);
      for (int j = 0; j < kWays; ++j) {
        const Real zj = j < 4 ? z[j] : -z[j - 4];
        y[j] += p.drift_dt + p.vol_sqrt_dt * zj;
        const bool beyond = down ? y[j] <= p.log_barrier : y[j] >= p.log_barrier;
        alive[j] = beyond ? Real(0) : alive[j];
      }
    }
  } else {
    // Continuous monitoring: survival probability of the Brownian bridge between dates.
    for (std::uint32_t step = 0; step < p.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(key, p.option_index, quad, step, z);
      for (int j = 0; j < kWays; ++j) {
        const Real zj = j < 4 ? z[j] : -z[j - 4];
        const Real before = y[j] - p.log_barrier;
        y[j] += p.drift_dt + p.vol_sqrt_dt * zj;
        const Real after = y[j] - p.log_barrier;
        const bool safe = down ? after > Real(0) : after < Real(0);
        // safe implies before * after > 0 wherever alive > 0, so the exponent is <= 0.
        alive[j] = safe ? alive[j] * (Real(1) - path_exp<kFast>(p.bridge_scale * before * after))
                        : Real(0);
      }
    }
  }
  for (int j = 0; j < kWays; ++j) {
    const Real terminal = path_exp<kFast>(y[j]);
    Real payoff = vanilla_payoff<kFast>(p, terminal);
    if (barrier) payoff = knock_in ? payoff * (Real(1) - alive[j]) : payoff * alive[j];
    QuadOutcome<kFast, Real>& out = j < 4 ? plain : mirror;
    out.payoff[j & 3] = payoff;
    out.terminal[j & 3] = terminal;
  }
}

/// The moments of one lane of tile `tile` of an option with `samples` samples.
template <bool kFast, class M, class Real>
GPUKIT_HD_INLINE Moments<Real> lane_moments(const PathParams<Real>& p, const rng::Uint32x2& key,
                                            std::int64_t samples, std::int64_t tile, int lane) {
  LaneAccumulator<M, Real> acc;
  const std::int64_t first_quad = tile * (kLanes * kQuadsPerLane) + lane;
  for (int i = 0; i < kQuadsPerLane; ++i) {
    const std::int64_t quad = first_quad + std::int64_t{i} * kLanes;
    if (quad * 4 >= samples) break;
    QuadOutcome<kFast, Real> plain, mirror;
    simulate_quad<kFast, M::antithetic>(p, key, static_cast<std::uint64_t>(quad), plain, mirror);
    const int valid = samples - quad * 4 >= 4 ? 4 : static_cast<int>(samples - quad * 4);
    for (int j = 0; j < valid; ++j) {
      if constexpr (M::antithetic) {
        const Real half = Real(0.5);
        acc.add(half * (plain.payoff[j] + mirror.payoff[j]),
                half * (plain.terminal[j] + mirror.terminal[j]),
                half * (plain.payoff[j] - mirror.payoff[j]));
      } else {
        acc.add(plain.payoff[j], plain.terminal[j], Real(0));
      }
    }
  }
  return acc.moments();
}

/// Tiles an option with `samples` samples has.
GPUKIT_HD_INLINE std::int64_t tiles_for(std::int64_t samples) {
  return (samples + kMonteCarloTileSamples - 1) / kMonteCarloTileSamples;
}

/// The fixed tree over tiles, one level at a time: at stride s, tile i (a multiple of 2s) absorbs
/// tile i + s. Level `stride`'s merge number k touches tiles 2 s k and 2 s k + s.
template <class M>
GPUKIT_HD_INLINE void merge_tile_pair(Moments<double>* tiles, std::int64_t count,
                                      std::int64_t stride, std::int64_t k) {
  const std::int64_t i = 2 * stride * k;
  if (i + stride < count) tiles[i] = merge<M>(tiles[i], tiles[i + stride]);
}

}  // namespace gpukit::finance::mc
