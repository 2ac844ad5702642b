// Implied volatility through the public API, each scenario written once and run on every backend
// (Cpu/... and Cuda/...; the CUDA backend streams the host book through its pinned chunks): the
// round trip from prices generated in long double at known volatilities, on a grid of every
// branch (deep in and out of the money, |ln(F/K)| up to 10 sigma sqrt(T), 1 day to 30 years,
// volatilities 1% to 500%, calls and puts, three models, float and double), checked row by row by
// the independent long double check within the header's bound; every status; bad inputs; the same
// bits for any thread count and chunk size; argument errors. CPU only: the check itself (a
// perturbed volatility fails it, naming its row) and the book-level helpers.

#include "gpukit/finance/implied_volatility.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/implied_volatility_reference.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using gpukit::testing::EveryBackendTest;

constexpr VolatilityModel kModels[] = {VolatilityModel::black_scholes, VolatilityModel::black76,
                                       VolatilityModel::bachelier};
constexpr Precision kPrecisions[] = {Precision::float64, Precision::float32};

const char* model_name(VolatilityModel model) {
  switch (model) {
    case VolatilityModel::black_scholes:
      return "black-scholes";
    case VolatilityModel::black76:
      return "black76";
    case VolatilityModel::bachelier:
      return "bachelier";
  }
  return "?";
}
const char* precision_name(Precision precision) {
  return precision == Precision::float32 ? "float" : "double";
}

/// A book of quotes with the volatility that generated each price.
struct QuoteBook {
  std::vector<double> price, underlying, strike, maturity, rate, dividend, volatility;
  std::vector<std::uint8_t> is_put;

  std::size_t size() const { return price.size(); }
  ImpliedVolatilityBookView view() const {
    return {static_cast<std::int64_t>(size()),
            is_put.data(),
            price.data(),
            underlying.data(),
            strike.data(),
            maturity.data(),
            {rate.data()},
            {dividend.data()}};
  }
  /// Adds a row whose price is generated in long double from `vol` on the inputs as rounded to
  /// `precision` (so the generating volatility is that of the inputs the library sees; the price
  /// is then rounded once more, which the bound's P covers).
  void add(VolatilityModel model, Precision precision, double s, double k, double t, double r,
           double q, bool put, double vol) {
    const auto real = [precision](double v) {
      return precision == Precision::float32 ? static_cast<double>(static_cast<float>(v)) : v;
    };
    s = real(s), k = real(k), t = real(t), r = real(r), q = real(q);
    const ImpliedVolatilityQuote quote{model, 0, s, k, t, r, q, put};
    price.push_back(static_cast<double>(implied_volatility_model_price(quote, vol)));
    underlying.push_back(s), strike.push_back(k), maturity.push_back(t);
    rate.push_back(r), dividend.push_back(q), volatility.push_back(vol);
    is_put.push_back(put ? 1 : 0);
  }
};

