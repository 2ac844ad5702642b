// The independent reference of price_monte_carlo_book (gpukit mc --check and the tests): one
// scalar loop per path in long double, written from the contract in monte_carlo.hpp (the Philox
// words of each sample, the uniforms, Box-Muller, the path, the payoff, the estimators), sharing
// no code with the pricer but rng::philox4x32_10, which the Random123 known-answer vectors check.
// Beside each value it carries an a-priori bound on how far the pricer's value can be from the
// exact value of the same estimator on the same numbers, built up sample by sample from the
// rounding of each operation (the "running error analysis" of Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., section 3.3).

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "finance/cpu/monte_carlo_reference_bounds.hpp"
#include "finance/cpu/monte_carlo_reference_heston.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_sobol.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/rng/philox.hpp"
#include "gpukit/rng/sobol.hpp"

namespace gpukit::finance {

namespace {

using namespace mc::reference;  // the bounded arithmetic, shared with the early-exercise part

bool is_down(BarrierType t) { return t == BarrierType::down_out || t == BarrierType::down_in; }
bool is_in(BarrierType t) { return t == BarrierType::down_in || t == BarrierType::up_in; }

// A Brownian bridge's date on unit steps (rng/brownian_bridge.hpp's contract, written again):
// B(date) = left_weight B(left) + right_weight B(right) + std_dev z_dimension; the terminal date
// first (dimension 0, std_dev sqrt(steps)), then the midpoints of the intervals breadth first.
struct BridgeNode {
  std::uint32_t date = 0, left = 0, right = 0, dimension = 0;
  LD left_weight = 0, right_weight = 0, std_dev = 0;
};

std::vector<BridgeNode> bridge_order(std::uint32_t steps) {
  std::vector<BridgeNode> nodes{{steps, 0, steps, 0, 0, 0, std::sqrt(LD(steps))}};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> intervals{{0, steps}};
  std::uint32_t dimension = 1;
  for (std::size_t next = 0; next < intervals.size(); ++next) {
    const auto [left, right] = intervals[next];
    if (right - left < 2) continue;
    const std::uint32_t mid = left + (right - left) / 2;
    const LD width = right - left;
    nodes.push_back({mid, left, right, dimension++, (right - mid) / width, (mid - left) / width,
                     std::sqrt(LD(mid - left) * (right - mid) / width)});
    intervals.push_back({left, mid});
    intervals.push_back({mid, right});
  }
  return nodes;
}

// The standard normal quantile in long double: a rational start within 4.5e-4 (Abramowitz and
// Stegun 26.2.23), then Newton's method on the upper tail 0.5 erfc(x / sqrt 2) (quadratic
// convergence: six steps reach long double's precision).
LD normal_quantile(LD p) {
  const LD q = std::min(p, 1 - p);
  const LD t = std::sqrt(-2 * std::log(q));
  LD x = t - (2.515517L + 0.802853L * t + 0.010328L * t * t) /
                 (1 + 1.432788L * t + 0.189269L * t * t + 0.001308L * t * t * t);
  for (int i = 0; i < 6; ++i) {
    const LD tail = 0.5L * std::erfc(x * 0.707106781186547524400844362104849039L);
    const LD density = std::exp(-x * x / 2) * 0.398942280401432677939946059934381868L;
    x += (tail - q) / density;
  }
  return p < 0.5L ? -x : x;
}

// AS241 in double is within 1e-15 relative of the exact quantile for p in [1e-300, 1 - 2^-53]
// (rng/normal.hpp's contract, tested there against a long-double Newton reference); a Sobol
// uniform lies in [2^-33, 1 - 2^-33].
constexpr LD kInverseNormalRel = 1e-15L;

struct Row {
  bool put = false;
  LD strike_over_spot = 0, drift = 0, vol = 0, barrier = 0, bridge_scale = 0;  // w = +-y units
  LD drift_error = 0, vol_error = 0, strike_error = 0, barrier_error = 0, bridge_error_rel = 0;
  LD direction = 1;  // y = direction * w
  BarrierType type = BarrierType::none;
  AverageType average = AverageType::none;
  bool continuous = false, knocked_at_start = false;
  std::uint32_t steps = 1;
  std::uint64_t stream = 0;
  bool early_exercise = false;  // computed by the early-exercise reference instead
  // The sobol sampler: the replicate's scrambling key, the direction numbers, the order of the
  // row's bridge (barrier, Asian and heston rows) and a European row's terminal value's constants.
  bool sobol = false;
  std::uint64_t replicate_key = 0;
  const std::uint32_t* directions = nullptr;
  const std::vector<BridgeNode>* bridge = nullptr;
  LD terminal_drift = 0, terminal_drift_error = 0, terminal_vol = 0, terminal_vol_error = 0;
  // Heston rows: Andersen's step constants (monte_carlo_reference_heston.hpp).
  bool heston = false;
  HestonConstants heston_constants;
  // Discounted spot; the control's mean (E[S_T / S0], or on an arithmetic Asian row the
  // geometric Asian's payoff / S0) and a bound on the pricer's error in computing it in double.
  LD scale = 0, expected_control = 1, expected_control_error = 0;
};

// The standard normal distribution function in long double.
LD normal_cdf(LD x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); }

// E[max(+-(G - K), 0)] / S0 for the geometric average of S at t_i = i T / n, i = 1..n (ln G
// normal: mean (r - q - sigma^2/2) T (n+1)/(2n), variance sigma^2 T (n+1)(2n+1)/(6 n^2)), and
// a bound on the error of the pricer's double evaluation of the same formula (a few dozen
// roundings, each relative to the terms F N(d1) and K N(d2) the difference is made of).
Bounded geometric_asian_payoff_mean(bool put, LD strike_over_spot, LD maturity, LD rate,
                                    LD dividend, LD sigma, std::uint32_t steps) {
  const LD n = steps;
  const LD mean = (rate - dividend - sigma * sigma / 2) * maturity * (n + 1) / (2 * n);
  const LD variance = sigma * sigma * maturity * (n + 1) * (2 * n + 1) / (6 * n * n);
  const LD sign = put ? -1 : 1;
  constexpr LD kUd = 0x1p-53L;
  if (!(variance > 0)) {
    const LD value = std::max(sign * (std::exp(mean) - strike_over_spot), LD(0));
    return {value, 8 * kUd * (std::exp(mean) + strike_over_spot) * (1 + std::fabs(mean))};
  }
  const LD forward = std::exp(mean + variance / 2);
  if (!(strike_over_spot > 0)) {
    return {put ? LD(0) : forward, 8 * kUd * forward * (1 + std::fabs(mean) + variance)};
  }
  const LD sd = std::sqrt(variance);
  const LD d1 = (mean - std::log(strike_over_spot) + variance) / sd, d2 = d1 - sd;
  const LD value =
      sign * (forward * normal_cdf(sign * d1) - strike_over_spot * normal_cdf(sign * d2));
  const LD terms = forward * normal_cdf(sign * d1) + strike_over_spot * normal_cdf(sign * d2);
  return {value, 64 * kUd * terms *
                     (1 + std::fabs(mean) + variance + std::fabs(d1) + std::fabs(d2) +
                      std::fabs(std::log(strike_over_spot)))};
}

// The vanilla payoff of an underlying value (S_T or an average) known within x.error.
Bounded vanilla_bounded(const Row& row, const ErrorModel& m, const Bounded& x) {
  const LD intrinsic = row.put ? row.strike_over_spot - x.value : x.value - row.strike_over_spot;
  return Bounded{std::max(intrinsic, LD(0)),
                 x.error + row.strike_error + m.u * std::fabs(intrinsic)};
}

// ---- The sobol sampler -------------------------------------------------------------------------

// The pricer's normal of coordinate `dimension` of Sobol point `point` under the row's
// replicate: the point and its scrambling as rng/sobol.hpp (shared: tested against scipy), the
// uniform (x + 1/2) 2^-32 exactly, its quantile here, and the bound of AS241 in double and of the
// rounding to Real.
Bounded sobol_normal(const Row& row, const ErrorModel& m, std::uint32_t dimension,
                     std::uint32_t point) {
  const std::uint32_t x =
      rng::sobol_coordinate(row.directions + std::int64_t{32} * dimension, point);
  const std::uint32_t scrambled =
      rng::owen_scramble(x, rng::sobol_dimension_seed(row.replicate_key, dimension));
  const LD z = normal_quantile((LD(scrambled) + 0.5L) * 0x1p-32L);
  return {z, (kInverseNormalRel * (1 + m.u) + m.u) * std::fabs(z)};
}

// The Brownian path B(0) = 0, B(1), ..., B(steps) on unit steps of Sobol point `point`, its
// bridge dimension d read from Sobol dimension stride d + offset, as the pricer builds it: the
// weights computed in double and rounded to Real, each product and sum rounded.
void sobol_bridge(const Row& row, const ErrorModel& m, const BoundedArithmetic& ar,
                  std::uint32_t point, std::uint32_t stride, std::uint32_t offset,
                  std::vector<Bounded>& b) {
  constexpr LD kUd = 0x1p-53L;
  b.assign(row.steps + 1, Bounded{});
  for (const BridgeNode& node : *row.bridge) {
    const Bounded z = sobol_normal(row, m, stride * node.dimension + offset, point);
    const Bounded s{node.std_dev, (m.u + 3 * kUd) * node.std_dev};
    if (node.dimension == 0) {
      b[node.date] = ar.mul(s, z);
      continue;
    }
    const Bounded left{node.left_weight, (m.u + kUd) * node.left_weight};
    const Bounded right{node.right_weight, (m.u + kUd) * node.right_weight};
    b[node.date] =
        ar.add(ar.add(ar.mul(left, b[node.left]), ar.mul(right, b[node.right])), ar.mul(s, z));
  }
}

// w_m = m drift + vol B(m) (vol negated on the mirror), as the pricer's mul_add of its rounded
// m drift.
Bounded sobol_w(const Row& row, const ErrorModel& m, LD sign, std::uint32_t date,
                const Bounded& bridge) {
  const LD drift = date * row.drift;
  const LD drift_error = date * row.drift_error + m.u * std::fabs(drift);
  const LD product = sign * row.vol * bridge.value;
  const LD w = product + drift;
  return {w, std::fabs(row.vol) * bridge.error + row.vol_error * std::fabs(bridge.value) +
                 drift_error + m.u * (std::fabs(product) + std::fabs(w))};
}

// ---- Heston rows -------------------------------------------------------------------------------
//
// Andersen's QE step on bounded values, each open comparison followed both ways
// (monte_carlo_reference_heston.hpp): a path becomes a set of paths, and its sample is bounded by
// the farthest of their payoffs.

// A heston path after some steps: what the pricer's loop keeps.
struct HestonPath {
  Bounded variance, w, log_sum, price_sum;
  LD lowest_gap = std::numeric_limits<LD>::infinity();
  bool barrier_ambiguous = false;
};

// One QE step of `path` with the normals z_v, z_s (the mirror's already negated), taking at the
// i-th comparison the bounds leave open the other outcome where bit i of `flips` is set
// (qe_move), then the sums and the barrier's watch of the pricer's loop. Returns how many
// comparisons were open.
int heston_advance(const Row& row, const BoundedArithmetic& ar, const ErrorModel& m,
                   HestonPath& path, Bounded z_v, Bounded z_s, std::uint32_t flips) {
  const QeMove move = qe_move(row.heston_constants, ar, path.variance, z_v, z_s, flips);
  path.variance = move.variance;
  const Bounded& increment = move.increment;
  path.w = ar.add(path.w, {row.direction * increment.value, increment.error});  // exact negation
  if (row.average != AverageType::none) {
    path.log_sum = ar.add(path.log_sum, path.w);
    if (row.average == AverageType::arithmetic) {
      path.price_sum = ar.add(path.price_sum, exp_bounded(m, path.w.value, path.w.error));
    }
  }
  if (row.type != BarrierType::none) {
    const LD gap = path.w.value - row.barrier;
    path.lowest_gap = std::min(path.lowest_gap, gap);
    if (std::fabs(gap) <= path.w.error + row.barrier_error) path.barrier_ambiguous = true;
  }
  return move.open;
}

// A finished heston path's payoff (x) and control (S_T / S0), as the pricer forms them.
void heston_outcome(const Row& row, const ErrorModel& m, const HestonPath& path, Bounded& x,
                    Bounded& c) {
  c = exp_bounded(m, row.direction * path.w.value, path.w.error);
  const LD average_rounding = 2 * m.u + 0x1p-53L;  // 1 / steps in double, then Real; a product
  Bounded underlying = c;
  if (row.average == AverageType::arithmetic) {
    const LD mean = path.price_sum.value / row.steps;
    underlying = {mean, path.price_sum.error / row.steps + average_rounding * mean};
  } else if (row.average == AverageType::geometric) {
    const LD mean_log = path.log_sum.value / row.steps;
    underlying = exp_bounded(
        m, mean_log, path.log_sum.error / row.steps + average_rounding * std::fabs(mean_log));
  }
  x = vanilla_bounded(row, m, underlying);
  if (row.type != BarrierType::none) {
    const bool survived = !row.knocked_at_start && path.lowest_gap > 0;
    const bool paid = survived != is_in(row.type);
    x = {paid ? x.value : 0, path.barrier_ambiguous ? x.value + x.error : (paid ? x.error : LD(0))};
  }
}

// The payoffs and controls of the 4 (antithetic: 8) paths of quad q of a heston row.
void heston_quad(const Row& row, const ErrorModel& m, Precision precision, std::uint64_t seed,
                 bool antithetic, std::uint64_t quad, Bounded x[8], Bounded c[8]) {
  const BoundedArithmetic ar = heston_arithmetic(m, row.heston_constants);
  const int ways = antithetic ? 8 : 4;
  std::vector<HestonPath> branches[8];  // each way's paths, the reference's own first
  std::vector<HestonPath> moved;
  bool unbounded[8] = {};
  for (int j = 0; j < ways; ++j) {
    HestonPath start;
    start.variance = {row.heston_constants.v0, 0};
    branches[j].assign(1, start);
  }
  // Sobol: the variance's bridge on dimensions 2d, the spot's on 2d + 1; step m's normals are
  // B(m) - B(m - 1), one rounded subtraction.
  std::vector<Bounded> variance_bridge[4], spot_bridge[4];
  if (row.sobol) {
    for (int j = 0; j < 4; ++j) {
      const auto point = static_cast<std::uint32_t>(4 * quad + j);
      sobol_bridge(row, m, ar, point, 2, 0, variance_bridge[j]);
      sobol_bridge(row, m, ar, point, 2, 1, spot_bridge[j]);
    }
  }
  for (std::uint32_t step = 0; step < row.steps; ++step) {
    Bounded z_v[4], z_s[4];
    if (row.sobol) {
      for (int j = 0; j < 4; ++j) {
        z_v[j] = ar.sub(variance_bridge[j][step + 1], variance_bridge[j][step]);
        z_s[j] = ar.sub(spot_bridge[j][step + 1], spot_bridge[j][step]);
      }
    } else {
      quad_normals(row.stream, m, precision, seed, quad, 2 * step, z_v);
      quad_normals(row.stream, m, precision, seed, quad, 2 * step + 1, z_s);
    }
    for (int j = 0; j < ways; ++j) {
      const LD sign = j < 4 ? 1 : -1;  // the mirror negates both normals (exactly)
      const Bounded zv{sign * z_v[j & 3].value, z_v[j & 3].error};
      const Bounded zs{sign * z_s[j & 3].value, z_s[j & 3].error};
      const auto advance = [&](HestonPath& path, std::uint32_t flips) {
        return heston_advance(row, ar, m, path, zv, zs, flips);
      };
      if (!advance_branches(branches[j], moved, advance)) unbounded[j] = true;
    }
  }
  for (int j = 0; j < ways; ++j) {
    heston_outcome(row, m, branches[j][0], x[j], c[j]);
    for (std::size_t b = 1; b < branches[j].size(); ++b) {
      Bounded other_x, other_c;
      heston_outcome(row, m, branches[j][b], other_x, other_c);
      x[j].error = std::max(x[j].error, std::fabs(other_x.value - x[j].value) + other_x.error);
      c[j].error = std::max(c[j].error, std::fabs(other_c.value - c[j].value) + other_c.error);
    }
    if (unbounded[j]) x[j].error = c[j].error = std::numeric_limits<LD>::infinity();
  }
}

// The four samples of quad q (antithetic: of the pairs driven by z and -z).
void quad_samples(const Row& row, const ErrorModel& m, Precision precision, std::uint64_t seed,
                  bool antithetic, std::uint64_t quad, Sample out[4]) {
  if (row.heston) {
    Bounded x[8], c[8];
    heston_quad(row, m, precision, seed, antithetic, quad, x, c);
    combine_samples(m.u, antithetic, x, c, out);
    return;
  }
  const int ways = antithetic ? 8 : 4;
  Bounded w[8], alive[8];
  Bounded log_sum[8], price_sum[8];  // Asian: the sums of y and of S / S0 over the fixings
  LD lowest_gap[8];                  // discrete: the smallest w - barrier over the dates
  bool ambiguous[8] = {};
  const auto exp_of = [&m](LD y, LD dy) { return exp_bounded(m, y, dy); };
  const auto vanilla_of = [&](const Bounded& x) { return vanilla_bounded(row, m, x); };
  for (int j = 0; j < ways; ++j) {
    w[j] = {};
    log_sum[j] = {}, price_sum[j] = {};
    alive[j] = {row.knocked_at_start ? LD(0) : LD(1), 0};
    lowest_gap[j] = std::numeric_limits<LD>::infinity();
  }
  // Sobol: a European row's one normal (its terminal value), or each point's Brownian path.
  const bool sobol_terminal =
      row.sobol && row.type == BarrierType::none && row.average == AverageType::none;
  Bounded terminal_normal[4];
  std::vector<Bounded> bridge[4];
  if (row.sobol) {
    const BoundedArithmetic ar{m.u, 2 * m.u, 10 * m.u, 0};
    for (int j = 0; j < 4; ++j) {
      const auto point = static_cast<std::uint32_t>(4 * quad + j);
      if (sobol_terminal) {
        terminal_normal[j] = sobol_normal(row, m, 0, point);
      } else {
        sobol_bridge(row, m, ar, point, 1, 0, bridge[j]);
      }
    }
  }
  for (std::uint32_t step = 0; step < (sobol_terminal ? 1 : row.steps); ++step) {
    Bounded z[4];
    if (!row.sobol) quad_normals(row.stream, m, precision, seed, quad, step, z);
    for (int j = 0; j < ways; ++j) {
      const LD sign = j < 4 ? 1 : -1;
      const Bounded before = w[j];
      if (sobol_terminal) {
        // ln(S_T / S0) = mul_add(+-terminal_vol, z_0, terminal_drift).
        const Bounded& zj = terminal_normal[j & 3];
        const LD product = sign * row.terminal_vol * zj.value;
        w[j].value = product + row.terminal_drift;
        w[j].error = std::fabs(row.terminal_vol) * zj.error +
                     row.terminal_vol_error * std::fabs(zj.value) + row.terminal_drift_error +
                     m.u * (std::fabs(product) + std::fabs(w[j].value));
      } else if (row.sobol) {
        w[j] = sobol_w(row, m, sign, step + 1, bridge[j & 3][step + 1]);
      } else {
        const Bounded& zj = z[j & 3];
        const LD increment = row.drift + sign * row.vol * zj.value;
        LD increment_error = std::fabs(row.vol) * zj.error + row.vol_error * std::fabs(zj.value) +
                             row.drift_error + m.u * std::fabs(increment);
        if (m.fast_math) {
          increment_error += 2 * m.u * (std::fabs(row.vol * zj.value) + std::fabs(row.drift));
        }
        w[j].value += increment;
        w[j].error += increment_error + m.u * std::fabs(w[j].value);
      }
      if (row.average != AverageType::none) {  // no barrier: w = y
        log_sum[j].value += w[j].value;
        log_sum[j].error += w[j].error + m.u * std::fabs(log_sum[j].value);
        if (row.average == AverageType::arithmetic) {
          const Bounded price = exp_of(w[j].value, w[j].error);
          price_sum[j].value += price.value;
          price_sum[j].error += price.error + m.u * std::fabs(price_sum[j].value);
        }
        continue;
      }
      if (row.type == BarrierType::none) continue;
      const LD gap = w[j].value - row.barrier;
      const LD gap_error = w[j].error + row.barrier_error + m.u * std::fabs(gap);
      if (!row.continuous) {
        lowest_gap[j] = std::min(lowest_gap[j], gap);
        if (std::fabs(gap) <= gap_error) ambiguous[j] = true;
        continue;
      }
      // Survival of the bridge: f = 1 - exp(s a c) for c > 0, else 0; f is continuous at c = 0.
      const LD a = before.value - row.barrier;
      const LD a_error = before.error + row.barrier_error + m.u * std::fabs(a);
      const LD exponent = row.bridge_scale * a * gap;
      const LD exponent_error =
          std::fabs(row.bridge_scale) *
              (std::fabs(gap) * a_error + std::fabs(a) * gap_error + a_error * gap_error) +
          std::fabs(exponent) * (row.bridge_error_rel + 3 * m.u);
      const LD f = gap > 0 ? 1 - std::exp(exponent) : LD(0);
      LD f_error =
          std::expm1(exponent_error) * std::exp(std::min(LD(0), exponent + exponent_error)) +
          m.exp_rel + m.u;
      if (std::fabs(gap) <= gap_error)
        f_error = std::max(f_error, std::fabs(exponent) + exponent_error);
      f_error = std::min(f_error, LD(1));
      const Bounded old = alive[j];
      alive[j].value = old.value * f;
      alive[j].error =
          old.error * f + old.value * f_error + old.error * f_error + m.u * alive[j].value;
    }
  }
  Bounded x[8], c[8];
  // 1 / steps rounded to double, then to Real (the pricer's inv_steps), and a product's rounding.
  const LD average_rounding = 2 * m.u + 0x1p-53L;
  for (int j = 0; j < ways && row.average != AverageType::none; ++j) {
    const LD mean_log = log_sum[j].value / row.steps;
    const Bounded geometric =
        exp_of(mean_log, log_sum[j].error / row.steps + average_rounding * std::fabs(mean_log));
    if (row.average == AverageType::arithmetic) {
      const LD mean_price = price_sum[j].value / row.steps;
      x[j] =
          vanilla_of({mean_price, price_sum[j].error / row.steps + average_rounding * mean_price});
      c[j] = vanilla_of(geometric);
    } else {
      x[j] = vanilla_of(geometric);
      c[j] = exp_of(w[j].value, w[j].error);
    }
  }
  for (int j = 0; j < ways && row.average == AverageType::none; ++j) {
    const LD y = row.direction * w[j].value;
    LD exp_error = m.exp_rel;
    if (m.fast_math) exp_error += m.u * std::fabs(y);
    const LD terminal = std::exp(y);
    const LD terminal_error =
        terminal * (std::expm1(w[j].error) + exp_error * std::exp(w[j].error));
    const LD intrinsic =
        row.put ? row.strike_over_spot - terminal : terminal - row.strike_over_spot;
    const LD vanilla = std::max(intrinsic, LD(0));
    const LD vanilla_error = terminal_error + row.strike_error + m.u * std::fabs(intrinsic);
    Bounded payoff{vanilla, vanilla_error};
    if (row.type != BarrierType::none && !row.continuous) {
      const bool survived = !row.knocked_at_start && lowest_gap[j] > 0;
      const bool paid = survived != is_in(row.type);
      payoff.value = paid ? vanilla : 0;
      payoff.error = ambiguous[j] ? vanilla + vanilla_error : (paid ? vanilla_error : 0);
    } else if (row.type != BarrierType::none) {
      const LD weight = is_in(row.type) ? 1 - alive[j].value : alive[j].value;
      payoff.value = vanilla * weight;
      payoff.error = vanilla_error * weight + vanilla * alive[j].error +
                     vanilla_error * alive[j].error + 2 * m.u * (vanilla + payoff.value);
    }
    x[j] = payoff;
    c[j] = {terminal, terminal_error};
  }
  combine_samples(m.u, antithetic, x, c, out);
}

// Quads per block of the reference's work: 4096 (16384 samples) for European rows, fewer for rows
// of many steps, so that one block stays about 2^16 path-steps (milliseconds in long double) and
// progress can be told even for a single row of 2^20 steps.
std::int64_t quads_per_block(std::uint32_t most_steps) {
  return std::clamp<std::int64_t>((std::int64_t{1} << 14) / std::int64_t{most_steps}, 1, 1 << 12);
}

// Path-steps of (option, block) work the reference computes between two progress reports (and
// holds the sums of): a fraction of a second on a few cores.
constexpr double kChunkPathSteps = double(1 << 21);

}  // namespace

