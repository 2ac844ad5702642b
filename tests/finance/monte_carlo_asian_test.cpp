// Asian (average price) options by Monte Carlo (issue 33), each scenario written once and run on
// the CPU and on CUDA (`Cpu/` and `Cuda/` instances; the CUDA ones skip without a GPU): the
// geometric average against Kemna and Vorst's closed form for discrete fixings (written here in
// long double, independently of the engine's own copy that serves as the control variate's
// mean), the arithmetic average between the geometric price and the arithmetic-geometric upper
// bound and against a long run, the independent reference's bound, antithetic variates, the
// control variate, float and double, and the bits on every thread count.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::McBook;
using testing::McRow;
using testing::same_bits;
using LD = long double;

class MonteCarloAsianTest : public testing::MonteCarloBookTest {};

LD normal_cdf(LD x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); }

// The geometric average G = (prod_i S_{t_i})^(1/n), t_i = i T / n, under Black-Scholes: ln G is
// normal with mean ln S + (r - q - sigma^2/2) T (n+1)/(2n) and variance
// sigma^2 T (n+1)(2n+1)/(6 n^2) (Kemna and Vorst 1990; with n fixings the sum of min(t_i, t_j)
// is T/n * n(n+1)(2n+1)/6). Returns the discounted price.
LD kemna_vorst(const McRow& r) {
  const LD n = r.steps, sigma = r.volatility, T = r.maturity;
  const LD mean =
      std::log(LD(r.spot)) + (r.rate - r.dividend - sigma * sigma / 2) * T * (n + 1) / (2 * n);
  const LD variance = sigma * sigma * T * (n + 1) * (2 * n + 1) / (6 * n * n);
  const LD sd = std::sqrt(variance);
  const LD d1 = (mean - std::log(LD(r.strike)) + variance) / sd, d2 = d1 - sd;
  const LD forward = std::exp(mean + variance / 2);
  const LD discount = std::exp(-LD(r.rate) * T);
  if (r.put) return discount * (r.strike * normal_cdf(-d2) - forward * normal_cdf(-d1));
  return discount * (forward * normal_cdf(d1) - r.strike * normal_cdf(d2));
}

// The discounted E[A - G] >= 0 (A the arithmetic, G the geometric average): A >= G path by path,
// so an arithmetic call lies in [geometric call, geometric call + E[A - G]] and an arithmetic put
// in [geometric put - E[A - G], geometric put].
LD arithmetic_minus_geometric(const McRow& r) {
  const LD n = r.steps, sigma = r.volatility, T = r.maturity;
  LD mean_arithmetic = 0;
  for (std::uint32_t i = 1; i <= r.steps; ++i) {
    mean_arithmetic += std::exp((LD(r.rate) - r.dividend) * T * i / n);
  }
  mean_arithmetic *= r.spot / n;
  const LD mean_log = (r.rate - r.dividend - sigma * sigma / 2) * T * (n + 1) / (2 * n);
  const LD variance = sigma * sigma * T * (n + 1) * (2 * n + 1) / (6 * n * n);
  const LD mean_geometric = r.spot * std::exp(mean_log + variance / 2);
  return std::exp(-LD(r.rate) * T) * (mean_arithmetic - mean_geometric);
}

// Asian rows: calls and puts across the money, a few fixing counts and market parameters.
std::vector<McRow> asian_rows(AverageType average) {
  std::vector<McRow> rows;
  const std::uint32_t fixings[] = {1, 4, 12, 52};
  int k = 0;
  for (bool put : {false, true}) {
    for (double strike : {80.0, 100.0, 125.0}) {
      for (std::uint32_t steps : fixings) {
        McRow r;
        r.put = put, r.strike = strike, r.steps = steps, r.average = average;
        r.maturity = 0.5 + 0.25 * (k % 4);
        r.volatility = 0.15 + 0.1 * (k % 3);
        r.rate = 0.01 * (k % 5), r.dividend = 0.005 * (k % 3);
        rows.push_back(r);
        ++k;
      }
    }
  }
  return rows;
}

