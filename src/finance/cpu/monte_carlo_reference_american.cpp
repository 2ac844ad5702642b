// The early-exercise part of the independent reference (monte_carlo.hpp's monte_carlo_reference):
// both passes of Longstaff and Schwartz's estimator (gpukit/finance/monte_carlo_american.hpp, the
// contract) recomputed in long double on the same Philox numbers, by code that shares nothing
// with the pricer but rng::philox4x32_10: its own paths (heston rows: Andersen's QE step of the
// European reference, monte_carlo_reference_heston.hpp), its own regression (the normal equations
// of the 4 basis functions, 6 on heston rows, solved by Gauss-Jordan elimination in long double),
// its own exercise decisions, and pass 2's mean and standard error (with antithetic variates, of
// the pairs' means).
//
// Beside each value, a bound on how far the pricer's can be from it (the running error analysis
// of monte_carlo_reference.cpp):
// - spots (and on heston rows the basis' scaled variance u): the rounding of each increment, exp
//   and product (the error model of the precision); on heston rows each QE step's bound, a
//   comparison its bounds leave open followed both ways (the path's spot and u on a date then
//   bounded by the farthest of its branches', more than kHestonMostBranches: unbounded);
// - pass 1: a decision whose margin |h - c| is within the bounds of h and of the continuation c
//   is ambiguous: the path's V may be either value, which its bound then covers; V's bound enters
//   the regression sums of every earlier date, a path within its bound of the money enters them
//   whole, and the sums' own rounding (the pricer's products, tree and fold in double) is added;
// - the coefficients: the pricer solves (G + E) b = r + f with |E| within the Cholesky backward
//   error (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., theorem 10.4:
//   gamma_{3n+1} of the scaled unit-diagonal matrix) plus the sums' bounds, so |b - b_ref| <=
//   |G^-1| (|dr| + |dG| |b|) / (1 - || |G^-1| |dG| ||); a basis function whose pivot is within
//   its perturbation of the drop threshold (1e-12) leaves the date's rule unbounded;
// - pass 2: a decision within its bounds is ambiguous, and the sample is bounded by the farthest
//   of the payoffs the pricer could have taken (exercising at any date from there on where it may
//   exercise, up to the first date where it must, or never); with antithetic variates each path
//   and its mirror so, and the pair's mean rounded once in double;
// - the rounding of the pricer's tile trees and merges, and of price = K mean.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "finance/cpu/monte_carlo_reference_bounds.hpp"
#include "finance/cpu/monte_carlo_reference_heston.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"

