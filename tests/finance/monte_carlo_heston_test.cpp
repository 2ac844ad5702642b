// Heston rows by Monte Carlo (issue 33: Andersen's QE scheme with the martingale correction),
// each scenario written once and run on the CPU and on CUDA (`Cpu/` and `Cuda/` instances; the
// CUDA ones skip without a GPU): the semi-analytic oracle (heston_oracle.hpp) against published
// reference prices and against Black-Scholes as sigma_v -> 0; European prices against the oracle
// within 4 standard errors plus the scheme's discretisation bias; barrier in-out parity; float
// and double, antithetic on and off; the bits on every thread count.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "heston_oracle.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::HestonTerms;
using testing::McBook;
using testing::McRow;

class MonteCarloHestonTest : public testing::MonteCarloBookTest {};

// Alan Lewis's reference set ("Heston Model Reference Prices", financepress.com, 2019; computed
// in Mathematica at 50 digits, confirmed by others to 15-16): r = 0.01, q = 0.02, S = 100, T = 1,
// v0 = 0.04, kappa = 4, theta = 0.25, sigma_v = 1, rho = -0.5.
HestonTerms lewis(double strike, bool put) {
  HestonTerms h;
  h.put = put, h.spot = 100, h.strike = strike, h.maturity = 1, h.rate = 0.01, h.dividend = 0.02;
  h.v0 = 0.04, h.kappa = 4, h.theta = 0.25, h.sigma_v = 1, h.rho = -0.5;
  return h;
}

struct Published {
  double strike, put, call;
};
constexpr Published kLewis[] = {
    {80, 7.958878113256768285, 26.774758743998854221},
    {90, 12.017966707346304988, 20.933349000596710388},
    {100, 17.055270961270109414, 16.070154917028834279},
    {110, 23.017825898442800539, 12.132211516709844868},
    {120, 29.811026202682471843, 9.024913483457835637},
};

McRow heston_row(const HestonTerms& h, std::uint32_t steps) {
  McRow r;
  r.put = h.put, r.spot = double(h.spot), r.strike = double(h.strike);
  r.maturity = double(h.maturity), r.rate = double(h.rate), r.dividend = double(h.dividend);
  r.volatility = 0.123;  // not read on a heston row
  r.model = AssetModel::heston, r.steps = steps;
  r.v0 = double(h.v0), r.kappa = double(h.kappa), r.theta = double(h.theta);
  r.sigma_v = double(h.sigma_v), r.rho = double(h.rho);
  return r;
}

double black_scholes(bool put, double spot, double strike, double maturity, double rate,
                     double dividend, double volatility) {
  return barrier_price_analytic(BarrierType::none, put, spot, strike, 0, maturity, rate, dividend,
                                volatility);
}

TEST(HestonOracle, MatchesPublishedReferencePrices) {
  for (const Published& p : kLewis) {
    const double put = double(testing::heston_price(lewis(p.strike, true)));
    const double call = double(testing::heston_price(lewis(p.strike, false)));
    // The integration's tolerance is 1e-15 absolute; long double carries 19 digits.
    EXPECT_NEAR(put, p.put, 1e-10) << "K = " << p.strike;
    EXPECT_NEAR(call, p.call, 1e-10) << "K = " << p.strike;
  }
}

TEST(HestonOracle, TendsToBlackScholesAsSigmaVGoesToZero) {
  // sigma_v -> 0: the variance follows v0 + (theta - v0)(1 - e^{-kappa t}), so the price is
  // Black-Scholes at the mean variance theta + (v0 - theta)(1 - e^{-kappa T}) / (kappa T); with
  // rho = 0 the difference is O(sigma_v^2).
  for (const double v0 : {0.04, 0.09}) {
    for (const double strike : {80.0, 100.0, 125.0}) {
      for (const bool put : {false, true}) {
        HestonTerms h;
        h.put = put, h.strike = strike, h.maturity = 2, h.rate = 0.03, h.dividend = 0.01;
        h.v0 = v0, h.kappa = 1.5, h.theta = 0.04, h.sigma_v = 1e-4, h.rho = 0;
        const double mean_variance = 0.04 + (v0 - 0.04) * (1 - std::exp(-1.5 * 2)) / (1.5 * 2);
        const double expected =
            black_scholes(put, 100, strike, 2, 0.03, 0.01, std::sqrt(mean_variance));
        // kappa theta / sigma_v^2 = 6e6 amplifies the rounding of the characteristic function's
        // exponent to about 1e-12: the integrals are asked for 1e-11.
        EXPECT_NEAR(double(testing::heston_price(h, 1e-11L)), expected, 1e-7 * 100)
            << "v0 " << v0 << " K " << strike << " put " << put;
      }
    }
  }
}