/// The grid of the issue: maturities 1 day to 30 years, volatilities 1% to 500%, |ln(F/K)| up to
/// 10 sigma sqrt(T) (Bachelier: |F - K| up to 10 sigma sqrt(T) in price units), calls and puts;
/// then random rows over the same ranges (rates -2% to 10%, dividends 0 to 5%, spots 1 to 1000)
/// up to `n` rows. In float, rows whose log-moneyness exceeds 40 are left out: F/K = e^{40} is the
/// most float's range holds with a price of normal size.
QuoteBook grid_book(VolatilityModel model, Precision precision, std::size_t n, std::uint64_t seed) {
  QuoteBook book;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, u(rng)); };
  const bool in_float = precision == Precision::float32;
  const auto add = [&](double s, double t, double vol, double moneyness, bool put, double r,
                       double q) {
    const double root_t = std::sqrt(t);
    if (model == VolatilityModel::bachelier) {
      const double normal_vol = vol * s;  // in price units: vol relative to the forward
      book.add(model, precision, s, s - moneyness * normal_vol * root_t, t, r, q, put, normal_vol);
      return;
    }
    const double log_moneyness = moneyness * vol * root_t;
    if (in_float && std::fabs(log_moneyness) > 40) return;
    book.add(model, precision, s, s * std::exp(-log_moneyness), t, r, q, put, vol);
  };
  const double maturities[] = {1.0 / 365, 1.0 / 52, 1.0 / 12, 0.25, 1, 5, 30};
  const double vols[] = {0.01, 0.05, 0.2, 0.5, 1, 2, 5};
  const double moneyness[] = {-10, -7, -4, -2, -1, -0.3, 0, 0.3, 1, 2, 4, 7, 10};
  for (double t : maturities) {
    for (double vol : vols) {
      for (double m : moneyness) {
        for (bool put : {false, true}) {
          if (book.size() < n) add(100, t, vol, m, put, 0.03, 0.01);
        }
      }
    }
  }
  while (book.size() < n) {
    add(log_uniform(1, 1000), log_uniform(1.0 / 365, 30), log_uniform(0.01, 5), -10 + 20 * u(rng),
        u(rng) < 0.5, -0.02 + 0.12 * u(rng), 0.05 * u(rng));
  }
  return book;
}

/// Inverts `book` in Real on `context` through the typed API, the inputs rounded to Real as the
/// book operation does, with the outputs poisoned first (a NaN volatility and a status value no
/// row can have), so that an unwritten row fails every comparison. Results widened to double.
template <class Real>
ImpliedVolatilityBookResult invert_in(const Context& context, const QuoteBook& book,
                                      VolatilityModel model, std::int64_t chunk_rows) {
  const auto column = [](const std::vector<double>& v) {
    return std::vector<Real>(v.begin(), v.end());
  };
  const std::vector<Real> p = column(book.price), s = column(book.underlying),
                          k = column(book.strike), t = column(book.maturity), r = column(book.rate),
                          q = column(book.dividend);
  std::vector<Real> volatility(book.size(), std::numeric_limits<Real>::quiet_NaN());
  ImpliedVolatilityBookResult result;
  result.status.assign(book.size(), static_cast<ImpliedVolatilityStatus>(77));
  ImpliedVolatilityOptions options;
  options.model = model;
  options.chunk_rows = chunk_rows;
  implied_volatility(context,
                     ImpliedVolatilityInputs<Real>{static_cast<std::int64_t>(book.size()),
                                                   p.data(),
                                                   s.data(),
                                                   k.data(),
                                                   t.data(),
                                                   {r.data()},
                                                   {q.data()},
                                                   {book.is_put.data()}},
                     {volatility.data(), result.status.data()}, options);
  result.volatility.assign(volatility.begin(), volatility.end());
  return result;
}

ImpliedVolatilityBookResult invert(const Context& context, const QuoteBook& book,
                                   Precision precision, VolatilityModel model,
                                   std::int64_t chunk_rows = 0) {
  return precision == Precision::float32 ? invert_in<float>(context, book, model, chunk_rows)
                                         : invert_in<double>(context, book, model, chunk_rows);
}

class ImpliedVolatilityScenarios : public EveryBackendTest {};

