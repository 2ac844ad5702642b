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

// The accurate functions of the Heston step, on either side (the device's are within 2 ulps in
// double, 2-4 in float: the CUDA programming guide's table).
GPUKIT_HD_INLINE float path_log(float x) {
#if defined(__CUDA_ARCH__)
  return ::logf(x);
#else
  return std::log(x);
#endif
}
GPUKIT_HD_INLINE double path_log(double x) {
#if defined(__CUDA_ARCH__)
  return ::log(x);
#else
  return std::log(x);
#endif
}
GPUKIT_HD_INLINE float path_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
GPUKIT_HD_INLINE double path_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
GPUKIT_HD_INLINE float path_erfc(float x) {
#if defined(__CUDA_ARCH__)
  return ::erfcf(x);
#else
  return std::erfc(x);
#endif
}
GPUKIT_HD_INLINE double path_erfc(double x) {
#if defined(__CUDA_ARCH__)
  return ::erfc(x);
#else
  return std::erfc(x);
#endif
}

/// Andersen's critical psi: the quadratic branch below it (inclusive), the exponential above.
inline constexpr double kHestonCriticalPsi = 1.5;

/// One step of a heston row's path (Andersen 2008, "Simple and efficient simulation of the Heston
/// stochastic volatility model", the QE scheme with psi_c = 1.5 and the martingale correction of
/// his section 4.1): the variance moves from `v` to the returned v', driven by the normal z_v
/// (the exponential branch's uniform is U = Phi(z_v), 1 - U = erfc(z_v / sqrt 2) / 2), and
/// `increment` receives the log-price's increment driven by z_s. Where the correction does not
/// exist (1 - 2 A a <= 0 or beta <= A: very large steps) the uncorrected K0 + K1 v is used.
/// A zero conditional variance (sigma_v = 0, or v = theta = 0) moves the variance to m exactly.
template <class Real>
GPUKIT_HD_INLINE Real heston_step(const HestonStep<Real>& h, Real v, Real z_v, Real z_s,
                                  Real& increment) {
  const Real one = 1;
  const Real m = rounded::mul_add(rounded::sub(v, h.theta), h.decay, h.theta);
  const Real s2 = rounded::mul_add(v, h.variance_c1, h.variance_c2);
  Real next = 0, correction = 0;
  bool corrected = true;
  if (!(s2 > Real(0)) || !(m > Real(0))) {
    next = max0(m);
    correction = rounded::mul(-h.a, next);
  } else {
    const Real psi = rounded::div(s2, rounded::mul(m, m));
    if (psi <= Real(kHestonCriticalPsi)) {
      const Real two_over_psi = rounded::div(Real(2), psi);
      const Real b2 = rounded::add(
          rounded::sub(two_over_psi, one),
          rounded::mul(path_sqrt(two_over_psi), path_sqrt(rounded::sub(two_over_psi, one))));
      const Real a = rounded::div(m, rounded::add(one, b2));
      const Real root = rounded::add(path_sqrt(b2), z_v);
      next = rounded::mul(a, rounded::mul(root, root));
      const Real denominator = rounded::sub(one, rounded::mul(rounded::add(h.a, h.a), a));
      if (denominator > Real(0)) {
        correction =
            rounded::sub(rounded::mul(Real(0.5), path_log(denominator)),
                         rounded::div(rounded::mul(rounded::mul(h.a, b2), a), denominator));
      } else {
        corrected = false;
      }
    } else {
      const Real p = rounded::div(rounded::sub(psi, one), rounded::add(psi, one));
      const Real survive = rounded::sub(one, p);  // P(v' > 0)
      const Real beta = rounded::div(survive, m);
      const Real tail =
          rounded::mul(Real(0.5), path_erfc(rounded::mul(z_v, Real(0.70710678118654752440))));
      next = tail >= survive ? Real(0) : rounded::div(path_log(rounded::div(survive, tail)), beta);
      if (beta > h.a) {
        correction = -path_log(
            rounded::add(p, rounded::div(rounded::mul(beta, survive), rounded::sub(beta, h.a))));
      } else {
        corrected = false;
      }
    }
  }
  const Real drift =
      corrected ? rounded::add(rounded::add(h.carry_dt, correction),
                               rounded::sub(rounded::mul(h.k2, next), rounded::mul(h.half_k3, v)))
                : rounded::add(rounded::add(h.carry_dt, h.k0),
                               rounded::add(rounded::mul(h.k1, v), rounded::mul(h.k2, next)));
  const Real diffusion = path_sqrt(max0(rounded::mul_add(h.k3, v, rounded::mul(h.k4, next))));
  increment = rounded::mul_add(diffusion, z_s, drift);
  return next;
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
  Real inv_steps = 1;                       // 1 / steps (Asian averages)
  std::uint32_t steps = 1;
  std::uint32_t option = 0;
  std::uint32_t stream_high = 0;  // the stream key's bits 32-63
  bool knock_in = false;
  bool knocked_at_start = false;
  bool has_barrier = false;
  std::uint8_t average = 0;  // AverageType (read by the heston kind's payoff)
  std::uint8_t sample = 0;   // PathSample
  Real vega_drift_dt = 0, vega_offset = 0, inv_vol = 0;  // pathwise vega (PathParams)
  HestonStep<Real> heston;
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
  c.inv_steps = p.inv_steps;
  c.steps = p.steps;
  c.option = p.option_index;
  c.stream_high = p.stream_high;
  c.knock_in = p.barrier == static_cast<std::uint8_t>(BarrierType::down_in) ||
               p.barrier == static_cast<std::uint8_t>(BarrierType::up_in);
  c.knocked_at_start = p.knocked_at_start != 0;
  c.has_barrier = p.barrier != static_cast<std::uint8_t>(BarrierType::none);
  c.average = p.average;
  c.sample = p.sample;
  c.vega_drift_dt = p.vega_drift_dt;
  c.vega_offset = p.vega_offset;
  c.inv_vol = p.inv_vol;
  c.heston = p.heston_step;
  return c;
}