// The scheme's bias on Lewis's set with 64 steps a year (dt = 1/64), measured with 2^20 paths a
// row (gpukit mc --antithetic --control-variate --seed 1, double, CPU): the prices differ from
// the published ones by -0.040 to +0.004 with standard errors 0.011 to 0.014, so the bias is
// below 0.040 + 3 standard errors, about 0.08. The allowance is that bound: the oracle prices the
// continuous model, the scheme a discretisation of it.
constexpr double kQeBias64 = 0.08;

// Lewis's ten options (calls and puts at each strike) on `steps` steps, their published prices
// in `exact`.
std::vector<McRow> lewis_rows(std::uint32_t steps, std::vector<double>& exact) {
  std::vector<McRow> rows;
  exact.clear();
  for (const Published& p : kLewis) {
    for (const bool put : {false, true}) {
      rows.push_back(heston_row(lewis(p.strike, put), steps));
      exact.push_back(put ? p.put : p.call);
    }
  }
  return rows;
}

TEST_P(MonteCarloHestonTest, EuropeanWithinFourStandardErrorsPlusTheBiasOfTheSemiAnalyticPrice) {
  std::vector<double> exact;
  const std::vector<McRow> rows = lewis_rows(64, exact);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (bool antithetic : {false, true}) {
      MonteCarloOptions options;
      options.paths = (1 << 15) + 2;  // a partial tile
      options.precision = precision;
      options.antithetic = antithetic;
      options.control_variate = antithetic;  // the terminal price: exact under the correction
      const MonteCarloBookResult mc = price(rows, options);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_GT(mc.std_error[i], 0) << i;
        EXPECT_LE(std::abs(mc.price[i] - exact[i]), 4 * mc.std_error[i] + kQeBias64)
            << "row " << i << " precision " << int(precision) << " antithetic " << antithetic
            << ": mc " << mc.price[i] << " +- " << mc.std_error[i] << " exact " << exact[i];
      }
    }
  }
}

// The sobol sampler on heston rows (two bridges, 2 x steps dimensions): within 4 standard
// errors plus the scheme's bias of the semi-analytic price (the bias is the scheme's, the same
// under either sampler), with a standard error below half of Philox's at the same paths; the
// barrier and Asian payoffs too (knock-in + knock-out = vanilla on the same points).
TEST_P(MonteCarloHestonTest, SobolRowsWithinTheBiasOfTheSemiAnalyticPriceBelowPhiloxsError) {
  std::vector<double> exact;
  const std::vector<McRow> rows = lewis_rows(64, exact);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (bool antithetic : {false, true}) {
      MonteCarloOptions options;
      options.paths = 16 * 1024 * (antithetic ? 2 : 1);
      options.precision = precision;
      options.antithetic = antithetic;
      options.sampler = MonteCarloSampler::sobol;
      const MonteCarloBookResult mc = price(rows, options);
      options.sampler = MonteCarloSampler::philox;
      const MonteCarloBookResult philox = price(rows, options);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_GT(mc.std_error[i], 0) << i;
        EXPECT_LT(mc.std_error[i], 0.5 * philox.std_error[i]) << i;
        EXPECT_LE(std::abs(mc.price[i] - exact[i]), 4 * mc.std_error[i] + kQeBias64)
            << "row " << i << " precision " << int(precision) << " antithetic " << antithetic
            << ": mc " << mc.price[i] << " +- " << mc.std_error[i] << " exact " << exact[i];
      }
    }
  }
  McRow vanilla = heston_row(lewis(100, false), 24);
  McRow out = vanilla, in = vanilla, arithmetic = vanilla, geometric = vanilla;
  out.type = BarrierType::down_out, in.type = BarrierType::down_in;
  out.barrier = in.barrier = 85;
  arithmetic.average = AverageType::arithmetic, geometric.average = AverageType::geometric;
  MonteCarloOptions options;
  options.paths = 16 * 512;
  options.sampler = MonteCarloSampler::sobol;
  std::vector<double> p;
  for (const McRow& row : {vanilla, out, in, arithmetic, geometric}) {
    p.push_back(price({row}, options).price[0]);
  }
  EXPECT_NEAR(p[1] + p[2], p[0], 1e-12 * p[0]);
  EXPECT_LT(p[1], p[0]);
  EXPECT_GE(p[3], p[4]);
  EXPECT_LT(p[3], p[0]);
}