// The grid, three models, float and double, at awkward sizes: every row checked by the
// independent long double check within the header's bound. Also in double: where the price
// carries the information (P / (sigma* vega*) <= 27), within 1e-13 relative of the volatility that
// generated the price. The worst ratio to the bound is printed (implied_volatility.hpp quotes it).
TEST_P(ImpliedVolatilityScenarios, RoundTripOnTheGridPassesTheIndependentCheck) {
  const gpukit::testing::TestSeed seed;
  for (const VolatilityModel model : kModels) {
    for (const Precision precision : kPrecisions) {
      for (const std::size_t n : {1u, 7u, 4099u}) {
        SCOPED_TRACE(::testing::Message()
                     << model_name(model) << " " << precision_name(precision) << " n " << n);
        const QuoteBook book = grid_book(model, precision, n, seed.value() + n);
        const ImpliedVolatilityBookResult r = invert(context(), book, precision, model);
        ASSERT_EQ(r.volatility.size(), book.size());
        const ImpliedVolatilityCheck check =
            check_implied_volatility_book(book.view(), precision, model, r.volatility, r.status, 2);
        EXPECT_TRUE(check.passed) << "worst ratio " << check.worst_ratio << " at row "
                                  << check.worst_index << ", status mismatches "
                                  << check.status_mismatches << " (first " << check.first_mismatch
                                  << ")";
        // Not vacuous: most rows of the grid are ok (the others are priced at or within
        // rounding of a bound, where the check accepts either status).
        const std::vector<std::int64_t> counts = count_statuses(r.status);
        EXPECT_GE(counts[0] * 10, static_cast<std::int64_t>(n) * 7);
        if (n == 4099) {
          std::printf("%s %s: worst ratio to the bound %.3f over %zu rows (%lld ok)\n",
                      model_name(model), precision_name(precision), check.worst_ratio, n,
                      static_cast<long long>(counts[0]));
        }
        if (precision != Precision::float64) continue;
        for (std::size_t i = 0; i < n; ++i) {
          if (r.status[i] != ImpliedVolatilityStatus::ok) continue;
          const ImpliedVolatilityQuote quote{
              model,        book.price[i],    book.underlying[i], book.strike[i], book.maturity[i],
              book.rate[i], book.dividend[i], book.is_put[i] != 0};
          const ImpliedVolatilityReference ref =
              implied_volatility_reference(quote, precision, book.volatility[i]);
          if (ref.status != ImpliedVolatilityStatus::ok ||
              ref.price_scale > 27 * ref.volatility * ref.vega) {
            continue;
          }
          EXPECT_NEAR(r.volatility[i], book.volatility[i], 1e-13 * book.volatility[i])
              << "row " << i;
        }
      }
    }
  }
}

