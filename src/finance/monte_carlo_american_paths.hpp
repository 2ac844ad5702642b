#pragma once
// Internal: the early-exercise (Longstaff-Schwartz) engine's per-path code, shared by the CPU
// backend (cpu/monte_carlo_american_kernels.cpp) and the CUDA kernels
// (cuda/monte_carlo_american_kernels.cu): a row's constants, the paths of a quad on the dates,
// the regression sums of a path, the tile tree, the least-squares solve and the exercise rule.
// See include/gpukit/finance/monte_carlo_american.hpp for the contract.
//
// As in monte_carlo_paths.hpp, every floating-point operation of the paths whose rounding could
// depend on the compiler is written out with rounded:: (the CPU file is compiled without
// contraction), so each backend's bits are fixed.

#include <cmath>
#include <cstdint>

#include "finance/monte_carlo_normals.hpp"
#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_paths.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"

namespace gpukit::finance::mc {

/// Basis functions of the regression: 1, x, x^2, x^3 in x = S / K - 1; on heston rows also u and
/// u x in the scaled variance u = v / max(v0, theta) - 1 (monte_carlo_american.hpp).
inline constexpr int kAmericanBasis = 4;
inline constexpr int kAmericanHestonBasis = 6;
/// The sums a date's regression needs: sum x^k, k = 0 .. 6 (the Gram matrix of the spot's
/// functions is their Hankel matrix), then sum V x^k, k = 0 .. 3; on heston rows then sum u x^k,
/// k = 0 .. 4, sum u^2 x^k, k = 0 .. 2, sum V u and sum V u x (the same first 11).
inline constexpr int kAmericanSums = 2 * kAmericanBasis - 1 + kAmericanBasis;
inline constexpr int kAmericanHestonSums = kAmericanSums + 5 + 3 + 2;
/// A tile: 256 quads (8 warps of 32 quads on a GPU).
inline constexpr int kAmericanTileQuads = static_cast<int>(kAmericanTilePaths / 4);
inline constexpr int kAmericanTileWarps = kAmericanTileQuads / 32;
/// Slots of the fixed fold of the tiles' regression sums (slot k adds tiles k, k + 256, ...).
inline constexpr int kAmericanFoldSlots = kAmericanTileQuads;
static_assert(kAmericanTileQuads == 256 && kAmericanTileWarps == 8);

/// A row's constants, computed on the host in double and rounded once to Real.
template <class Real>
struct AmericanParams {
  Real spot_over_strike = 1;  // s_0
  Real drift_dt = 0;          // (r - q - sigma^2 / 2) dt
  Real vol_sqrt_dt = 0;       // sigma sqrt(dt)
  Real discount_dt = 1;       // exp(-r dt): pass 1's discount from one date to the one before
  Real payoff_sign = 1;       // +1 call, -1 put: h = max(sign (s - 1), 0)
  std::uint32_t dates = 1;
  std::uint32_t option = 0;       // the stream key's bits 0-31
  std::uint32_t stream_high = 0;  // its bits 32-63
  std::uint32_t antithetic = 0;   // pass 2 prices pairs of paths driven by Z and -Z
  // Heston rows (heston != 0): the QE step's constants (monte_carlo_paths.hpp heston_step) and
  // 1 / max(v0, theta) of the basis' u (0 when both are 0: u is then constant and dropped).
  std::uint32_t heston = 0;
  Real inv_variance_scale = 0;
  HestonStep<Real> heston_step;
};

/// The number of regression sums of a row's dates.
template <class Real>
GPUKIT_HD_INLINE int american_sums(const AmericanParams<Real>& p) {
  return p.heston ? kAmericanHestonSums : kAmericanSums;
}

/// The fitted rule of one date: exercise where h > 0 and h > c(x) = b0 + x (b1 + x (b2 + x b3))
/// (on heston rows + u (b4 + x b5)), and the discount factor exp(-r t_i) of a payoff there. The
/// last date's rule exercises wherever h > 0 (its coefficients are 0 and `at_maturity` is set).
template <class Real>
struct DateRule {
  Real beta[kAmericanHestonBasis] = {0, 0, 0, 0, 0, 0};
  Real discount = 1;
  std::uint32_t at_maturity = 0;
};

template <class Real>
GPUKIT_HD_INLINE Real intrinsic(const AmericanParams<Real>& p, Real s) {
  return max0(rounded::mul_add(p.payoff_sign, s, -p.payoff_sign));  // sign s - sign: exact sign
}

/// The basis' scaled variance u = v / max(v0, theta) - 1 of a heston row.
template <class Real>
GPUKIT_HD_INLINE Real scaled_variance(const AmericanParams<Real>& p, Real v) {
  return rounded::mul_add(v, p.inv_variance_scale, Real(-1));
}

template <class Real>
GPUKIT_HD_INLINE bool exercises(const AmericanParams<Real>& p, const DateRule<Real>& rule, Real s,
                                Real v, Real h) {
  if (!(h > Real(0))) return false;
  if (rule.at_maturity) return true;
  const Real x = rounded::sub(s, Real(1));
  Real c = rule.beta[3];
  c = rounded::mul_add(c, x, rule.beta[2]);
  c = rounded::mul_add(c, x, rule.beta[1]);
  c = rounded::mul_add(c, x, rule.beta[0]);
  if (p.heston) {
    const Real u = scaled_variance(p, v);
    c = rounded::mul_add(u, rounded::mul_add(rule.beta[5], x, rule.beta[4]), c);
  }
  return h > c;
}

/// The four paths of a quad: log-price y = ln(S / S0), s = S / K, and on heston rows the
/// variance.
template <class Real>
struct AmericanQuad {
  Real y[4], s[4], variance[4];

