// Early exercise (Longstaff-Schwartz) in price_monte_carlo_book, each scenario written once and
// run on the CPU and on CUDA (`Cpu/` and `Cuda/` instances; the CUDA ones skip without a GPU):
// against a binomial tree for the same Bermudan dates (binomial_tree_oracle.hpp, itself checked
// here against Black-Scholes and published values), an American call without dividends against
// Black-Scholes, one date against the European engine on the same paths, the routing of mixed
// books, determinism and row errors. Plain tests: the tree, the least-squares solve and the memory
// bound.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "binomial_tree_oracle.hpp"
#include "every_backend_test_support.hpp"
#include "finance/monte_carlo_american.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::binomial_tree_price;
using testing::McBook;
using testing::McRow;
using testing::same_bits;
using testing::tree_steps_for;
using testing::TreeExercise;
using testing::TreeOption;

// ---- The engine's pieces -------------------------------------------------------------------

// The sums of points (x_i, v_i) as the engine forms them.
std::vector<double> regression_sums(const std::vector<double>& x, const std::vector<double>& v) {
  std::vector<double> sums(mc::kAmericanSums, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int k = 0; k < 2 * mc::kAmericanBasis - 1; ++k) sums[k] += std::pow(x[i], k);
    for (int k = 0; k < mc::kAmericanBasis; ++k)
      sums[2 * mc::kAmericanBasis - 1 + k] += v[i] * std::pow(x[i], k);
  }
  return sums;
}

TEST(AmericanRegression, FitsACubicExactly) {
  const double beta_true[4] = {0.3, -1.2, 0.7, 2.5};
  std::vector<double> x, v;
  for (int i = 0; i < 40; ++i) {
    const double xi = -0.6 + 0.015 * i;  // in-the-money puts: S / K - 1 in [-0.6, 0]
    x.push_back(xi);
    v.push_back(beta_true[0] + xi * (beta_true[1] + xi * (beta_true[2] + xi * beta_true[3])));
  }
  const std::vector<double> sums = regression_sums(x, v);
  double beta[4];
  mc::solve_regression(sums.data(), mc::kAmericanBasis, beta);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(beta[k], beta_true[k], 1e-8) << "k " << k;
}

// Heston rows' basis: 1, x, x^2, x^3, u, u x, the sums in the layout of quad_regression_leaves
// (x^k, V x^k, then u x^k, u^2 x^k, V u, V u x).
TEST(AmericanRegression, FitsTheHestonBasisExactly) {
  const double beta_true[6] = {0.3, -1.2, 0.7, 2.5, -0.4, 0.9};
  std::vector<double> sums(mc::kAmericanHestonSums, 0.0);
  for (int i = 0; i < 30; ++i) {
    for (int j = 0; j < 4; ++j) {
      const double x = -0.6 + 0.02 * i, u = -0.5 + 0.3 * j + 0.01 * i;
      const double v = beta_true[0] + x * (beta_true[1] + x * (beta_true[2] + x * beta_true[3])) +
                       u * (beta_true[4] + x * beta_true[5]);
      for (int k = 0; k < 7; ++k) sums[k] += std::pow(x, k);
      for (int k = 0; k < 4; ++k) sums[7 + k] += v * std::pow(x, k);
      for (int k = 0; k < 5; ++k) sums[11 + k] += u * std::pow(x, k);
      for (int k = 0; k < 3; ++k) sums[16 + k] += u * u * std::pow(x, k);
      sums[19] += v * u, sums[20] += v * u * x;
    }
  }
  double beta[6];
  mc::solve_regression(sums.data(), mc::kAmericanHestonBasis, beta);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(beta[k], beta_true[k], 1e-8) << "k " << k;
}

TEST(AmericanRegression, DegenerateDatesFitWhatTheyCan) {
  double beta[4];
  // One in-the-money path: the constant is its value, the other functions are dropped.
  std::vector<double> sums = regression_sums({-0.25}, {3.0});
  mc::solve_regression(sums.data(), mc::kAmericanBasis, beta);
  EXPECT_NEAR(beta[0], 3.0, 1e-12);
  for (int k = 1; k < 4; ++k) EXPECT_EQ(beta[k], 0.0) << "k " << k;
  // Two: the line through them.
  sums = regression_sums({-0.5, -0.1}, {1.0, 2.0});
  mc::solve_regression(sums.data(), mc::kAmericanBasis, beta);
  EXPECT_NEAR(beta[0] + beta[1] * -0.5, 1.0, 1e-9);
  EXPECT_NEAR(beta[0] + beta[1] * -0.1, 2.0, 1e-9);
  for (int k = 2; k < 4; ++k) EXPECT_EQ(beta[k], 0.0) << "k " << k;
  // None: every coefficient 0.
  sums.assign(mc::kAmericanSums, 0.0);
  mc::solve_regression(sums.data(), mc::kAmericanBasis, beta);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(beta[k], 0.0);
}

TEST(AmericanRegression, FoldIsTheContractsOrder) {
  // 600 tiles of sum k = tile index + k / 8 (exact in double): slot j adds j, j + 256, j + 512.
  const std::int64_t tiles = 600;
  std::vector<double> partials(static_cast<std::size_t>(tiles * mc::kAmericanSums));
  for (int k = 0; k < mc::kAmericanSums; ++k) {
    for (std::int64_t t = 0; t < tiles; ++t) partials[k * tiles + t] = double(t) + k / 8.0;
  }
  double sums[mc::kAmericanSums];
  mc::fold_regression_sums(partials.data(), tiles, mc::kAmericanSums, sums);
  for (int k = 0; k < mc::kAmericanSums; ++k) {
    EXPECT_EQ(sums[k], tiles * (tiles - 1) / 2.0 + tiles * (k / 8.0)) << "k " << k;
  }
}

