// Monte Carlo Greeks (issue 33), each scenario written once and run on the CPU and on CUDA (`Cpu/`
// and `Cuda/` instances; the CUDA ones skip without a GPU): the pathwise delta and vega and the
// gamma of pathwise deltas of European and geometric Asian rows against their closed forms
// (Black-Scholes; Kemna and Vorst), within 4 of the estimators' standard errors, which are
// computed here exactly from the lognormal law of the sample; every pathwise kind against the
// central difference of prices on the same numbers (its limit); heston rows against the
// semi-analytic oracle; barrier and Sobol rows' central differences against the analytic prices'.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "heston_oracle.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::HestonTerms;
using testing::McBook;
using testing::McRow;
using testing::same_bits;
using LD = long double;

// Means over seeds of each Greek and the standard errors of those means (the seeds' sample
// standard deviation / sqrt(seeds)): for the estimators whose standard error the engine does not
// report (central differences of prices).
struct SeedStatistics {
  std::vector<double> mean[3], error[3];  // delta, gamma, vega
};

// The engine's central differences of a price function price(spot, sigma), with its bumps (h = 1%
// of the spot, h_v = 1% of sigma): delta, gamma = (P(S+h) - 2 P(S) + P(S-h)) / h^2, vega.
template <class Price>
std::array<double, 3> central_differences(const Price& price, double spot, double sigma) {
  const LD h = 0.01L * spot, sigma_up = sigma * 1.01, sigma_down = sigma * 0.99;
  const LD up = price(spot + h, sigma), down = price(spot - h, sigma);
  return {double((up - down) / (2 * h)), double((up - 2 * LD(price(spot, sigma)) + down) / (h * h)),
          double((price(spot, sigma_up) - price(spot, sigma_down)) / (sigma_up - sigma_down))};
}

class MonteCarloGreeksTest : public testing::MonteCarloBookTest {
 protected:
  SeedStatistics greeks_over_seeds(const std::vector<McRow>& rows, MonteCarloOptions options,
                                   int seeds) const {
    std::vector<std::vector<double>> values[3];
    options.greeks = true;
    for (int seed = 1; seed <= seeds; ++seed) {
      options.seed = static_cast<std::uint64_t>(seed);
      const MonteCarloBookResult r = price(rows, options);
      values[0].push_back(r.delta), values[1].push_back(r.gamma), values[2].push_back(r.vega);
    }
    SeedStatistics s;
    for (int g = 0; g < 3; ++g) {
      for (std::size_t i = 0; i < rows.size(); ++i) {
        double sum = 0, sum2 = 0;
        for (const std::vector<double>& v : values[g]) sum += v[i];
        const double mean = sum / seeds;
        for (const std::vector<double>& v : values[g]) sum2 += (v[i] - mean) * (v[i] - mean);
        s.mean[g].push_back(mean);
        s.error[g].push_back(std::sqrt(sum2 / (seeds - 1) / seeds));
      }
    }
    return s;
  }

  // The Greeks of `rows` over 8 seeds of 2^14 paths against the central differences of
  // price(row, spot, sigma), with no allowance beyond 5 standard errors.
  template <class Price>
  void expect_central_differences_over_seeds(const std::vector<McRow>& rows,
                                             MonteCarloOptions options, const Price& price) const {
    options.paths = 1 << 14;
    const SeedStatistics s = greeks_over_seeds(rows, options, 8);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const McRow& r = rows[i];
      const auto of_row = [&](LD spot, LD sigma) { return price(r, spot, sigma); };
      expect_near_over_seeds(s, i, central_differences(of_row, r.spot, r.volatility), {0, 0, 0});
    }
  }

  // Row i's mean Greeks over the seeds within 5 standard errors of `exact` plus `allowance`
  // (Student's t of 7 degrees of freedom, 8 seeds, exceeds 5 with probability 0.0016).
  static void expect_near_over_seeds(const SeedStatistics& s, std::size_t i,
                                     const std::array<double, 3>& exact,
                                     const std::array<double, 3>& allowance) {
    for (int g = 0; g < 3; ++g) {
      EXPECT_LE(std::abs(s.mean[g][i] - exact[g]), 5 * s.error[g][i] + allowance[g])
          << "row " << i << " greek " << g << " (delta, gamma, vega): " << s.mean[g][i] << " +- "
          << s.error[g][i] << ", the oracle's " << exact[g];
    }
  }
};

