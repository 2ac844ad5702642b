// The early-exercise part of the independent reference (monte_carlo.hpp's monte_carlo_reference):
// both passes of Longstaff and Schwartz's estimator (gpukit/finance/monte_carlo_american.hpp, the
// contract) recomputed in long double on the same Philox numbers, by code that shares nothing
// with the pricer but rng::philox4x32_10: its own paths, its own regression (the 4 x 4 normal
// equations solved by Gauss-Jordan elimination in long double), its own exercise decisions, and
// pass 2's mean and standard error.
//
// Beside each value, a bound on how far the pricer's can be from it (the running error analysis
// of monte_carlo_reference.cpp):
// - spots: the rounding of each increment, exp and product (the error model of the precision);
// - pass 1: a decision whose margin |h - c| is within the bounds of h and of the continuation c
//   is ambiguous: the path's V may be either value, which its bound then covers; V's bound enters
//   the regression sums of every earlier date, a path within its bound of the money enters them
//   whole, and the sums' own rounding (the pricer's tree and fold in double) is added;
// - the coefficients: the pricer solves (G + E) b = r + f with |E| within the Cholesky backward
//   error (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., theorem 10.4:
//   gamma_{3n+1} of the scaled unit-diagonal matrix) plus the sums' bounds, so |b - b_ref| <=
//   |G^-1| (|dr| + |dG| |b|) / (1 - || |G^-1| |dG| ||); a basis function whose pivot is within
//   its perturbation of the drop threshold (1e-12) leaves the date's rule unbounded;
// - pass 2: a decision within its bounds is ambiguous, and the sample is bounded by the farthest
//   of the payoffs the pricer could have taken (exercising at any date from there on where it may
//   exercise, up to the first date where it must, or never);
// - the rounding of the pricer's tile trees and merges, and of price = K mean.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "finance/cpu/monte_carlo_reference_bounds.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"