TEST(AmericanRegression, MemoryBound) {
  EXPECT_EQ(american_regression_paths(1 << 20, 50), 1 << 20);  // the size all regresses
  EXPECT_EQ(american_regression_paths(std::int64_t{1} << 30, 50), 1310 * kAmericanTilePaths);
  EXPECT_EQ(american_regression_paths(std::int64_t{1} << 30, kAmericanMaxDates),
            kAmericanTilePaths);
  EXPECT_LE(american_regression_paths(std::int64_t{1} << 34, 7) * 7,
            kAmericanMaxRegressionPathDates);
  EXPECT_EQ(american_regression_paths(1025, 3), 1025);
}

TreeOption tree_option(const McRow& r) {
  TreeOption o;
  o.put = r.put;
  o.spot = r.spot, o.strike = r.strike, o.maturity = r.maturity;
  o.rate = r.rate, o.dividend = r.dividend, o.volatility = r.volatility;
  return o;
}

long double bermudan_tree(const McRow& r) {
  return binomial_tree_price(tree_option(r), TreeExercise::bermudan, tree_steps_for(r.steps),
                             r.steps);
}

// Longstaff and Schwartz's puts (2001, Table 1): K = 40, r = 0.06, no dividend, T = 1, on 50
// exercise dates.
std::vector<McRow> longstaff_schwartz_puts() {
  std::vector<McRow> rows;
  for (double spot : {36.0, 40.0, 44.0}) {
    for (double volatility : {0.2, 0.4}) {
      McRow r;
      r.put = true;
      r.spot = spot, r.strike = 40, r.maturity = 1, r.rate = 0.06, r.dividend = 0;
      r.volatility = volatility, r.steps = 50;
      rows.push_back(r);
    }
  }
  return rows;
}

// ---- The oracle ----------------------------------------------------------------------------

TEST(BinomialTreeOracle, EuropeanIsBlackScholes) {
  // CRR's European error at 10,000 steps: below 3e-4 on these (oscillating O(1/M)).
  for (bool put : {false, true}) {
    for (double spot : {36.0, 40.0, 44.0}) {
      TreeOption o;
      o.put = put, o.spot = spot, o.strike = 40, o.rate = 0.06, o.dividend = 0.01;
      o.volatility = 0.3, o.maturity = 1;
      const long double bs = testing::black_scholes_long_double(o);
      EXPECT_NEAR(static_cast<double>(binomial_tree_price(o, TreeExercise::european, 10000)),
                  static_cast<double>(bs), 3e-4)
          << "put " << put << " spot " << spot;
    }
  }
}

TEST(BinomialTreeOracle, PublishedValues) {
  // Hull, "Options, Futures, and Other Derivatives" (the 5-month American put, S = K = 50,
  // r = 0.1, sigma = 0.4): 4.283 on a tree of 500 steps.
  TreeOption hull;
  hull.put = true, hull.spot = 50, hull.strike = 50, hull.rate = 0.1, hull.volatility = 0.4;
  hull.maturity = 5.0L / 12;
  EXPECT_NEAR(static_cast<double>(binomial_tree_price(hull, TreeExercise::american, 500)), 4.283,
              5e-4);
  // Longstaff and Schwartz (2001), Table 1, finite-difference column, T = 1 (3 decimals): the
  // tree with exercise on 50 dates a year agrees to the table's rounding plus the tree's error.
  const double table[3][2] = {{4.478, 7.101}, {2.314, 5.312}, {1.110, 3.948}};
  const std::vector<McRow> rows = longstaff_schwartz_puts();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(bermudan_tree(rows[i])), table[i / 2][i % 2], 1e-3)
        << "row " << i;
  }
}

TEST(BinomialTreeOracle, BermudanLiesBetweenEuropeanAndAmerican) {
  TreeOption o;
  o.put = true, o.spot = 36, o.strike = 40, o.rate = 0.06, o.volatility = 0.2;
  const long double european = binomial_tree_price(o, TreeExercise::european, 10000);
  const long double bermudan = binomial_tree_price(o, TreeExercise::bermudan, 10000, 50);
  const long double american = binomial_tree_price(o, TreeExercise::american, 10000);
  EXPECT_LT(european + 0.5L, bermudan);  // early exercise is worth much on this put
  EXPECT_LT(bermudan, american);
  // An American call without dividends is the European (the tree's nodes agree to rounding).
  o.put = false;
  EXPECT_NEAR(static_cast<double>(binomial_tree_price(o, TreeExercise::american, 2000)),
              static_cast<double>(binomial_tree_price(o, TreeExercise::european, 2000)), 1e-12);
}

// A book of McRows with an exercise column (and optionally Asian and model columns).
struct ExerciseBook {
  McBook rows;
  std::vector<ExerciseStyle> exercise;
  std::vector<AverageType> average;
  std::vector<AssetModel> model;

  ExerciseBook(const std::vector<McRow>& r, std::vector<ExerciseStyle> e)
      : rows(r), exercise(std::move(e)) {}
  MonteCarloBookView view() const {
    MonteCarloBookView v = rows.view();
    v.exercise = exercise.data();
    if (!average.empty()) v.average = average.data();
    if (!model.empty()) v.model = model.data();
    return v;
  }
};

// A heston twin of a Black-Scholes row: v0 = theta = sigma^2, kappa 1.5, and `sigma_v`.
McRow heston_put(const McRow& black_scholes, double sigma_v) {
  McRow r = black_scholes;
  r.model = AssetModel::heston;
  r.v0 = r.theta = r.volatility * r.volatility;
  r.kappa = 1.5, r.sigma_v = sigma_v, r.rho = sigma_v > 0 ? -0.6 : 0.0;
  return r;
}

// The low bias of the fitted rule (pass 2 prices with a rule no better than the optimal one),
// as a fraction of the price, that the tests allow below the tree on top of 4 standard errors.
// Measured on the CPU for the puts below (seed 2008, 2^20 paths): tree - price at most 0.0107 =
// 0.27% of the price in double (2.1 standard errors), 0.0049 = 0.44% in float (2.4 standard
// errors), so the rule's own bias is not resolved at these errors; at 2^16 paths over seeds 1-4,
// within 2.5 standard errors. 0.5% covers the largest with room for a rule fitted on 2^16 paths.
constexpr double kRuleBias = 0.005;