/// The payoff (undiscounted, in units of the spot) and the control variate's sample of the 4
/// paths of a quad, and with antithetic variates of their 4 mirrors (the normals' signs flipped).
/// The control is S_T / S0 (mean e^{(r-q)T}), on an arithmetic Asian row the geometric Asian's
/// payoff on the same fixings (mean in closed form: monte_carlo.hpp).
template <class Real>
struct QuadOutcome {
  Real payoff[4];
  Real control[4];
};

/// max(S_T - K, 0) or max(K - S_T, 0): mul_add(+-1, S_T, -+K) rounds as the subtraction does.
template <class Real>
GPUKIT_HD_INLINE Real vanilla_payoff(const PathConstants<Real>& c, Real terminal) {
  return max0(rounded::mul_add(c.payoff_sign, terminal, c.signed_strike));
}

/// A path's sample where PathParams::sample is not price (European and Asian payoffs, whose
/// underlying U, the terminal price or the average, in units of the spot, moves with S0 as U =
/// S0 X): the pathwise derivative of max(+-(U - K), 0), +-1{in the money} dU, with dU/dS0 = U / S0
/// (delta; S_T is proportional to S0 under both models) or dU/dsigma = `underlying_vega` / sigma
/// (vega: S_T (y_T - (r - q + sigma^2/2) T) for a terminal price; the caller forms it for an
/// average). A path on the strike (payoff 0) contributes 0: a null set.
template <class Real>
GPUKIT_HD_INLINE Real pathwise_sample(const PathConstants<Real>& c, Real payoff, Real underlying,
                                      Real underlying_vega) {
  if (!(payoff > Real(0))) return Real(0);
  if (c.sample == static_cast<std::uint8_t>(PathSample::delta)) {
    return rounded::mul(c.payoff_sign, underlying);
  }
  return rounded::mul(c.payoff_sign, rounded::mul(underlying_vega, c.inv_vol));
}

/// underlying_vega of a terminal price or a geometric average U = exp(log_underlying): U
/// (log_underlying - vega_offset).
template <class Real>
GPUKIT_HD_INLINE Real log_underlying_vega(const PathConstants<Real>& c, Real underlying,
                                          Real log_underlying) {
  return rounded::mul(underlying, rounded::sub(log_underlying, c.vega_offset));
}

/// An Asian path's payoff and control sample from its sums over the fixings (the log-price y at
/// the last fixing, the sum of the y_i and, on arithmetic rows, of the S_{t_i} / S0): arithmetic
/// rows pay on price_sum / steps with the geometric Asian's payoff as control, geometric rows on
/// exp(log_sum / steps) with S_T / S0.
template <class Real>
struct AsianOutcome {
  Real payoff, control;
};
template <bool kFast, bool kArithmetic, class Real>
GPUKIT_HD_INLINE AsianOutcome<Real> asian_outcome(const PathConstants<Real>& c, Real y,
                                                  Real log_sum, Real price_sum) {
  const Real geometric = path_exp<kFast>(rounded::mul(log_sum, c.inv_steps));
  if constexpr (kArithmetic) {
    return {vanilla_payoff(c, rounded::mul(price_sum, c.inv_steps)), vanilla_payoff(c, geometric)};
  } else {
    return {vanilla_payoff(c, geometric), path_exp<kFast>(y)};
  }
}

/// A heston path's payoff and S_T / S0.
template <class Real>
struct HestonOutcome {
  Real payoff, terminal;
};