namespace gpukit::finance::mc::reference {

namespace {

constexpr LD kUd = 0x1p-53L;
constexpr LD kInfinity = std::numeric_limits<LD>::infinity();

// The basis (the contract's order): function a is x^kPowerOfX[a] u^kPowerOfU[a], i.e. 1, x, x^2,
// x^3, and on heston rows u and u x.
constexpr int kMaxBasis = 6;
constexpr int kPowerOfX[kMaxBasis] = {0, 1, 2, 3, 0, 1};
constexpr int kPowerOfU[kMaxBasis] = {0, 0, 0, 0, 1, 1};

// The contract's regression sums of a date, each of x^i u^j V^l over the in-the-money paths, with
// how many roundings the pricer's product in double makes (it forms the powers by repeated
// multiplication, u^2 as u u, and V times the power): sum x^k (k = 0..6), sum V x^k (k = 0..3),
// then on heston rows sum u x^k (k = 0..4), sum u^2 x^k (k = 0..2), sum V u and sum V u x.
struct SumTerm {
  int x, u, value, roundings;
};
constexpr int kBlackScholesSums = 11;
constexpr int kHestonSums = 21;
constexpr SumTerm kSumTerms[kHestonSums] = {
    {0, 0, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 1}, {3, 0, 0, 2}, {4, 0, 0, 3}, {5, 0, 0, 4},
    {6, 0, 0, 5}, {0, 0, 1, 0}, {1, 0, 1, 1}, {2, 0, 1, 2}, {3, 0, 1, 3}, {0, 1, 0, 0},
    {1, 1, 0, 1}, {2, 1, 0, 2}, {3, 1, 0, 3}, {4, 1, 0, 4}, {0, 2, 0, 1}, {1, 2, 0, 2},
    {2, 2, 0, 3}, {0, 1, 1, 1}, {1, 1, 1, 2}};

// The sum holding the Gram matrix's entry (a, b), and the right-hand side's entry a.
int gram_index(int a, int b) {
  const int i = kPowerOfX[a] + kPowerOfX[b], j = kPowerOfU[a] + kPowerOfU[b];
  return j == 0 ? i : j == 1 ? kBlackScholesSums + i : kBlackScholesSums + 5 + i;
}
int rhs_index(int a) { return kPowerOfU[a] == 0 ? 7 + a : kBlackScholesSums + 8 + kPowerOfX[a]; }

// A row's constants: the contract's formulas in long double from the inputs rounded to the
// computing precision, each with the bound on the pricer's (computed in double, rounded to Real).
struct AmericanRow {
  LD sign = 1;  // +1 call, -1 put
  Bounded s0, drift, vol, discount_dt;
  std::vector<Bounded> discount;  // exp(-r t_i), date i - 1
  std::uint32_t dates = 1;
  std::uint64_t stream = 0;
  LD strike = 0;
  // Heston rows: the QE step's constants and the basis' 1 / max(v0, theta).
  bool heston = false;
  HestonConstants heston_constants;
  Bounded inv_variance_scale;
  // The basis functions the rule can use: 6 on heston rows, but 4 where the variance is the same
  // on every path (sigma_v = 0: the QE step's s^2 is exactly 0 and v' = max(m, 0) of v alone), so
  // that the pricer's u is one number a date: its u column is a multiple of the 1 column, its u x
  // column one of the x column to a rounding of each product, and the pivots its Cholesky
  // factorisation finds for them are of the order of its sums' rounding (below 1e-13 for up to
  // 65,536 tiles), far below the drop threshold 1e-12: it drops both, and its u term is exactly 0.
  int basis = 4;
  int sums = kBlackScholesSums;
};

// A date's rule: exercise where h > 0 and h > b0 + x (b1 + x (b2 + x b3)) (+ u (b4 + x b5)),
// x = s - 1.
struct Rule {
  Bounded beta[kMaxBasis];
  bool unbounded = false;  // the coefficients could not be bounded: every decision is open
  bool at_maturity = false;
};

// A path on a date: its spot s = S / K and on heston rows the basis' u = v / max(v0, theta) - 1.
struct PathPoint {
  Bounded s, u;
};

// s = s0 exp(y) from the log-price y.
Bounded spot_of(const AmericanRow& row, const ErrorModel& m, const Bounded& y) {
  const Bounded e = exp_bounded(m, y.value, y.error);
  const LD s = row.s0.value * e.value;
  return {s, row.s0.value * e.error + row.s0.error * (e.value + e.error) + m.u * std::fabs(s)};
}

// y += drift + vol z: a Black-Scholes path's log-price on its next date.
void advance_log_spot(const AmericanRow& row, const ErrorModel& m, Bounded& y, const Bounded& z) {
  const LD increment = row.drift.value + row.vol.value * z.value;
  LD increment_error = std::fabs(row.vol.value) * z.error + row.vol.error * std::fabs(z.value) +
                       row.drift.error + m.u * std::fabs(increment);
  if (m.fast_math) {
    increment_error += 2 * m.u * (std::fabs(row.vol.value * z.value) + std::fabs(row.drift.value));
  }
  y.value += increment;
  y.error += increment_error + m.u * std::fabs(y.value);
}

// The paths of quad `quad` (ways 4), or the quad's paths and their mirrors (ways 8: way j + 4
// drawn by way j's normals negated, on heston rows both of a date), date by date, on the step
// words word_offset + date (Black-Scholes) or word_offset + 2 date and + 1 (heston: the
// variance's, the spot's).
class QuadPaths {
 public:
  QuadPaths(const AmericanRow& row, const ErrorModel& m, Precision precision, std::uint64_t seed,
            std::uint64_t quad, std::uint32_t word_offset, int ways)
      : row_(row),
        m_(m),
        precision_(precision),
        seed_(seed),
        quad_(quad),
        word_offset_(word_offset),
        ways_(ways),
        ar_(heston_arithmetic(m, row.heston_constants)) {
    if (!row.heston) return;
    for (int j = 0; j < ways; ++j) branches_[j].assign(1, Branch{{row.heston_constants.v0, 0}, {}});
  }

