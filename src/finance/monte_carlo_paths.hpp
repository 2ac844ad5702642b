#pragma once
// Internal: the Monte Carlo path simulation shared by the CPU backend and the CUDA kernels (one
// body of code, so the two differ only where the math functions round differently): an option's
// per-path constants, the four paths of a quad (and their antithetic mirrors) for each kind of
// path, and the samples they give the statistics. See include/gpukit/finance/monte_carlo.hpp for
// the contract.
//
// Every floating-point operation whose rounding could depend on the compiler is written out
// (rounded::add, mul, sub and mul_add from gpukit/core/rounded_arithmetic.hpp: the _rn intrinsics
// on the device, plain operations on the CPU, whose file is compiled without contraction). nvcc
// cannot contract a multiply and an add differently in different kernels, so every kernel that
// inlines this code, whichever path kinds it is specialized for, produces the same bits.
// mul_add is fused on the device and rounds twice on the CPU, so the two backends agree within a
// rounding bound, not to the bit (each is deterministic on its own).
//
// Speed (the float European one-step kernel is close to the issue limit of the SM): per option,
// everything that does not vary per path is hoisted into PathConstants; the Philox key schedule
// is computed once per lane; each path kind has its own loop (no per-step branches on the kind);
// a barrier is tracked as the running minimum of the log-price in the direction of the barrier
// (one min per step, no exp); the statistics cost a subtract, an add and a multiply-add per
// sample (the count is known, not accumulated).

#include <cmath>
#include <cstdint>
#include <limits>

#include "finance/monte_carlo_normals.hpp"
#include "finance/monte_carlo_path_params.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::mc {

// ---- Math used per path ------------------------------------------------------------------------

template <bool kFast>
GPUKIT_HD_INLINE float path_exp(float x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast) return fast::exp2(__fmul_rn(x, 1.44269504088896340736f));
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

// max and min that compile to one instruction on the device (the operands are never NaN).
GPUKIT_HD_INLINE float max0(float x) {
#if defined(__CUDA_ARCH__)
  return fmaxf(x, 0.0f);
#else
  return x > 0.0f ? x : 0.0f;
#endif
}
GPUKIT_HD_INLINE double max0(double x) {
#if defined(__CUDA_ARCH__)
  return fmax(x, 0.0);
#else
  return x > 0.0 ? x : 0.0;
#endif
}
GPUKIT_HD_INLINE float min_of(float a, float b) {
#if defined(__CUDA_ARCH__)
  return fminf(a, b);
#else
  return a < b ? a : b;
#endif
}
GPUKIT_HD_INLINE double min_of(double a, double b) {
#if defined(__CUDA_ARCH__)
  return fmin(a, b);
#else
  return a < b ? a : b;
#endif
}

// ---- Paths -------------------------------------------------------------------------------------

/// An option's per-path constants. Barrier paths run in the barrier's direction: w = y for a down
/// barrier, w = -y for an up barrier (negation is exact, so y is the same bits either way), so
/// that "beyond the barrier" is always w <= barrier.
template <class Real>
struct PathConstants {
  Real drift = 0, vol = 0;  // of w
  Real barrier = 0;         // of w
  Real direction = 1;       // y = direction * w
  Real bridge_scale = 0;
  Real payoff_sign = 1, signed_strike = 0;  // intrinsic = payoff_sign * S_T + signed_strike
  Real drift_log2 = 0, vol_log2 = 0;        // drift and vol / ln 2 (the fast one-step path)
  std::uint32_t steps = 1;
  std::uint32_t option = 0;
  std::uint32_t stream_high = 0;  // the stream key's bits 32-63
  bool knock_in = false;
  bool knocked_at_start = false;
};