MonteCarloReference monte_carlo_reference(const MonteCarloBookView& book,
                                          const MonteCarloOptions& options, int threads,
                                          const std::function<void(double)>& progress) {
  if (book.count < 0 || options.paths < 2 || options.paths > kMonteCarloMaxPaths ||
      (options.antithetic && options.paths % 2 != 0)) {
    throw InvalidInput("monte carlo reference: invalid book or paths");
  }
  mc::check_sobol_options(options);  // the pricer's rule of replicates and paths
  const bool sobol = options.sampler == MonteCarloSampler::sobol;
  const std::int64_t replicates = sobol ? options.replicates : 1;
  const Precision precision = options.precision;
  const ErrorModel m = model_of(precision);
  // Samples of a row, or of a replicate of a row with the sobol sampler.
  const std::int64_t samples =
      (options.antithetic ? options.paths / 2 : options.paths) / replicates;
  const std::int64_t quads = (samples + 3) / 4;
  const auto book_rows = static_cast<std::size_t>(book.count);
  auto n = book_rows;  // the rows the paths are computed for: the replicates' with sobol
  std::vector<Row> rows(n);
  // Early-exercise rows first (each row's refusal before any long work), by their own reference.
  std::vector<mc::reference::RowReference> early(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (book.exercise == nullptr || book.exercise[i] == ExerciseStyle::european) continue;
    rows[i].early_exercise = true;
    early[i] =
        mc::reference::american_reference(book, static_cast<std::int64_t>(i), options, threads);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].early_exercise) continue;
    auto per = [i](const PerOption<double>& p) { return p.values ? p.values[i] : p.scalar; };
    const auto [spot, strike, maturity, rate, sigma, dividend] =
        rounded_inputs(book, static_cast<std::int64_t>(i), precision);
    Row& r = rows[i];
    r.put = book.is_put[i] != 0;
    r.steps = book.steps != nullptr ? book.steps[i] : 1;
    if (r.steps < 1 || r.steps > kMonteCarloMaxSteps) {
      throw InvalidInput(fmt::format("monte carlo reference: option {}: bad steps", i));
    }
    r.stream =
        book.stream != nullptr ? book.stream[i] : std::uint64_t{options.first_option_index} + i;
    r.type = book.barrier_type != nullptr ? book.barrier_type[i] : BarrierType::none;
    r.average = book.average != nullptr ? book.average[i] : AverageType::none;
    if (r.average != AverageType::none && r.type != BarrierType::none) {
      throw InvalidInput(fmt::format("monte carlo reference: option {}: an Asian barrier", i));
    }
    const LD dt = maturity / r.steps;
    const LD kUd = 0x1p-53L;  // the pricer computes its parameters in double, then rounds
    r.strike_over_spot = strike / spot;
    r.strike_error = (m.u + kUd) * r.strike_over_spot;
    const LD drift = (rate - dividend - sigma * sigma / 2) * dt;
    const LD vol = sigma * std::sqrt(dt);
    r.drift_error = m.u * std::fabs(drift) +
                    4 * kUd * (std::fabs(rate) + std::fabs(dividend) + sigma * sigma / 2) * dt;
    r.vol_error = (m.u + 3 * kUd) * vol;
    r.scale = spot * std::exp(-rate * maturity);
    r.terminal_drift = (rate - dividend - sigma * sigma / 2) * maturity;
    r.terminal_drift_error =
        m.u * std::fabs(r.terminal_drift) +
        4 * kUd * (std::fabs(rate) + std::fabs(dividend) + sigma * sigma / 2) * maturity;
    r.terminal_vol = sigma * std::sqrt(maturity);
    r.terminal_vol_error = (m.u + 3 * kUd) * r.terminal_vol;
    r.heston = book.model != nullptr && book.model[i] == AssetModel::heston;
    if (r.heston) {
      if (r.type != BarrierType::none && options.monitoring == BarrierMonitoring::continuous) {
        throw InvalidInput(fmt::format(
            "monte carlo reference: option {}: a heston barrier row is monitored on its dates only",
            i));
      }
      r.heston_constants =
          heston_constants(precision, per(book.v0), per(book.kappa), per(book.theta),
                           per(book.sigma_v), per(book.rho), rate, dividend, dt, m);
    }
    r.expected_control = std::exp((rate - dividend) * maturity);
    r.expected_control_error = 2 * kUd * r.expected_control;
    if (r.average == AverageType::arithmetic && !r.heston) {
      const Bounded mean = geometric_asian_payoff_mean(r.put, strike / spot, maturity, rate,
                                                       dividend, sigma, r.steps);
      r.expected_control = mean.value, r.expected_control_error = mean.error;
    }
    r.continuous = options.monitoring == BarrierMonitoring::continuous;
    const bool up = r.type == BarrierType::up_out || r.type == BarrierType::up_in;
    r.direction = up ? -1 : 1;
    r.drift = up ? -drift : drift;
    r.vol = up ? -vol : vol;
    if (r.type != BarrierType::none) {
      const LD barrier = rounded_to(precision, book.barrier[i]);
      const LD log_barrier = std::log(barrier / spot);
      r.barrier = up ? -log_barrier : log_barrier;
      r.barrier_error = m.u * std::fabs(log_barrier) + 2 * kUd * (1 + std::fabs(log_barrier));
      const LD variance_dt = sigma * sigma * dt;
      r.bridge_scale = variance_dt > 0 ? -2 / variance_dt : -std::numeric_limits<LD>::infinity();
      r.bridge_error_rel = m.u + 4 * kUd;
      r.knocked_at_start = is_down(r.type) ? spot <= barrier : spot >= barrier;
    }
  }
  // The sobol sampler: each row's replicates as rows of their own (row i's replicate r at
  // i * replicates + r, keyed by rng::sobol_replicate_key), combined at the end. A European
  // Black-Scholes row reads one Sobol dimension (its terminal value); a barrier or Asian row one a
  // date (a bridge on unit steps); a heston row two a date (the variance's bridge on the even
  // dimensions, the spot's on the odd ones).
  std::vector<std::uint32_t> directions;
  std::map<std::uint32_t, std::vector<BridgeNode>> bridges;
  if (sobol) {
    const auto dimensions_of = [](const Row& r) -> std::uint64_t {
      if (r.heston) return 2 * std::uint64_t{r.steps};
      return r.type == BarrierType::none && r.average == AverageType::none ? 1 : r.steps;
    };
    std::uint64_t dimensions = 1;
    for (std::size_t i = 0; i < n; ++i) {
      if (dimensions_of(rows[i]) > std::uint64_t{rng::kSobolMaxDimensions}) {
        throw InvalidInput(fmt::format(
            "monte carlo reference: option {}: more Sobol dimensions than the {} shipped", i,
            rng::kSobolMaxDimensions));
      }
      dimensions = std::max(dimensions, dimensions_of(rows[i]));
      if (dimensions_of(rows[i]) > 1)
        bridges.try_emplace(rows[i].steps, bridge_order(rows[i].steps));
    }
    directions = rng::sobol_direction_numbers(static_cast<int>(dimensions));
    std::vector<Row> replicated;
    replicated.reserve(n * static_cast<std::size_t>(replicates));
    for (const Row& r : rows) {
      for (std::int64_t k = 0; k < replicates; ++k) {
        Row v = r;
        v.sobol = true;
        v.replicate_key =
            rng::sobol_replicate_key(options.seed, r.stream, static_cast<std::uint32_t>(k));
        v.directions = directions.data();
        if (dimensions_of(r) > 1) v.bridge = &bridges.at(r.steps);
        replicated.push_back(v);
      }
    }
    rows.swap(replicated);
    n = rows.size();
  }
  // A sample's step on one thread, in long double: 530 ns (gpukit_tune_cpu_threads costs at idle,
  // 2^12 paths of one step: 535, 533). Path-steps in double, so that paths x steps x rows cannot
  // overflow.
  constexpr double kNsPerPathStep = 530;
  const auto as_items = [](double path_steps) {
    return static_cast<std::int64_t>(std::min(path_steps, 0x1p62));
  };
  double first_path_steps = 0;  // the first quad of every row: 4 paths
  for (const Row& row : rows) first_path_steps += row.early_exercise ? 0 : 4.0 * row.steps;
  std::vector<Sample> first(n);
  const int first_threads = cpu_threads_for(
      {as_items(first_path_steps), kNsPerPathStep, static_cast<std::int64_t>(n)}, threads);
