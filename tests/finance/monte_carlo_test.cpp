// Monte Carlo pricing on the CPU: against the closed forms (Black-Scholes, Reiner-Rubinstein,
// Broadie-Glasserman-Kou), in-out parity, 1/sqrt(N) error, determinism, variance reduction,
// Greeks, breached barriers and input validation.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/european_book.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance {
namespace {

using testing::barrier_rows;
using testing::McBook;
using testing::McRow;
using testing::random_european_rows;

MonteCarloBookResult price(const std::vector<McRow>& rows, MonteCarloOptions options,
                           int threads = 0) {
  const McBook book(rows);
  return price_monte_carlo_book(Context::cpu(threads), book.view(), options);
}

double analytic(const McRow& r, double barrier) {
  return barrier_price_analytic(r.type, r.put, r.spot, r.strike, barrier, r.maturity, r.rate,
                                r.dividend, r.volatility);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(MonteCarlo, EuropeanBookWithinFourStandardErrorsOfBlackScholes) {
  for (Precision precision : {Precision::float64, Precision::float32}) {
    const std::vector<McRow> rows =
        random_european_rows(precision == Precision::float64 ? 300 : 100, 7);
    const McBook book(rows);
    MonteCarloOptions options;
    options.paths = 4000;  // not a multiple of the tile or quad
    options.precision = precision;
    const MonteCarloBookResult mc = price_monte_carlo_book(Context::cpu(), book.view(), options);
    const MonteCarloBookView v = book.view();
    const EuropeanBookView bs_view{v.count,    v.is_put, v.spot,       v.strike,
                                   v.maturity, v.rate,   v.volatility, v.dividend};
    const EuropeanBookResult bs =
        price_european_book(Context::cpu(), bs_view, Precision::float64, false);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_LE(std::abs(mc.price[i] - bs.price[i]), 4 * mc.std_error[i] + 1e-4 * bs.price[i])
          << "option " << i << " mc " << mc.price[i] << " +- " << mc.std_error[i] << " bs "
          << bs.price[i];
      EXPECT_GT(mc.std_error[i], 0);
      EXPECT_NEAR(mc.ci_high[i] - mc.price[i], 1.96 * mc.std_error[i], 1e-12 * mc.ci_high[i]);
      EXPECT_NEAR(mc.price[i] - mc.ci_low[i], 1.96 * mc.std_error[i], 1e-12 * mc.ci_high[i]);
      EXPECT_EQ(mc.paths[i], 4000);
    }
  }
}

TEST(MonteCarlo, ContinuousBarrierWithinFourStandardErrorsOfTheAnalyticPrice) {
  // The bridge probability is exact for GBM between dates, so any step count is unbiased.
  const std::vector<McRow> rows = barrier_rows(8);
  MonteCarloOptions options;
  options.paths = 1 << 15;
  options.monitoring = BarrierMonitoring::continuous;
  const MonteCarloBookResult mc = price(rows, options);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double reference = analytic(rows[i], rows[i].barrier);
    EXPECT_LE(std::abs(mc.price[i] - reference), 4 * mc.std_error[i] + 1e-6)
        << "row " << i << " mc " << mc.price[i] << " +- " << mc.std_error[i] << " analytic "
        << reference;
  }
}

TEST(MonteCarlo, DiscreteBarrierWithinFourStandardErrorsOfTheShiftedAnalyticPrice) {
  const std::vector<McRow> rows = barrier_rows(50);
  MonteCarloOptions options;
  options.paths = 1 << 14;
  const MonteCarloBookResult mc = price(rows, options);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const McRow& r = rows[i];
    const double shifted =
        discrete_barrier_shift(r.type, r.barrier, r.volatility, r.maturity, r.steps);
    const double reference = analytic(r, shifted);
    // BGK is accurate to o(1/sqrt(m)); at m = 50 its error is well under 0.5% of the vanilla.
    const double vanilla =
        barrier_price_analytic(BarrierType::none, r.put, r.spot, r.strike, r.barrier, r.maturity,
                               r.rate, r.dividend, r.volatility);
    EXPECT_LE(std::abs(mc.price[i] - reference), 4 * mc.std_error[i] + 5e-3 * vanilla)
        << "row " << i << " mc " << mc.price[i] << " +- " << mc.std_error[i] << " BGK "
        << reference;
    // And the discrete price lies on the right side of the continuous one.
    const double continuous = analytic(r, r.barrier);
    const bool out = r.type == BarrierType::down_out || r.type == BarrierType::up_out;
    EXPECT_TRUE(out ? mc.price[i] + 4 * mc.std_error[i] >= continuous
                    : mc.price[i] - 4 * mc.std_error[i] <= continuous)
        << "row " << i;
  }
}