LD normal_cdf(LD x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); }
LD normal_pdf(LD x) { return std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi_v<LD>); }

// An option on U = S X with ln X normal: mean m, variance V sigma^2 (X = exp(m + sigma W), W ~
// N(0, V)). A European row: m = (r - q - sigma^2/2) T, V = T; a geometric average of n fixings
// (Kemna and Vorst): m = (r - q - sigma^2/2) T (n+1)/(2n), V = T (n+1)(2n+1)/(6 n^2), and the
// mean fixing time t = T (n+1)/(2n) (T for a European row), with dm/dsigma = -sigma t.
struct Lognormal {
  LD spot, strike, rate, maturity, sigma, m, variance_w, time;
  bool put;

  LD s() const { return sigma * std::sqrt(variance_w); }
  LD d1(LD at_spot) const { return (std::log(at_spot / strike) + m + s() * s()) / s(); }
  LD forward_factor() const { return std::exp(m + s() * s() / 2); }  // E[X]
  LD discount() const { return std::exp(-rate * maturity); }
  LD sign() const { return put ? -1 : 1; }

  LD price(LD at_spot) const {
    const LD d = d1(at_spot), e = d - s();
    return discount() * sign() *
           (at_spot * forward_factor() * normal_cdf(sign() * d) - strike * normal_cdf(sign() * e));
  }
  LD delta(LD at_spot) const {
    return discount() * sign() * forward_factor() * normal_cdf(sign() * d1(at_spot));
  }
  LD gamma() const { return discount() * forward_factor() * normal_pdf(d1(spot)) / (spot * s()); }
  // The engine's gamma: the central difference of deltas at spot +- h, on exact samples.
  LD gamma_of_deltas(LD h) const { return (delta(spot + h) - delta(spot - h)) / (2 * h); }

  // Standard deviations of one path's samples (undiscounted payoffs times e^{-rT}), exactly:
  // E[X^2 1{X in A}] and E[X^2 (W - sigma t)^2 1{X in A}] through the change of measure by
  // X^2 / E[X^2], under which W is N(2 sigma V, V).
  LD second_moment_factor() const { return std::exp(2 * m + 2 * s() * s()); }  // E[X^2]
  // P'(W > w) under the tilted law, w the W of X = k.
  LD tilted_above(LD k) const {
    const LD w = (std::log(k) - m) / sigma;
    return 1 - normal_cdf((w - 2 * sigma * variance_w) / std::sqrt(variance_w));
  }
  LD delta_sd() const {
    const LD k = strike / spot;
    const LD in_money = put ? 1 - tilted_above(k) : tilted_above(k);
    const LD second = discount() * discount() * second_moment_factor() * in_money;
    const LD mean = delta(spot);
    return std::sqrt(second - mean * mean);
  }
  LD gamma_sd(LD h) const {
    // Paths with X between K / (S + h) and K / (S - h): the two deltas differ by X there.
    const LD between = tilted_above(strike / (spot + h)) - tilted_above(strike / (spot - h));
    const LD second = discount() * discount() * second_moment_factor() * between / (4 * h * h);
    const LD mean = gamma_of_deltas(h);
    return std::sqrt(second - mean * mean);
  }
  LD vega_sd(LD vega) const {
    // E[(Y - c)^2 1{Y beyond w}] for Y ~ N(mu, V): Y = mu + sqrt(V) Z, d = mu - c, u = (w - mu) /
    // sqrt(V): above: d^2 (1 - N(u)) + 2 d sqrt(V) phi(u) + V (u phi(u) + 1 - N(u)); below:
    // d^2 N(u) - 2 d sqrt(V) phi(u) + V (N(u) - u phi(u)).
    const LD mu = 2 * sigma * variance_w, c = sigma * time, d = mu - c;
    const LD root = std::sqrt(variance_w);
    const LD u = ((std::log(strike / spot) - m) / sigma - mu) / root;
    const LD tail = 1 - normal_cdf(u), head = normal_cdf(u), density = normal_pdf(u);
    const LD part = put ? d * d * head - 2 * d * root * density + variance_w * (head - u * density)
                        : d * d * tail + 2 * d * root * density + variance_w * (u * density + tail);
    const LD second = discount() * discount() * spot * spot * second_moment_factor() * part;
    return std::sqrt(second - vega * vega);
  }
};