#pragma omp parallel for schedule(dynamic, 64) num_threads(first_threads)
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].early_exercise) continue;
    Sample s[4];
    quad_samples(rows[i], m, precision, options.seed, options.antithetic, 0, s);
    first[i] = s[0];
  }
  // Every (option, block of quads) on its own, a chunk of them at a time in parallel; each
  // chunk's block sums are then added in block order to their option's, which gives the sums of
  // adding every block in order, in memory that does not grow with the paths, and a moment
  // between chunks to report progress (from this thread, so that what the callback throws
  // leaves no parallel region).
  std::uint32_t most_steps = 1;
  double work_path_steps = 0;
  for (const Row& row : rows) {
    if (row.early_exercise) continue;
    most_steps = std::max(most_steps, row.steps);
    work_path_steps += double(samples) * row.steps;
  }
  const std::int64_t block_quads = quads_per_block(most_steps);
  const std::int64_t blocks = (quads + block_quads - 1) / block_quads;
  const std::int64_t work = static_cast<std::int64_t>(n) * blocks;
  const int t = cpu_threads_for({as_items(work_path_steps), kNsPerPathStep, work}, threads);
  const std::int64_t chunk = std::max<std::int64_t>(
      4 * std::int64_t{t},
      static_cast<std::int64_t>(kChunkPathSteps / (4.0 * double(block_quads) * most_steps)));
  std::vector<Sums> totals(n);
  std::vector<Sums> chunk_sums(static_cast<std::size_t>(std::min(work, chunk)));
  double path_steps_done = 0;
  for (std::int64_t first_item = 0; first_item < work; first_item += chunk) {
    const std::int64_t count = std::min(chunk, work - first_item);
#pragma omp parallel for schedule(dynamic, 1) num_threads(t)
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t k = first_item + j;
      const auto i = static_cast<std::size_t>(k / blocks);
      const std::int64_t block = k % blocks;
      Sums& sums = chunk_sums[static_cast<std::size_t>(j)];
      sums = Sums{};
      if (rows[i].early_exercise) continue;
      const std::int64_t end = std::min(quads, (block + 1) * block_quads);
      for (std::int64_t q = block * block_quads; q < end; ++q) {
        Sample s[4];
        quad_samples(rows[i], m, precision, options.seed, options.antithetic,
                     static_cast<std::uint64_t>(q), s);
        for (int j_sample = 0; j_sample < 4 && 4 * q + j_sample < samples; ++j_sample) {
          sums.add(s[j_sample], first[i].x.value, first[i].c.value);
        }
      }
    }
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t k = first_item + j;
      const auto i = static_cast<std::size_t>(k / blocks);
      const Sums& sums = chunk_sums[static_cast<std::size_t>(j)];
      totals[i].add(sums);
      path_steps_done += double(sums.n) * rows[i].steps;
    }
    if (progress) {
      progress(work_path_steps > 0 ? std::min(1.0, path_steps_done / work_path_steps) : 1.0);
    }
  }
  if (progress && work == 0) progress(1.0);
  MonteCarloReference result;
  result.price.resize(n), result.std_error.resize(n);
  result.price_bound.resize(n), result.std_error_bound.resize(n);
  constexpr LD kUd = 0x1p-53L;
  // The pricer's statistics: lane sums of up to 64 samples and the 5-level lane tree in Real,
  // then the tile tree in double; each level's Chan update costs a few roundings.
  const std::int64_t tiles = (samples + kMonteCarloTileSamples - 1) / kMonteCarloTileSamples;
  const LD gamma =
      (64 + 4 * 5) * m.u + 4 * (std::log2(LD(std::max<std::int64_t>(tiles, 1))) + 2) * kUd;
  // The reference's own sums: a block's recursive sum, then the blocks'.
  const LD gamma_reference = LD(block_quads * 4 + blocks + 4) * std::numeric_limits<LD>::epsilon();
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].early_exercise) {
      result.price[i] = early[i].price, result.std_error[i] = early[i].std_error;
      result.price_bound[i] = early[i].price_bound;
      result.std_error_bound[i] = early[i].std_error_bound;
      continue;
    }
    const Sums& s = totals[i];
    const Row& row = rows[i];
    const LD count = s.n;
    const LD x0 = first[i].x.value, c0 = first[i].c.value;
    const LD mean_x = x0 + s.sx / count, mean_c = c0 + s.sc / count;
    const LD m2x = std::max(LD(0), s.sxx - s.sx * s.sx / count);
    const LD m2c = std::max(LD(0), s.scc - s.sc * s.sc / count);
    const LD co = s.sxc - s.sx * s.sc / count;
    const LD g = gamma + gamma_reference;
    // Bounds on the pricer's moments: its samples' errors plus its sums' rounding.
    const LD d_mean_x = s.ex / count + g * (s.ax / count + s.max_x);
    const LD d_mean_c = s.ec / count + g * (s.ac / count + s.max_c);
    const LD square_x = s.axx + 2 * s.max_x * s.ax + count * s.max_x * s.max_x;  // sum (|x|+M)^2
    const LD square_c = s.acc + 2 * s.max_c * s.ac + count * s.max_c * s.max_c;
    // First order, and the second-order terms sum dx^2 (a sample's bound may be its whole
    // payoff: a discrete barrier's, a heston branch's).
    const LD d_m2x = 2 * (s.exx + std::fabs(x0 - mean_x) * s.ex) + s.ex2 + g * square_x;
    const LD d_m2c = 2 * (s.ecc + std::fabs(c0 - mean_c) * s.ec) + s.ec2 + g * square_c;
    const LD d_co = s.exc + std::fabs(c0 - mean_c) * s.ex + s.ecx + std::fabs(x0 - mean_x) * s.ec +
                    s.exec + g * std::sqrt(square_x * square_c);
    LD mean = mean_x, residual = m2x, d_mean = d_mean_x, d_residual = d_m2x;
    if (options.control_variate && m2c > 0) {
      const LD beta = co / m2c;
      // First order in the moments' errors, doubled for the second (valid while d_m2c < m2c/2;
      // beyond that the bound is infinite).
      const LD d_beta = d_m2c < m2c / 2 ? 2 * (d_co + std::fabs(beta) * d_m2c) / m2c
                                        : std::numeric_limits<LD>::infinity();
      const LD gap = mean_c - row.expected_control;
      mean = mean_x - beta * gap;
      d_mean = d_mean_x + std::fabs(beta) * (d_mean_c + row.expected_control_error) +
               (std::fabs(gap) + d_mean_c) * d_beta;
      residual = std::max(LD(0), m2x - beta * co);
      d_residual = d_m2x + 2 * std::fabs(beta) * d_co + beta * beta * d_m2c +
                   (std::fabs(co) + d_co) * d_beta;
    }
    const LD price = row.scale * mean;
    const LD variance = count > 1 ? residual / (count - 1) : 0;
    const LD std_error = row.scale * std::sqrt(variance / count);
    result.price[i] = static_cast<double>(price);
    result.std_error[i] = static_cast<double>(std_error);
    // The pricer's scale (an exp and a product in double) and the rounding of its results.
    result.price_bound[i] = static_cast<double>(row.scale * d_mean + 6 * kUd * std::fabs(price));
    LD d_std_error = 0;
    if (count > 1) {
      const LD d_variance = d_residual / (count - 1);
      const LD root_gap =
          std::min(std::sqrt(d_variance),
                   variance > 0 ? d_variance / std::sqrt(variance) : std::sqrt(d_variance));
      d_std_error = row.scale * root_gap / std::sqrt(count) + 8 * kUd * std_error;
    }
    result.std_error_bound[i] = static_cast<double>(d_std_error);
  }
  if (!sobol) return result;
  // The replicates' estimates p_r (each within b_r): price = their mean (Welford's update in
  // double), std_error = their standard deviation / sqrt(R). |mean shift| <= mean b_r; the
  // standard deviation moves by at most sqrt(sum b_r^2 / (R - 1)) (the distance of the centred
  // vectors); plus Welford's roundings and the reference's own rounding of p_r to double.
  MonteCarloReference combined;
  combined.price.resize(book_rows), combined.std_error.resize(book_rows);
  combined.price_bound.resize(book_rows), combined.std_error_bound.resize(book_rows);
  const LD count = LD(replicates);
  for (std::size_t i = 0; i < book_rows; ++i) {
    LD mean = 0, largest = 0, bound_sum = 0, bound_squares = 0;
    for (std::int64_t k = 0; k < replicates; ++k) {
      const std::size_t v = i * static_cast<std::size_t>(replicates) + static_cast<std::size_t>(k);
      const LD price = result.price[v];
      const LD bound = LD(result.price_bound[v]) + kUd * std::fabs(price);
      mean += price / count;
      largest = std::max(largest, std::fabs(price));
      bound_sum += bound, bound_squares += bound * bound;
    }
    LD m2 = 0, spread = 0;
    for (std::int64_t k = 0; k < replicates; ++k) {
      const LD d =
          result.price[i * static_cast<std::size_t>(replicates) + static_cast<std::size_t>(k)] -
          mean;
      m2 += d * d, spread = std::max(spread, std::fabs(d));
    }
    const LD mean_rounding = 4 * count * kUd * largest;
    const LD std_error = std::sqrt(m2 / (count - 1) / count);
    const LD d_m2 = count * (20 * kUd * spread * spread + 4 * spread * mean_rounding);
    const LD d_variance = d_m2 / (count - 1) / count;
    const LD root_gap = std::min(std::sqrt(d_variance),
                                 std_error > 0 ? d_variance / std_error : std::sqrt(d_variance));
    combined.price[i] = static_cast<double>(mean);
    combined.std_error[i] = static_cast<double>(std_error);
    combined.price_bound[i] =
        static_cast<double>(bound_sum / count + mean_rounding + kUd * std::fabs(mean));
    combined.std_error_bound[i] = static_cast<double>(
        std::sqrt(bound_squares / (count - 1)) / std::sqrt(count) + root_gap + 4 * kUd * std_error);
  }
  return combined;
}