TEST(MonteCarlo, KnockInPlusKnockOutIsTheVanillaForTheSameNumbers) {
  for (BarrierMonitoring monitoring :
       {BarrierMonitoring::discrete, BarrierMonitoring::continuous}) {
    for (bool down : {true, false}) {
      McRow vanilla;
      vanilla.steps = 12;
      McRow in = vanilla, out = vanilla;
      in.type = down ? BarrierType::down_in : BarrierType::up_in;
      out.type = down ? BarrierType::down_out : BarrierType::up_out;
      in.barrier = out.barrier = down ? 92.0 : 110.0;
      MonteCarloOptions options;
      options.paths = 10000;
      options.monitoring = monitoring;
      // One book per row: each is option 0, so all three see the same random numbers.
      const double v = price({vanilla}, options).price[0];
      const double i = price({in}, options).price[0];
      const double o = price({out}, options).price[0];
      EXPECT_GT(i, 0.02);
      EXPECT_GT(o, 0.02);
      EXPECT_NEAR(i + o, v, 1e-12 * v);
    }
  }
}

TEST(MonteCarlo, StandardErrorShrinksAsOneOverTheSquareRootOfPaths) {
  McRow row;
  row.type = BarrierType::down_out, row.barrier = 90, row.steps = 16;
  MonteCarloOptions options;
  options.paths = 1 << 12;
  const double small = price({row}, options).std_error[0];
  options.paths = 1 << 16;
  const double large = price({row}, options).std_error[0];
  EXPECT_NEAR(small / large, 4.0, 0.2);
}

TEST(MonteCarlo, BitwiseIdenticalAcrossThreadCountsAndRuns) {
  std::vector<McRow> rows = barrier_rows(7);
  for (const McRow& r : random_european_rows(5, 3)) rows.push_back(r);
  MonteCarloOptions options;
  options.paths = 5000;
  options.antithetic = true;
  options.control_variate = true;
  options.monitoring = BarrierMonitoring::continuous;
  const MonteCarloBookResult one = price(rows, options, 1);
  for (int threads : {1, 2, 3}) {
    const MonteCarloBookResult other = price(rows, options, threads);
    EXPECT_TRUE(same_bits(one.price, other.price)) << threads << " threads";
    EXPECT_TRUE(same_bits(one.std_error, other.std_error)) << threads << " threads";
  }
  options.seed = 2009;
  EXPECT_FALSE(same_bits(one.price, price(rows, options, 2).price)) << "the seed must matter";
}

TEST(MonteCarlo, ABookPricedInPartsGivesTheBitsOfTheWhole) {
  std::vector<McRow> rows = random_european_rows(4, 21);
  for (const McRow& r : barrier_rows(5)) rows.push_back(r);
  const McBook book(rows);
  MonteCarloOptions options;
  options.paths = 3000;
  options.greeks = true;
  const MonteCarloBookResult whole = price_monte_carlo_book(Context::cpu(), book.view(), options);
  std::vector<double> price, std_error, delta;
  for (std::int64_t first = 0; first < book.view().count; first += 7) {
    MonteCarloBookView part = book.view();
    part.count = std::min<std::int64_t>(7, part.count - first);
    part.is_put += first, part.spot += first, part.strike += first, part.maturity += first;
    part.rate.values += first, part.volatility.values += first, part.dividend.values += first;
    part.barrier_type += first, part.barrier += first, part.steps += first;
    options.first_option_index = static_cast<std::uint32_t>(first);
    const MonteCarloBookResult r = price_monte_carlo_book(Context::cpu(), part, options);
    price.insert(price.end(), r.price.begin(), r.price.end());
    std_error.insert(std_error.end(), r.std_error.begin(), r.std_error.end());
    delta.insert(delta.end(), r.delta.begin(), r.delta.end());
  }
  EXPECT_TRUE(same_bits(whole.price, price));
  EXPECT_TRUE(same_bits(whole.std_error, std_error));
  EXPECT_TRUE(same_bits(whole.delta, delta));
  // Another first index gives other numbers.
  options.first_option_index = 1;
  EXPECT_FALSE(
      same_bits(whole.price, price_monte_carlo_book(Context::cpu(), book.view(), options).price));
  // The last index, 0xFFFFFFFF, is reserved.
  options.first_option_index = 0xFFFFFFFFu - 3;
  MonteCarloBookView four = book.view();
  four.count = 4;
  EXPECT_THROW(price_monte_carlo_book(Context::cpu(), four, options), InvalidInput);
  four.count = 3;
  EXPECT_NO_THROW(price_monte_carlo_book(Context::cpu(), four, options));
}