namespace gpukit::finance::mc::reference {

namespace {

constexpr LD kUd = 0x1p-53L;
constexpr LD kInfinity = std::numeric_limits<LD>::infinity();
constexpr int kBasis = 4;

// A row's constants: the contract's formulas in long double from the inputs rounded to the
// computing precision, each with the bound on the pricer's (computed in double, rounded to Real).
struct AmericanRow {
  LD sign = 1;  // +1 call, -1 put
  Bounded s0, drift, vol, discount_dt;
  std::vector<Bounded> discount;  // exp(-r t_i), date i - 1
  std::uint32_t dates = 1;
  std::uint64_t stream = 0;
  LD strike = 0;
};

// A date's rule: exercise where h > 0 and h > b0 + x (b1 + x (b2 + x b3)), x = s - 1.
struct Rule {
  Bounded beta[kBasis];
  bool unbounded = false;  // the coefficients could not be bounded: every decision is open
  bool at_maturity = false;
};

// y += drift + vol z; s = s0 exp(y): the pricer's spot of a path on its next date.
Bounded next_spot(const AmericanRow& row, const ErrorModel& m, Bounded& y, const Bounded& z) {
  const LD increment = row.drift.value + row.vol.value * z.value;
  LD increment_error = std::fabs(row.vol.value) * z.error + row.vol.error * std::fabs(z.value) +
                       row.drift.error + m.u * std::fabs(increment);
  if (m.fast_math) {
    increment_error += 2 * m.u * (std::fabs(row.vol.value * z.value) + std::fabs(row.drift.value));
  }
  y.value += increment;
  y.error += increment_error + m.u * std::fabs(y.value);
  const Bounded e = exp_bounded(m, y.value, y.error);
  const LD s = row.s0.value * e.value;
  return {s, row.s0.value * e.error + row.s0.error * (e.value + e.error) + m.u * std::fabs(s)};
}

// h = max(sign (s - 1), 0), one rounding.
Bounded intrinsic(const AmericanRow& row, const ErrorModel& m, const Bounded& s) {
  const LD moneyness = row.sign * (s.value - 1);
  return {std::max(moneyness, LD(0)), s.error + m.u * std::fabs(moneyness)};
}

// The pricer's decision on a path at spot s, payoff h under `rule`: the reference's outcome, and
// whether the bounds allow the pricer the other one.
struct Decision {
  bool exercise = false, open = false;
};
Decision decide(const AmericanRow& row, const ErrorModel& m, const BoundedArithmetic& ar,
                const Rule& rule, const Bounded& s, const Bounded& h) {
  // h > 0: the sign of s - 1 (a correctly rounded difference keeps its sign).
  const LD moneyness = row.sign * (s.value - 1);
  const bool in_money = moneyness > 0;
  const bool money_open = s.error > 0 && std::fabs(moneyness) <= s.error;
  (void)m;
  if (!in_money && !money_open) return {false, false};
  if (rule.at_maturity) return {in_money, money_open};
  if (rule.unbounded) return {false, true};
  const Bounded x = ar.sub(s, {1, 0});
  Bounded c = rule.beta[3];
  for (int k = 2; k >= 0; --k) c = ar.mul_add(c, x, rule.beta[k]);
  const Comparison above = greater(h, c);
  const bool exercise = in_money && above.holds;
  // The other outcome is possible when either comparison could go the other way.
  const bool other = exercise ? (money_open || above.open)
                              : ((in_money || money_open) && (above.holds || above.open));
  return {exercise, other};
}

// (|a| + e)^k - |a|^k and (|a| + e)^k, k = 0 .. 6.
void power_bounds(LD a, LD e, LD moved[7], LD whole[7]) {
  LD p = 1, q = 1;
  for (int k = 0; k < 7; ++k) {
    moved[k] = q - p, whole[k] = q;
    p *= std::fabs(a), q *= std::fabs(a) + e;
  }
}

// The inverse of the n x n matrix a (row-major, n <= 4) by Gauss-Jordan elimination with partial
// pivoting in long double; false when singular.
bool invert(int n, const LD a_in[kBasis][kBasis], LD inverse[kBasis][kBasis]) {
  LD a[kBasis][2 * kBasis] = {};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) a[i][j] = a_in[i][j];
    a[i][n + i] = 1;
  }
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int i = col + 1; i < n; ++i) {
      if (std::fabs(a[i][col]) > std::fabs(a[pivot][col])) pivot = i;
    }
    if (!(std::fabs(a[pivot][col]) > 0)) return false;
    for (int j = 0; j < 2 * n; ++j) std::swap(a[col][j], a[pivot][j]);
    const LD d = a[col][col];
    for (int j = 0; j < 2 * n; ++j) a[col][j] /= d;
    for (int i = 0; i < n; ++i) {
      if (i == col) continue;
      const LD f = a[i][col];
      for (int j = 0; j < 2 * n; ++j) a[i][j] -= f * a[col][j];
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) inverse[i][j] = a[i][n + j];
  }
  return true;
}

