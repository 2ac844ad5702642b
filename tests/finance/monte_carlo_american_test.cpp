// The early-exercise (Longstaff-Schwartz) engine's pieces (the least-squares solve, the fixed
// fold of the tiles' regression sums, the memory bound) and the tests' binomial-tree oracle
// (binomial_tree_oracle.hpp) against Black-Scholes and published values.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "binomial_tree_oracle.hpp"
#include "finance/monte_carlo_american.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::binomial_tree_price;
using testing::McRow;
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
  mc::solve_regression(sums.data(), beta);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(beta[k], beta_true[k], 1e-8) << "k " << k;
}

TEST(AmericanRegression, DegenerateDatesFitWhatTheyCan) {
  double beta[4];
  // One in-the-money path: the constant is its value, the other functions are dropped.
  std::vector<double> sums = regression_sums({-0.25}, {3.0});
  mc::solve_regression(sums.data(), beta);
  EXPECT_NEAR(beta[0], 3.0, 1e-12);
  for (int k = 1; k < 4; ++k) EXPECT_EQ(beta[k], 0.0) << "k " << k;
  // Two: the line through them.
  sums = regression_sums({-0.5, -0.1}, {1.0, 2.0});
  mc::solve_regression(sums.data(), beta);
  EXPECT_NEAR(beta[0] + beta[1] * -0.5, 1.0, 1e-9);
  EXPECT_NEAR(beta[0] + beta[1] * -0.1, 2.0, 1e-9);
  for (int k = 2; k < 4; ++k) EXPECT_EQ(beta[k], 0.0) << "k " << k;
  // None: every coefficient 0.
  sums.assign(mc::kAmericanSums, 0.0);
  mc::solve_regression(sums.data(), beta);
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
  mc::fold_regression_sums(partials.data(), tiles, sums);
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

}  // namespace
}  // namespace gpukit::finance