TEST(MonteCarloAsianOracle, KemnaVorstOnOneFixingIsBlackScholesAndTheBoundIsZero) {
  // One fixing: G = A = S_T, the European option.
  McRow r;
  r.steps = 1, r.strike = 95, r.volatility = 0.3, r.maturity = 2, r.rate = 0.03, r.dividend = 0.01;
  for (bool put : {false, true}) {
    r.put = put;
    const double european = barrier_price_analytic(BarrierType::none, put, r.spot, r.strike, 0,
                                                   r.maturity, r.rate, r.dividend, r.volatility);
    EXPECT_NEAR(double(kemna_vorst(r)), european, 1e-12 * european);
    EXPECT_NEAR(double(arithmetic_minus_geometric(r)), 0.0, 1e-12 * r.spot);
  }
  // Many fixings: Kemna and Vorst's continuous geometric average-rate call (Haug, The Complete
  // Guide to Option Pricing Formulas, 2nd ed., 4.20.1: cost of carry b_A = (r - q - sigma^2/6)/2,
  // volatility sigma / sqrt 3), the limit of the discrete form, which approaches it as 1/n.
  McRow many;
  many.steps = 100000, many.strike = 100, many.volatility = 0.2, many.rate = 0.05,
  many.dividend = 0, many.maturity = 1;
  const LD sigma_a = 0.2L / std::sqrt(3.0L), carry = (0.05L - 0.04L / 6) / 2;
  const LD d1 = (carry + sigma_a * sigma_a / 2) / sigma_a, d2 = d1 - sigma_a;
  const LD continuous =
      100 * std::exp(carry - 0.05L) * normal_cdf(d1) - 100 * std::exp(-0.05L) * normal_cdf(d2);
  // 5.5468186 as evaluated separately in Python (math.erfc) from the same formula.
  EXPECT_NEAR(double(continuous), 5.5468186, 1e-7);
  EXPECT_NEAR(double(kemna_vorst(many)), double(continuous), 1e-4);
}

TEST_P(MonteCarloAsianTest, GeometricAsianWithinFourStandardErrorsOfKemnaVorst) {
  const std::vector<McRow> rows = asian_rows(AverageType::geometric);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (bool antithetic : {false, true}) {
      MonteCarloOptions options;
      options.paths = 6146;  // three tiles and a partial one; even for the antithetic pairs
      options.precision = precision;
      options.antithetic = antithetic;
      const MonteCarloBookResult mc = price(rows, options);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const double exact = double(kemna_vorst(rows[i]));
        EXPECT_GT(mc.std_error[i], 0) << i;
        EXPECT_LE(std::abs(mc.price[i] - exact), 4 * mc.std_error[i])
            << "row " << i << " precision " << int(precision) << " antithetic " << antithetic
            << ": mc " << mc.price[i] << " +- " << mc.std_error[i] << " Kemna-Vorst " << exact;
      }
    }
  }
}

// The sobol sampler on Asian rows (a date a dimension, through the Brownian bridge): geometric
// rows within 4 standard errors of Kemna-Vorst at a fifth of Philox's error at the same paths,
// arithmetic rows within 4 combined standard errors of a long Philox run with the control.
TEST_P(MonteCarloAsianTest, SobolAsianRowsAgreeWithKemnaVorstFarBelowPhiloxsError) {
  const std::vector<McRow> rows = asian_rows(AverageType::geometric);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (bool antithetic : {false, true}) {
      MonteCarloOptions options;
      options.paths = 16 * 1000 * (antithetic ? 2 : 1);  // 1000 samples a replicate
      options.precision = precision;
      options.antithetic = antithetic;
      options.sampler = MonteCarloSampler::sobol;
      const MonteCarloBookResult mc = price(rows, options);
      MonteCarloOptions philox_options = options;
      philox_options.sampler = MonteCarloSampler::philox;
      const MonteCarloBookResult philox = price(rows, philox_options);
      double sobol_squares = 0, philox_squares = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const double exact = double(kemna_vorst(rows[i]));
        EXPECT_GT(mc.std_error[i], 0) << i;
        // float: the inputs' rounding moves a price by about 1e-7 relative of the spot.
        EXPECT_LE(std::abs(mc.price[i] - exact),
                  4 * mc.std_error[i] + (precision == Precision::float32 ? 1e-3 : 1e-12))
            << "row " << i << " precision " << int(precision) << " antithetic " << antithetic
            << ": mc " << mc.price[i] << " +- " << mc.std_error[i] << " Kemna-Vorst " << exact;
        sobol_squares += (mc.price[i] - exact) * (mc.price[i] - exact);
        philox_squares += (philox.price[i] - exact) * (philox.price[i] - exact);
      }
      EXPECT_LT(sobol_squares, 0.04 * philox_squares) << int(precision) << " " << antithetic;
    }
  }
  const std::vector<McRow> arithmetic = asian_rows(AverageType::arithmetic);
  MonteCarloOptions options;
  options.paths = 1 << 14;
  options.sampler = MonteCarloSampler::sobol;
  const MonteCarloBookResult mc = price(arithmetic, options);
  MonteCarloOptions long_run;
  long_run.paths = 1 << 18;
  long_run.control_variate = true;
  const MonteCarloBookResult reference = price(arithmetic, long_run);
  for (std::size_t i = 0; i < arithmetic.size(); ++i) {
    EXPECT_LE(std::abs(mc.price[i] - reference.price[i]),
              4 * std::hypot(mc.std_error[i], reference.std_error[i]))
        << "row " << i << ": sobol " << mc.price[i] << " +- " << mc.std_error[i] << " philox "
        << reference.price[i] << " +- " << reference.std_error[i];
  }
}