Lognormal lognormal_of(const McRow& r) {
  const LD sigma = r.volatility, T = r.maturity;
  const LD n = r.steps;
  const bool geometric = r.average == AverageType::geometric;
  const LD time = geometric ? T * (n + 1) / (2 * n) : T;
  const LD variance_w = geometric ? T * (n + 1) * (2 * n + 1) / (6 * n * n) : T;
  return {r.spot,     r.strike, r.rate,
          T,          sigma,    (LD(r.rate) - r.dividend - sigma * sigma / 2) * time,
          variance_w, time,     r.put};
}

// The closed form's vega: its price differenced in long double over sigma (m moves with it).
LD closed_form_vega(const McRow& r) {
  const LD h = 1e-6L;
  McRow up = r, down = r;
  up.volatility = double(r.volatility + h), down.volatility = double(r.volatility - h);
  const LD step = LD(up.volatility) - LD(down.volatility);
  return (lognormal_of(up).price(r.spot) - lognormal_of(down).price(r.spot)) / step;
}

std::vector<McRow> lognormal_rows(AverageType average, std::uint32_t steps) {
  std::vector<McRow> rows;
  int k = 0;
  for (const bool put : {false, true}) {
    for (const double strike : {85.0, 100.0, 120.0}) {
      McRow r;
      r.put = put, r.strike = strike, r.average = average, r.steps = steps + (k % 2);
      r.maturity = 0.5 + 0.5 * (k % 3), r.volatility = 0.15 + 0.1 * (k % 2);
      r.rate = 0.01 * (k % 4), r.dividend = 0.005 * (k % 3);
      rows.push_back(r);
      ++k;
    }
  }
  return rows;
}

// Pathwise delta and vega and the gamma of deltas against the closed form, within 4 of the
// estimators' exact standard errors (the estimator of gamma is unbiased for the closed form's
// central difference of deltas at h = 1% of the spot, whose O(h^2) bias is the method's).
void expect_lognormal_greeks(const MonteCarloBookResult& mc, const std::vector<McRow>& rows,
                             std::int64_t paths, const std::string& what) {
  ASSERT_EQ(mc.delta.size(), rows.size());
  ASSERT_EQ(mc.gamma.size(), rows.size());
  ASSERT_EQ(mc.vega.size(), rows.size());
  const LD root_n = std::sqrt(LD(paths));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Lognormal x = lognormal_of(rows[i]);
    const LD h = 0.01L * rows[i].spot;
    const LD vega = closed_form_vega(rows[i]);
    const std::string row = what + " row " + std::to_string(i);
    EXPECT_LE(std::abs(mc.delta[i] - x.delta(x.spot)), 4 * x.delta_sd() / root_n)
        << row << ": delta " << mc.delta[i] << " exact " << double(x.delta(x.spot));
    EXPECT_LE(std::abs(mc.gamma[i] - x.gamma_of_deltas(h)), 4 * x.gamma_sd(h) / root_n)
        << row << ": gamma " << mc.gamma[i] << " exact " << double(x.gamma_of_deltas(h));
    EXPECT_LE(std::abs(mc.vega[i] - vega), 4 * x.vega_sd(vega) / root_n)
        << row << ": vega " << mc.vega[i] << " exact " << double(vega);
  }
}

