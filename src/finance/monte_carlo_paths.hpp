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

#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/philox.hpp"
#include "gpukit/rng/uniform.hpp"

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
  std::uint32_t option_index = 0;  // the Philox option word: the stream key's bits 0-31
  std::uint32_t stream_high = 0;   // the stream key's bits 32-63 (0 for row numbers)
  std::uint8_t is_put = 0;
  std::uint8_t barrier = 0;  // BarrierType
  std::uint8_t knocked_at_start = 0;
  std::uint8_t continuous = 0;
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
};

template <class Real>
GPUKIT_HD_INLINE PathKind path_kind(const PathParams<Real>& p) {
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

// ---- Statistics ---------------------------------------------------------------------------------

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

/// Chan, Golub and LeVeque's pairwise update with b's weight nb / (na + nb) given.
template <class M, class T>
GPUKIT_HD_INLINE Moments<T> merge_weighted(const Moments<T>& a, const Moments<T>& b, T weight_b) {
  Moments<T> r;
  r.count = rounded::add(a.count, b.count);
  const T cross = rounded::mul(a.count, weight_b);  // na nb / n
  const T dx = rounded::sub(b.mean_x, a.mean_x);
  r.mean_x = rounded::mul_add(dx, weight_b, a.mean_x);
  r.m2_x = rounded::mul_add(rounded::mul(dx, dx), cross, rounded::add(a.m2_x, b.m2_x));
  if constexpr (M::control) {
    const T dc = rounded::sub(b.mean_c, a.mean_c);
    r.mean_c = rounded::mul_add(dc, weight_b, a.mean_c);
    r.m2_c = rounded::mul_add(rounded::mul(dc, dc), cross, rounded::add(a.m2_c, b.m2_c));
    r.co_xc = rounded::mul_add(rounded::mul(dx, dc), cross, rounded::add(a.co_xc, b.co_xc));
  }
  if constexpr (M::antithetic) {
    const T dd = rounded::sub(b.mean_d, a.mean_d);
    r.mean_d = rounded::mul_add(dd, weight_b, a.mean_d);
    r.m2_d = rounded::mul_add(rounded::mul(dd, dd), cross, rounded::add(a.m2_d, b.m2_d));
  }
  return r;
}

/// Chan, Golub and LeVeque's pairwise update. Empty sides return the other unchanged. Equal
/// counts (every merge of full tiles) take the weight 1/2 without dividing: the same bits, as
/// n / 2n is exact.
template <class M, class T>
GPUKIT_HD_INLINE Moments<T> merge(const Moments<T>& a, const Moments<T>& b) {
  if (b.count == T(0)) return a;
  if (a.count == T(0)) return b;
  return merge_weighted<M>(a, b,
                           a.count == b.count ? T(0.5) : b.count / rounded::add(a.count, b.count));
}

/// merge() of two sides known to hold the same, nonzero count (lanes of a full tile).
template <class M, class T>
GPUKIT_HD_INLINE Moments<T> merge_equal(const Moments<T>& a, const Moments<T>& b) {
  return merge_weighted<M>(a, b, T(0.5));
}

template <class T, class U>
GPUKIT_HD_INLINE Moments<T> convert(const Moments<U>& m) {
  return {T(m.count), T(m.mean_x), T(m.m2_x),   T(m.mean_c),
          T(m.m2_c),  T(m.co_xc),  T(m.mean_d), T(m.m2_d)};
}

/// One lane's sums from a shift (its first sample); the caller knows the count.
template <class M, class Real>
struct LaneSums {
  Real shift_x = 0, sum_x = 0, sum2_x = 0;
  Real shift_c = 0, sum_c = 0, sum2_c = 0, sum_xc = 0;
  Real shift_d = 0, sum_d = 0, sum2_d = 0;

  GPUKIT_HD_INLINE void set_shift(Real x, Real c, Real d) {
    shift_x = x;
    if constexpr (M::control) shift_c = c;
    if constexpr (M::antithetic) shift_d = d;
  }

  GPUKIT_HD_INLINE void add(Real x, Real c, Real d) {
    const Real ex = rounded::sub(x, shift_x);
    sum_x = rounded::add(sum_x, ex);
    sum2_x = rounded::mul_add(ex, ex, sum2_x);
    if constexpr (M::control) {
      const Real ec = rounded::sub(c, shift_c);
      sum_c = rounded::add(sum_c, ec);
      sum2_c = rounded::mul_add(ec, ec, sum2_c);
      sum_xc = rounded::mul_add(ex, ec, sum_xc);
    }
    if constexpr (M::antithetic) {
      const Real ed = rounded::sub(d, shift_d);
      sum_d = rounded::add(sum_d, ed);
      sum2_d = rounded::mul_add(ed, ed, sum2_d);
    }
  }

  GPUKIT_HD_INLINE Moments<Real> moments(Real n) const {
    Moments<Real> m;
    if (n == Real(0)) return m;
    m.count = n;
    const Real inv_n = Real(1) / n;
    m.mean_x = rounded::mul_add(sum_x, inv_n, shift_x);
    m.m2_x = rounded::mul_add(-rounded::mul(sum_x, sum_x), inv_n, sum2_x);
    if constexpr (M::control) {
      m.mean_c = rounded::mul_add(sum_c, inv_n, shift_c);
      m.m2_c = rounded::mul_add(-rounded::mul(sum_c, sum_c), inv_n, sum2_c);
      m.co_xc = rounded::mul_add(-rounded::mul(sum_x, sum_c), inv_n, sum_xc);
    }
    if constexpr (M::antithetic) {
      m.mean_d = rounded::mul_add(sum_d, inv_n, shift_d);
      m.m2_d = rounded::mul_add(-rounded::mul(sum_d, sum_d), inv_n, sum2_d);
    }
    return m;
  }
};

// ---- Normals -----------------------------------------------------------------------------------

/// Philox4x32-10's ten round keys, computed once per lane instead of once per call.
struct PhiloxSchedule {
  rng::Uint32x2 round_key[10];
};

GPUKIT_HD_INLINE PhiloxSchedule philox_schedule(rng::Uint32x2 key) {
  PhiloxSchedule s;
  for (int round = 0; round < 10; ++round) {
    s.round_key[round] = key;
    key.word[0] += rng::detail::kPhiloxKeyIncrement0;
    key.word[1] += rng::detail::kPhiloxKeyIncrement1;
  }
  return s;
}

/// rng::philox4x32_10 with a precomputed schedule (the same words).
GPUKIT_HD_INLINE rng::Uint32x4 philox(rng::Uint32x4 counter, const PhiloxSchedule& s) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    counter = rng::detail::philox4x32_round(counter, s.round_key[round]);
  }
  return counter;
}