// The rule of a date from its regression sums (S_k = sum x^k, k = 0..6; T_k = sum V x^k, k =
// 0..3) and their bounds: the contract's least squares (its drops of nearly dependent basis
// functions included), and the bound on the pricer's coefficients.
Rule fit_rule(const LD sums[7], const LD sums_error[7], const LD rhs[4], const LD rhs_error[4],
              const ErrorModel& m) {
  Rule rule;
  for (Bounded& b : rule.beta) b = {0, 0};
  if (sums[0] == 0 && sums_error[0] == 0) return rule;  // no path in the money: all 0, unasked
  if (!(sums_error[0] < sums[0])) {
    rule.unbounded = true;  // maybe no path in the money, maybe some
    return rule;
  }
  LD scale[kBasis];
  for (int i = 0; i < kBasis; ++i) scale[i] = sums[2 * i] > 0 ? 1 / std::sqrt(sums[2 * i]) : 0;
  // The perturbation of the scaled matrix: the sums' bounds, the Cholesky backward error
  // gamma_13 (|L||L^T| <= 1 entrywise on a unit diagonal) and the scaling's roundings.
  LD scaled[kBasis][kBasis], perturbation[kBasis][kBasis];
  for (int i = 0; i < kBasis; ++i) {
    for (int j = 0; j < kBasis; ++j) {
      scaled[i][j] = sums[i + j] * scale[i] * scale[j];
      perturbation[i][j] =
          sums_error[i + j] * scale[i] * scale[j] +
          (20 * kUd + sums_error[2 * i] / sums[2 * i] + sums_error[2 * j] / sums[2 * j]) *
              (1 + std::fabs(scaled[i][j]));
    }
  }
  // Which functions the pricer keeps: pivot j = 1 / (B^-1)_jj for B the kept ones and j.
  int kept[kBasis], n = 0;
  for (int j = 0; j < kBasis; ++j) {
    if (!(scale[j] > 0)) continue;
    int index[kBasis];
    for (int a = 0; a < n; ++a) index[a] = kept[a];
    index[n] = j;
    const int size = n + 1;
    LD b[kBasis][kBasis], inverse[kBasis][kBasis], delta[kBasis][kBasis];
    for (int a = 0; a < size; ++a) {
      for (int c = 0; c < size; ++c) {
        b[a][c] = scaled[index[a]][index[c]];
        delta[a][c] = perturbation[index[a]][index[c]];
      }
    }
    if (!invert(size, b, inverse)) {
      rule.unbounded = true;
      return rule;
    }
    LD epsilon = 0, moved = 0;  // || |B^-1| |dB| ||_inf; (|B^-1| |dB| |B^-1|)_jj
    for (int a = 0; a < size; ++a) {
      LD row_sum = 0;
      for (int c = 0; c < size; ++c) {
        LD t = 0;
        for (int d = 0; d < size; ++d) t += std::fabs(inverse[a][d]) * delta[d][c];
        row_sum += t;
        if (a == n) moved += t * std::fabs(inverse[c][n]);
      }
      epsilon = std::max(epsilon, row_sum);
    }
    const LD pivot = 1 / inverse[n][n];
    if (!(epsilon < 0.5L)) {
      rule.unbounded = true;
      return rule;
    }
    const LD relative = pivot * moved / (1 - epsilon);
    constexpr LD kDropPivot = 1e-12L;
    if (pivot * (1 - relative) > kDropPivot) {
      kept[n++] = j;
    } else if (!(pivot * (1 + relative) <= kDropPivot)) {
      rule.unbounded = true;  // the pricer may have kept it or dropped it
      return rule;
    }
  }
  // b = G_K^-1 r_K (scaled: b = D A^-1 D r); the bound |G^-1| (|dr| + |dG| |b|) with its second
  // order through 1 / (1 - epsilon).
  LD a[kBasis][kBasis], inverse[kBasis][kBasis], delta[kBasis][kBasis];
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      a[i][j] = scaled[kept[i]][kept[j]];
      delta[i][j] = perturbation[kept[i]][kept[j]];
    }
  }
  if (!invert(n, a, inverse)) {
    rule.unbounded = true;
    return rule;
  }
  LD y[kBasis], dy[kBasis];  // scaled: y = A^-1 (D r), D r's bound
  LD d_rhs[kBasis];
  for (int i = 0; i < n; ++i) {
    const int k = kept[i];
    d_rhs[i] = scale[k] * (rhs_error[k] + 4 * kUd * std::fabs(rhs[k])) +
               scale[k] * std::fabs(rhs[k]) * sums_error[2 * k] / sums[2 * k];
  }
  for (int i = 0; i < n; ++i) {
    y[i] = 0;
    for (int j = 0; j < n; ++j) y[i] += inverse[i][j] * scale[kept[j]] * rhs[kept[j]];
  }
  LD w[kBasis], growth[kBasis], w_max = 0, epsilon = 0;
  for (int i = 0; i < n; ++i) {
    w[i] = 0, growth[i] = 0;
    for (int j = 0; j < n; ++j) {
      LD delta_y = d_rhs[j];
      for (int c = 0; c < n; ++c) delta_y += delta[j][c] * std::fabs(y[c]);
      w[i] += std::fabs(inverse[i][j]) * delta_y;
      for (int c = 0; c < n; ++c) growth[i] += std::fabs(inverse[i][j]) * delta[j][c];
    }
    w_max = std::max(w_max, w[i]);
    epsilon = std::max(epsilon, growth[i]);
  }
  if (!(epsilon < 0.5L)) {
    rule.unbounded = true;
    return rule;
  }
  for (int i = 0; i < n; ++i) {
    dy[i] = w[i] + growth[i] * w_max / (1 - epsilon);
    const int k = kept[i];
    const LD beta = y[i] * scale[k];
    // b = D y: the scale's bound and a product in double, then the rounding to Real.
    const LD d_beta =
        dy[i] * scale[k] + std::fabs(beta) * (4 * kUd + sums_error[2 * k] / sums[2 * k]);
    rule.beta[k] = {beta, d_beta + m.u * (std::fabs(beta) + d_beta)};
  }
  return rule;
}