TEST(MonteCarloGreeksOracle, TheLognormalFormsAreBlackScholesAndKemnaVorst) {
  // The European form is Black-Scholes (barrier_price_analytic without a barrier), its delta,
  // gamma and vega the textbook ones; its standard deviations are those of the samples.
  McRow r;
  r.strike = 95, r.maturity = 2, r.rate = 0.03, r.dividend = 0.01, r.volatility = 0.3;
  for (const bool put : {false, true}) {
    r.put = put;
    const Lognormal x = lognormal_of(r);
    EXPECT_NEAR(double(x.price(r.spot)),
                barrier_price_analytic(BarrierType::none, put, r.spot, r.strike, 0, r.maturity,
                                       r.rate, r.dividend, r.volatility),
                1e-12 * r.spot);
    const LD d1 =
        (std::log(LD(r.spot) / r.strike) + (0.03L - 0.01L + 0.045L) * 2) / (0.3L * std::sqrt(2.0L));
    const LD carry = std::exp(-0.01L * 2);
    EXPECT_NEAR(double(x.delta(r.spot)),
                double(put ? carry * (normal_cdf(d1) - 1) : carry * normal_cdf(d1)), 1e-15);
    EXPECT_NEAR(double(x.gamma()), double(carry * normal_pdf(d1) / (100 * 0.3L * std::sqrt(2.0L))),
                1e-15);
    EXPECT_NEAR(double(closed_form_vega(r)), double(100 * carry * normal_pdf(d1) * std::sqrt(2.0L)),
                1e-6);
  }
  // The standard deviations against a quadrature of the samples over W (the midpoint rule on
  // [-12, 12] standard deviations: its steps cut the indicators to about 1e-5), on a geometric
  // average whose m, V and t all differ.
  for (const bool put : {false, true}) {
    McRow g = r;
    g.put = put, g.average = AverageType::geometric, g.steps = 5;
    const Lognormal x = lognormal_of(g);
    const LD h = 1, vega = closed_form_vega(g);
    LD delta2 = 0, gamma2 = 0, vega2 = 0;
    const int points = 400000;
    const LD root = std::sqrt(x.variance_w), dz = 24.0L / points;
    for (int j = 0; j < points; ++j) {
      const LD z = -12 + (j + 0.5L) * dz, w = root * z;
      const LD unit = std::exp(x.m + x.sigma * w);  // X
      const auto sample_delta = [&](LD spot) {
        return (put ? spot * unit < x.strike : spot * unit > x.strike) ? x.sign() * unit : 0;
      };
      const LD weight = normal_pdf(z) * dz * x.discount() * x.discount();
      delta2 += weight * sample_delta(x.spot) * sample_delta(x.spot);
      const LD g_sample = (sample_delta(x.spot + h) - sample_delta(x.spot - h)) / (2 * h);
      gamma2 += weight * g_sample * g_sample;
      const LD v_sample = sample_delta(x.spot) * x.spot * (w - x.sigma * x.time);
      vega2 += weight * v_sample * v_sample;
    }
    const auto sd = [](LD second, LD mean) { return std::sqrt(second - mean * mean); };
    EXPECT_NEAR(double(x.delta_sd()), double(sd(delta2, x.delta(x.spot))), 1e-5);
    EXPECT_NEAR(double(x.gamma_sd(h)), double(sd(gamma2, x.gamma_of_deltas(h))), 1e-4);
    EXPECT_NEAR(double(x.vega_sd(vega)), double(sd(vega2, vega)), 1e-4);
    // The central difference of deltas tends to gamma.
    EXPECT_NEAR(double(x.gamma_of_deltas(1e-4L)), double(x.gamma()), 1e-10);
  }
  // Kemna and Vorst's geometric average on one fixing is the European option; on many it tends
  // to the continuous average (sigma / sqrt 3): its vega is smaller than the European's.
  r.average = AverageType::geometric;
  r.steps = 1;
  McRow european = r;
  european.average = AverageType::none;
  EXPECT_NEAR(double(closed_form_vega(r)), double(closed_form_vega(european)), 1e-6);
  r.steps = 50;
  EXPECT_LT(closed_form_vega(r), 0.75L * closed_form_vega(european));
}

TEST_P(MonteCarloGreeksTest, PathwiseGreeksOfEuropeanRowsMatchBlackScholes) {
  for (const std::uint32_t steps : {1u, 3u}) {  // one step and several (two path kinds)
    const std::vector<McRow> rows = lognormal_rows(AverageType::none, steps);
    for (const Precision precision : {Precision::float64, Precision::float32}) {
      MonteCarloOptions options;
      options.paths = (1 << 16) + 5;  // a partial tile
      options.greeks = true;
      options.precision = precision;
      expect_lognormal_greeks(
          price(rows, options), rows, options.paths,
          "steps " + std::to_string(steps) + " precision " + std::to_string(int(precision)));
    }
  }
}

