#pragma once
// Shared by the Monte Carlo CPU and GPU tests: a small owning option book, and bitwise comparison
// of results.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::testing {

struct McRow {
  bool put = false;
  double spot = 100, strike = 100, maturity = 1, rate = 0.05, volatility = 0.25, dividend = 0.02;
  BarrierType type = BarrierType::none;
  double barrier = 0;
  std::uint32_t steps = 1;
  AverageType average = AverageType::none;
  ExerciseStyle exercise = ExerciseStyle::european;
  AssetModel model = AssetModel::black_scholes;
  double v0 = 0, kappa = 0, theta = 0, sigma_v = 0, rho = 0;
};

struct McBook {
  std::vector<std::uint8_t> is_put;
  std::vector<double> spot, strike, maturity, rate, volatility, dividend, barrier;
  std::vector<BarrierType> type;
  std::vector<std::uint32_t> steps;
  // Issue 33's columns, in the view only where a row is not a European Black-Scholes one (so
  // that the books of the older tests keep their null columns).
  std::vector<AverageType> average;
  std::vector<ExerciseStyle> exercise;
  std::vector<AssetModel> model;
  std::vector<double> v0, kappa, theta, sigma_v, rho;
  bool issue33_columns = false;

  explicit McBook(const std::vector<McRow>& rows) {
    for (const McRow& r : rows) {
      is_put.push_back(r.put ? 1 : 0);
      spot.push_back(r.spot), strike.push_back(r.strike), maturity.push_back(r.maturity);
      rate.push_back(r.rate), volatility.push_back(r.volatility), dividend.push_back(r.dividend);
      type.push_back(r.type), barrier.push_back(r.barrier), steps.push_back(r.steps);
      average.push_back(r.average), exercise.push_back(r.exercise), model.push_back(r.model);
      v0.push_back(r.v0), kappa.push_back(r.kappa), theta.push_back(r.theta);
      sigma_v.push_back(r.sigma_v), rho.push_back(r.rho);
      issue33_columns = issue33_columns || r.average != AverageType::none ||
                        r.exercise != ExerciseStyle::european ||
                        r.model != AssetModel::black_scholes;
    }
  }
  MonteCarloBookView view() const {
    MonteCarloBookView v;
    v.count = static_cast<std::int64_t>(is_put.size());
    v.is_put = is_put.data(), v.spot = spot.data(), v.strike = strike.data();
    v.maturity = maturity.data();
    v.rate = {rate.data(), 0}, v.volatility = {volatility.data(), 0};
    v.dividend = {dividend.data(), 0};
    v.barrier_type = type.data(), v.barrier = barrier.data(), v.steps = steps.data();
    if (issue33_columns) {
      v.average = average.data(), v.exercise = exercise.data(), v.model = model.data();
      v.v0 = {v0.data(), 0}, v.kappa = {kappa.data(), 0}, v.theta = {theta.data(), 0};
      v.sigma_v = {sigma_v.data(), 0}, v.rho = {rho.data(), 0};
    }
    return v;
  }
};

/// Random European options over a wide range of moneyness, maturities and volatilities.
inline std::vector<McRow> random_european_rows(int count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<McRow> rows;
  for (int i = 0; i < count; ++i) {
    McRow r;
    r.put = i % 2 == 1;
    r.spot = 20 + 180 * u(gen);
    r.strike = r.spot * (0.75 + 0.55 * u(gen));
    r.maturity = 0.1 + 4.9 * u(gen);
    r.rate = -0.01 + 0.08 * u(gen);
    r.dividend = 0.04 * u(gen);
    r.volatility = 0.1 + 0.7 * u(gen);
    rows.push_back(r);
  }
  return rows;
}

/// Barrier rows: calls and puts, the four types, strikes on both sides of the barrier.
inline std::vector<McRow> barrier_rows(std::uint32_t steps) {
  std::vector<McRow> rows;
  for (bool put : {false, true}) {
    for (BarrierType type :
         {BarrierType::down_out, BarrierType::down_in, BarrierType::up_out, BarrierType::up_in}) {
      const bool down = type == BarrierType::down_out || type == BarrierType::down_in;
      for (double strike : {90.0, 100.0, 115.0}) {
        McRow r;
        r.put = put, r.strike = strike, r.type = type, r.steps = steps;
        r.barrier = down ? 88.0 : 120.0;
        rows.push_back(r);
      }
    }
  }
  return rows;
}