#if defined(__CUDA_ARCH__)
namespace fast {
// The MUFU approximations without the subnormal fix-ups of the non-.ftz forms: their inputs here
// are never subnormal, and an output that would be is 0 to the payoff.
__device__ __forceinline__ float log2(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float exp2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float sqrt(float x) {
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float sin(float x) {
  float r;
  asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float cos(float x) {
  float r;
  asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// rng::uniform_float's value, (m + 1/2) 2^-23, without an integer-to-float conversion (a quarter-
// rate instruction): 1 + m 2^-23 by its bits, minus 1 - 2^-24; both exact.
__device__ __forceinline__ float uniform(std::uint32_t word) {
  return __fsub_rn(__uint_as_float(0x3F800000u + (word >> 9)), 0x1.fffffep-1f);
}
// rng::uniform_double's value the same way: 1 + m 2^-52 minus 1 - 2^-53.
__device__ __forceinline__ double uniform(std::uint32_t high, std::uint32_t low) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(high) << 20) | (low >> 12);
  return __dsub_rn(__longlong_as_double(static_cast<long long>(0x3FF0000000000000ull | bits)),
                   0x1.fffffffffffffp-1);
}
}  // namespace fast
#endif

/// Philox's counter for quad `quad` at step word `step` of the stream whose key has bits 0-31
/// `option` and bits 32-63 `stream_high` (monte_carlo.hpp): words 1 and 3, which the first round
/// only XORs, carry the key, so a stream key costs no multiply. Quads stay below 2^32
/// (kMonteCarloMaxPaths); with stream_high 0 this is rng::philox_counter(option, quad, step).
GPUKIT_HD_INLINE rng::Uint32x4 stream_counter(std::uint32_t option, std::uint32_t stream_high,
                                              std::uint32_t quad, std::uint32_t step) {
  return {{quad, stream_high, step, option}};
}

/// The four standard normals of quad `quad` of the stream (option, stream_high) at step `step`
/// (paths 4q .. 4q+3).
/// kFast (float kernels only): the hardware's approximate log2, sqrt, sin and cos on the same
/// uniforms.
template <bool kFast>
GPUKIT_HD_INLINE void quad_normals(const PhiloxSchedule& keys, std::uint32_t option,
                                   std::uint32_t stream_high, std::uint32_t quad,
                                   std::uint32_t step, float z[4]) {
  const rng::Uint32x4 w = philox(stream_counter(option, stream_high, quad, step), keys);
#if defined(__CUDA_ARCH__)
  if constexpr (kFast) {
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      const float u1 = fast::uniform(w.word[2 * pair]);
      const float u2 = fast::uniform(w.word[2 * pair + 1]);
      // -2 ln u1 = -2 ln 2 log2 u1; the approximate log2 may round to >= 0 next to u1 = 1.
      const float radius =
          fast::sqrt(fmaxf(__fmul_rn(fast::log2(u1), -1.38629436111989061883f), 0.0f));
      // cos(2 pi u) = -cos(2 pi u - pi): the approximate sine and cosine are accurate on [-pi, pi].
      const float angle = __fmaf_rn(6.28318530717958647692f, u2, -3.14159265358979323846f);
      z[2 * pair] = __fmul_rn(-radius, fast::cos(angle));
      z[2 * pair + 1] = __fmul_rn(-radius, fast::sin(angle));
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
GPUKIT_HD_INLINE void quad_normals(const PhiloxSchedule& keys, std::uint32_t option,
                                   std::uint32_t stream_high, std::uint32_t quad,
                                   std::uint32_t step, double z[4]) {
  for (std::uint32_t block = 0; block < 2; ++block) {
    const rng::Uint32x4 w =
        philox(stream_counter(option, stream_high, quad, 2 * step + block), keys);
#if defined(__CUDA_ARCH__)
    const rng::NormalPair<double> n =
        rng::box_muller(fast::uniform(w.word[0], w.word[1]), fast::uniform(w.word[2], w.word[3]));
#else
    const rng::NormalPair<double> n = rng::box_muller(rng::uniform_double(w.word[0], w.word[1]),
                                                      rng::uniform_double(w.word[2], w.word[3]));
#endif
    z[2 * block] = n.first;
    z[2 * block + 1] = n.second;
  }
}

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

/// Which quads lane `lane` of tile `tile` takes: first_quad + 32 i for i < quads, all 4 samples
/// of each but the last, which has last_valid (quads == 0: none).
struct LaneQuads {
  std::int64_t first_quad = 0;
  int quads = 0;
  int last_valid = 0;
};

GPUKIT_HD_INLINE LaneQuads lane_quads(std::int64_t samples, std::int64_t tile, int lane) {
  constexpr std::int64_t kLaneStride = 4 * kLanes;  // samples between a lane's quads
  LaneQuads q;
  q.first_quad = tile * (kLanes * kQuadsPerLane) + lane;
  const std::int64_t left = samples - 4 * q.first_quad;
  if (left <= 0) return q;
  q.quads = left > kLaneStride * (kQuadsPerLane - 1)
                ? kQuadsPerLane
                : static_cast<int>((left + kLaneStride - 1) / kLaneStride);
  const std::int64_t in_last = left - kLaneStride * (q.quads - 1);
  q.last_valid = in_last >= 4 ? 4 : static_cast<int>(in_last);
  return q;
}

/// A lane's moments over its quads, in order; quad_source(i) gives quad i's samples (computed
/// there, or read back from where another warp computed them: the same bits either way).
template <class M, class Real, class QuadSource>
GPUKIT_HD_INLINE Moments<Real> accumulate_lane(const LaneQuads& q, QuadSource&& quad_source) {
  if (q.quads == 0) return {};
  LaneSums<M, Real> sums;
  for (int i = 0; i < q.quads; ++i) {
    const QuadSamples<Real> s = quad_source(i);
    if (i == 0) sums.set_shift(s.x[0], s.control[0], s.half_difference[0]);
    if (i + 1 < q.quads || q.last_valid == 4) {
      for (int j = 0; j < 4; ++j) sums.add(s.x[j], s.control[j], s.half_difference[j]);
    } else {
      for (int j = 0; j < 4; ++j) {  // fixed indices: the arrays stay in registers
        if (j < q.last_valid) sums.add(s.x[j], s.control[j], s.half_difference[j]);
      }
    }
  }
  return sums.moments(static_cast<Real>(4 * (q.quads - 1) + q.last_valid));
}

/// The moments of one lane of tile `tile` of an option with `samples` samples: for the option's
/// kind kKind, or dispatched on it (mixed).
template <bool kFast, class M, PathKind kKind = PathKind::mixed, class Real>
GPUKIT_HD_INLINE Moments<Real> lane_moments(const PathParams<Real>& p, const PhiloxSchedule& keys,
                                            std::int64_t samples, std::int64_t tile, int lane) {
  if constexpr (kKind == PathKind::mixed) {
    // One dispatch per lane, not per quad.
    switch (path_kind(p)) {
      case PathKind::european_one_step:
        return lane_moments<kFast, M, PathKind::european_one_step>(p, keys, samples, tile, lane);
      case PathKind::european:
        return lane_moments<kFast, M, PathKind::european>(p, keys, samples, tile, lane);
      case PathKind::discrete_barrier:
        return lane_moments<kFast, M, PathKind::discrete_barrier>(p, keys, samples, tile, lane);
      default:
        return lane_moments<kFast, M, PathKind::continuous_barrier>(p, keys, samples, tile, lane);
    }
  } else {
    const LaneQuads q = lane_quads(samples, tile, lane);
    const PathConstants<Real> c = path_constants(p);
    const auto first = static_cast<std::uint32_t>(q.first_quad);  // below 2^32
    return accumulate_lane<M, Real>(q, [&](int i) {
      return quad_samples<kFast, M, kKind>(c, keys, first + static_cast<std::uint32_t>(i) * kLanes);
    });
  }
}

/// Tiles an option with `samples` samples has.
GPUKIT_HD_INLINE std::int64_t tiles_for(std::int64_t samples) {
  return (samples + kMonteCarloTileSamples - 1) / kMonteCarloTileSamples;
}

/// The same tree as merge_tile_pair's levels, built as the tiles arrive in order (pairwise
/// summation's stack): a complete subtree of 2^L tiles is merged as soon as its right half is, and
/// finish() merges the incomplete right edge from the right, as the fixed tree does when the count
/// is not a power of two. The same merges with the same operands, so the same bits, in
/// O(log tiles) memory.
template <class M>
struct TileTree {
  Moments<double> node[64];
  int level[64];
  int size = 0;

  void push(Moments<double> m) {
    int l = 0;
    while (size > 0 && level[size - 1] == l) m = merge<M>(node[--size], m), ++l;
    node[size] = m, level[size] = l, ++size;
  }
  /// The root of the tiles pushed since the last finish(), and an empty tree.
  Moments<double> finish() {
    if (size == 0) return {};
    Moments<double> m = node[--size];
    while (size > 0) m = merge<M>(node[--size], m);
    return m;
  }
};

/// The fixed tree over tiles, one level at a time: at stride s, tile i (a multiple of 2s) absorbs
/// tile i + s. Level `stride`'s merge number k touches tiles 2 s k and 2 s k + s.
template <class M>
GPUKIT_HD_INLINE void merge_tile_pair(Moments<double>* tiles, std::int64_t count,
                                      std::int64_t stride, std::int64_t k) {
  const std::int64_t i = 2 * stride * k;
  if (i + stride < count) tiles[i] = merge<M>(tiles[i], tiles[i + stride]);
}

}  // namespace gpukit::finance::mc