// Every status, including a price exactly at the intrinsic value (0, ok) and exactly at the upper
// bound, on both sides and in every model (the rows are exact in any arithmetic: r = q = 0).
TEST_P(ImpliedVolatilityScenarios, EveryStatus) {
  using S = ImpliedVolatilityStatus;
  struct Row {
    VolatilityModel model;
    double price, underlying, strike, maturity;
    bool put;
    S status;
    double volatility;  // NaN: expect NaN; negative: expect a positive finite value
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Row rows[] = {
      // Normal quotes.
      {VolatilityModel::black_scholes, 10, 100, 100, 1, false, S::ok, -1},
      {VolatilityModel::black76, 10, 100, 100, 1, true, S::ok, -1},
      {VolatilityModel::bachelier, 10, 100, 100, 1, false, S::ok, -1},
      // At the intrinsic value: 0 and ok. Out of the money at 0; a zero strike's call and a zero
      // forward's put at their (exact) intrinsic value; Bachelier in the money.
      {VolatilityModel::black_scholes, 0, 100, 120, 1, false, S::ok, 0},
      {VolatilityModel::black76, 0, 100, 80, 1, true, S::ok, 0},
      {VolatilityModel::black_scholes, 100, 100, 0, 1, false, S::ok, 0},
      {VolatilityModel::black76, 80, 0, 80, 1, true, S::ok, 0},
      {VolatilityModel::bachelier, 20, 120, 100, 1, false, S::ok, 0},
      {VolatilityModel::bachelier, 20, 80, 100, 1, true, S::ok, 0},
      // Below the intrinsic value.
      {VolatilityModel::black_scholes, 19, 120, 100, 1, false, S::below_intrinsic, nan},
      {VolatilityModel::black76, 19, 80, 100, 1, true, S::below_intrinsic, nan},
      {VolatilityModel::bachelier, 19, 120, 100, 1, false, S::below_intrinsic, nan},
      // At and above the upper bound (the forward for a call, the strike for a put).
      {VolatilityModel::black_scholes, 100, 100, 90, 1, false, S::above_maximum, nan},
      {VolatilityModel::black76, 90, 100, 90, 1, true, S::above_maximum, nan},
      {VolatilityModel::black76, 150, 100, 90, 1, false, S::above_maximum, nan},
      // Bachelier has no upper bound.
      {VolatilityModel::bachelier, 150, 100, 90, 1, false, S::ok, -1},
      // Zero maturity, whatever the price.
      {VolatilityModel::black_scholes, 10, 100, 100, 0, false, S::zero_maturity, nan},
      {VolatilityModel::bachelier, 0, 100, 100, 0, true, S::zero_maturity, nan},
  };
  for (const Precision precision : kPrecisions) {
    for (const Row& row : rows) {
      QuoteBook book;
      book.price = {row.price}, book.underlying = {row.underlying}, book.strike = {row.strike};
      book.maturity = {row.maturity}, book.rate = {0}, book.dividend = {0};
      book.volatility = {0}, book.is_put = {static_cast<std::uint8_t>(row.put)};
      const ImpliedVolatilityBookResult r = invert(context(), book, precision, row.model);
      SCOPED_TRACE(::testing::Message()
                   << model_name(row.model) << " " << precision_name(precision) << " price "
                   << row.price << " underlying " << row.underlying << " strike " << row.strike
                   << " maturity " << row.maturity << (row.put ? " put" : " call"));
      EXPECT_EQ(status_name(r.status[0]), status_name(row.status));
      if (std::isnan(row.volatility)) {
        EXPECT_TRUE(std::isnan(r.volatility[0])) << r.volatility[0];
      } else if (row.volatility < 0) {
        EXPECT_GT(r.volatility[0], 0);
        EXPECT_TRUE(std::isfinite(r.volatility[0]));
      } else {
        EXPECT_EQ(r.volatility[0], row.volatility);
      }
    }
  }
}

// A NaN, negative or infinite price, underlying, strike or maturity, or a non-finite rate (or
// dividend, black_scholes only) gives invalid_input and NaN for that row alone.
TEST_P(ImpliedVolatilityScenarios, BadInputsAreInvalidRowsAndTheBookGoesOn) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const Precision precision : kPrecisions) {
    for (const VolatilityModel model : kModels) {
      QuoteBook book;
      const auto add = [&](double p, double s, double k, double t, double r, double q) {
        book.price.push_back(p), book.underlying.push_back(s), book.strike.push_back(k);
        book.maturity.push_back(t), book.rate.push_back(r), book.dividend.push_back(q);
        book.volatility.push_back(0), book.is_put.push_back(0);
      };
      add(10, 100, 100, 1, 0.01, 0);  // a good row between the bad ones
      for (const double bad : {nan, -1.0, inf}) {
        add(bad, 100, 100, 1, 0.01, 0);
        add(10, bad, 100, 1, 0.01, 0);
        add(10, 100, bad, 1, 0.01, 0);
        add(10, 100, 100, bad, 0.01, 0);
      }
      add(10, 100, 100, 1, nan, 0);
      add(10, 100, 100, 1, inf, 0);
      add(10, 100, 100, 1, 0.01, 0);
      const ImpliedVolatilityBookResult r = invert(context(), book, precision, model);
      SCOPED_TRACE(::testing::Message() << model_name(model) << " " << precision_name(precision));
      EXPECT_EQ(r.status.front(), ImpliedVolatilityStatus::ok);
      EXPECT_EQ(r.status.back(), ImpliedVolatilityStatus::ok);
      for (std::size_t i = 1; i + 1 < book.size(); ++i) {
        EXPECT_EQ(status_name(r.status[i]), "invalid-input") << "row " << i;
        EXPECT_TRUE(std::isnan(r.volatility[i])) << "row " << i;
      }
      // The dividend counts only where the model uses it.
      QuoteBook dividend;
      dividend.price = {10}, dividend.underlying = {100}, dividend.strike = {100};
      dividend.maturity = {1}, dividend.rate = {0}, dividend.dividend = {nan};
      dividend.volatility = {0}, dividend.is_put = {0};
      const ImpliedVolatilityBookResult d = invert(context(), dividend, precision, model);
      EXPECT_EQ(d.status[0], model == VolatilityModel::black_scholes
                                 ? ImpliedVolatilityStatus::invalid_input
                                 : ImpliedVolatilityStatus::ok);
    }
  }
}