TEST(MonteCarlo, AntitheticAndControlVariateReduceVariance) {
  McRow call;
  call.strike = 90;
  McRow put;
  put.put = true;
  MonteCarloOptions options;
  options.paths = 1 << 14;
  options.variance_reduction_factors = true;
  const MonteCarloBookResult plain = price({call, put}, options);
  options.antithetic = true;
  const MonteCarloBookResult anti = price({call, put}, options);
  options.antithetic = false;
  options.control_variate = true;
  const MonteCarloBookResult control = price({call, put}, options);
  options.antithetic = true;
  const MonteCarloBookResult both = price({call, put}, options);
  for (std::size_t i = 0; i < 2; ++i) {
    const double bs = barrier_price_analytic(BarrierType::none, i == 1, 100, i == 0 ? 90 : 100, 0,
                                             1, 0.05, 0.02, 0.25);
    EXPECT_GT(anti.vrf_antithetic[i], 1.3) << i;
    EXPECT_GT(control.vrf_control[i], i == 0 ? 4.0 : 1.3) << i;
    EXPECT_GT(both.vrf_antithetic[i], 1.3) << i;
    // The reported factor is the ratio of the squared standard errors at equal paths.
    EXPECT_NEAR(
        plain.std_error[i] * plain.std_error[i] / (control.std_error[i] * control.std_error[i]),
        control.vrf_control[i], 1e-9 * control.vrf_control[i]);
    EXPECT_LT(anti.std_error[i], plain.std_error[i]);
    EXPECT_LT(both.std_error[i], control.std_error[i]);
    for (const MonteCarloBookResult* r : {&plain, &anti, &control, &both}) {
      EXPECT_LE(std::abs(r->price[i] - bs), 4 * r->std_error[i]) << i;
    }
  }
}

TEST(MonteCarlo, GreeksMatchBlackScholes) {
  std::vector<McRow> rows = random_european_rows(20, 11);
  for (McRow& r : rows) {  // where the CRN differences' spread suits a fixed tolerance
    r.maturity = std::min(r.maturity, 2.0);
    r.volatility = std::min(r.volatility, 0.4);
  }
  const McBook book(rows);
  MonteCarloOptions options;
  options.paths = 1 << 16;
  options.greeks = true;
  const MonteCarloBookResult mc = price_monte_carlo_book(Context::cpu(), book.view(), options);
  const MonteCarloBookView v = book.view();
  const EuropeanBookView bs_view{v.count,    v.is_put, v.spot,       v.strike,
                                 v.maturity, v.rate,   v.volatility, v.dividend};
  const EuropeanBookResult bs =
      price_european_book(Context::cpu(), bs_view, Precision::float64, true);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // Tolerances about 4 standard errors of the CRN differences at this path count.
    EXPECT_NEAR(mc.delta[i], bs.delta[i], 0.03) << i;
    EXPECT_NEAR(mc.vega[i], bs.vega[i], 0.05 * bs.vega[i] + 0.01 * rows[i].spot) << i;
  }
}