template <class Real>
GPUKIT_HD_INLINE PathConstants<Real> path_constants(const PathParams<Real>& p) {
  PathConstants<Real> c;
  const bool up = p.barrier == static_cast<std::uint8_t>(BarrierType::up_out) ||
                  p.barrier == static_cast<std::uint8_t>(BarrierType::up_in);
  c.direction = up ? Real(-1) : Real(1);
  c.drift = up ? -p.drift_dt : p.drift_dt;
  c.vol = up ? -p.vol_sqrt_dt : p.vol_sqrt_dt;
  c.barrier = up ? -p.log_barrier : p.log_barrier;
  c.bridge_scale = p.bridge_scale;
  c.payoff_sign = p.is_put ? Real(-1) : Real(1);
  c.signed_strike = p.is_put ? p.strike_over_spot : -p.strike_over_spot;
  c.drift_log2 = rounded::mul(p.drift_dt, Real(1.44269504088896340736));
  c.vol_log2 = rounded::mul(p.vol_sqrt_dt, Real(1.44269504088896340736));
  c.steps = p.steps;
  c.option = p.option_index;
  c.stream_high = p.stream_high;
  c.knock_in = p.barrier == static_cast<std::uint8_t>(BarrierType::down_in) ||
               p.barrier == static_cast<std::uint8_t>(BarrierType::up_in);
  c.knocked_at_start = p.knocked_at_start != 0;
  return c;
}

/// The payoff (undiscounted, in units of the spot) and S_T / S0 of the 4 paths of a quad, and
/// with antithetic variates of their 4 mirrors (the normals' signs flipped).
template <class Real>
struct QuadOutcome {
  Real payoff[4];
  Real terminal[4];
};

/// max(S_T - K, 0) or max(K - S_T, 0): mul_add(+-1, S_T, -+K) rounds as the subtraction does.
template <class Real>
GPUKIT_HD_INLINE Real vanilla_payoff(const PathConstants<Real>& c, Real terminal) {
  return max0(rounded::mul_add(c.payoff_sign, terminal, c.signed_strike));
}

template <bool kFast, bool kAntithetic, PathKind kKind, class Real>
GPUKIT_HD_INLINE void simulate_quad(const PathConstants<Real>& c, const PhiloxSchedule& keys,
                                    std::uint32_t quad, QuadOutcome<Real>& plain,
                                    QuadOutcome<Real>& mirror) {
  static_assert(kKind != PathKind::mixed);
  constexpr int kWays = kAntithetic ? 8 : 4;
  Real y[kWays];
  Real alive[kWays];  // barriers: the survival weight
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && kKind == PathKind::european_one_step) {
    // log2 S_T / S0 directly, for the hardware's exp2 (one multiply per path fewer).
    Real z[4];
    quad_normals<kFast>(keys, c.option, c.stream_high, quad, 0, z);
    for (int j = 0; j < kWays; ++j) {
      const Real log2_terminal =
          rounded::mul_add(j < 4 ? c.vol_log2 : -c.vol_log2, z[j & 3], c.drift_log2);
      const Real terminal = fast::exp2(log2_terminal);
      QuadOutcome<Real>& out = j < 4 ? plain : mirror;
      out.payoff[j & 3] = vanilla_payoff(c, terminal);
      out.terminal[j & 3] = terminal;
    }
    return;
  }