class MonteCarloAmericanTest : public gpukit::testing::EveryBackendTest {
 protected:
  // Bermudan `rows`, priced in double and float, within 4 standard errors above the tree price
  // of their Black-Scholes twin (`trees`) and 4 standard errors plus the rule's bias below it.
  // With `antithetic`, pairs of paths (an even count) whose variance reduction is reported.
  void expect_bermudans_at_the_tree(const std::vector<McRow>& rows,
                                    const std::vector<double>& trees, bool antithetic = false) {
    const ExerciseBook book(rows, std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::bermudan));
    for (Precision precision : {Precision::float64, Precision::float32}) {
      MonteCarloOptions options;
      // Not a multiple of the quad or the tile; a GPU affords the 2^20 (4 times smaller
      // standard errors).
      options.paths = (GetParam() == Backend::cuda ? (1 << 20) : (1 << 16)) + (antithetic ? 6 : 3);
      options.precision = precision;
      options.antithetic = antithetic;
      options.variance_reduction_factors = antithetic;
      const MonteCarloBookResult r = price_monte_carlo_book(context(), book.view(), options);
      if (antithetic) {
        ASSERT_EQ(r.vrf_antithetic.size(), rows.size());
        // A put's payoff falls as Z rises, under any exercise rule's paths too: the pairs'
        // payoffs are negatively correlated, so the pairs' variance is below half the paths'.
        for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_GT(r.vrf_antithetic[i], 1) << i;
      }
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const double tree = trees[i];
        const std::string what = "row " + std::to_string(i) + " spot " +
                                 std::to_string(rows[i].spot) + " vol " +
                                 std::to_string(rows[i].volatility) +
                                 (precision == Precision::float32 ? " float" : " double");
        // Low biased: above the tree only by sampling error.
        EXPECT_LE(r.price[i], tree + 4 * r.std_error[i]) << what << " tree " << tree;
        EXPECT_GE(r.price[i], tree - 4 * r.std_error[i] - kRuleBias * tree)
            << what << " tree " << tree;
        EXPECT_GT(r.std_error[i], 0) << what;
        EXPECT_EQ(r.paths[i], double(options.paths)) << what;
        EXPECT_DOUBLE_EQ(r.ci_low[i], r.price[i] - 1.96 * r.std_error[i]) << what;
        EXPECT_DOUBLE_EQ(r.ci_high[i], r.price[i] + 1.96 * r.std_error[i]) << what;
      }
    }
  }
};

TEST_P(MonteCarloAmericanTest, BermudanPutsWithinFourStandardErrorsAndTheRuleBiasOfTheTree) {
  const std::vector<McRow> rows = longstaff_schwartz_puts();
  std::vector<double> trees;
  for (const McRow& row : rows) trees.push_back(static_cast<double>(bermudan_tree(row)));
  expect_bermudans_at_the_tree(rows, trees);
}

// Antithetic pairs in pass 2: the same tree and allowance, at a reported variance reduction; a
// heston row without volatility of variance flips both its normals.
TEST_P(MonteCarloAmericanTest, AntitheticBermudanPutsAtTheTreeWithLessVariance) {
  std::vector<McRow> rows = longstaff_schwartz_puts();
  rows.resize(3);
  rows.push_back(heston_put(rows[1], 0.0));
  std::vector<double> trees;
  for (const McRow& row : rows) trees.push_back(static_cast<double>(bermudan_tree(row)));
  expect_bermudans_at_the_tree(rows, trees, true);
}

TEST_P(MonteCarloAmericanTest, AmericanAndBermudanAreTheSamePrice) {
  McRow row = longstaff_schwartz_puts()[0];
  row.steps = 13;
  const ExerciseBook book({row, row}, {ExerciseStyle::bermudan, ExerciseStyle::american});
  const std::uint64_t keys[] = {7, 7};  // the same numbers for both rows
  MonteCarloBookView view = book.view();
  view.stream = keys;
  MonteCarloOptions options;
  options.paths = 3000;
  const MonteCarloBookResult r = price_monte_carlo_book(context(), view, options);
  EXPECT_GT(r.price[0], 0);
  EXPECT_EQ(r.price[0], r.price[1]);
  EXPECT_EQ(r.std_error[0], r.std_error[1]);
}

// Without dividends an early exercise of a call never pays (Merton): its price is the European's.
TEST_P(MonteCarloAmericanTest, AmericanCallWithoutDividendsIsTheEuropean) {
  McRow row;
  row.put = false;
  row.spot = 100, row.strike = 95, row.maturity = 1, row.rate = 0.05, row.dividend = 0;
  row.volatility = 0.25, row.steps = 50;
  const ExerciseBook book({row}, {ExerciseStyle::american});
  const double european = static_cast<double>(testing::black_scholes_long_double(tree_option(row)));
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = 50001;
    options.precision = precision;
    const MonteCarloBookResult r = price_monte_carlo_book(context(), book.view(), options);
    EXPECT_LE(r.price[0], european + 4 * r.std_error[0]) << "european " << european;
    EXPECT_GE(r.price[0], european - 4 * r.std_error[0] - kRuleBias * european)
        << "european " << european;
  }
}