TEST_P(MonteCarloGreeksTest, PathwiseGreeksOfGeometricAsianRowsMatchKemnaVorst) {
  for (const std::uint32_t steps : {1u, 12u}) {
    const std::vector<McRow> rows = lognormal_rows(AverageType::geometric, steps);
    for (const Precision precision : {Precision::float64, Precision::float32}) {
      MonteCarloOptions options;
      options.paths = 1 << 16;
      options.greeks = true;
      options.precision = precision;
      expect_lognormal_greeks(price(rows, options), rows, options.paths,
                              "geometric, steps " + std::to_string(steps) + " precision " +
                                  std::to_string(int(precision)));
    }
  }
}

// The pathwise derivative is the limit of the central difference of prices on the same random
// numbers (common random numbers: the engine's prices at spot +- h, or at sigma +- h, each priced
// here as a book of its own, without Greeks). At h = 1e-5 of the spot or of sigma the two differ
// by the O(h^2) curvature and by the paths whose payoff crosses the strike between the bumps,
// a share O(h) of the paths: far below the 1e-3 allowed here, which a sample off by any term of
// its formula (a missing drift, the wrong fixing time, a factor of S) exceeds many times over.
TEST_P(MonteCarloGreeksTest, PathwiseGreeksAreTheLimitOfDifferencesOnTheSameNumbers) {
  std::vector<McRow> rows;
  for (const AverageType average :
       {AverageType::none, AverageType::arithmetic, AverageType::geometric}) {
    for (const McRow& r : lognormal_rows(average, average == AverageType::none ? 4 : 9)) {
      rows.push_back(r);
    }
  }
  std::vector<McRow> heston;
  for (const double strike : {90.0, 105.0}) {
    for (const AverageType average : {AverageType::none, AverageType::arithmetic}) {
      McRow r;
      r.put = strike < 100, r.strike = strike, r.average = average, r.steps = 8;
      r.model = AssetModel::heston;
      r.v0 = 0.05, r.kappa = 1.5, r.theta = 0.04, r.sigma_v = 0.4, r.rho = -0.6;
      heston.push_back(r);
    }
  }
  MonteCarloOptions options;
  options.paths = 20000;
  const double h = 1e-5;
  const auto bumped = [&](std::vector<McRow> book, double spot_factor, double vol_factor) {
    for (McRow& r : book) r.spot *= spot_factor, r.volatility *= vol_factor;
    return price(book, options).price;
  };
  for (const std::vector<McRow>* book : {&rows, &heston}) {
    options.greeks = true;
    const MonteCarloBookResult mc = price(*book, options);
    options.greeks = false;
    const std::vector<double> up = bumped(*book, 1 + h, 1), down = bumped(*book, 1 - h, 1);
    const bool black_scholes = book == &rows;
    std::vector<double> vol_up, vol_down;
    if (black_scholes) vol_up = bumped(*book, 1, 1 + h), vol_down = bumped(*book, 1, 1 - h);
    for (std::size_t i = 0; i < book->size(); ++i) {
      const McRow& r = (*book)[i];
      const double delta = (up[i] - down[i]) / (2 * h * r.spot);
      EXPECT_NEAR(mc.delta[i], delta, 1e-3 * std::abs(delta) + 1e-6)
          << (black_scholes ? "black-scholes" : "heston") << " row " << i;
      if (!black_scholes) continue;
      const double vega = (vol_up[i] - vol_down[i]) / (2 * h * r.volatility);
      EXPECT_NEAR(mc.vega[i], vega, 1e-3 * std::abs(vega) + 1e-6 * r.spot) << "row " << i;
    }
  }
}