// Each row is computed alone: the same bits on 1 and 2 threads, and through chunks of 1000 rows
// and of the default size (CUDA; the CPU ignores the chunk size).
TEST_P(ImpliedVolatilityScenarios, SameBitsForAnyThreadCountAndChunkSize) {
  const gpukit::testing::TestSeed seed;
  for (const Precision precision : kPrecisions) {
    const VolatilityModel model = VolatilityModel::black_scholes;
    const QuoteBook book = grid_book(model, precision, 5003, seed.value());
    const ImpliedVolatilityBookResult one = invert(context(1), book, precision, model);
    const ImpliedVolatilityBookResult two = invert(context(2), book, precision, model, 1000);
    const ImpliedVolatilityBookResult many = invert(context(), book, precision, model, 1);
    ASSERT_EQ(one.volatility.size(), book.size());
    EXPECT_EQ(
        0, std::memcmp(one.volatility.data(), two.volatility.data(), book.size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(one.volatility.data(), many.volatility.data(),
                             book.size() * sizeof(double)));
    EXPECT_EQ(one.status, two.status);
    EXPECT_EQ(one.status, many.status);
  }
}

// The typed API: outputs poisoned, the status output optional, a count of 0 writes nothing, a
// negative count throws.
TEST_P(ImpliedVolatilityScenarios, TypedApiWritesEveryRowAndRefusesANegativeCount) {
  const gpukit::testing::TestSeed seed;
  const QuoteBook book =
      grid_book(VolatilityModel::black76, Precision::float64, 1025, seed.value());
  const std::int64_t n = static_cast<std::int64_t>(book.size());
  std::vector<double> volatility(book.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<ImpliedVolatilityStatus> status(book.size(),
                                              static_cast<ImpliedVolatilityStatus>(77));
  ImpliedVolatilityInputs<double> in{n,
                                     book.price.data(),
                                     book.underlying.data(),
                                     book.strike.data(),
                                     book.maturity.data(),
                                     {book.rate.data()},
                                     {book.dividend.data()},
                                     {book.is_put.data()}};
  ImpliedVolatilityOptions options;
  options.model = VolatilityModel::black76;
  implied_volatility(context(), in, {volatility.data(), status.data()}, options);
  const ImpliedVolatilityCheck check = check_implied_volatility_book(
      book.view(), Precision::float64, VolatilityModel::black76, volatility, status);
  EXPECT_TRUE(check.passed) << check.worst_ratio << " at " << check.worst_index;
  // Without the status output, the same volatilities.
  std::vector<double> alone(book.size(), -1);
  implied_volatility(context(), in, {alone.data(), nullptr}, options);
  EXPECT_EQ(0, std::memcmp(alone.data(), volatility.data(), book.size() * sizeof(double)));
  // Nothing for 0 rows; InvalidInput for a negative count.
  in.count = 0;
  std::vector<double> untouched(1, -1);
  implied_volatility(context(), in, {untouched.data(), nullptr}, options);
  EXPECT_EQ(untouched[0], -1);
  in.count = -1;
  EXPECT_THROW(implied_volatility(context(), in, {untouched.data(), nullptr}, options),
               InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(ImpliedVolatilityScenarios);

// --- CPU only: the check and the book helpers
// -----------------------------------------------------

// The check is not vacuous: a volatility moved by 50 units of the bound fails it and the check
// names that row; a wrong status is counted; a volatility where the status says none is counted.
TEST(ImpliedVolatilityCheck, APerturbedVolatilityFailsItNamingItsRow) {
  const gpukit::testing::TestSeed seed;
  const QuoteBook book =
      grid_book(VolatilityModel::black_scholes, Precision::float64, 2000, seed.value());
  const Context cpu = Context::cpu();
  ImpliedVolatilityBookResult r =
      invert(cpu, book, Precision::float64, VolatilityModel::black_scholes);
  ASSERT_TRUE(check_implied_volatility_book(book.view(), Precision::float64,
                                            VolatilityModel::black_scholes, r.volatility, r.status)
                  .passed);
  // Row 1234's bound, then the row moved by 50 of it.
  std::size_t row = 1234;
  while (r.status[row] != ImpliedVolatilityStatus::ok) ++row;
  const ImpliedVolatilityQuote quote{VolatilityModel::black_scholes,
                                     book.price[row],
                                     book.underlying[row],
                                     book.strike[row],
                                     book.maturity[row],
                                     book.rate[row],
                                     book.dividend[row],
                                     book.is_put[row] != 0};
  const ImpliedVolatilityReference ref =
      implied_volatility_reference(quote, Precision::float64, r.volatility[row]);
  const double bound =
      static_cast<double>(kImpliedVolatilityBoundUnits * std::numeric_limits<double>::epsilon() *
                          (ref.volatility + ref.price_scale / ref.vega));
  r.volatility[row] += 50 * bound;
  const ImpliedVolatilityCheck moved = check_implied_volatility_book(
      book.view(), Precision::float64, VolatilityModel::black_scholes, r.volatility, r.status);
  EXPECT_FALSE(moved.passed);
  EXPECT_EQ(moved.worst_index, static_cast<std::int64_t>(row));
  EXPECT_GT(moved.worst_ratio, 10);
  r.volatility[row] -= 50 * bound;

  // A status no rounding gives: counted and named.
  r.status[row] = ImpliedVolatilityStatus::below_intrinsic;
  r.volatility[row] = std::numeric_limits<double>::quiet_NaN();
  const ImpliedVolatilityCheck wrong = check_implied_volatility_book(
      book.view(), Precision::float64, VolatilityModel::black_scholes, r.volatility, r.status);
  EXPECT_FALSE(wrong.passed);
  EXPECT_EQ(wrong.status_mismatches, 1);
  EXPECT_EQ(wrong.first_mismatch, static_cast<std::int64_t>(row));

  // A row that is not ok must carry NaN.
  r.volatility[row] = 0.2;
  const ImpliedVolatilityCheck not_nan = check_implied_volatility_book(
      book.view(), Precision::float64, VolatilityModel::black_scholes, r.volatility, r.status);
  EXPECT_EQ(not_nan.volatility_not_nan, 1);
  EXPECT_FALSE(not_nan.passed);

  // Sizes must match the book.
  EXPECT_THROW(
      check_implied_volatility_book(book.view(), Precision::float64, VolatilityModel::black_scholes,
                                    std::span(r.volatility).first(5), r.status),
      InvalidInput);
}

// The reference itself against textbook values: Hull's example (S 42, X 40, r 10%, T 0.5,
// sigma 20%: call 4.759422392871535, put 0.8085993729000958, the closed form in Python's double
// erfc) and the Bachelier at-the-money price sigma sqrt(T / (2 pi)).
TEST(ImpliedVolatilityReference, MatchesTextbookValues) {
  const ImpliedVolatilityQuote call{VolatilityModel::black_scholes, 0, 42, 40, 0.5, 0.1, 0, false};
  EXPECT_NEAR(static_cast<double>(implied_volatility_model_price(call, 0.2)), 4.759422392871535,
              1e-13);
  ImpliedVolatilityQuote put = call;
  put.is_put = true;
  EXPECT_NEAR(static_cast<double>(implied_volatility_model_price(put, 0.2)), 0.8085993729000958,
              1e-13);
  put.price = 0.8085993729000958;
  const ImpliedVolatilityReference ref = implied_volatility_reference(put, Precision::float64);
  EXPECT_EQ(ref.status, ImpliedVolatilityStatus::ok);
  EXPECT_NEAR(static_cast<double>(ref.volatility), 0.2, 1e-14);
  const ImpliedVolatilityQuote normal{VolatilityModel::bachelier, 0, 100, 100, 2, 0, 0, false};
  EXPECT_NEAR(static_cast<double>(implied_volatility_model_price(normal, 7)),
              7 * std::sqrt(2 / (2 * std::numbers::pi)), 1e-13);
}

TEST(ImpliedVolatilityBook, HelpersNameCountAndSliceRows) {
  EXPECT_EQ(status_name(ImpliedVolatilityStatus::ok), "ok");
  EXPECT_EQ(status_name(ImpliedVolatilityStatus::below_intrinsic), "below-intrinsic");
  EXPECT_EQ(status_name(ImpliedVolatilityStatus::above_maximum), "above-maximum");
  EXPECT_EQ(status_name(ImpliedVolatilityStatus::zero_maturity), "zero-maturity");
  EXPECT_EQ(status_name(ImpliedVolatilityStatus::invalid_input), "invalid-input");
  using S = ImpliedVolatilityStatus;
  const std::vector<S> statuses = {S::ok,
                                   S::ok,
                                   S::zero_maturity,
                                   S::above_maximum,
                                   S::ok,
                                   S::invalid_input,
                                   S::below_intrinsic,
                                   S::below_intrinsic};
  EXPECT_EQ(count_statuses(statuses), (std::vector<std::int64_t>{3, 2, 1, 1, 1}));
  const QuoteBook book = grid_book(VolatilityModel::black_scholes, Precision::float64, 10, 1);
  const ImpliedVolatilityBookView rows = implied_volatility_book_rows(book.view(), 3, 4);
  EXPECT_EQ(rows.count, 4);
  EXPECT_EQ(rows.price, book.price.data() + 3);
  EXPECT_EQ(rows.strike, book.strike.data() + 3);
  EXPECT_EQ(rows.is_put, book.is_put.data() + 3);
  EXPECT_EQ(rows.rate.values, book.rate.data() + 3);
  ImpliedVolatilityBookView negative = book.view();
  negative.count = -1;
  EXPECT_THROW(implied_volatility_book(Context::cpu(), negative, Precision::float64), InvalidInput);
}

// The book operation behind `gpukit iv`: float32 rounds the inputs to float first, as
// price_european_book does, float64 reads the book's columns as they are; each gives the bits of
// the typed API on those columns, widened.
TEST(ImpliedVolatilityBook, BookOperationIsTheTypedApiOnTheRoundedColumns) {
  for (const Precision precision : kPrecisions) {
    const QuoteBook book = grid_book(VolatilityModel::bachelier, precision, 999, 7);
    ImpliedVolatilityOptions options;
    options.model = VolatilityModel::bachelier;
    const ImpliedVolatilityBookResult r =
        implied_volatility_book(Context::cpu(), book.view(), precision, options);
    const ImpliedVolatilityBookResult typed =
        invert(Context::cpu(), book, precision, VolatilityModel::bachelier);
    ASSERT_EQ(r.volatility.size(), book.size());
    EXPECT_EQ(
        0, std::memcmp(r.volatility.data(), typed.volatility.data(), book.size() * sizeof(double)))
        << precision_name(precision);
    EXPECT_EQ(r.status, typed.status) << precision_name(precision);
  }
}

}  // namespace
}  // namespace gpukit::finance