TEST_P(MonteCarloAsianTest, ArithmeticAsianLiesWithinTheGeometricBoundsAndAgreesWithALongRun) {
  const std::vector<McRow> rows = asian_rows(AverageType::arithmetic);
  MonteCarloOptions options;
  options.paths = 1 << 14;
  options.control_variate = true;
  options.variance_reduction_factors = true;
  const MonteCarloBookResult mc = price(rows, options);
  MonteCarloOptions long_run = options;
  long_run.paths = (1 << 18) + 6;
  long_run.seed = 4242;  // independent of the short run's numbers
  long_run.antithetic = true;
  const MonteCarloBookResult reference = price(rows, long_run);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const McRow& r = rows[i];
    const double geometric = double(kemna_vorst(r));
    const double gap = double(arithmetic_minus_geometric(r));
    const double low = r.put ? geometric - gap : geometric;
    const double high = r.put ? geometric : geometric + gap;
    const double se = mc.std_error[i];
    // One fixing: the bounds meet at the price, which the control then gives exactly (se 0);
    // the engine's double closed form and this long double one differ by rounding there.
    const double rounding = 1e-12 * (std::abs(low) + std::abs(high));
    EXPECT_GE(mc.price[i], low - 4 * se - rounding) << "row " << i;
    EXPECT_LE(mc.price[i], high + 4 * se + rounding) << "row " << i;
    const double both = std::hypot(se, reference.std_error[i]);
    EXPECT_LE(std::abs(mc.price[i] - reference.price[i]), 4 * both)
        << "row " << i << ": " << mc.price[i] << " +- " << se << " vs the long run "
        << reference.price[i] << " +- " << reference.std_error[i];
    // The geometric control explains almost all of the arithmetic payoff's variance (one fixing:
    // the two payoffs are the same, and the control leaves no residual).
    EXPECT_GT(mc.vrf_control[i], r.steps == 1 ? 1e6 : 20.0) << "row " << i;
  }
}

TEST_P(MonteCarloAsianTest, AnAsianOnOneFixingIsTheEuropeanOptionOnTheSameNumbers) {
  // In double every backend computes exp of the same sum: the same bits as the European row.
  std::vector<McRow> european = asian_rows(AverageType::none);
  for (McRow& r : european) r.steps = 1;
  MonteCarloOptions options;
  options.paths = 2049;
  for (AverageType average : {AverageType::arithmetic, AverageType::geometric}) {
    std::vector<McRow> asian = european;
    for (McRow& r : asian) r.average = average;
    for (bool antithetic : {false, true}) {
      options.antithetic = antithetic;
      options.paths = antithetic ? 2050 : 2049;
      const MonteCarloBookResult a = price(asian, options), e = price(european, options);
      EXPECT_TRUE(same_bits(a.price, e.price)) << int(average) << " " << antithetic;
      EXPECT_TRUE(same_bits(a.std_error, e.std_error)) << int(average) << " " << antithetic;
    }
  }
}