  // Every way's point on date `date` (called for dates 0, 1, ... in turn).
  void next(std::uint32_t date, PathPoint out[8]) {
    if (!row_.heston) {
      Bounded z[4];
      quad_normals(row_.stream, m_, precision_, seed_, quad_, word_offset_ + date, z);
      for (int j = 0; j < ways_; ++j) {
        const LD sign = j < 4 ? 1 : -1;  // negation is exact
        advance_log_spot(row_, m_, y_[j], {sign * z[j & 3].value, z[j & 3].error});
        out[j] = {spot_of(row_, m_, y_[j]), {0, 0}};
      }
      return;
    }
    Bounded z_v[4], z_s[4];
    quad_normals(row_.stream, m_, precision_, seed_, quad_, word_offset_ + 2 * date, z_v);
    quad_normals(row_.stream, m_, precision_, seed_, quad_, word_offset_ + 2 * date + 1, z_s);
    for (int j = 0; j < ways_; ++j) {
      const LD sign = j < 4 ? 1 : -1;
      const Bounded zv{sign * z_v[j & 3].value, z_v[j & 3].error};
      const Bounded zs{sign * z_s[j & 3].value, z_s[j & 3].error};
      // The pricer's y += increment, then s = s0 exp(y).
      const auto advance = [&](Branch& path, std::uint32_t flips) {
        const QeMove move = qe_move(row_.heston_constants, ar_, path.variance, zv, zs, flips);
        path.variance = move.variance;
        path.y = ar_.add(path.y, move.increment);
        return move.open;
      };
      if (!advance_branches(branches_[j], moved_, advance)) unbounded_[j] = true;
      out[j] = point_of(branches_[j][0]);
      for (std::size_t b = 1; b < branches_[j].size(); ++b) {
        const PathPoint other = point_of(branches_[j][b]);
        out[j].s.error =
            std::max(out[j].s.error, std::fabs(other.s.value - out[j].s.value) + other.s.error);
        out[j].u.error =
            std::max(out[j].u.error, std::fabs(other.u.value - out[j].u.value) + other.u.error);
      }
      if (unbounded_[j]) out[j].s.error = out[j].u.error = kInfinity;
    }
  }

 private:
  struct Branch {
    Bounded variance, y;
  };

  // A heston path's point: s = s0 exp(y), u = mul_add(v, 1 / max(v0, theta), -1).
  PathPoint point_of(const Branch& path) const {
    return {spot_of(row_, m_, path.y),
            ar_.mul_add(path.variance, row_.inv_variance_scale, {-1, 0})};
  }