// One date is maturity: the engine's pass 2 draws the European engine's numbers (a heston row's
// too), so the prices agree to rounding (the two compute the payoff and the mean in different
// orders) at every size.
TEST_P(MonteCarloAmericanTest, OneDateIsTheEuropeanEngineOnTheSamePaths) {
  std::vector<McRow> rows = testing::random_european_rows(6, 11);
  // Heston rows too: pass 2 draws a European heston row's two normals a date.
  for (const McRow& r : longstaff_schwartz_puts()) rows.push_back(heston_put(r, 0.5));
  for (McRow& r : rows) r.steps = 1;
  const ExerciseBook american(rows,
                              std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::bermudan));
  const McBook european(rows);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    // Float: both sum 2^12 payoffs of relative rounding 2^-24 in different trees.
    const double tolerance = precision == Precision::float64 ? 1e-12 : 2e-5;
    // With antithetic variates a sample is the pair of Z and -Z in both engines (even paths).
    for (const bool antithetic : {false, true}) {
      for (std::int64_t paths : {2, 3, 1023, 1025, 2050, 4099}) {
        if (antithetic && paths % 2 != 0) ++paths;
        MonteCarloOptions options;
        options.paths = paths;
        options.precision = precision;
        options.antithetic = antithetic;
        options.variance_reduction_factors = antithetic;
        const MonteCarloBookResult a = price_monte_carlo_book(context(), american.view(), options);
        const MonteCarloBookResult e = price_monte_carlo_book(context(), european.view(), options);
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const std::string what = "row " + std::to_string(i) + " paths " + std::to_string(paths) +
                                   (antithetic ? " antithetic" : "");
          const double scale = std::max(e.price[i], 1e-3 * rows[i].strike);
          EXPECT_NEAR(a.price[i], e.price[i], tolerance * scale) << what;
          EXPECT_NEAR(a.std_error[i], e.std_error[i], tolerance * scale + 1e-12) << what;
          EXPECT_EQ(a.paths[i], e.paths[i]) << what;
          // The factor from the same pairs' moments, to the prices' rounding allowance.
          if (antithetic && paths > 2 && e.vrf_antithetic[i] > 0) {
            EXPECT_NEAR(a.vrf_antithetic[i], e.vrf_antithetic[i], tolerance * e.vrf_antithetic[i])
                << what;
          }
        }
      }
    }
  }
}

TEST_P(MonteCarloAmericanTest, BitsDoNotDependOnTheThreadCount) {
  std::vector<McRow> rows = longstaff_schwartz_puts();
  rows.resize(3);
  rows[1].steps = 7;
  rows[2].put = false, rows[2].dividend = 0.08, rows[2].steps = 20;
  const ExerciseBook book(rows, std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::american));
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (const bool antithetic : {false, true}) {
      MonteCarloOptions options;
      // Several tiles, the last one ragged (of pairs too).
      options.paths = antithetic ? 2 * (5 * 1024 + 7) : 5 * 1024 + 7;
      options.precision = precision;
      options.antithetic = antithetic;
      options.variance_reduction_factors = antithetic;
      const MonteCarloBookResult one = price_monte_carlo_book(context(1), book.view(), options);
      for (int threads : {2, 3}) {
        testing::expect_same_result(
            price_monte_carlo_book(context(threads), book.view(), options), one,
            "threads " + std::to_string(threads) + (antithetic ? " antithetic" : ""));
      }
    }
  }
}

// The European rows of a book with early-exercise rows keep their bits (their stream keys are
// their row numbers, or the book's keys), and the results come back in row order.
TEST_P(MonteCarloAmericanTest, MixedBookKeepsTheEuropeanRowsBitsAndRowOrder) {
  std::vector<McRow> rows = testing::mixed_rows();
  rows.resize(12);
  std::vector<ExerciseStyle> styles(rows.size(), ExerciseStyle::european);
  for (std::size_t i = 1; i < rows.size(); i += 4) {
    rows[i].type = BarrierType::none, rows[i].put = true, rows[i].steps = 9;
    styles[i] = i % 8 == 1 ? ExerciseStyle::american : ExerciseStyle::bermudan;
  }
  const ExerciseBook book(rows, styles);
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < rows.size(); ++i) keys.push_back(0x9E3779B97F4A7C15ull * (i + 1));
  for (bool with_keys : {false, true}) {
    MonteCarloOptions options;
    options.paths = 2049;
    options.first_option_index = 5;
    MonteCarloBookView mixed = book.view();
    MonteCarloBookView all_european = book.rows.view();
    if (with_keys) mixed.stream = keys.data(), all_european.stream = keys.data();
    const MonteCarloBookResult m = price_monte_carlo_book(context(), mixed, options);
    const MonteCarloBookResult e = price_monte_carlo_book(context(), all_european, options);
    ASSERT_EQ(m.price.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string what = "row " + std::to_string(i) + (with_keys ? " keys" : " rows");
      if (styles[i] == ExerciseStyle::european) {
        EXPECT_EQ(m.price[i], e.price[i]) << what;
        EXPECT_EQ(m.std_error[i], e.std_error[i]) << what;
        EXPECT_EQ(m.ci_low[i], e.ci_low[i]) << what;
      } else {
        // The early-exercise put on its own: the same bits as in the book.
        std::vector<McRow> alone = {rows[i]};
        const ExerciseBook single(alone, {styles[i]});
        MonteCarloOptions own = options;
        MonteCarloBookView view = single.view();
        if (with_keys) {
          view.stream = &keys[i];
        } else {
          own.first_option_index = options.first_option_index + static_cast<std::uint32_t>(i);
        }
        const MonteCarloBookResult s = price_monte_carlo_book(context(), view, own);
        EXPECT_EQ(m.price[i], s.price[0]) << what;
        EXPECT_EQ(m.std_error[i], s.std_error[0]) << what;
        EXPECT_NE(m.price[i], e.price[i]) << what;  // not priced as the European
        EXPECT_GE(m.price[i], e.price[i] - 4 * (m.std_error[i] + e.std_error[i])) << what;
      }
    }
  }
}

// Delta and vega by central differences on common random numbers, against the tree's central
// differences with the same bumps (spot 1%, volatility 1% of sigma). Measured at these paths over
// seeds 1-3 in double and float, at spots 36 and 44: delta within 0.0073 of the tree's, vega
// within 0.88 (8%); the test allows 2.5 times that.
TEST_P(MonteCarloAmericanTest, GreeksAgainstTheTree) {
  const std::vector<McRow> rows = {longstaff_schwartz_puts()[0]};  // spot 36, sigma 0.2
  const ExerciseBook book(rows, {ExerciseStyle::american});
  MonteCarloOptions options;
  options.paths = (1 << 16) + 3;
  options.greeks = true;
  const MonteCarloBookResult r = price_monte_carlo_book(context(), book.view(), options);
  ASSERT_EQ(r.delta.size(), rows.size());
  ASSERT_EQ(r.vega.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    McRow up = rows[i], down = rows[i];
    up.spot *= 1.01, down.spot *= 0.99;
    const double tree_delta =
        static_cast<double>(bermudan_tree(up) - bermudan_tree(down)) / (0.02 * rows[i].spot);
    up = rows[i], down = rows[i];
    up.volatility *= 1.01, down.volatility *= 0.99;
    const double tree_vega =
        static_cast<double>(bermudan_tree(up) - bermudan_tree(down)) / (0.02 * rows[i].volatility);
    EXPECT_NEAR(r.delta[i], tree_delta, 0.02) << "row " << i;
    EXPECT_NEAR(r.vega[i], tree_vega, 2.2) << "row " << i;
  }
}

