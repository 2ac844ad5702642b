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
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/implied_volatility_reference.hpp"
#include "implied_volatility_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using gpukit::testing::EveryBackendTest;

using testing::grid_book;
using testing::kModels;
using testing::kPrecisions;
using testing::model_name;
using testing::precision_name;
using testing::QuoteBook;

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
                      std::string(model_name(model)).c_str(), precision_name(precision),
                      check.worst_ratio, n, static_cast<long long>(counts[0]));
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

// A book of 1000003 rows (float and double, black-scholes), through chunks of 2^16 rows on CUDA:
// the grid's 4099 rows repeated, so that every row is checked: each equals its original bit for
// bit, and the originals pass the independent check.
TEST_P(ImpliedVolatilityScenarios, LargeBookEveryRowChecked) {
  const gpukit::testing::TestSeed seed;
  // Under compute-sanitizer (GPUKIT_QUICK_TESTS=1), 100003 rows.
  constexpr std::size_t kBase = 4099;
  const std::size_t kRows = gpukit::testing::quick_tests() ? 100003 : 1000003;
  for (const Precision precision : kPrecisions) {
    const VolatilityModel model = VolatilityModel::black_scholes;
    const QuoteBook base = grid_book(model, precision, kBase, seed.value());
    QuoteBook big;
    for (std::size_t i = 0; i < kRows; ++i) {
      const std::size_t j = i % kBase;
      big.price.push_back(base.price[j]), big.underlying.push_back(base.underlying[j]);
      big.strike.push_back(base.strike[j]), big.maturity.push_back(base.maturity[j]);
      big.rate.push_back(base.rate[j]), big.dividend.push_back(base.dividend[j]);
      big.volatility.push_back(base.volatility[j]), big.is_put.push_back(base.is_put[j]);
    }
    const ImpliedVolatilityBookResult r = invert(context(), big, precision, model, 1 << 16);
    const ImpliedVolatilityCheck check = check_implied_volatility_book(
        base.view(), precision, model, std::span(r.volatility).first(kBase),
        std::span(r.status).first(kBase), 2);
    EXPECT_TRUE(check.passed) << precision_name(precision) << ": worst ratio " << check.worst_ratio
                              << " at row " << check.worst_index;
    std::size_t differing = 0;
    for (std::size_t i = kBase; i < kRows; ++i) {
      const std::size_t j = i % kBase;
      if (std::memcmp(&r.volatility[i], &r.volatility[j], sizeof(double)) != 0 ||
          r.status[i] != r.status[j]) {
        if (differing++ == 0) ADD_FAILURE() << precision_name(precision) << ": row " << i;
      }
    }
    EXPECT_EQ(differing, 0u) << precision_name(precision);
  }
}

// Rows found by a 10^5-row random sweep where the first Householder step of the upper objective
// starts within a unit of rounding of its target (b within an ulp of beta, near the upper bound):
// the bracket was then narrowed by b against beta while the step followed b_max - b against
// b_max - beta, the two disagreed, and the second step bisected away from the converged value
// (ratios 4.0 in double and 2.4 in float before the fix).
TEST_P(ImpliedVolatilityScenarios, StepsWithinRoundingOfTheTargetKeepTheConvergedValue) {
  struct Case {
    Precision precision;
    double price, forward, strike, maturity, rate;
  };
  const Case cases[] = {
      {Precision::float64, 27.531592660074782, 56.337909685363357, 60.199600196460231,
       9.1095381221770673, 0.07860261201921516},
      {Precision::float32, 168.88999938964844, 805.7572021484375, 640.15533447265625,
       20.469446182250977, 0.076334215700626373},
  };
  for (const Case& c : cases) {
    QuoteBook book;
    book.price = {c.price}, book.underlying = {c.forward}, book.strike = {c.strike};
    book.maturity = {c.maturity}, book.rate = {c.rate}, book.dividend = {0};
    book.volatility = {0}, book.is_put = {0};
    const ImpliedVolatilityBookResult r =
        invert(context(), book, c.precision, VolatilityModel::black76);
    const ImpliedVolatilityCheck check = check_implied_volatility_book(
        book.view(), c.precision, VolatilityModel::black76, r.volatility, r.status);
    EXPECT_EQ(r.status[0], ImpliedVolatilityStatus::ok) << precision_name(c.precision);
    EXPECT_TRUE(check.passed) << precision_name(c.precision) << ": ratio " << check.worst_ratio
                              << ", volatility " << r.volatility[0];
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

// The check tells `progress` the fraction of the rows checked every 2^16 rows and at the end, from
// the calling thread; what `progress` throws stops the check and propagates.
TEST(ImpliedVolatilityCheck, ReportsProgressAndStopsWhenProgressThrows) {
  const QuoteBook base = grid_book(VolatilityModel::black76, Precision::float64, 1000, 3);
  QuoteBook book;
  const std::size_t rows = (1 << 17) + 5;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::size_t j = i % base.size();
    book.price.push_back(base.price[j]), book.underlying.push_back(base.underlying[j]);
    book.strike.push_back(base.strike[j]), book.maturity.push_back(base.maturity[j]);
    book.rate.push_back(base.rate[j]), book.dividend.push_back(base.dividend[j]);
    book.volatility.push_back(base.volatility[j]), book.is_put.push_back(base.is_put[j]);
  }
  // Statuses not ok and NaN volatilities: the check then solves nothing, and counts mismatches.
  const std::vector<double> volatility(rows, std::numeric_limits<double>::quiet_NaN());
  const std::vector<ImpliedVolatilityStatus> status(rows, ImpliedVolatilityStatus::zero_maturity);
  std::vector<double> seen;
  const ImpliedVolatilityCheck check =
      check_implied_volatility_book(book.view(), Precision::float64, VolatilityModel::black76,
                                    volatility, status, 2, [&](double f) { seen.push_back(f); });
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.status_mismatches, static_cast<std::int64_t>(rows));
  EXPECT_EQ(check.first_mismatch, 0);
  const double n = static_cast<double>(rows);
  EXPECT_EQ(seen, (std::vector<double>{65536 / n, 131072 / n, 1.0}));
  int calls = 0;
  EXPECT_THROW(check_implied_volatility_book(book.view(), Precision::float64,
                                             VolatilityModel::black76, volatility, status, 2,
                                             [&](double) {
                                               ++calls;
                                               throw IoError("stop");
                                             }),
               IoError);
  EXPECT_EQ(calls, 1);
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