TEST_P(MonteCarloHestonTest, WithoutVolatilityOfVarianceItIsBlackScholes) {
  // sigma_v = 0 and v0 = theta: the variance stays at theta and every step is exact: the
  // Black-Scholes price at volatility sqrt(theta), within 4 standard errors and no bias.
  std::vector<McRow> rows;
  for (const double strike : {70.0, 100.0, 140.0}) {
    for (const bool put : {false, true}) {
      McRow r;
      r.put = put, r.strike = strike, r.maturity = 1.5, r.rate = 0.04, r.dividend = 0.01;
      r.model = AssetModel::heston, r.steps = 7;
      r.v0 = r.theta = 0.0625, r.kappa = 2, r.sigma_v = 0, r.rho = -0.9;
      rows.push_back(r);
    }
  }
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = 20000;
    options.precision = precision;
    const MonteCarloBookResult mc = price(rows, options);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const McRow& r = rows[i];
      const double bs =
          black_scholes(r.put, r.spot, r.strike, r.maturity, r.rate, r.dividend, 0.25);
      EXPECT_LE(std::abs(mc.price[i] - bs), 4 * mc.std_error[i])
          << "row " << i << ": " << mc.price[i] << " +- " << mc.std_error[i] << " bs " << bs;
    }
  }
}

TEST_P(MonteCarloHestonTest, KnockInPlusKnockOutIsTheVanillaAndAsianRowsLieWithinBounds) {
  const HestonTerms h = lewis(100, false);
  McRow vanilla = heston_row(h, 24);
  McRow out = vanilla, in = vanilla;
  out.type = BarrierType::down_out, in.type = BarrierType::down_in;
  out.barrier = in.barrier = 85;
  McRow up_out = vanilla;
  up_out.type = BarrierType::up_out, up_out.barrier = 130;
  McRow arithmetic = vanilla, geometric = vanilla;
  arithmetic.average = AverageType::arithmetic, geometric.average = AverageType::geometric;
  MonteCarloOptions options;
  options.paths = 8192;
  // Each row a book of its own: row 0 of each, so every row has the same random numbers.
  MonteCarloBookResult mc;
  for (const McRow& row : {vanilla, out, in, up_out, arithmetic, geometric}) {
    mc.price.push_back(price({row}, options).price[0]);
  }
  // The same paths: in + out pays the vanilla on every path.
  EXPECT_NEAR(mc.price[1] + mc.price[2], mc.price[0], 1e-12 * mc.price[0]);
  EXPECT_LT(mc.price[1], mc.price[0]);
  EXPECT_LT(mc.price[3], mc.price[0]);
  EXPECT_GT(mc.price[3], 0);
  // Path by path the arithmetic average is at least the geometric one, so is its call.
  EXPECT_GE(mc.price[4], mc.price[5]);
  // An average varies less than the terminal price: the Asian calls are cheaper at the money.
  EXPECT_LT(mc.price[4], mc.price[0]);
}