// Heston European rows: delta, gamma and vega (dP/d sqrt(v0)) against differences of the
// semi-analytic price (heston_oracle.hpp) with the engine's bumps: delta's derivative at S0
// (a central difference of step 0.01), gamma the central difference of those at S0 +- 1%, vega
// (P(sqrt(v0) + h_v) - P(sqrt(v0) - h_v)) / (2 h_v), h_v = 1% of sqrt(v0). Over 8 seeds of 2^13
// paths: within 5 standard errors of the mean over the seeds (Student's t of 7 degrees of
// freedom exceeds 5 with probability 0.0016) plus the QE scheme's bias at 16 steps a year. The
// bias, measured for these mild parameters over 4 seeds of 2^20 paths (CPU, double): the mean
// minus the oracle was +0.00022 to +0.00038 for delta (standard errors 0.0001 to 0.0002), -5e-5
// to -1e-5 for gamma (4e-5 to 1e-4), -0.031 to -0.001 for vega (0.011 to 0.015); the allowance
// is the largest of each plus 3 of its standard errors: 0.001, 0.00025, 0.08.
TEST_P(MonteCarloGreeksTest, HestonGreeksMatchTheSemiAnalyticPrice) {
  std::vector<McRow> rows;
  std::vector<HestonTerms> terms;
  for (const auto& [strike, put] :
       {std::pair{90.0, false}, std::pair{110.0, false}, std::pair{100.0, true}}) {
    HestonTerms h;
    h.put = put, h.spot = 100, h.strike = strike, h.maturity = 1, h.rate = 0.02;
    h.dividend = 0.01, h.v0 = 0.04, h.kappa = 2, h.theta = 0.04, h.sigma_v = 0.3, h.rho = -0.7;
    terms.push_back(h);
    McRow r;
    r.put = put, r.strike = strike, r.rate = 0.02, r.dividend = 0.01, r.steps = 16;
    r.model = AssetModel::heston;
    r.v0 = 0.04, r.kappa = 2, r.theta = 0.04, r.sigma_v = 0.3, r.rho = -0.7;
    rows.push_back(r);
  }
  MonteCarloOptions options;
  options.paths = 1 << 13;
  const SeedStatistics s = greeks_over_seeds(rows, options, 8);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto price = [&](LD spot, LD root_v0) {
      HestonTerms h = terms[i];
      h.spot = spot, h.v0 = root_v0 * root_v0;
      return testing::heston_price(h, 1e-14L);
    };
    const LD spot = 100, root = 0.2L, step = 0.01L, h = 1, h_v = 0.002L;
    const auto delta = [&](LD at) {
      return (price(at + step, root) - price(at - step, root)) / (2 * step);
    };
    const std::array<double, 3> exact = {
        double(delta(spot)), double((delta(spot + h) - delta(spot - h)) / 2),
        double((price(spot, root + h_v) - price(spot, root - h_v)) / (2 * h_v))};
    expect_near_over_seeds(s, i, exact, {0.001, 0.00025, 0.08});  // the QE bias
  }
}

// Barrier rows keep central differences of prices: a continuously monitored down-out call and
// up-out put against the analytic barrier price's differences with the same bumps (continuous
// monitoring is exact through the Brownian bridge), within 5 standard errors of the mean over 8
// seeds (as above).
TEST_P(MonteCarloGreeksTest, BarrierGreeksAreTheAnalyticPricesDifferences) {
  std::vector<McRow> rows(2);
  rows[0].type = BarrierType::down_out, rows[0].barrier = 85, rows[0].steps = 8;
  rows[1].put = true, rows[1].type = BarrierType::up_out, rows[1].barrier = 120;
  rows[1].steps = 8;
  MonteCarloOptions options;
  options.monitoring = BarrierMonitoring::continuous;
  expect_central_differences_over_seeds(rows, options, [](const McRow& r, LD spot, LD sigma) {
    return LD(barrier_price_analytic(r.type, r.put, double(spot), r.strike, r.barrier, r.maturity,
                                     r.rate, r.dividend, double(sigma)));
  });
}

// The sobol sampler keeps central differences of prices (on the same scrambled points): delta,
// gamma = (P(S+h) - 2 P(S) + P(S-h)) / h^2 and vega against the same differences of the closed
// form, within 5 standard errors of the mean over 8 seeds (as above).
TEST_P(MonteCarloGreeksTest, SobolGreeksAreTheClosedFormsDifferences) {
  MonteCarloOptions options;
  options.sampler = MonteCarloSampler::sobol;
  expect_central_differences_over_seeds(lognormal_rows(AverageType::none, 1), options,
                                        [](const McRow& r, LD spot, LD sigma) {
                                          McRow bumped = r;
                                          bumped.volatility = double(sigma);
                                          return lognormal_of(bumped).price(spot);
                                        });
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MonteCarloGreeksTest);

}  // namespace
}  // namespace gpukit::finance