AmericanRow american_row(const MonteCarloBookView& book, std::int64_t i,
                         const MonteCarloOptions& options) {
  const auto refuse = [i](const char* why) {
    throw InvalidInput(fmt::format("monte carlo reference: option {}: {}", i, why));
  };
  if (book.model != nullptr && book.model[i] != AssetModel::black_scholes) {
    refuse(
        "early exercise on a heston row is not checked (the reference knows Black-Scholes "
        "early exercise only)");
  }
  if ((book.barrier_type != nullptr && book.barrier_type[i] != BarrierType::none) ||
      (book.average != nullptr && book.average[i] != AverageType::none)) {
    refuse("early exercise of a barrier or an average is not priced");
  }
  if (options.sampler != MonteCarloSampler::philox) {
    refuse("early exercise is priced on Philox numbers only (sampler philox)");
  }
  if (options.antithetic || options.control_variate) {
    refuse("early exercise takes neither antithetic variates nor the control variate");
  }
  const Precision precision = options.precision;
  const ErrorModel m = model_of(precision);
  const auto [spot, strike, maturity, rate, sigma, dividend] = rounded_inputs(book, i, precision);
  AmericanRow r;
  r.dates = book.steps != nullptr ? book.steps[i] : 1;
  if (!(spot > 0) || !(strike > 0) || r.dates < 1 || r.dates > kAmericanMaxDates) {
    refuse("early exercise needs a spot and a strike > 0 and steps in [1, kAmericanMaxDates]");
  }
  r.stream =
      book.stream != nullptr ? book.stream[i] : std::uint64_t{options.first_option_index} + i;
  r.sign = book.is_put[i] != 0 ? -1 : 1;
  r.strike = strike;
  const LD dt = maturity / r.dates;
  const LD s0 = spot / strike;
  r.s0 = {s0, (m.u + kUd) * s0};
  const LD drift = (rate - dividend - sigma * sigma / 2) * dt;
  r.drift = {drift, m.u * std::fabs(drift) +
                        4 * kUd * (std::fabs(rate) + std::fabs(dividend) + sigma * sigma / 2) * dt};
  const LD vol = sigma * std::sqrt(dt);
  r.vol = {vol, (m.u + 3 * kUd) * vol};
  // exp of a product of two or three roundings (2 ulps with the exp's), then Real.
  const auto discount = [&](LD t) {
    const LD value = std::exp(-rate * t);
    return Bounded{value, (m.u + kUd * (4 + 4 * std::fabs(rate * t))) * value};
  };
  r.discount_dt = discount(dt);
  for (std::uint32_t d = 0; d < r.dates; ++d) r.discount.push_back(discount(dt * (d + 1)));
  return r;
}

// Paths a block of the reference's work (quads of 4): sums within a block in order, the blocks
// in order, so the reference's bits do not depend on the thread count.
constexpr std::int64_t kBlockPaths = 4096;

}  // namespace