// Every heston payoff (European call and put, discrete barriers out and in, down and up, Asian
// arithmetic and geometric), with the scheme's two branches (Lewis's sigma_v = 1 drives psi
// above psi_c, a small sigma_v keeps it below) and a deterministic variance (sigma_v = 0).
std::vector<McRow> heston_reference_rows() {
  std::vector<McRow> rows;
  McRow call = heston_row(lewis(100, false), 8);
  McRow calm = heston_row(lewis(110, true), 6);
  calm.sigma_v = 0.15, calm.kappa = 1.5, calm.theta = 0.05, calm.rho = -0.7;
  McRow flat = heston_row(lewis(95, false), 5);
  flat.sigma_v = 0, flat.v0 = flat.theta = 0.0625;
  rows = {call, heston_row(lewis(90, true), 7), calm, flat};
  McRow down_out = call, up_in = call, down_in = calm;
  down_out.type = BarrierType::down_out, down_out.barrier = 88;
  up_in.type = BarrierType::up_in, up_in.barrier = 112;
  down_in.type = BarrierType::down_in, down_in.barrier = 92;
  McRow arithmetic = call, geometric = calm;
  arithmetic.average = AverageType::arithmetic, geometric.average = AverageType::geometric;
  for (const McRow& r : {down_out, up_in, down_in, arithmetic, geometric}) rows.push_back(r);
  return rows;
}

TEST_P(MonteCarloHestonTest, AgreesWithTheIndependentReferenceWithinItsBound) {
  // The long-double reference on the same Philox numbers, in double and float, antithetic or
  // not, control variate or not: every row within the reference's bound, the bound finite, and
  // tight enough to mean something (double: far below a standard error).
  const std::vector<McRow> rows = heston_reference_rows();
  const McBook book(rows);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (int mode = 0; mode < 4; ++mode) {
      MonteCarloOptions options;
      options.paths = 2048 + 6;  // a tile and a partial one
      options.seed = 33;
      options.precision = precision;
      options.antithetic = (mode & 1) != 0;
      options.control_variate = (mode & 2) != 0;
      const MonteCarloBookResult r = price(rows, options);
      const MonteCarloReference ref = monte_carlo_reference(book.view(), options);
      const MonteCarloAgreement a = monte_carlo_agreement(r, ref);
      EXPECT_EQ(a.rows_over_bound, 0) << "precision " << int(precision) << " mode " << mode;
      double worst = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_TRUE(std::isfinite(ref.price_bound[i]) && std::isfinite(ref.std_error_bound[i]))
            << i;
        EXPECT_LE(std::abs(r.price[i] - ref.price[i]), ref.price_bound[i])
            << "row " << i << " precision " << int(precision) << " mode " << mode;
        EXPECT_LE(std::abs(r.std_error[i] - ref.std_error[i]), ref.std_error_bound[i])
            << "row " << i << " precision " << int(precision) << " mode " << mode;
        EXPECT_GT(ref.std_error[i], 0) << i;
        worst = std::max(worst, ref.price_bound[i] / ref.std_error[i]);
        // Double: many orders below the sampling error.
        if (precision == Precision::float64) {
          EXPECT_LE(ref.price_bound[i], 1e-7 * ref.std_error[i]) << i;
          EXPECT_LE(ref.std_error_bound[i], 1e-7 * ref.std_error[i]) << i;
        }
      }
      std::printf(
          "heston vs reference, %s mode %d: max |cpu-ref| %.3e, %.3f of the bound, "
          "largest bound %.3e standard errors\n",
          precision == Precision::float64 ? "double" : "float", mode, a.max_abs_price_difference,
          a.max_price_difference_over_bound, worst);
    }
  }
}

TEST(MonteCarloHeston, TheReferenceReportsAPriceOrStandardErrorJustOutsideItsBound) {
  // The check can fail: one row's price moved by a little more than its bound, another's
  // standard error, are each counted over the bound; the unmoved result passes.
  const std::vector<McRow> rows = heston_reference_rows();
  const McBook book(rows);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = 1000;
    options.precision = precision;
    const MonteCarloBookResult r = price_monte_carlo_book(Context::cpu(), book.view(), options);
    const MonteCarloReference ref = monte_carlo_reference(book.view(), options);
    const MonteCarloBookResult off =
        testing::expect_values_just_outside_the_bound_are_counted(r, ref, 4, 7);
    EXPECT_EQ(check_monte_carlo_book(book.view(), options, off, 2).rows_over_bound, 2);
    // A bound the reference could not state checks nothing: such a row is not passed.
    MonteCarloReference unbounded = ref;
    unbounded.price_bound[2] = std::numeric_limits<double>::infinity();
    EXPECT_EQ(monte_carlo_agreement(r, unbounded).rows_over_bound, 1);
  }
}