/// One heston path, step by step (heston_step), for the Philox and the Sobol paths: w = direction
/// * ln(S / S0) as on barrier paths (direction 1 without a barrier), its running minimum for a
/// discrete barrier, and the sums of an Asian row; its outcome is the payoff, or a pathwise delta
/// sample where PathParams::sample asks.
template <bool kFast, class Real>
struct HestonPath {
  Real variance, w, lowest, log_sum, price_sum;

  GPUKIT_HD_INLINE void start(const PathConstants<Real>& c) {
    variance = c.heston.v0, w = 0, log_sum = 0, price_sum = 0;
    lowest = std::numeric_limits<Real>::infinity();
  }
  GPUKIT_HD_INLINE void step(const PathConstants<Real>& c, Real z_v, Real z_s) {
    Real increment = 0;
    variance = heston_step(c.heston, variance, z_v, z_s, increment);
    w = rounded::add(w, rounded::mul(c.direction, increment));
    lowest = min_of(lowest, w);
    if (c.average != 0) {
      log_sum = rounded::add(log_sum, w);
      if (c.average == static_cast<std::uint8_t>(AverageType::arithmetic)) {
        price_sum = rounded::add(price_sum, path_exp<kFast>(w));
      }
    }
  }
  GPUKIT_HD_INLINE HestonOutcome<Real> outcome(const PathConstants<Real>& c) const {
    const Real terminal = path_exp<kFast>(rounded::mul(c.direction, w));
    Real underlying = terminal;
    if (c.average == static_cast<std::uint8_t>(AverageType::arithmetic)) {
      underlying = rounded::mul(price_sum, c.inv_steps);
    } else if (c.average != 0) {
      underlying = path_exp<kFast>(rounded::mul(log_sum, c.inv_steps));
    }
    Real payoff = vanilla_payoff(c, underlying);
    if (c.sample != static_cast<std::uint8_t>(PathSample::price)) {
      payoff = pathwise_sample(c, payoff, underlying, Real(0));  // delta only (no vega here)
    }
    if (c.has_barrier) {
      const bool survived = !c.knocked_at_start && lowest > c.barrier;
      payoff = survived != c.knock_in ? payoff : Real(0);
    }
    return {payoff, terminal};
  }
};

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
    // log2 S_T / S0 directly, for the hardware's exp2 (one multiply per path fewer); pathwise
    // samples take the path below.
    if (c.sample == static_cast<std::uint8_t>(PathSample::price)) {
      Real z[4];
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, 0, z);
      for (int j = 0; j < kWays; ++j) {
        const Real log2_terminal =
            rounded::mul_add(j < 4 ? c.vol_log2 : -c.vol_log2, z[j & 3], c.drift_log2);
        const Real terminal = fast::exp2(log2_terminal);
        QuadOutcome<Real>& out = j < 4 ? plain : mirror;
        out.payoff[j & 3] = vanilla_payoff(c, terminal);
        out.control[j & 3] = terminal;
      }
      return;
    }
  }