#endif
  if constexpr (kKind == PathKind::european_one_step) {
    Real z[4];
    quad_normals<kFast>(keys, c.option, c.stream_high, quad, 0, z);
    for (int j = 0; j < 4; ++j) {
      y[j] = rounded::mul_add(c.vol, z[j], c.drift);
      if constexpr (kAntithetic) y[4 + j] = rounded::mul_add(-c.vol, z[j], c.drift);
    }
  } else if constexpr (kKind == PathKind::european) {
    // Only the sum of the increments matters.
    for (int j = 0; j < kWays; ++j) y[j] = 0;
    for (std::uint32_t step = 0; step < c.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, step, z);
      for (int j = 0; j < 4; ++j) {
        y[j] = rounded::add(y[j], rounded::mul_add(c.vol, z[j], c.drift));
        if constexpr (kAntithetic)
          y[4 + j] = rounded::add(y[4 + j], rounded::mul_add(-c.vol, z[j], c.drift));
      }
    }
  } else if constexpr (kKind == PathKind::discrete_barrier) {
    // A path dies at the first date on or beyond the barrier: when the running minimum of w is.
    Real w[kWays], lowest[kWays];
    for (int j = 0; j < kWays; ++j) w[j] = 0, lowest[j] = std::numeric_limits<Real>::infinity();
#if defined(__CUDA_ARCH__)
#pragma unroll 2
#endif
    for (std::uint32_t step = 0; step < c.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, step, z);
      for (int j = 0; j < kWays; ++j) {
        const Real vol = j < 4 ? c.vol : -c.vol;
        w[j] = rounded::add(w[j], rounded::mul_add(vol, z[j & 3], c.drift));
        lowest[j] = min_of(lowest[j], w[j]);
      }
    }
    for (int j = 0; j < kWays; ++j) {
      y[j] = rounded::mul(c.direction, w[j]);
      alive[j] = !c.knocked_at_start && lowest[j] > c.barrier ? Real(1) : Real(0);
    }
  } else {
    // Continuous monitoring: survival probability of the Brownian bridge between dates.
    Real w[kWays];
    for (int j = 0; j < kWays; ++j) w[j] = 0, alive[j] = c.knocked_at_start ? Real(0) : Real(1);
    for (std::uint32_t step = 0; step < c.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, step, z);
      for (int j = 0; j < kWays; ++j) {
        const Real vol = j < 4 ? c.vol : -c.vol;
        const Real before = rounded::sub(w[j], c.barrier);
        w[j] = rounded::add(w[j], rounded::mul_add(vol, z[j & 3], c.drift));
        const Real after = rounded::sub(w[j], c.barrier);
        // after > 0 implies before * after > 0 wherever alive > 0, so the exponent is <= 0.
        const Real crossing =
            path_exp<kFast>(rounded::mul(rounded::mul(c.bridge_scale, before), after));
        alive[j] =
            after > Real(0) ? rounded::mul(alive[j], rounded::sub(Real(1), crossing)) : Real(0);
      }
    }
    for (int j = 0; j < kWays; ++j) y[j] = rounded::mul(c.direction, w[j]);
  }
  for (int j = 0; j < kWays; ++j) {
    const Real terminal = path_exp<kFast>(y[j]);
    Real payoff = vanilla_payoff(c, terminal);
    if constexpr (kKind == PathKind::discrete_barrier) {
      payoff = (alive[j] != Real(0)) != c.knock_in ? payoff : Real(0);
    } else if constexpr (kKind == PathKind::continuous_barrier) {
      payoff = rounded::mul(payoff, c.knock_in ? rounded::sub(Real(1), alive[j]) : alive[j]);
    }
    QuadOutcome<Real>& out = j < 4 ? plain : mirror;
    out.payoff[j & 3] = payoff;
    out.terminal[j & 3] = terminal;
  }
}

/// A quad's 4 samples: x, the control and the antithetic half difference (used as the Mode asks).
template <class Real>
struct QuadSamples {
  Real x[4], control[4], half_difference[4];
};

template <bool kFast, class M, PathKind kKind, class Real>
GPUKIT_HD_INLINE QuadSamples<Real> quad_samples(const PathConstants<Real>& c,
                                                const PhiloxSchedule& keys, std::uint32_t quad) {
  QuadOutcome<Real> plain, mirror;
  simulate_quad<kFast, M::antithetic, kKind>(c, keys, quad, plain, mirror);
  QuadSamples<Real> s;
  for (int j = 0; j < 4; ++j) {
    if constexpr (M::antithetic) {
      s.x[j] = rounded::mul(Real(0.5), rounded::add(plain.payoff[j], mirror.payoff[j]));
      s.control[j] = rounded::mul(Real(0.5), rounded::add(plain.terminal[j], mirror.terminal[j]));
      s.half_difference[j] =
          rounded::mul(Real(0.5), rounded::sub(plain.payoff[j], mirror.payoff[j]));
    } else {
      s.x[j] = plain.payoff[j];
      s.control[j] = plain.terminal[j];
      s.half_difference[j] = 0;
    }
  }
  return s;
}

/// quad_samples for kKind, or dispatched on the option's kind (mixed).
template <bool kFast, class M, PathKind kKind, class Real>
GPUKIT_HD_INLINE QuadSamples<Real> quad_samples_of(const PathParams<Real>& p,
                                                   const PathConstants<Real>& c,
                                                   const PhiloxSchedule& keys, std::uint32_t quad) {
  if constexpr (kKind != PathKind::mixed) {
    return quad_samples<kFast, M, kKind>(c, keys, quad);
  } else {
    switch (path_kind(p)) {
      case PathKind::european_one_step:
        return quad_samples<kFast, M, PathKind::european_one_step>(c, keys, quad);
      case PathKind::european:
        return quad_samples<kFast, M, PathKind::european>(c, keys, quad);
      case PathKind::discrete_barrier:
        return quad_samples<kFast, M, PathKind::discrete_barrier>(c, keys, quad);
      default:
        return quad_samples<kFast, M, PathKind::continuous_barrier>(c, keys, quad);
    }
  }
}

}  // namespace gpukit::finance::mc