/// A book of every path kind: 40 random European rows, the 24 barrier rows on 13 dates and a
/// down-and-in row breached at the start.
inline std::vector<McRow> mixed_rows() {
  std::vector<McRow> rows = random_european_rows(40, 5);
  for (const McRow& r : barrier_rows(13)) rows.push_back(r);
  McRow breached;
  breached.type = BarrierType::down_in, breached.barrier = 100, breached.steps = 3;
  rows.push_back(breached);
  return rows;
}

/// True when `a` and `b` hold the same doubles, bit for bit.
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

/// Every field of `a` has the bits of `b`'s (fields neither computes are both empty).
inline void expect_same_result(const MonteCarloBookResult& a, const MonteCarloBookResult& b,
                               const std::string& what) {
  EXPECT_TRUE(same_bits(a.price, b.price)) << what << ": price";
  EXPECT_TRUE(same_bits(a.std_error, b.std_error)) << what << ": std_error";
  EXPECT_TRUE(same_bits(a.ci_low, b.ci_low)) << what << ": ci_low";
  EXPECT_TRUE(same_bits(a.ci_high, b.ci_high)) << what << ": ci_high";
  EXPECT_TRUE(same_bits(a.paths, b.paths)) << what << ": paths";
  EXPECT_TRUE(same_bits(a.delta, b.delta)) << what << ": delta";
  EXPECT_TRUE(same_bits(a.gamma, b.gamma)) << what << ": gamma";
  EXPECT_TRUE(same_bits(a.vega, b.vega)) << what << ": vega";
  EXPECT_TRUE(same_bits(a.vrf_antithetic, b.vrf_antithetic)) << what << ": vrf_antithetic";
  EXPECT_TRUE(same_bits(a.vrf_control, b.vrf_control)) << what << ": vrf_control";
}

/// Prices `rows` (with antithetic variates and the control variate, 5000 paths, in double and
/// in float) on 1, 2 and 3 CPU threads through `price(rows, options, threads)` and expects every
/// result field to have the bits of the one-thread run.
template <class Price>
void expect_the_bits_of_one_thread(const Price& price, const std::vector<McRow>& rows) {
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = 5000;
    options.antithetic = true;
    options.control_variate = true;
    options.precision = precision;
    const MonteCarloBookResult one = price(rows, options, 1);
    for (int threads : {2, 3}) {
      expect_same_result(one, price(rows, options, threads),
                         std::to_string(threads) + " threads, precision " +
                             std::to_string(static_cast<int>(precision)));
    }
  }
}

// Scenarios written once, run on the CPU and on CUDA (the `Cuda/` instances skip without a GPU);
// price() prices a book of `rows` on the scenario's backend.
class MonteCarloBookTest : public gpukit::testing::EveryBackendTest {
 protected:
  MonteCarloBookResult price(const std::vector<McRow>& rows, const MonteCarloOptions& options,
                             int threads = 0) const {
    const McBook book(rows);
    return price_monte_carlo_book(context(threads), book.view(), options);
  }
};

/// The check can fail: `r` (priced with the options `ref` was computed for) passes, and with
/// row `price_row`'s price moved to 1.01 times its bound from the reference's and row
/// `error_row`'s standard error likewise, monte_carlo_agreement counts those two rows; the
/// moved result is returned.
inline MonteCarloBookResult expect_values_just_outside_the_bound_are_counted(
    const MonteCarloBookResult& r, const MonteCarloReference& ref, std::size_t price_row,
    std::size_t error_row) {
  EXPECT_EQ(monte_carlo_agreement(r, ref).rows_over_bound, 0);
  MonteCarloBookResult off = r;
  off.price[price_row] = ref.price[price_row] + 1.01 * ref.price_bound[price_row];
  off.std_error[error_row] = ref.std_error[error_row] - 1.01 * ref.std_error_bound[error_row];
  EXPECT_GT(std::abs(off.price[price_row] - ref.price[price_row]), ref.price_bound[price_row]);
  EXPECT_GT(std::abs(off.std_error[error_row] - ref.std_error[error_row]),
            ref.std_error_bound[error_row]);
  EXPECT_EQ(monte_carlo_agreement(off, ref).rows_over_bound, 2);
  return off;
}

}  // namespace gpukit::finance::testing