// ---- Heston rows ---------------------------------------------------------------------------

// Without volatility of variance and with v0 = theta the QE step is the Black-Scholes step of
// volatility sqrt(v0) (on the heston layout's numbers), and the basis' u is constant (the rule
// drops it): the Bermudan puts of the Black-Scholes test against the same tree and allowance.
TEST_P(MonteCarloAmericanTest, HestonWithoutVolatilityOfVarianceIsTheBlackScholesTree) {
  std::vector<McRow> rows;
  std::vector<double> trees;
  for (const McRow& r : longstaff_schwartz_puts()) {
    if (r.volatility > 0.3) continue;  // three rows: CI time
    rows.push_back(heston_put(r, 0));
    trees.push_back(static_cast<double>(bermudan_tree(r)));
  }
  expect_bermudans_at_the_tree(rows, trees);
}

// Stochastic variance: pass 2 draws the numbers of a European heston row of the same stream key,
// so the European engine on those numbers bounds the Bermudan from below (the put's early
// exercise is worth something: at least the European, within sampling error), and a call without
// dividends, which no rule should exercise early, is the European within 4 standard errors and
// the rule's low bias; both with the scheme's own discretisation (the same under both engines).
TEST_P(MonteCarloAmericanTest, HestonPutsAreWorthTheirEuropeanAndCallsWithoutDividendsAreIt) {
  std::vector<McRow> rows;
  for (const McRow& r : longstaff_schwartz_puts()) {
    if (r.volatility < 0.3) rows.push_back(heston_put(r, 0.5));  // spots 36, 40, 44
  }
  McRow call = heston_put(longstaff_schwartz_puts()[3], 0.5);
  call.put = false;
  rows.push_back(call);
  const ExerciseBook american(rows,
                              std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::american));
  const McBook european(rows);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = (1 << 15) + 1;
    options.precision = precision;
    const MonteCarloBookResult a = price_monte_carlo_book(context(), american.view(), options);
    const MonteCarloBookResult e = price_monte_carlo_book(context(), european.view(), options);
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
      EXPECT_GE(a.price[i], e.price[i] - 4 * a.std_error[i])
          << "put " << i << " european " << e.price[i] << " precision " << int(precision);
      EXPECT_GT(a.std_error[i], 0);
    }
    const std::size_t c = rows.size() - 1;
    EXPECT_LE(a.price[c], e.price[c] + 4 * a.std_error[c]) << "call, european " << e.price[c];
    EXPECT_GE(a.price[c], e.price[c] - 4 * a.std_error[c] - kRuleBias * e.price[c])
        << "call, european " << e.price[c];
    // The early exercise premium of the put at the money is visible: over 4 standard errors.
    EXPECT_GT(a.price[1] - e.price[1], 4 * a.std_error[1]) << "precision " << int(precision);
  }
}

TEST_P(MonteCarloAmericanTest, HestonBitsDoNotDependOnTheThreadCount) {
  std::vector<McRow> rows;
  for (const McRow& r : longstaff_schwartz_puts()) rows.push_back(heston_put(r, 0.5));
  rows.resize(3);
  for (McRow& r : rows) r.steps = 9;
  const ExerciseBook book(rows, std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::american));
  MonteCarloOptions options;
  options.paths = 3001;
  const MonteCarloBookResult one = price_monte_carlo_book(context(1), book.view(), options);
  const MonteCarloBookResult two = price_monte_carlo_book(context(2), book.view(), options);
  EXPECT_TRUE(testing::same_bits(one.price, two.price));
  EXPECT_TRUE(testing::same_bits(one.std_error, two.std_error));
}

// Gamma by the second difference of prices on common random numbers, (P(S+h) - 2 P(S) +
// P(S-h)) / h^2 with h = 1% of the spot, against the tree's with the same h. Each bumped row
// refits its rule, which makes the difference noisy (over seeds 1-3, double and float, 50 dates,
// 2^16 paths, spots 36 and 44: from -0.070 to +0.030 of the tree's 0.086 and 0.037): the mean over
// 16 seeds (4 dates, 2^17 paths) lies within 4 of its standard errors (Student's t of 15 degrees
// of freedom exceeds 4 with probability 0.0012) of the tree's, a bound well below gamma itself.
TEST_P(MonteCarloAmericanTest, GammaOverSeedsAgainstTheTree) {
  McRow row = longstaff_schwartz_puts()[0];  // spot 36, sigma 0.2
  row.steps = 4;
  const ExerciseBook book({row}, {ExerciseStyle::american});
  std::vector<double> gammas;
  constexpr int kSeeds = 16;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    MonteCarloOptions options;
    options.paths = 1 << 17;
    options.greeks = true;
    options.seed = static_cast<std::uint64_t>(seed);
    const MonteCarloBookResult r = price_monte_carlo_book(context(), book.view(), options);
    ASSERT_EQ(r.gamma.size(), 1u);
    gammas.push_back(r.gamma[0]);
  }
  double mean = 0, m2 = 0;
  for (const double g : gammas) mean += g / kSeeds;
  for (const double g : gammas) m2 += (g - mean) * (g - mean);
  const double error = std::sqrt(m2 / (kSeeds - 1) / kSeeds);
  McRow up = row, down = row;
  up.spot *= 1.01, down.spot *= 0.99;
  const double h = 0.01 * row.spot;
  const double tree =
      static_cast<double>(bermudan_tree(up) - 2 * bermudan_tree(row) + bermudan_tree(down)) /
      (h * h);
  std::printf("american gamma over %d seeds: %.6f +- %.6f, tree %.6f\n", kSeeds, mean, error, tree);
  EXPECT_LE(std::abs(mean - tree), 4 * error) << mean << " +- " << error << " tree " << tree;
  EXPECT_LT(4 * error, 0.5 * tree);  // so that a gamma of 0, or of twice the tree's, fails
}

