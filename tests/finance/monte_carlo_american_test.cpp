// The early-exercise (Longstaff-Schwartz) engine's pieces: the least-squares solve, the fixed
// fold of the tiles' regression sums and the memory bound.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "finance/monte_carlo_american.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"

namespace gpukit::finance {
namespace {

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

}  // namespace
}  // namespace gpukit::finance