  GPUKIT_HD_INLINE explicit AmericanQuad(const AmericanParams<Real>& p) {
    for (int j = 0; j < 4; ++j) y[j] = 0, s[j] = p.spot_over_strike, variance[j] = p.heston_step.v0;
  }
};

/// The four paths of quad `quad` advanced by date `date`, on the numbers of step word
/// `word_offset` + date (Black-Scholes: y += drift + vol z) or, on heston rows, of step words
/// `word_offset` + 2 date (the variance's) and + 1 (the spot's) through the QE step, the layout of
/// a European heston row; then s = s_0 exp(y). `mirror`: the antithetic paths, every normal
/// negated (exactly).
template <bool kFast, class Real>
GPUKIT_HD_INLINE void advance_quad(const AmericanParams<Real>& p, const PhiloxSchedule& keys,
                                   std::uint32_t quad, std::uint32_t word_offset,
                                   std::uint32_t date, AmericanQuad<Real>& q, bool mirror = false) {
  const auto flip = [mirror](Real z[4]) {
    if (mirror) {
      for (int j = 0; j < 4; ++j) z[j] = -z[j];
    }
  };
  if (p.heston) {
    Real z_v[4], z_s[4];
    quad_normals<kFast>(keys, p.option, p.stream_high, quad, word_offset + 2 * date, z_v);
    quad_normals<kFast>(keys, p.option, p.stream_high, quad, word_offset + 2 * date + 1, z_s);
    flip(z_v), flip(z_s);
    for (int j = 0; j < 4; ++j) {
      Real increment = 0;
      q.variance[j] = heston_step(p.heston_step, q.variance[j], z_v[j], z_s[j], increment);
      q.y[j] = rounded::add(q.y[j], increment);
      q.s[j] = rounded::mul(p.spot_over_strike, path_exp<kFast>(q.y[j]));
    }
    return;
  }
  Real z[4];
  quad_normals<kFast>(keys, p.option, p.stream_high, quad, word_offset + date, z);
  flip(z);
  for (int j = 0; j < 4; ++j) {
    q.y[j] = rounded::add(q.y[j], rounded::mul_add(p.vol_sqrt_dt, z[j], p.drift_dt));
    q.s[j] = rounded::mul(p.spot_over_strike, path_exp<kFast>(q.y[j]));
  }
}

/// Pass 2: the discounted payoff (in units of K) of each path of quad `quad` (`mirror`: of its
/// antithetic twin) under `rules` (p.dates of them), on pass 2's numbers (the European layout:
/// step word = date index, or 2 date and 2 date + 1 on heston rows).
template <bool kFast, class Real>
GPUKIT_HD_INLINE void price_quad(const AmericanParams<Real>& p, const PhiloxSchedule& keys,
                                 const DateRule<Real>* rules, std::uint32_t quad, Real value[4],
                                 bool mirror = false) {
  AmericanQuad<Real> q(p);
  bool alive[4] = {true, true, true, true};
  for (int j = 0; j < 4; ++j) value[j] = 0;
  for (std::uint32_t date = 0; date < p.dates; ++date) {
    advance_quad<kFast>(p, keys, quad, 0, date, q, mirror);
    const DateRule<Real> rule = rules[date];
    bool any_alive = false;
    for (int j = 0; j < 4; ++j) {
      const Real h = intrinsic(p, q.s[j]);
      if (alive[j] && exercises(p, rule, q.s[j], q.variance[j], h)) {
        value[j] = rounded::mul(h, rule.discount);
        alive[j] = false;
      }
      any_alive = any_alive || alive[j];
    }
    if (!any_alive) break;  // the numbers do not depend on the history: stopping changes none
  }
}

/// How pass 2's tile moments merge: with the half differences' moments, which stay 0 (and leave
/// the samples' bits as a plain merge has them) without antithetic variates.
using AmericanMode = Mode<true, false>;

/// Pass 2's samples of a row priced with `paths` paths: the paths, or with antithetic variates
/// the pairs.
template <class Real>
GPUKIT_HD_INLINE std::int64_t pricing_samples(const AmericanParams<Real>& p, std::int64_t paths) {
  return p.antithetic ? paths / 2 : paths;
}

/// Pass 2's samples of quad `quad` (4 of them, in double): each path's discounted payoff, or with
/// antithetic variates each pair's mean 0.5 (a + b) and half difference 0.5 (a - b) (`half_
/// difference`, the antithetic statistics' d).
template <bool kFast, class Real>
GPUKIT_HD_INLINE void quad_samples(const AmericanParams<Real>& p, const PhiloxSchedule& keys,
                                   const DateRule<Real>* rules, std::uint32_t quad,
                                   double sample[4], double half_difference[4]) {
  Real a[4];
  price_quad<kFast>(p, keys, rules, quad, a);
  if (!p.antithetic) {
    for (int j = 0; j < 4; ++j) sample[j] = static_cast<double>(a[j]), half_difference[j] = 0;
    return;
  }
  Real b[4];
  price_quad<kFast>(p, keys, rules, quad, b, true);
  for (int j = 0; j < 4; ++j) {
    const double x = static_cast<double>(a[j]), y = static_cast<double>(b[j]);
    sample[j] = rounded::mul(0.5, rounded::add(x, y));
    half_difference[j] = rounded::mul(0.5, rounded::sub(x, y));
  }
}

/// A quad's four values as its tile's leaf: (v0 + v1) + (v2 + v3).
GPUKIT_HD_INLINE double quad_leaf(double v0, double v1, double v2, double v3) {
  return rounded::add(rounded::add(v0, v1), rounded::add(v2, v3));
}

/// A quad's leaves of its date's regression sums: leaf[k] = quad_leaf of the four paths' k-th
/// terms, x^k (k = 0 .. 6) and V x^(k - 7) (k = 7 .. 10), with x = s - 1, and on heston rows
/// (variance given) u x^k (k = 0 .. 4), u^2 x^k (k = 0 .. 2), V u and V u x; a path not `in` (out
/// of the money, or padding) contributes 0 to every sum.
template <class Real>
GPUKIT_HD_INLINE void quad_regression_leaves(const AmericanParams<Real>& p, const Real s[4],
                                             const Real variance[4], const Real v[4],
                                             const bool in[4], double leaf[]) {
  double x[4], value[4], power[4];
  for (int j = 0; j < 4; ++j) {
    x[j] = in[j] ? static_cast<double>(rounded::sub(s[j], Real(1))) : 0.0;
    value[j] = in[j] ? static_cast<double>(v[j]) : 0.0;
    power[j] = in[j] ? 1.0 : 0.0;
  }
  for (int k = 0; k < 2 * kAmericanBasis - 1; ++k) {
    leaf[k] = quad_leaf(power[0], power[1], power[2], power[3]);
    if (k < kAmericanBasis) {
      leaf[2 * kAmericanBasis - 1 + k] =
          quad_leaf(rounded::mul(value[0], power[0]), rounded::mul(value[1], power[1]),
                    rounded::mul(value[2], power[2]), rounded::mul(value[3], power[3]));
    }
    for (int j = 0; j < 4; ++j) power[j] = rounded::mul(power[j], x[j]);
  }
  if (!p.heston) return;
  double u[4], u_power[4], u2_power[4];
  for (int j = 0; j < 4; ++j) {
    u[j] = in[j] ? static_cast<double>(scaled_variance(p, variance[j])) : 0.0;
    u_power[j] = u[j];
    u2_power[j] = rounded::mul(u[j], u[j]);
  }
  for (int k = 0; k < 5; ++k) {
    leaf[kAmericanSums + k] = quad_leaf(u_power[0], u_power[1], u_power[2], u_power[3]);
    if (k < 3) {
      leaf[kAmericanSums + 5 + k] = quad_leaf(u2_power[0], u2_power[1], u2_power[2], u2_power[3]);
    }
    if (k < 2) {
      leaf[kAmericanSums + 8 + k] =
          quad_leaf(rounded::mul(value[0], u_power[0]), rounded::mul(value[1], u_power[1]),
                    rounded::mul(value[2], u_power[2]), rounded::mul(value[3], u_power[3]));
    }
    for (int j = 0; j < 4; ++j) {
      u_power[j] = rounded::mul(u_power[j], x[j]);
      u2_power[j] = rounded::mul(u2_power[j], x[j]);
    }
  }
}

/// The tile tree on the host (the CUDA kernels do the same additions with warp shuffles): over
/// 256 quad values in place, within each warp of 32 the shuffle-down tree (lane l adds lane
/// l + o, o = 16, 8, 4, 2, 1), then over the 8 warps' values (warp w adds warp w + o, o = 4, 2,
/// 1). Returns the root (values[0]).
inline double tile_tree(double values[kAmericanTileQuads]) {
  for (int warp = 0; warp < kAmericanTileWarps; ++warp) {
    double* lanes = values + 32 * warp;
    for (int offset = 16; offset > 0; offset /= 2) {
      for (int lane = 0; lane < offset; ++lane)
        lanes[lane] = rounded::add(lanes[lane], lanes[lane + offset]);
    }
  }
  for (int offset = kAmericanTileWarps / 2; offset > 0; offset /= 2) {
    for (int warp = 0; warp < offset; ++warp)
      values[32 * warp] = rounded::add(values[32 * warp], values[32 * (warp + offset)]);
  }
  return values[0];
}

GPUKIT_HD_INLINE double square_root(double x) {
#if defined(__CUDA_ARCH__)
  return sqrt(x);
#else
  return std::sqrt(x);
#endif
}

/// The Gram matrix entry (a, b) and the right-hand side a of the regression sums (the layout of
/// quad_regression_leaves): basis function a is x^i u^j, (i, j) = (a, 0) for a < 4, (0, 1) and
/// (1, 1) for a = 4, 5.
GPUKIT_HD_INLINE double american_gram(const double sums[], int a, int b) {
  const int i =
      (a < kAmericanBasis ? a : a - kAmericanBasis) + (b < kAmericanBasis ? b : b - kAmericanBasis);
  const int j = (a < kAmericanBasis ? 0 : 1) + (b < kAmericanBasis ? 0 : 1);
  return j == 0 ? sums[i] : j == 1 ? sums[kAmericanSums + i] : sums[kAmericanSums + 5 + i];
}
GPUKIT_HD_INLINE double american_rhs(const double sums[], int a) {
  return a < kAmericanBasis ? sums[2 * kAmericanBasis - 1 + a]
                            : sums[kAmericanSums + 8 + (a - kAmericanBasis)];
}

/// The least-squares coefficients of a date from its sums (kAmericanSums, or kAmericanHestonSums
/// with `basis` = kAmericanHestonBasis; the tiles folded): the normal equations G b = r with
/// G_ab = sum phi_a phi_b, r_a = sum V phi_a, scaled to unit diagonal (D G D y = D r, b = D y, D =
/// diag(G)^(-1/2)), factorised by Cholesky; a basis function whose pivot falls below 1e-12 (the
/// squared sine of its angle to the span of the ones before) is dropped (coefficient 0). No
/// in-the-money path: all 0 (no path asks). beta gets `basis` coefficients.
GPUKIT_HD_INLINE void solve_regression(const double sums[], int basis, double beta[]) {
  constexpr int kMax = kAmericanHestonBasis;
  constexpr double kDropPivot = 1e-12;
  const int n = basis;
  double scale[kMax], a[kMax][kMax], y[kMax];
  for (int i = 0; i < n; ++i) {
    const double diagonal = american_gram(sums, i, i);
    scale[i] = diagonal > 0 ? 1 / square_root(diagonal) : 0;
  }
  bool kept[kMax];
  // Cholesky a = L L^T in place (lower triangle), on the scaled matrix.
  for (int j = 0; j < n; ++j) {
    double pivot = american_gram(sums, j, j) * scale[j] * scale[j];
    for (int k = 0; k < j; ++k) pivot -= a[j][k] * a[j][k];
    kept[j] = scale[j] > 0 && pivot > kDropPivot;
    const double root = kept[j] ? square_root(pivot) : 0;
    a[j][j] = root;
    for (int i = j + 1; i < n; ++i) {
      double v = american_gram(sums, i, j) * scale[i] * scale[j];
      for (int k = 0; k < j; ++k) v -= a[i][k] * a[j][k];
      a[i][j] = kept[j] ? v / root : 0;
    }
  }
  for (int i = 0; i < n; ++i) {  // L y = D r
    double v = american_rhs(sums, i) * scale[i];
    for (int k = 0; k < i; ++k) v -= a[i][k] * y[k];
    y[i] = kept[i] ? v / a[i][i] : 0;
  }
  for (int i = n - 1; i >= 0; --i) {  // L^T z = y, b = D z
    double v = y[i];
    for (int k = i + 1; k < n; ++k) v -= a[k][i] * beta[k];
    beta[i] = kept[i] ? v / a[i][i] : 0;
  }
  for (int i = 0; i < n; ++i) beta[i] *= scale[i];
}

}  // namespace gpukit::finance::mc