TEST_P(MonteCarloAmericanTest, ProgressEndsAtOne) {
  std::vector<McRow> rows = longstaff_schwartz_puts();
  rows.resize(2);
  const ExerciseBook book(rows, {ExerciseStyle::european, ExerciseStyle::bermudan});
  MonteCarloOptions options;
  options.paths = 1000;
  std::vector<double> seen;
  options.progress = [&](double f) { seen.push_back(f); };
  (void)price_monte_carlo_book(context(), book.view(), options);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 1.0);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
}

// A long early-exercise row reports within itself: after its first pass's paths, after each
// date's regression and after its pricing pass (a row of 2^20 paths on 50 dates takes seconds on
// two cores); a callback that throws stops it there.
TEST_P(MonteCarloAmericanTest, ProgressWithinAnEarlyExerciseRow) {
  McRow row = longstaff_schwartz_puts()[0];
  row.steps = 20;
  const ExerciseBook book({row}, {ExerciseStyle::american});
  MonteCarloOptions options;
  options.paths = 3000;
  std::vector<double> seen;
  options.progress = [&](double f) { seen.push_back(f); };
  const MonteCarloBookResult r = price_monte_carlo_book(context(), book.view(), options);
  ASSERT_GE(seen.size(), 20u);
  EXPECT_GT(seen[0], 0.0);
  EXPECT_LT(seen[seen.size() / 2], 1.0);
  EXPECT_EQ(seen.back(), 1.0);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  // Stopped at the fifth report: the exception comes out, unchanged.
  struct Stop {};
  int reports = 0;
  options.progress = [&](double) {
    if (++reports == 5) throw Stop{};
  };
  EXPECT_THROW(price_monte_carlo_book(context(), book.view(), options), Stop);
  EXPECT_EQ(reports, 5);
  options.progress = {};
  EXPECT_EQ(price_monte_carlo_book(context(), book.view(), options).price[0], r.price[0]);
}

TEST_P(MonteCarloAmericanTest, RowsTheEngineRefusesAreRowErrors) {
  const McRow put = longstaff_schwartz_puts()[0];
  MonteCarloOptions options;
  options.paths = 100;
  const auto expect_row_error = [&](const ExerciseBook& book, const MonteCarloOptions& o,
                                    const std::string& what) {
    try {
      (void)price_monte_carlo_book(context(), book.view(), o);
      ADD_FAILURE() << what << ": no error";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("option 1"), std::string::npos)
          << what << ": " << e.what();
    }
  };
  McRow barrier = put;
  barrier.type = BarrierType::down_out, barrier.barrier = 30;
  expect_row_error(ExerciseBook({put, barrier}, {ExerciseStyle::european, ExerciseStyle::bermudan}),
                   options, "barrier");
  ExerciseBook asian({put, put}, {ExerciseStyle::european, ExerciseStyle::american});
  asian.average = {AverageType::none, AverageType::arithmetic};
  expect_row_error(asian, options, "asian");
  McRow no_strike = put;
  no_strike.strike = 0;
  expect_row_error(
      ExerciseBook({put, no_strike}, {ExerciseStyle::european, ExerciseStyle::american}), options,
      "strike 0");
  McRow many_dates = put;
  many_dates.steps = kAmericanMaxDates + 1;
  expect_row_error(
      ExerciseBook({put, many_dates}, {ExerciseStyle::european, ExerciseStyle::american}), options,
      "steps");
  const ExerciseBook plain({put, put}, {ExerciseStyle::european, ExerciseStyle::american});
  MonteCarloOptions control = options;
  control.control_variate = true;
  expect_row_error(plain, control, "control variate");
}

// A European row's error in a book with early-exercise rows names its row in the book, not its
// place among the European rows (which are priced as a book of their own).
TEST_P(MonteCarloAmericanTest, AEuropeanRowsErrorNamesItsRowInTheBook) {
  const McRow put = longstaff_schwartz_puts()[0];
  McRow bad = put;
  bad.type = BarrierType::down_out, bad.barrier = -1;
  const ExerciseBook book({put, bad}, {ExerciseStyle::american, ExerciseStyle::european});
  MonteCarloOptions options;
  options.paths = 100;
  try {
    (void)price_monte_carlo_book(context(), book.view(), options);
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("option 1:"), std::string::npos) << e.what();
  }
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MonteCarloAmericanTest);

// The device-data call does not route early exercise: it says so before it reads the book (whose
// arrays would be device memory), in every build.
TEST(MonteCarloAmerican, DeviceDataApiRefusesAnExerciseColumn) {
  const McRow put = longstaff_schwartz_puts()[0];
  const ExerciseBook book({put}, {ExerciseStyle::european});
  MonteCarloOptions options;
  options.paths = 100;
  EXPECT_THROW(price_monte_carlo_book_on_device(book.view(), {}, nullptr, options), InvalidInput);
}

// The Longstaff-Schwartz engine refuses the sobol sampler, whose numbers it does not use, naming
// the row. (A book in blocks carries such a row whole: monte_carlo_blocks_test.cpp; the reference
// of --check recomputes it: below.)
TEST(MonteCarloAmerican, SobolRefusesEarlyExercise) {
  const McRow put = longstaff_schwartz_puts()[0];
  const ExerciseBook book({put, put}, {ExerciseStyle::european, ExerciseStyle::american});
  MonteCarloOptions options;
  options.paths = 64;
  const auto expect_row_error = [](const auto& call, const std::string& what) {
    try {
      call();
      ADD_FAILURE() << what << ": no error";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("option 1"), std::string::npos)
          << what << ": " << e.what();
    }
  };
  MonteCarloOptions sobol = options;
  sobol.sampler = MonteCarloSampler::sobol;
  sobol.replicates = 4;
  expect_row_error([&] { (void)price_monte_carlo_book(Context::cpu(1), book.view(), sobol); },
                   "sobol");
}

