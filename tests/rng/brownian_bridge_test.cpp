// The Brownian bridge (gpukit/rng/brownian_bridge.hpp): the path it builds is a linear map of the
// normals whose covariance is exactly min(t_i, t_j) (computed from the map's columns, for many
// step counts, powers of two and not); sampled paths' covariances agree within their standard
// errors; the terminal value is sqrt(T) z_0 exactly; dimensions run breadth first (each used
// once); the walk visits the dates in order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/rng/brownian_bridge.hpp"
#include "test_seed.hpp"

namespace gpukit::rng {
namespace {

// The path (W(t_1), ..., W(t_steps)) of the normals z.
std::vector<double> bridge_path(const std::vector<BrownianBridgeNode<double>>& nodes,
                                const std::vector<double>& z) {
  const auto steps = static_cast<std::uint32_t>(nodes.size());
  std::vector<double> w(steps, std::nan(""));
  std::uint32_t expected_date = 1;
  brownian_bridge_walk(
      nodes.data(), steps, [&](std::uint32_t d) { return z[d]; },
      [&](std::uint32_t date, double value) {
        EXPECT_EQ(date, expected_date++);
        w[date - 1] = value;
      });
  EXPECT_EQ(expected_date, steps + 1);
  return w;
}

// Column d of the map is the path of the unit normal e_d; the covariance of W = A z is A A^T,
// which must be min(t_i, t_j) = min(i, j) T / steps to the rounding of the weights.
TEST(BrownianBridge, TheMapsCovarianceIsMinOfTheDates) {
  for (const std::uint32_t steps : {1u, 2u, 3u, 5u, 7u, 8u, 12u, 16u, 31u, 33u, 50u, 64u, 100u}) {
    const double maturity = 1.75;
    const auto nodes = brownian_bridge_nodes<double>(steps, maturity);
    std::vector<std::vector<double>> column(steps);
    for (std::uint32_t d = 0; d < steps; ++d) {
      std::vector<double> unit(steps, 0.0);
      unit[d] = 1.0;
      column[d] = bridge_path(nodes, unit);
    }
    for (std::uint32_t i = 0; i < steps; ++i) {
      for (std::uint32_t j = 0; j < steps; ++j) {
        double covariance = 0;
        for (std::uint32_t d = 0; d < steps; ++d) covariance += column[d][i] * column[d][j];
        const double expected = std::min(i, j) + 1.0;
        EXPECT_NEAR(covariance, expected * maturity / steps, 1e-13)
            << "steps " << steps << " dates " << i + 1 << ", " << j + 1;
      }
    }
  }
}

TEST(BrownianBridge, DimensionsAreEachUsedOnceLargestScalesFirst) {
  for (const std::uint32_t steps : {1u, 6u, 13u, 64u, 1000u, 1024u}) {
    const auto nodes = brownian_bridge_nodes<double>(steps, 2.0);
    std::vector<int> used(steps, 0);
    for (const auto& node : nodes) ++used[node.dimension];
    EXPECT_TRUE(std::all_of(used.begin(), used.end(), [](int u) { return u == 1; }));
    EXPECT_EQ(nodes[steps - 1].dimension, 0u);
    if ((steps & (steps - 1)) != 0) continue;
    // Powers of two (every interval of a level as wide): a later dimension never has a larger
    // conditional standard deviation. (Otherwise a level's intervals differ by one date.)
    std::vector<double> std_dev_of(steps);
    for (const auto& node : nodes) std_dev_of[node.dimension] = node.std_dev;
    for (std::uint32_t d = 1; d < steps; ++d) {
      EXPECT_LE(std_dev_of[d], std_dev_of[d - 1]) << "steps " << steps << " d " << d;
    }
  }
}

TEST(BrownianBridge, TheTerminalValueIsSqrtTTimesTheFirstNormal) {
  std::mt19937_64 engine(gpukit::testing::test_seed());
  std::normal_distribution<double> normal;
  for (const std::uint32_t steps : {1u, 2u, 9u, 252u}) {
    for (const double maturity : {0.25, 1.0, 3.0}) {
      const auto nodes = brownian_bridge_nodes<double>(steps, maturity);
      const auto nodes_float = brownian_bridge_nodes<float>(steps, maturity);
      std::vector<double> z(steps);
      for (double& v : z) v = normal(engine);
      EXPECT_EQ(bridge_path(nodes, z).back(), std::sqrt(maturity) * z[0]);
      std::vector<float> zf(z.begin(), z.end());
      float terminal = 0;
      brownian_bridge_walk(
          nodes_float.data(), steps, [&](std::uint32_t d) { return zf[d]; },
          [&](std::uint32_t date, float value) {
            if (date == steps) terminal = value;
          });
      EXPECT_EQ(terminal, static_cast<float>(std::sqrt(maturity)) * zf[0]);
    }
  }
}

// Sampled paths: E[W_i W_j] = min(t_i, t_j) within 5 standard errors of the sample mean (the
// product of two normals of variances a, b and covariance c has variance a b + c^2).
TEST(BrownianBridge, SampledPathsHaveTheCovarianceOfBrownianMotion) {
  const std::uint64_t seed = gpukit::testing::test_seed();
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  constexpr std::uint32_t kSteps = 11;
  constexpr int kPaths = 200000;
  const double maturity = 2.0;
  const auto nodes = brownian_bridge_nodes<double>(kSteps, maturity);
  std::vector<double> sum(kSteps * kSteps, 0.0);
  std::vector<double> z(kSteps);
  for (int path = 0; path < kPaths; ++path) {
    for (double& v : z) v = normal(engine);
    const std::vector<double> w = bridge_path(nodes, z);
    for (std::uint32_t i = 0; i < kSteps; ++i) {
      for (std::uint32_t j = 0; j < kSteps; ++j) sum[i * kSteps + j] += w[i] * w[j];
    }
  }
  for (std::uint32_t i = 0; i < kSteps; ++i) {
    for (std::uint32_t j = 0; j < kSteps; ++j) {
      const double ti = (i + 1) * maturity / kSteps, tj = (j + 1) * maturity / kSteps;
      const double c = std::min(ti, tj);
      const double std_error = std::sqrt((ti * tj + c * c) / kPaths);
      EXPECT_NEAR(sum[i * kSteps + j] / kPaths, c, 5 * std_error)
          << "dates " << i + 1 << ", " << j + 1 << " seed " << seed;
    }
  }
}

TEST(BrownianBridge, RefusesNoStepsAndBadMaturities) {
  EXPECT_THROW(brownian_bridge_nodes<double>(0, 1.0), InvalidInput);
  EXPECT_THROW(brownian_bridge_nodes<double>(4, -1.0), InvalidInput);
  EXPECT_THROW(brownian_bridge_nodes<double>(4, std::nan("")), InvalidInput);
  const auto zero = brownian_bridge_nodes<double>(3, 0.0);  // T = 0: a path of zeros
  EXPECT_EQ(bridge_path(zero, {1.0, 2.0, 3.0}), std::vector<double>(3, 0.0));
}

}  // namespace
}  // namespace gpukit::rng