  const AmericanRow& row_;
  ErrorModel m_;
  Precision precision_;
  std::uint64_t seed_, quad_;
  std::uint32_t word_offset_;
  int ways_;
  BoundedArithmetic ar_;
  Bounded y_[8] = {};
  std::vector<Branch> branches_[8], moved_;
  bool unbounded_[8] = {};
};

// h = max(sign (s - 1), 0), one rounding.
Bounded intrinsic(const AmericanRow& row, const ErrorModel& m, const Bounded& s) {
  const LD moneyness = row.sign * (s.value - 1);
  return {std::max(moneyness, LD(0)), s.error + m.u * std::fabs(moneyness)};
}

// The pricer's decision on a path at `point`, payoff h under `rule`: the reference's outcome, and
// whether the bounds allow the pricer the other one.
struct Decision {
  bool exercise = false, open = false;
};
Decision decide(const AmericanRow& row, const BoundedArithmetic& ar, const Rule& rule,
                const PathPoint& point, const Bounded& h) {
  // h > 0: the sign of s - 1 (a correctly rounded difference keeps its sign).
  const Bounded& s = point.s;
  const LD moneyness = row.sign * (s.value - 1);
  const bool in_money = moneyness > 0;
  const bool money_open = s.error > 0 && std::fabs(moneyness) <= s.error;
  if (!in_money && !money_open) return {false, false};
  if (rule.at_maturity) return {in_money, money_open};
  if (rule.unbounded) return {false, true};
  const Bounded x = ar.sub(s, {1, 0});
  Bounded c = rule.beta[3];
  for (int k = 2; k >= 0; --k) c = ar.mul_add(c, x, rule.beta[k]);
  if (row.basis == kMaxBasis) c = ar.mul_add(point.u, ar.mul_add(rule.beta[5], x, rule.beta[4]), c);
  const Comparison above = greater(h, c);
  const bool exercise = in_money && above.holds;
  // The other outcome is possible when either comparison could go the other way.
  const bool other = exercise ? (money_open || above.open)
                              : ((in_money || money_open) && (above.holds || above.open));
  return {exercise, other};
}

// The inverse of the n x n matrix a (row-major, n <= kMaxBasis) by Gauss-Jordan elimination with
// partial pivoting in long double; false when singular.
bool invert(int n, const LD a_in[kMaxBasis][kMaxBasis], LD inverse[kMaxBasis][kMaxBasis]) {
  LD a[kMaxBasis][2 * kMaxBasis] = {};
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

// A date's regression sums (the layout of kSumTerms) and their bounds.
struct DateSums {
  LD sums[kHestonSums] = {}, error[kHestonSums] = {}, whole[kHestonSums] = {};

  void add(const DateSums& o) {
    for (int k = 0; k < kHestonSums; ++k) {
      sums[k] += o.sums[k], error[k] += o.error[k], whole[k] += o.whole[k];
    }
  }
};

// The rule of a date from its regression sums and their bounds: the contract's least squares on
// the row's `basis` functions (its drops of nearly dependent basis functions included), and the
// bound on the pricer's coefficients.
Rule fit_rule(const DateSums& date, int basis, const ErrorModel& m) {
  const LD* sums = date.sums;
  const LD* sums_error = date.error;
  Rule rule;
  for (Bounded& b : rule.beta) b = {0, 0};
  if (sums[0] == 0 && sums_error[0] == 0) return rule;  // no path in the money: all 0, unasked
  if (!(sums_error[0] < sums[0])) {
    rule.unbounded = true;  // maybe no path in the money, maybe some
    return rule;
  }
  const int n_basis = basis;
  LD scale[kMaxBasis], diagonal_rel[kMaxBasis];
  for (int i = 0; i < n_basis; ++i) {
    const int d = gram_index(i, i);
    // A diagonal 0 here that is not 0 in the pricer (u on every path within its bound of 0)
    // would give it a column of unknown direction.
    if (sums[d] == 0 && sums_error[d] > 0) {
      rule.unbounded = true;
      return rule;
    }
    scale[i] = sums[d] > 0 ? 1 / std::sqrt(sums[d]) : 0;
    diagonal_rel[i] = sums[d] > 0 ? sums_error[d] / sums[d] : 0;
  }
  // The perturbation of the scaled matrix: the sums' bounds, the Cholesky backward error
  // gamma_{3n+1} (|L||L^T| <= 1 entrywise on a unit diagonal) and the scaling's roundings.
  const LD backward = LD(3 * n_basis + 8) * kUd;
  LD scaled[kMaxBasis][kMaxBasis], perturbation[kMaxBasis][kMaxBasis];
  for (int i = 0; i < n_basis; ++i) {
    for (int j = 0; j < n_basis; ++j) {
      const int g = gram_index(i, j);
      scaled[i][j] = sums[g] * scale[i] * scale[j];
      perturbation[i][j] =
          sums_error[g] * scale[i] * scale[j] +
          (backward + diagonal_rel[i] + diagonal_rel[j]) * (1 + std::fabs(scaled[i][j]));
    }
  }
  // Which functions the pricer keeps: pivot j = 1 / (B^-1)_jj for B the kept ones and j.
  int kept[kMaxBasis], n = 0;
  for (int j = 0; j < n_basis; ++j) {
    if (!(scale[j] > 0)) continue;
    int index[kMaxBasis];
    for (int a = 0; a < n; ++a) index[a] = kept[a];
    index[n] = j;
    const int size = n + 1;
    LD b[kMaxBasis][kMaxBasis], inverse[kMaxBasis][kMaxBasis], delta[kMaxBasis][kMaxBasis];
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
  LD a[kMaxBasis][kMaxBasis], inverse[kMaxBasis][kMaxBasis], delta[kMaxBasis][kMaxBasis];
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
  LD y[kMaxBasis], dy[kMaxBasis];  // scaled: y = A^-1 (D r), D r's bound
  LD rhs[kMaxBasis], d_rhs[kMaxBasis];
  for (int i = 0; i < n; ++i) {
    const int k = kept[i];
    rhs[i] = sums[rhs_index(k)];
    d_rhs[i] = scale[k] * (sums_error[rhs_index(k)] + 4 * kUd * std::fabs(rhs[i])) +
               scale[k] * std::fabs(rhs[i]) * diagonal_rel[k];
  }
  for (int i = 0; i < n; ++i) {
    y[i] = 0;
    for (int j = 0; j < n; ++j) y[i] += inverse[i][j] * scale[kept[j]] * rhs[j];
  }
  LD w[kMaxBasis], growth[kMaxBasis], w_max = 0, epsilon = 0;
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
    const LD d_beta = dy[i] * scale[k] + std::fabs(beta) * (4 * kUd + diagonal_rel[k]);
    rule.beta[k] = {beta, d_beta + m.u * (std::fabs(beta) + d_beta)};
  }
  return rule;
}

// A path's terms of a date's regression sums, in the money (`in`) or within its bound of it
// (`open`: the pricer may have it in or out, so each term's bound is the whole term), with x, u
// and V bounded. A term's bound: |prod a'_k - prod a_k| <= prod (|a_k| + e_k) - prod |a_k| =
// sum_k e_k prod_{m<k} (|a_m| + e_m) prod_{m>k} |a_m| (summed so, without cancellation), plus the
// pricer's roundings of the product in double.
void add_path_terms(const Bounded& x, const Bounded& u, const Bounded& v, bool in, bool open,
                    int sums, DateSums& to) {
  for (int k = 0; k < sums; ++k) {
    const SumTerm& t = kSumTerms[k];
    Bounded factors[9];
    int count = 0;
    for (int i = 0; i < t.x; ++i) factors[count++] = x;
    for (int i = 0; i < t.u; ++i) factors[count++] = u;
    for (int i = 0; i < t.value; ++i) factors[count++] = v;
    LD value = 1, whole = 1, moved = 0;
    for (int f = 0; f < count; ++f) {
      // moved' = moved |a| + e whole (whole of the factors before, |a| of this one's).
      const LD magnitude = std::fabs(factors[f].value);
      moved = moved * magnitude + factors[f].error * whole;
      whole *= magnitude + factors[f].error;
      value *= factors[f].value;
    }
    const LD rounding = t.roundings > 0 ? LD(t.roundings + 1) * kUd * whole : 0;
    if (in) to.sums[k] += value;
    to.error[k] += open ? whole + rounding : moved + rounding;
    to.whole[k] += whole + rounding;
  }
}

AmericanRow american_row(const MonteCarloBookView& book, std::int64_t i,
                         const MonteCarloOptions& options) {
  const auto refuse = [i](const char* why) {
    throw InvalidInput(fmt::format("monte carlo reference: option {}: {}", i, why));
  };
  if ((book.barrier_type != nullptr && book.barrier_type[i] != BarrierType::none) ||
      (book.average != nullptr && book.average[i] != AverageType::none)) {
    refuse("early exercise of a barrier or an average is not priced");
  }
  if (options.sampler != MonteCarloSampler::philox) {
    refuse("early exercise is priced on Philox numbers only (sampler philox)");
  }
  if (options.control_variate) refuse("early exercise takes no control variate");
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
  r.heston = book.model != nullptr && book.model[i] == AssetModel::heston;
  if (r.heston) {
    const auto per = [i](const PerOption<double>& p) { return p.values ? p.values[i] : p.scalar; };
    const HestonConstants h =
        heston_constants(precision, per(book.v0), per(book.kappa), per(book.theta),
                         per(book.sigma_v), per(book.rho), rate, dividend, dt, m);
    r.heston_constants = h;
    // 1 / max(v0, theta) in double, then Real (0 where both are 0).
    const LD level = std::max(h.v0, h.theta);
    const LD inverse = level > 0 ? 1 / level : 0;
    r.inv_variance_scale = {inverse, (m.u + 2 * kUd) * inverse};
    const bool deterministic_variance = h.variance_c1 == 0 && h.variance_c2 == 0;
    if (!deterministic_variance) r.basis = kMaxBasis, r.sums = kHestonSums;
  }
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
  const bool with_u = row.basis == kMaxBasis;
  std::vector<Rule> rules(static_cast<std::size_t>(dates));
  rules.back().at_maturity = true;
  // A path's date costs the reference about 600 ns, ten times that on a heston row (five QE
  // steps); a date's regression terms about 600 ns.
  const double ns_per_path_date = row.heston ? 6000 : 600;
  const auto team = [&](std::int64_t path_dates, std::int64_t pieces, double ns) {
    return cpu_threads_for({path_dates, ns, pieces}, threads);
  };

  if (dates > 1) {
    // Pass 1: every regression path's spot (and u) on every date (path-major), on the step words
    // kAmericanRegressionStepOffset + date (heston: + 2 date and + 2 date + 1).
    const auto r = static_cast<std::size_t>(regression_paths);
    std::vector<Bounded> spots(r * static_cast<std::size_t>(dates));
    std::vector<Bounded> scaled_variances(with_u ? spots.size() : 0);
    std::vector<Bounded> value(r);
    const std::int64_t quads = (regression_paths + 3) / 4;
#pragma omp parallel for schedule(static) \
    num_threads(team(regression_paths* dates, quads, ns_per_path_date))
    for (std::int64_t q = 0; q < quads; ++q) {
      QuadPaths paths(row, m, precision, options.seed, static_cast<std::uint64_t>(q),
                      kAmericanRegressionStepOffset, 4);
      for (std::int64_t d = 0; d < dates; ++d) {
        PathPoint point[8];
        paths.next(static_cast<std::uint32_t>(d), point);
        for (int j = 0; j < 4; ++j) {
          const std::int64_t path = 4 * q + j;
          if (path >= regression_paths) continue;
          const auto at = static_cast<std::size_t>(path * dates + d);
          spots[at] = point[j].s;
          if (with_u) scaled_variances[at] = point[j].u;
        }
      }
    }
    const auto point_at = [&](std::size_t at) {
      return PathPoint{spots[at], with_u ? scaled_variances[at] : Bounded{}};
    };
    for (std::size_t p = 0; p < r; ++p) {
      value[p] = intrinsic(row, m, spots[p * static_cast<std::size_t>(dates) + dates - 1]);
    }
    // The pricer's sums: a quad's leaf (2 additions), the tile tree (8), the fold of the tiles
    // (one slot adds tiles / 256 of them) and the slots' tree (8), in double.
    const std::int64_t tiles = (regression_paths + kAmericanTilePaths - 1) / kAmericanTilePaths;
    const LD sum_rounding = LD(20 + tiles / 256) * kUd;
    const std::int64_t blocks = (regression_paths + kBlockPaths - 1) / kBlockPaths;
    std::vector<DateSums> block_sums(static_cast<std::size_t>(blocks));
    for (std::int64_t d = dates - 2; d >= 0; --d) {
      const bool apply_next = d + 1 < dates - 1;
      const Rule& next = rules[static_cast<std::size_t>(d + 1)];
      const Bounded discount_dt = row.discount_dt;
#pragma omp parallel for schedule(static) num_threads(team(regression_paths, blocks, 600))
      for (std::int64_t block = 0; block < blocks; ++block) {
        DateSums& b = block_sums[static_cast<std::size_t>(block)];
        b = DateSums{};
        const std::int64_t end = std::min(regression_paths, (block + 1) * kBlockPaths);
        for (std::int64_t path = block * kBlockPaths; path < end; ++path) {
          Bounded& v = value[static_cast<std::size_t>(path)];
          if (apply_next) {
            const PathPoint at_next = point_at(static_cast<std::size_t>(path * dates + d + 1));
            const Bounded h_next = intrinsic(row, m, at_next.s);
            const Decision e = decide(row, ar, next, at_next, h_next);
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
          const PathPoint at = point_at(static_cast<std::size_t>(path * dates + d));
          const LD moneyness = row.sign * (at.s.value - 1);
          const bool in = moneyness > 0;
          const bool open = at.s.error > 0 && std::fabs(moneyness) <= at.s.error;
          if (!in && !open) continue;
          // x and u in Real, then exactly to double.
          add_path_terms(ar.sub(at.s, {1, 0}), at.u, v, in, open, row.sums, b);
        }
      }
      DateSums sums;
      for (const DateSums& b : block_sums) sums.add(b);
      for (int k = 0; k < row.sums; ++k) sums.error[k] += sum_rounding * sums.whole[k];
      rules[static_cast<std::size_t>(d)] = fit_rule(sums, row.basis, m);
    }
  }

  // Pass 2: options.paths new paths on the European step words (antithetic: options.paths / 2
  // pairs, pair 4q + j on quad q's normals of lane j and its mirror on them negated), each
  // exercised at the first date its rule says; each path's payoff bounded by every payoff the
  // pricer could have taken, and a pair's sample is the mean of its two.
  const bool antithetic = options.antithetic;
  const int ways = antithetic ? 8 : 4;
  const std::int64_t samples = antithetic ? options.paths / 2 : options.paths;
  const std::int64_t blocks = (samples + kBlockPaths - 1) / kBlockPaths;
  std::vector<Sums> block_sums(static_cast<std::size_t>(blocks));
  const auto price_quad = [&](std::int64_t q, Sample out[4]) {
    QuadPaths quad_paths(row, m, precision, options.seed, static_cast<std::uint64_t>(q), 0, ways);
    LD reference[8] = {}, reference_error[8] = {};
    bool reference_alive[8], pricer_may_live[8];
    std::fill(reference_alive, reference_alive + 8, true);
    std::fill(pricer_may_live, pricer_may_live + 8, true);
    std::vector<Bounded> candidates[8];
    for (std::int64_t d = 0; d < dates; ++d) {
      PathPoint point[8];
      quad_paths.next(static_cast<std::uint32_t>(d), point);
      const Rule& rule = rules[static_cast<std::size_t>(d)];
      bool any = false;
      for (int j = 0; j < ways; ++j) {
        if (!pricer_may_live[j] && !reference_alive[j]) continue;
        const Bounded h = intrinsic(row, m, point[j].s);
        const Decision e = decide(row, ar, rule, point[j], h);
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
    Bounded x[8], c[8];
    for (int j = 0; j < ways; ++j) {
      if (pricer_may_live[j]) candidates[j].push_back({0, 0});
      LD error = reference_error[j];
      for (const Bounded& candidate : candidates[j]) {
        error = std::max(error, std::fabs(candidate.value - reference[j]) + candidate.error);
      }
      x[j] = {reference[j], error}, c[j] = {0, 0};
    }
    // The pricer's pair: rounded::add of the two payoffs in double, times 0.5 (exact).
    combine_samples(kUd, antithetic, x, c, out);
  };
  Sample first[4];
  price_quad(0, first);
  const LD x0 = first[0].x.value;
#pragma omp parallel for schedule(dynamic, 1) \
    num_threads(team(options.paths* dates, blocks, ns_per_path_date))
  for (std::int64_t block = 0; block < blocks; ++block) {
    Sums& sums = block_sums[static_cast<std::size_t>(block)];
    sums = Sums{};
    const std::int64_t end = std::min(samples, (block + 1) * kBlockPaths);
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
  // level; the reference's own sums in long double. Tiles of kAmericanTilePaths samples (pairs).
  const std::int64_t tiles = (samples + kAmericanTilePaths - 1) / kAmericanTilePaths;
  const LD gamma = (16 + 4 * (std::log2(LD(std::max<std::int64_t>(tiles, 1))) + 2)) * kUd +
                   LD(kBlockPaths + blocks + 4) * std::numeric_limits<LD>::epsilon();
  return plain_estimate(total, x0, gamma, row.strike);
}

}  // namespace gpukit::finance::mc::reference