// ---- The independent reference of --check ---------------------------------------------------

// A book of early-exercise rows for the reference, each row with its exercise style.
struct ReferenceBook {
  std::vector<McRow> rows;
  std::vector<ExerciseStyle> styles;
};

// Longstaff and Schwartz's puts, a call with dividends (early exercise pays), a row of one date
// and a European row beside them.
ReferenceBook american_reference_book() {
  ReferenceBook book;
  std::vector<McRow>& rows = book.rows;
  rows = longstaff_schwartz_puts();
  for (McRow& r : rows) r.steps = 20;
  McRow call;
  call.spot = 100, call.strike = 95, call.maturity = 0.75, call.rate = 0.03, call.dividend = 0.07;
  call.volatility = 0.3, call.steps = 12;
  McRow single = rows[0];
  single.steps = 1;
  rows.push_back(call);
  rows.push_back(single);
  book.styles.assign(rows.size(), ExerciseStyle::bermudan);
  book.styles[1] = ExerciseStyle::american;
  rows.push_back(call);
  book.styles.push_back(ExerciseStyle::european);
  return book;
}

// Heston rows: puts at three spots and a call with dividends (the variance stochastic: the rule
// regresses on 1, x, x^2, x^3, u, u x), a put whose variance is deterministic (sigma_v = 0: the
// pricer drops u and u x), a row of one date and a European heston row beside them.
ReferenceBook american_heston_reference_book() {
  ReferenceBook book;
  std::vector<McRow>& rows = book.rows;
  for (const McRow& r : longstaff_schwartz_puts()) {
    if (r.volatility < 0.3) rows.push_back(heston_put(r, 0.5));  // spots 36, 40, 44
  }
  McRow call = heston_put(longstaff_schwartz_puts()[3], 0.3);
  call.put = false, call.spot = 42, call.dividend = 0.08, call.rho = 0.3;
  rows.push_back(call);
  rows.push_back(heston_put(longstaff_schwartz_puts()[0], 0));
  McRow single = rows[1];
  single.steps = 1;
  rows.push_back(single);
  for (McRow& r : rows) r.steps = std::min<std::uint32_t>(r.steps, 10);
  book.styles.assign(rows.size(), ExerciseStyle::american);
  book.styles[0] = ExerciseStyle::bermudan;
  rows.push_back(rows[1]);
  book.styles.push_back(ExerciseStyle::european);
  return book;
}

// The pricer against the reference on `book` (3078 paths: three tiles and a partial one; with
// `antithetic` as many pairs), in double and in float (the agreements returned in that order):
// every row within its bound and the bound finite. In double every bound is at most 1e-9
// standard errors. In float so (at most `float_bound`) are the rows without a regression (one
// date, or European: the European reference's float bounds, about 1e-2 standard errors on
// Black-Scholes rows and up to 0.1 on heston rows, monte_carlo_heston.md); the others' float
// regressions cannot be bounded tightly (the coefficients' bounds, from spots known to 1e-6,
// reach 1e-3 to 1 through the normal equations, and the decisions they leave open feed the
// earlier dates' sums), which the agreement counts as loose.
std::vector<MonteCarloAgreement> expect_within_the_references_bound(const Context& context,
                                                                    const ReferenceBook& book,
                                                                    bool antithetic,
                                                                    double float_bound,
                                                                    const char* what) {
  const std::vector<McRow>& rows = book.rows;
  const ExerciseBook view(rows, book.styles);
  MonteCarloOptions options;
  options.paths = (antithetic ? 2 : 1) * (3 * 1024 + 6);
  options.seed = 5;
  options.antithetic = antithetic;
  std::vector<MonteCarloAgreement> agreements;
  for (Precision precision : {Precision::float64, Precision::float32}) {
    options.precision = precision;
    const bool single = precision == Precision::float32;
    const char* name = single ? "float" : "double";
    const MonteCarloBookResult r = price_monte_carlo_book(context, view.view(), options);
    const MonteCarloReference ref = monte_carlo_reference(view.view(), options);
    const MonteCarloAgreement a = monte_carlo_agreement(r, ref);
    EXPECT_EQ(a.rows_over_bound, 0) << what << " " << name;
    double worst = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string row = std::string(what) + " row " + std::to_string(i) + " " + name;
      EXPECT_TRUE(std::isfinite(ref.price_bound[i]) && std::isfinite(ref.std_error_bound[i]))
          << row;
      EXPECT_GT(ref.price[i], 0) << row;  // a reference that priced something
      EXPECT_LE(std::abs(r.price[i] - ref.price[i]), ref.price_bound[i]) << row;
      EXPECT_LE(std::abs(r.std_error[i] - ref.std_error[i]), ref.std_error_bound[i]) << row;
      worst = std::max(worst, ref.price_bound[i] / ref.std_error[i]);
      const bool regressed = rows[i].steps > 1 && book.styles[i] != ExerciseStyle::european;
      if (!single || !regressed) {
        EXPECT_LE(ref.price_bound[i], (single ? float_bound : 1e-9) * ref.std_error[i]) << row;
      }
    }
    if (!single) {
      EXPECT_EQ(a.rows_with_loose_bound, 0) << what;
    }
    std::printf(
        "%s vs reference, %s: max |pricer-ref| %.3e, %.3f of the bound, largest bound %.3e "
        "standard errors, %lld of %zu rows loose\n",
        what, name, a.max_abs_price_difference, a.max_price_difference_over_bound, worst,
        static_cast<long long>(a.rows_with_loose_bound), rows.size());
    agreements.push_back(a);
  }
  return agreements;
}

TEST_P(MonteCarloAmericanTest, AgreesWithTheIndependentReferenceWithinItsBound) {
  // Both passes again in long double on the same numbers, its own regression and decisions: the
  // pricer within the bound on every row, in double and in float, and the bound finite.
  const std::vector<MonteCarloAgreement> a = expect_within_the_references_bound(
      context(), american_reference_book(), false, 1e-2, "american");
  EXPECT_EQ(a[1].rows_with_loose_bound, 7);  // float: the rows with a regression
}