#endif
  if constexpr (kKind == PathKind::heston) {
    // Step s draws the variance's normals from step word 2s and the spot's from 2s + 1
    // (monte_carlo.hpp); the mirror path flips both. w = direction * y as on barrier paths (an
    // Asian or European heston row has direction 1), the running minimum of w for a discrete
    // barrier, and the sums of an Asian row.
    HestonPath<kFast, Real> path[kWays];
    for (int j = 0; j < kWays; ++j) path[j].start(c);
    for (std::uint32_t step = 0; step < c.steps; ++step) {
      Real z_v[4], z_s[4];
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, 2 * step, z_v);
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, 2 * step + 1, z_s);
      for (int j = 0; j < kWays; ++j) {
        const Real sign = j < 4 ? Real(1) : Real(-1);
        path[j].step(c, rounded::mul(sign, z_v[j & 3]), rounded::mul(sign, z_s[j & 3]));
      }
    }
    for (int j = 0; j < kWays; ++j) {
      const HestonOutcome<Real> outcome = path[j].outcome(c);
      QuadOutcome<Real>& out = j < 4 ? plain : mirror;
      out.payoff[j & 3] = outcome.payoff;
      out.control[j & 3] = outcome.terminal;
    }
    return;
  } else if constexpr (kKind == PathKind::asian_arithmetic || kKind == PathKind::asian_geometric) {
    // The log-price y_i at each fixing t_i = i T / steps, summed (the geometric average's
    // exponent) and, on arithmetic rows, its exponential summed (the arithmetic average), then
    // each sum times 1 / steps.
    // A pathwise vega sample also sums S_{t_i} (y_i - i vega_drift_dt), dA/dsigma times sigma n.
    constexpr bool kArithmetic = kKind == PathKind::asian_arithmetic;
    const bool vega = c.sample == static_cast<std::uint8_t>(PathSample::vega);
    Real log_sum[kWays], price_sum[kWays], vega_sum[kWays];
    for (int j = 0; j < kWays; ++j) y[j] = 0, log_sum[j] = 0, price_sum[j] = 0, vega_sum[j] = 0;
    for (std::uint32_t step = 0; step < c.steps; ++step) {
      Real z[4];
      quad_normals<kFast>(keys, c.option, c.stream_high, quad, step, z);
      for (int j = 0; j < kWays; ++j) {
        const Real vol = j < 4 ? c.vol : -c.vol;
        y[j] = rounded::add(y[j], rounded::mul_add(vol, z[j & 3], c.drift));
        log_sum[j] = rounded::add(log_sum[j], y[j]);
        if constexpr (kArithmetic) {
          const Real price = path_exp<kFast>(y[j]);
          price_sum[j] = rounded::add(price_sum[j], price);
          if (vega) {
            const Real time_drift = rounded::mul(static_cast<Real>(step + 1), c.vega_drift_dt);
            vega_sum[j] = rounded::mul_add(price, rounded::sub(y[j], time_drift), vega_sum[j]);
          }
        }
      }
    }
    for (int j = 0; j < kWays; ++j) {
      const Real mean_log = rounded::mul(log_sum[j], c.inv_steps);
      const Real geometric = path_exp<kFast>(mean_log);
      QuadOutcome<Real>& out = j < 4 ? plain : mirror;
      if constexpr (kArithmetic) {
        const Real average = rounded::mul(price_sum[j], c.inv_steps);
        out.payoff[j & 3] = vanilla_payoff(c, average);
        if (c.sample != static_cast<std::uint8_t>(PathSample::price)) {
          out.payoff[j & 3] = pathwise_sample(c, out.payoff[j & 3], average,
                                              rounded::mul(vega_sum[j], c.inv_steps));
        }
        out.control[j & 3] = vanilla_payoff(c, geometric);
      } else {
        out.payoff[j & 3] = vanilla_payoff(c, geometric);
        if (c.sample != static_cast<std::uint8_t>(PathSample::price)) {
          out.payoff[j & 3] = pathwise_sample(c, out.payoff[j & 3], geometric,
                                              log_underlying_vega(c, geometric, mean_log));
        }
        out.control[j & 3] = path_exp<kFast>(y[j]);
      }
    }
    return;
  } else if constexpr (kKind == PathKind::european_one_step) {
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
  // The kinds above that form their own payoffs have returned (a discarded branch here, so that
  // no compiler sees an unreachable loop).
  if constexpr (kKind != PathKind::heston && kKind != PathKind::asian_arithmetic &&
                kKind != PathKind::asian_geometric) {
    for (int j = 0; j < kWays; ++j) {
      const Real terminal = path_exp<kFast>(y[j]);
      Real payoff = vanilla_payoff(c, terminal);
      if constexpr (kKind == PathKind::european_one_step || kKind == PathKind::european) {
        if (c.sample != static_cast<std::uint8_t>(PathSample::price)) {
          payoff = pathwise_sample(c, payoff, terminal, log_underlying_vega(c, terminal, y[j]));
        }
      }
      if constexpr (kKind == PathKind::discrete_barrier) {
        payoff = (alive[j] != Real(0)) != c.knock_in ? payoff : Real(0);
      } else if constexpr (kKind == PathKind::continuous_barrier) {
        payoff = rounded::mul(payoff, c.knock_in ? rounded::sub(Real(1), alive[j]) : alive[j]);
      }
      QuadOutcome<Real>& out = j < 4 ? plain : mirror;
      out.payoff[j & 3] = payoff;
      out.control[j & 3] = terminal;
    }
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
      s.control[j] = rounded::mul(Real(0.5), rounded::add(plain.control[j], mirror.control[j]));
      s.half_difference[j] =
          rounded::mul(Real(0.5), rounded::sub(plain.payoff[j], mirror.payoff[j]));
    } else {
      s.x[j] = plain.payoff[j];
      s.control[j] = plain.control[j];
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
      case PathKind::asian_arithmetic:
        return quad_samples<kFast, M, PathKind::asian_arithmetic>(c, keys, quad);
      case PathKind::asian_geometric:
        return quad_samples<kFast, M, PathKind::asian_geometric>(c, keys, quad);
      case PathKind::heston:
        return quad_samples<kFast, M, PathKind::heston>(c, keys, quad);
      default:
        return quad_samples<kFast, M, PathKind::continuous_barrier>(c, keys, quad);
    }
  }
}

}  // namespace gpukit::finance::mc