// v0 with Andersen's psi = s^2 / m^2 exactly psi_c = 1.5 on the first step (the constants of
// monte_carlo_path_params.hpp, solved by bisection in long double): every path meets the
// comparison psi <= psi_c at its rounding, and either branch may be the pricer's.
double v0_on_the_branch_boundary(double kappa, double theta, double sigma_v, double dt) {
  using LD = long double;
  const LD e = std::exp(-LD(kappa) * dt), s2v = LD(sigma_v) * sigma_v;
  const LD c1 = s2v * e * (1 - e) / kappa, c2 = theta * s2v * (1 - e) * (1 - e) / (2 * kappa);
  const auto psi = [&](LD v) {
    const LD m = theta + (v - theta) * e;
    return (v * c1 + c2) / (m * m);
  };
  LD low = 1e-3L, high = 4;  // psi falls as v grows
  for (int i = 0; i < 200; ++i) {
    const LD mid = (low + high) / 2;
    (psi(mid) > 1.5L ? low : high) = mid;
  }
  return double(low);
}

TEST(MonteCarloHeston, TheReferenceBoundsPathsOnBothSidesOfTheBranchBoundary) {
  // Every path's first step has psi = psi_c to the rounding: the reference follows both branches
  // and bounds each sample by the farther payoff; the pricer, whichever branch it took, is
  // within the bound, and the bound stays finite.
  // (In float the rounded v0 moves psi by about its own rounding, within psi's bound.)
  McRow row = heston_row(lewis(100, false), 4);
  row.sigma_v = 2;  // psi falls from 2 at v = 0 through psi_c
  row.v0 = v0_on_the_branch_boundary(row.kappa, row.theta, row.sigma_v, row.maturity / row.steps);
  ASSERT_GT(row.v0, 0.001);
  ASSERT_LT(row.v0, 3.9);
  const McBook book({row});
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = 512;
    options.precision = precision;
    const MonteCarloBookResult r = price_monte_carlo_book(Context::cpu(), book.view(), options);
    const MonteCarloReference ref = monte_carlo_reference(book.view(), options);
    EXPECT_TRUE(std::isfinite(ref.price_bound[0])) << int(precision);
    EXPECT_LE(std::abs(r.price[0] - ref.price[0]), ref.price_bound[0]) << int(precision);
    EXPECT_EQ(monte_carlo_agreement(r, ref).rows_over_bound, 0) << int(precision);
    // Both branches' payoffs differ on every path: the bound is far above the rounding's.
    EXPECT_GT(ref.price_bound[0], 1e-6 * ref.price[0]) << int(precision);
  }
}

TEST_P(MonteCarloHestonTest, BitwiseIdenticalAcrossThreadCounts) {
  std::vector<McRow> rows;
  for (const Published& p : kLewis) rows.push_back(heston_row(lewis(p.strike, false), 10));
  testing::expect_the_bits_of_one_thread(
      [this](const std::vector<McRow>& r, const MonteCarloOptions& o, int threads) {
        return price(r, o, threads);
      },
      rows);
}

TEST_P(MonteCarloHestonTest, RefusesContinuousMonitoringOnHestonRows) {
  McRow row = heston_row(lewis(100, false), 10);
  row.type = BarrierType::down_out, row.barrier = 80;
  MonteCarloOptions options;
  options.paths = 100;
  options.monitoring = BarrierMonitoring::continuous;
  EXPECT_THROW(price({McRow{}, row}, options), InvalidInput);
  options.monitoring = BarrierMonitoring::discrete;
  EXPECT_NO_THROW(price({McRow{}, row}, options));
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MonteCarloHestonTest);

}  // namespace
}  // namespace gpukit::finance