TEST(MonteCarloAmerican, TheReferenceReportsAPriceOrStandardErrorJustOutsideItsBound) {
  const ReferenceBook rows = american_reference_book();
  const ExerciseBook book(rows.rows, rows.styles);
  MonteCarloOptions options;
  options.paths = 2000;
  const MonteCarloBookResult r = price_monte_carlo_book(Context::cpu(), book.view(), options);
  const MonteCarloReference ref = monte_carlo_reference(book.view(), options);
  testing::expect_values_just_outside_the_bound_are_counted(r, ref, 0, 6);
}

TEST_P(MonteCarloAmericanTest, HestonAgreesWithTheIndependentReferenceWithinItsBound) {
  // Both passes again in long double on the same numbers: the QE paths with every open branch
  // followed, the 6-function regression with the bounds of u in its sums, the decisions with the
  // u term. Double: within a bound far below the sampling error on every row. Float: within the
  // bound, which (as on the Black-Scholes rows) exceeds the standard error on the rows whose
  // rules come from float regressions.
  (void)expect_within_the_references_bound(context(), american_heston_reference_book(), false, 0.1,
                                           "american heston");
}

// Antithetic variates on early-exercise rows: pass 1 unchanged, pass 2's pairs (path and mirror,
// each exercised by the rule) within the reference's bound, Black-Scholes and heston rows.
// (Needs the pricer's antithetic early exercise: until it prices these rows it refuses them and
// this test fails.)
TEST_P(MonteCarloAmericanTest, AntitheticAgreesWithTheIndependentReferenceWithinItsBound) {
  ReferenceBook book = american_reference_book();
  const ReferenceBook heston = american_heston_reference_book();
  book.rows.insert(book.rows.end(), heston.rows.begin(), heston.rows.end());
  book.styles.insert(book.styles.end(), heston.styles.begin(), heston.styles.end());
  (void)expect_within_the_references_bound(context(), book, true, 0.1, "american antithetic");
}

// The reference's pairs against a second computation of the same numbers: on one date an
// early-exercise row is its European row (exercise at maturity where in the money, on the
// European layout's numbers, pairs included), which the European reference prices by its own
// code: the two references agree to long double's rounding (paths x a few roundings of 2^-64,
// below 1e-15 of the values; 1e-12 is far below either's bound in double, about 1e-11
// standard errors), with antithetic variates and without, Black-Scholes and heston.
TEST(MonteCarloAmerican, TheReferenceOfOneDateIsTheEuropeanReference) {
  McRow put = longstaff_schwartz_puts()[2];
  put.steps = 1;
  McRow call = put;
  call.put = false, call.dividend = 0.03;
  const McRow heston = heston_put(put, 0.5);
  const std::vector<McRow> rows = {put, call, heston};
  const ExerciseBook american(rows,
                              std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::american));
  const ExerciseBook european(rows,
                              std::vector<ExerciseStyle>(rows.size(), ExerciseStyle::european));
  for (bool antithetic : {false, true}) {
    for (Precision precision : {Precision::float64, Precision::float32}) {
      MonteCarloOptions options;
      options.paths = 2 * 2051;
      options.seed = 11;
      options.antithetic = antithetic;
      options.precision = precision;
      const MonteCarloReference a = monte_carlo_reference(american.view(), options);
      const MonteCarloReference e = monte_carlo_reference(european.view(), options);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string what = "row " + std::to_string(i) + " antithetic " +
                                 std::to_string(antithetic) + " precision " +
                                 std::to_string(int(precision));
        EXPECT_GT(e.price[i], 0) << what;
        EXPECT_NEAR(a.price[i], e.price[i], 1e-12 * e.price[i]) << what;
        EXPECT_NEAR(a.std_error[i], e.std_error[i], 1e-12 * e.std_error[i]) << what;
      }
    }
  }
}

// With antithetic variates pass 1 is unchanged, so the rule is the plain row's, and pass 2's
// pairs estimate the same price: the two references within 4 of their combined standard errors
// (independent halves would give sqrt(a^2 + p^2); the pairs share their first paths with the
// plain row's, which only narrows the difference), and a pair's mean, whose paths are negatively
// correlated on a put, has a smaller standard error than the plain estimate of as many paths.
TEST(MonteCarloAmerican, TheReferencesPairsEstimateThePlainRowsPrice) {
  const ReferenceBook reference_book = american_heston_reference_book();
  const std::vector<McRow>& rows = reference_book.rows;
  const ExerciseBook book(rows, reference_book.styles);
  MonteCarloOptions options;
  options.paths = 2 * 3000;
  options.seed = 3;
  const MonteCarloReference plain = monte_carlo_reference(book.view(), options);
  options.antithetic = true;
  const MonteCarloReference pairs = monte_carlo_reference(book.view(), options);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NEAR(pairs.price[i], plain.price[i],
                4 * std::hypot(pairs.std_error[i], plain.std_error[i]))
        << "row " << i;
    if (rows[i].put) {
      EXPECT_LT(pairs.std_error[i], plain.std_error[i]) << "row " << i;
    }
  }
}

TEST(MonteCarloAmerican, TheReferenceRefusesWhatItDoesNotCheckNamingTheRow) {
  // The control variate on an early-exercise row (the pricer refuses it too) and the sobol
  // sampler.
  const McRow put = longstaff_schwartz_puts()[0];
  const ExerciseBook book({put, put}, {ExerciseStyle::european, ExerciseStyle::american});
  MonteCarloOptions control;
  control.paths = 64;
  control.control_variate = true;
  MonteCarloOptions sobol;
  sobol.paths = 64;
  sobol.sampler = MonteCarloSampler::sobol;
  sobol.replicates = 4;
  for (const auto& [options, message] :
       {std::pair{control, "option 1: early exercise takes no control variate"},
        std::pair{sobol, "option 1: early exercise is priced on Philox numbers only"}}) {
    try {
      (void)monte_carlo_reference(book.view(), options);
      ADD_FAILURE() << message << ": no error";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpukit::finance