TEST(MonteCarlo, BarrierBreachedAtTheStart) {
  for (BarrierMonitoring monitoring :
       {BarrierMonitoring::discrete, BarrierMonitoring::continuous}) {
    for (bool down : {true, false}) {
      McRow vanilla;
      vanilla.steps = 5;
      McRow in = vanilla, out = vanilla;
      in.type = down ? BarrierType::down_in : BarrierType::up_in;
      out.type = down ? BarrierType::down_out : BarrierType::up_out;
      in.barrier = out.barrier = 100.0;  // the spot: down S <= B and up S >= B both hold
      MonteCarloOptions options;
      options.paths = 3000;
      options.monitoring = monitoring;
      const MonteCarloBookResult v = price({vanilla}, options);
      const MonteCarloBookResult i = price({in}, options);
      const MonteCarloBookResult o = price({out}, options);
      EXPECT_EQ(o.price[0], 0.0);
      EXPECT_EQ(o.std_error[0], 0.0);
      EXPECT_EQ(i.price[0], v.price[0]);
      EXPECT_EQ(i.std_error[0], v.std_error[0]);
      EXPECT_EQ(barrier_price_analytic(out.type, false, 100, 100, out.barrier, 1, 0.05, 0.02, 0.25),
                0.0);
    }
  }
}

TEST(MonteCarlo, AnalyticBarrierFormulasAreConsistent) {
  // In + out = vanilla, and a far barrier leaves the vanilla.
  for (bool put : {false, true}) {
    for (double strike : {80.0, 100.0, 125.0}) {
      const double vanilla =
          barrier_price_analytic(BarrierType::none, put, 100, strike, 0, 1.5, 0.03, 0.01, 0.3);
      for (double barrier : {85.0, 95.0}) {
        const double in = barrier_price_analytic(BarrierType::down_in, put, 100, strike, barrier,
                                                 1.5, 0.03, 0.01, 0.3);
        const double out = barrier_price_analytic(BarrierType::down_out, put, 100, strike, barrier,
                                                  1.5, 0.03, 0.01, 0.3);
        EXPECT_NEAR(in + out, vanilla, 1e-10);
      }
      for (double barrier : {105.0, 130.0}) {
        const double in = barrier_price_analytic(BarrierType::up_in, put, 100, strike, barrier, 1.5,
                                                 0.03, 0.01, 0.3);
        const double out = barrier_price_analytic(BarrierType::up_out, put, 100, strike, barrier,
                                                  1.5, 0.03, 0.01, 0.3);
        EXPECT_NEAR(in + out, vanilla, 1e-10);
      }
      EXPECT_NEAR(barrier_price_analytic(BarrierType::down_out, put, 100, strike, 1e-3, 1.5, 0.03,
                                         0.01, 0.3),
                  vanilla, 1e-10);
    }
  }
}

TEST(MonteCarlo, RejectsBadInputs) {
  McRow row;
  MonteCarloOptions options;
  options.paths = 1;
  EXPECT_THROW(price({row}, options), InvalidInput);
  options.paths = 1001;
  options.antithetic = true;
  EXPECT_THROW(price({row}, options), InvalidInput);
  options.antithetic = false;
  row.type = BarrierType::up_out;
  row.barrier = 0;
  EXPECT_THROW(price({row}, options), InvalidInput);
  row.barrier = 120;
  row.steps = 0;
  EXPECT_THROW(price({row}, options), InvalidInput);
  // An empty book is fine.
  EXPECT_TRUE(price({}, options).price.empty());
}

TEST(MonteCarlo, DegenerateInputsGiveTheDeterministicValue) {
  McRow row;
  row.volatility = 0;
  row.strike = 90;
  MonteCarloOptions options;
  options.paths = 100;
  const MonteCarloBookResult r = price({row}, options);
  const double expected = (100 * std::exp((0.05 - 0.02) * 1) - 90) * std::exp(-0.05);
  EXPECT_NEAR(r.price[0], expected, 1e-10 * expected);
  EXPECT_EQ(r.std_error[0], 0.0);
  row.maturity = 0;
  EXPECT_NEAR(price({row}, options).price[0], 10.0, 1e-12);
}

}  // namespace
}  // namespace gpukit::finance