RowReference american_reference(const MonteCarloBookView& book, std::int64_t i,
                                const MonteCarloOptions& options, int threads) {
  const AmericanRow row = american_row(book, i, options);
  const Precision precision = options.precision;
  const ErrorModel m = model_of(precision);
  const BoundedArithmetic ar{m.u, 2 * m.u, 10 * m.u, 0};
  const std::int64_t dates = row.dates;
  const std::int64_t regression_paths = american_regression_paths(options.paths, row.dates);
  std::vector<Rule> rules(static_cast<std::size_t>(dates));
  rules.back().at_maturity = true;
  const auto team = [&](std::int64_t path_dates, std::int64_t pieces) {
    return cpu_threads_for({path_dates, 600, pieces}, threads);
  };

  if (dates > 1) {
    // Pass 1: every regression path's spot on every date (path-major), on the step words
    // kAmericanRegressionStepOffset + date.
    const auto r = static_cast<std::size_t>(regression_paths);
    std::vector<Bounded> spots(r * static_cast<std::size_t>(dates));
    std::vector<Bounded> value(r);
    const std::int64_t quads = (regression_paths + 3) / 4;
#pragma omp parallel for schedule(static) num_threads(team(regression_paths* dates, quads))
    for (std::int64_t q = 0; q < quads; ++q) {
      Bounded y[4] = {};
      for (std::int64_t d = 0; d < dates; ++d) {
        Bounded z[4];
        quad_normals(row.stream, m, precision, options.seed, static_cast<std::uint64_t>(q),
                     kAmericanRegressionStepOffset + static_cast<std::uint32_t>(d), z);
        for (int j = 0; j < 4; ++j) {
          const Bounded s = next_spot(row, m, y[j], z[j]);
          const std::int64_t path = 4 * q + j;
          if (path < regression_paths) spots[static_cast<std::size_t>(path * dates + d)] = s;
        }
      }
    }
    for (std::size_t p = 0; p < r; ++p) {
      value[p] = intrinsic(row, m, spots[p * static_cast<std::size_t>(dates) + dates - 1]);
    }
    // The pricer's sums: a quad's leaf (2 additions), the tile tree (8), the fold of the tiles
    // (one slot adds tiles / 256 of them) and the slots' tree (8), in double.
    const std::int64_t tiles = (regression_paths + kAmericanTilePaths - 1) / kAmericanTilePaths;
    const LD sum_rounding = LD(20 + tiles / 256) * kUd;
    const std::int64_t blocks = (regression_paths + kBlockPaths - 1) / kBlockPaths;
    struct DateSums {
      LD sums[7], sums_error[7], sums_whole[7], rhs[4], rhs_error[4], rhs_whole[4];
    };
    std::vector<DateSums> block_sums(static_cast<std::size_t>(blocks));
    for (std::int64_t d = dates - 2; d >= 0; --d) {
      const bool apply_next = d + 1 < dates - 1;
      const Rule& next = rules[static_cast<std::size_t>(d + 1)];
      const Bounded discount_dt = row.discount_dt;
#pragma omp parallel for schedule(static) num_threads(team(regression_paths, blocks))
      for (std::int64_t block = 0; block < blocks; ++block) {
        DateSums& b = block_sums[static_cast<std::size_t>(block)];
        b = DateSums{};
        const std::int64_t end = std::min(regression_paths, (block + 1) * kBlockPaths);
        for (std::int64_t path = block * kBlockPaths; path < end; ++path) {
          Bounded& v = value[static_cast<std::size_t>(path)];
          if (apply_next) {
            const Bounded s_next = spots[static_cast<std::size_t>(path * dates + d + 1)];
            const Bounded h_next = intrinsic(row, m, s_next);
            const Decision e = decide(row, m, ar, next, s_next, h_next);
            const Bounded kept_value = e.exercise ? h_next : v;
            if (e.open) {
              const Bounded& other = e.exercise ? v : h_next;
              v = {kept_value.value,
                   std::max(kept_value.error,
                            std::fabs(other.value - kept_value.value) + other.error)};
            } else {
              v = kept_value;
            }
          }
          v = ar.mul(v, discount_dt);
          const Bounded s = spots[static_cast<std::size_t>(path * dates + d)];
          const LD moneyness = row.sign * (s.value - 1);
          const bool in = moneyness > 0;
          const bool open = s.error > 0 && std::fabs(moneyness) <= s.error;
          if (!in && !open) continue;
          const Bounded x = ar.sub(s, {1, 0});  // then exactly to double
          LD moved[7], whole[7];
          power_bounds(x.value, x.error, moved, whole);
          const LD v_whole = std::fabs(v.value) + v.error;
          LD power = 1;
          for (int k = 0; k < 7; ++k) {
            // x^k in double: k - 1 roundings.
            const LD d_power = moved[k] + k * kUd * whole[k];
            if (in) b.sums[k] += power;
            b.sums_error[k] += open ? whole[k] : d_power;
            b.sums_whole[k] += whole[k];
            if (k < kBasis) {
              if (in) b.rhs[k] += v.value * power;
              b.rhs_error[k] += open ? v_whole * whole[k]
                                     : std::fabs(v.value) * d_power + v.error * whole[k] +
                                           kUd * v_whole * whole[k];
              b.rhs_whole[k] += v_whole * whole[k];
            }
            power *= x.value;
          }
        }
      }
      LD sums[7] = {}, sums_error[7] = {}, rhs[4] = {}, rhs_error[4] = {};
      LD sums_whole[7] = {}, rhs_whole[4] = {};
      for (const DateSums& b : block_sums) {
        for (int k = 0; k < 7; ++k) {
          sums[k] += b.sums[k], sums_error[k] += b.sums_error[k], sums_whole[k] += b.sums_whole[k];
        }
        for (int k = 0; k < kBasis; ++k) {
          rhs[k] += b.rhs[k], rhs_error[k] += b.rhs_error[k], rhs_whole[k] += b.rhs_whole[k];
        }
      }
      for (int k = 0; k < 7; ++k) sums_error[k] += sum_rounding * sums_whole[k];
      for (int k = 0; k < kBasis; ++k) rhs_error[k] += sum_rounding * rhs_whole[k];
      rules[static_cast<std::size_t>(d)] = fit_rule(sums, sums_error, rhs, rhs_error, m);
    }
  }

  // Pass 2: options.paths new paths on the European step words, each exercised at the first date
  // its rule says; the sample bounded by every payoff the pricer could have taken.
  const std::int64_t paths = options.paths;
  const std::int64_t blocks = (paths + kBlockPaths - 1) / kBlockPaths;
  std::vector<Sums> block_sums(static_cast<std::size_t>(blocks));
  const auto price_quad = [&](std::int64_t q, Sample out[4]) {
    Bounded y[4] = {};
    LD reference[4] = {}, reference_error[4] = {};
    bool reference_alive[4] = {true, true, true, true},
         pricer_may_live[4] = {true, true, true, true};
    std::vector<Bounded> candidates[4];
    for (std::int64_t d = 0; d < dates; ++d) {
      Bounded z[4];
      quad_normals(row.stream, m, precision, options.seed, static_cast<std::uint64_t>(q),
                   static_cast<std::uint32_t>(d), z);
      const Rule& rule = rules[static_cast<std::size_t>(d)];
      bool any = false;
      for (int j = 0; j < 4; ++j) {
        const Bounded s = next_spot(row, m, y[j], z[j]);
        if (!pricer_may_live[j] && !reference_alive[j]) continue;
        const Bounded h = intrinsic(row, m, s);
        const Decision e = decide(row, m, ar, rule, s, h);
        const Bounded paid = ar.mul(h, row.discount[static_cast<std::size_t>(d)]);
        if (pricer_may_live[j] && (e.exercise || e.open)) candidates[j].push_back(paid);
        if (reference_alive[j] && e.exercise) {
          reference[j] = paid.value, reference_error[j] = paid.error;
          reference_alive[j] = false;
        }
        if (e.exercise && !e.open) pricer_may_live[j] = false;
        any = any || pricer_may_live[j] || reference_alive[j];
      }
      if (!any) break;
    }
    for (int j = 0; j < 4; ++j) {
      if (pricer_may_live[j]) candidates[j].push_back({0, 0});
      LD error = reference_error[j];
      for (const Bounded& c : candidates[j]) {
        error = std::max(error, std::fabs(c.value - reference[j]) + c.error);
      }
      out[j] = {{reference[j], error}, {0, 0}};
    }
  };
  Sample first[4];
  price_quad(0, first);
  const LD x0 = first[0].x.value;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team(paths* dates, blocks))
  for (std::int64_t block = 0; block < blocks; ++block) {
    Sums& sums = block_sums[static_cast<std::size_t>(block)];
    sums = Sums{};
    const std::int64_t end = std::min(paths, (block + 1) * kBlockPaths);
    for (std::int64_t q = block * kBlockPaths / 4; 4 * q < end; ++q) {
      Sample s[4];
      price_quad(q, s);
      for (int j = 0; j < 4 && 4 * q + j < end; ++j) sums.add(s[j], x0, 0);
    }
  }
  Sums total;
  for (const Sums& b : block_sums) total.add(b);
  // The pricer's statistics in double: a tile's tree (10 additions) for its mean, its squares
  // about it through the same tree, and Chan's merges over the tiles' tree, a few roundings a
  // level; the reference's own sums in long double.
  const std::int64_t tiles = (paths + kAmericanTilePaths - 1) / kAmericanTilePaths;
  const LD gamma = (16 + 4 * (std::log2(LD(std::max<std::int64_t>(tiles, 1))) + 2)) * kUd +
                   LD(kBlockPaths + blocks + 4) * std::numeric_limits<LD>::epsilon();
  return plain_estimate(total, x0, gamma, row.strike);
}

}  // namespace gpukit::finance::mc::reference