TEST_P(MonteCarloAsianTest, AntitheticAndControlVariateReduceTheVariance) {
  std::vector<McRow> rows = asian_rows(AverageType::arithmetic);
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const McRow& r) { return r.steps == 1; }),
             rows.end());
  MonteCarloOptions options;
  options.paths = 1 << 13;
  options.antithetic = true;
  options.control_variate = true;
  options.variance_reduction_factors = true;
  const MonteCarloBookResult mc = price(rows, options);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_GT(mc.vrf_antithetic[i], 1.0) << i;
    EXPECT_GT(mc.vrf_control[i], 5.0) << i;
    const double geometric = double(kemna_vorst(rows[i]));
    const double gap = double(arithmetic_minus_geometric(rows[i]));
    const double low = rows[i].put ? geometric - gap : geometric;
    const double high = rows[i].put ? geometric : geometric + gap;
    EXPECT_GE(mc.price[i], low - 4 * mc.std_error[i]) << i;
    EXPECT_LE(mc.price[i], high + 4 * mc.std_error[i]) << i;
  }
}

TEST_P(MonteCarloAsianTest, AgreesWithTheIndependentReferenceWithinItsBound) {
  std::vector<McRow> rows = asian_rows(AverageType::arithmetic);
  for (const McRow& r : asian_rows(AverageType::geometric)) rows.push_back(r);
  // A few European and barrier rows in the same book: a mixed run.
  for (const McRow& r : testing::barrier_rows(5)) {
    if (rows.size() % 5 == 0) rows.push_back(r);
    rows.push_back(testing::random_european_rows(1, static_cast<std::uint32_t>(rows.size()))[0]);
  }
  const McBook book(rows);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (int mode = 0; mode < 4; ++mode) {
      MonteCarloOptions options;
      options.paths = GetParam() == Backend::cuda ? 4100 : 1030;
      options.seed = 17;
      options.precision = precision;
      options.antithetic = (mode & 1) != 0;
      options.control_variate = (mode & 2) != 0;
      const MonteCarloBookResult r = price_monte_carlo_book(context(), book.view(), options);
      const MonteCarloReference ref = monte_carlo_reference(book.view(), options);
      const MonteCarloAgreement a = monte_carlo_agreement(r, ref);
      EXPECT_EQ(a.rows_over_bound, 0) << "precision " << int(precision) << " mode " << mode;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_LE(std::abs(r.price[i] - ref.price[i]), ref.price_bound[i]) << i;
        EXPECT_LE(std::abs(r.std_error[i] - ref.std_error[i]), ref.std_error_bound[i]) << i;
        // The bound means something: in double far below the sampling error (rows of one
        // fixing with the control are exact, their standard error 0).
        if (precision == Precision::float64 && ref.std_error[i] > 0) {
          EXPECT_LE(ref.price_bound[i], 1e-7 * ref.std_error[i] + 1e-300) << i;
        }
      }
      std::printf("asian %s-vs-reference %s mode %d: max |diff| %.3e, %.3f of the bound\n",
                  GetParam() == Backend::cuda ? "gpu" : "cpu",
                  precision == Precision::float64 ? "double" : "float", mode,
                  a.max_abs_price_difference, a.max_price_difference_over_bound);
    }
  }
}

TEST_P(MonteCarloAsianTest, BitwiseIdenticalAcrossThreadCounts) {
  std::vector<McRow> rows = asian_rows(AverageType::arithmetic);
  for (const McRow& r : asian_rows(AverageType::geometric)) rows.push_back(r);
  testing::expect_the_bits_of_one_thread(
      [this](const std::vector<McRow>& r, const MonteCarloOptions& o, int threads) {
        return price(r, o, threads);
      },
      rows);
}

TEST_P(MonteCarloAsianTest, AnAsianBarrierIsRefused) {
  McRow r;
  r.average = AverageType::geometric, r.steps = 12;
  r.type = BarrierType::up_out, r.barrier = 130;
  MonteCarloOptions options;
  options.paths = 100;
  EXPECT_THROW(price({r}, options), InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MonteCarloAsianTest);

}  // namespace
}  // namespace gpukit::finance