MonteCarloAgreement monte_carlo_agreement(const MonteCarloBookResult& result,
                                          const MonteCarloReference& reference) {
  if (result.price.size() != reference.price.size() ||
      result.std_error.size() != reference.std_error.size()) {
    throw InvalidInput("monte carlo agreement: the result and the reference differ in rows");
  }
  MonteCarloAgreement a;
  a.rows = static_cast<std::int64_t>(reference.price.size());
  for (std::size_t i = 0; i < reference.price.size(); ++i) {
    const double price_gap = std::fabs(result.price[i] - reference.price[i]);
    const double error_gap = std::fabs(result.std_error[i] - reference.std_error[i]);
    a.max_abs_price_difference = std::max(a.max_abs_price_difference, price_gap);
    if (reference.std_error[i] > 0) {
      a.max_price_difference_in_std_errors =
          std::max(a.max_price_difference_in_std_errors, price_gap / reference.std_error[i]);
    }
    if (reference.price_bound[i] > 0) {
      a.max_price_difference_over_bound =
          std::max(a.max_price_difference_over_bound, price_gap / reference.price_bound[i]);
    }
    // The bounds are exact-arithmetic statements; an equal value is within them.
    if (reference.price_bound[i] > reference.std_error[i]) ++a.rows_with_loose_bound;
    // A bound the reference could not state (infinite) checks nothing: the row is not passed.
    if (!(price_gap <= reference.price_bound[i]) || !(error_gap <= reference.std_error_bound[i]) ||
        !std::isfinite(reference.price_bound[i]) || !std::isfinite(reference.std_error_bound[i])) {
      ++a.rows_over_bound;
    }
  }
  return a;
}

MonteCarloAgreement check_monte_carlo_book(const MonteCarloBookView& book,
                                           const MonteCarloOptions& options,
                                           const MonteCarloBookResult& result, int threads,
                                           const std::function<void(double)>& progress) {
  return monte_carlo_agreement(result, monte_carlo_reference(book, options, threads, progress));
}

}  // namespace gpukit::finance
