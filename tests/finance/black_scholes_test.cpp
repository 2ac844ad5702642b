// Black-Scholes through the public API, each scenario written once and run on every backend
// (Cpu/... and Cuda/...; the CUDA backend streams the host book through its pinned chunks and the
// default kernel variant): the independent long-double closed form, parity, Greeks against finite
// differences, degenerate and NaN inputs, determinism, argument errors, and `--check`'s verdicts.
// CPU only: the oracle itself against a textbook value. Every CUDA kernel variant one by one:
// black_scholes_gpu_test.cpp.

#include "gpukit/finance/black_scholes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <tuple>

#include "black_scholes_test_support.hpp"
#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/european_book.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using gpukit::testing::EveryBackendTest;
using testing::Book;
using testing::closed_form;

/// One run's outputs: each option's own side, as BlackScholesInputs::is_put gives it.
template <class Real>
struct Sided {
  std::vector<Real> price, delta, gamma, vega, theta, rho;
};

/// Prices `b` in Real on `context` (the book's host arrays, rounded to Real), each option on the
/// side `is_put` gives it, with every output poisoned first, so that an unwritten output fails
/// every comparison.
template <class Real>
Sided<Real> price_sided(const Context& context, const Book& b, PerOption<std::uint8_t> is_put,
                        NormalCdf cdf, bool greeks, std::int64_t chunk_options = 0) {
  const std::size_t n = b.size();
  std::vector<Real> s(b.spot.begin(), b.spot.end()), x(b.strike.begin(), b.strike.end()),
      t(b.maturity.begin(), b.maturity.end()), r(b.rate.begin(), b.rate.end()),
      v(b.volatility.begin(), b.volatility.end()), q(b.dividend.begin(), b.dividend.end());
  Sided<Real> p;
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  for (auto* o : {&p.price, &p.delta, &p.gamma, &p.vega, &p.theta, &p.rho}) o->assign(n, nan);
  BlackScholesOutputs<Real> out{p.price.data()};
  if (greeks) {
    out.delta = p.delta.data(), out.gamma = p.gamma.data(), out.vega = p.vega.data();
    out.theta = p.theta.data(), out.rho = p.rho.data();
  }
  BlackScholesOptions options;
  options.cdf = cdf;
  options.chunk_options = chunk_options;
  price_black_scholes(context,
                      BlackScholesInputs<Real>{static_cast<std::int64_t>(n),
                                               s.data(),
                                               x.data(),
                                               t.data(),
                                               {r.data()},
                                               {v.data()},
                                               {q.data()},
                                               is_put},
                      out, options);
  return p;
}

/// Both sides of every option: the book priced as calls, then as puts (a side for the book).
template <class Real>
struct Priced {
  std::vector<Real> call, put, call_delta, put_delta, gamma, vega, call_theta, put_theta, call_rho,
      put_rho;
};

template <class Real>
Priced<Real> price_on(const Context& context, const Book& b, NormalCdf cdf, bool greeks,
                      std::int64_t chunk_options = 0) {
  Sided<Real> calls = price_sided<Real>(context, b, {nullptr, 0}, cdf, greeks, chunk_options);
  Sided<Real> puts = price_sided<Real>(context, b, {nullptr, 1}, cdf, greeks, chunk_options);
  return {std::move(calls.price), std::move(puts.price),  std::move(calls.delta),
          std::move(puts.delta),  std::move(calls.gamma), std::move(calls.vega),
          std::move(calls.theta), std::move(puts.theta),  std::move(calls.rho),
          std::move(puts.rho)};
}

class BlackScholesScenarios : public EveryBackendTest {};

// Deep in and out of the money, 1-day to 30-year maturities, volatilities 0.01-3: the accurate
// double path against the long-double closed form, calls and puts. The largest difference is
// printed (black_scholes.hpp quotes it for the default CUDA variant).
TEST_P(BlackScholesScenarios, DoubleMatchesTheIndependentClosedFormWithin1e9) {
  const gpukit::testing::TestSeed seed;
  const Book b = testing::extreme_book(100000, seed.value());
  const Priced<double> p = price_on<double>(context(), b, NormalCdf::erfc, false);
  double max_abs = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto ref = closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i], b.volatility[i],
                                 b.dividend[i]);
    ASSERT_NEAR(p.call[i], static_cast<double>(ref.call), 1e-9) << "option " << i;
    ASSERT_NEAR(p.put[i], static_cast<double>(ref.put), 1e-9) << "option " << i;
    max_abs = std::max({max_abs, std::abs(p.call[i] - static_cast<double>(ref.call)),
                        std::abs(p.put[i] - static_cast<double>(ref.put))});
  }
  RecordProperty("max_abs_minus_reference", std::to_string(max_abs));
  std::printf("max |price - long double reference| over %zu extreme double options: %.3e\n",
              b.size(), max_abs);
}

TEST_P(BlackScholesScenarios, EveryPrecisionAndCdfWithinItsDerivedTolerance) {
  const gpukit::testing::TestSeed seed;
  for (std::size_t n : {0u, 1u, 31u, 32u, 33u, 1023u, 1025u, (1u << 20) + 3u}) {
    const Book b = testing::seed_like_book(n, seed.value() + n);
    for (NormalCdf cdf : {NormalCdf::erfc, NormalCdf::hull_polynomial}) {
      const Priced<float> f = price_on<float>(context(), b, cdf, false);
      const Priced<double> d = price_on<double>(context(), b, cdf, false);
      for (std::size_t i = 0; i < n; ++i) {
        // The oracle prices the float-rounded inputs for the float path.
        const auto ref_f =
            closed_form(float(b.spot[i]), float(b.strike[i]), float(b.maturity[i]),
                        float(b.rate[i]), float(b.volatility[i]), float(b.dividend[i]));
        const auto ref_d = closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i],
                                       b.volatility[i], b.dividend[i]);
        const double tol_f = testing::price_tolerance<float>(b.spot[i], b.strike[i], b.maturity[i],
                                                             b.rate[i], b.dividend[i], cdf);
        const double tol_d = testing::price_tolerance<double>(b.spot[i], b.strike[i], b.maturity[i],
                                                              b.rate[i], b.dividend[i], cdf);
        ASSERT_NEAR(f.call[i], double(ref_f.call), tol_f) << "n " << n << " i " << i;
        ASSERT_NEAR(f.put[i], double(ref_f.put), tol_f) << "n " << n << " i " << i;
        ASSERT_NEAR(d.call[i], double(ref_d.call), tol_d) << "n " << n << " i " << i;
        ASSERT_NEAR(d.put[i], double(ref_d.put), tol_d) << "n " << n << " i " << i;
      }
    }
  }
}

TEST_P(BlackScholesScenarios, PutCallParity) {
  const Book b = testing::extreme_book(5000, 77);
  const Priced<double> p = price_on<double>(context(), b, NormalCdf::erfc, false);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double fwd = b.spot[i] * std::exp(-b.dividend[i] * b.maturity[i]);
    const double pvk = b.strike[i] * std::exp(-b.rate[i] * b.maturity[i]);
    ASSERT_NEAR(p.call[i] - p.put[i], fwd - pvk, 64 * 2.3e-16 * (fwd + pvk)) << "option " << i;
  }
}

TEST_P(BlackScholesScenarios, GreeksMatchCentralDifferences) {
  const Book b = testing::seed_like_book(400, 4242);
  const Priced<double> p = price_on<double>(context(), b, NormalCdf::erfc, true);
  auto bumped = [&](std::size_t i, int field, double h) {
    Book one;
    one.spot = {b.spot[i]}, one.strike = {b.strike[i]}, one.maturity = {b.maturity[i]};
    one.rate = {b.rate[i]}, one.volatility = {b.volatility[i]}, one.dividend = {b.dividend[i]};
    std::vector<double>* fields[] = {&one.spot, &one.maturity, &one.rate, &one.volatility};
    (*fields[field])[0] += h;
    return price_on<double>(context(), one, NormalCdf::erfc, true);
  };
  for (std::size_t i = 0; i < b.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "option " << i << " seed 4242");
    // Central differences are exact to O(h^2); the tolerances leave room for that and rounding.
    const double hs = 1e-4 * b.spot[i];
    const auto up = bumped(i, 0, hs), down = bumped(i, 0, -hs);
    EXPECT_NEAR(p.call_delta[i], (up.call[0] - down.call[0]) / (2 * hs), 1e-7);
    EXPECT_NEAR(p.put_delta[i], (up.put[0] - down.put[0]) / (2 * hs), 1e-7);
    EXPECT_NEAR(p.gamma[i], (up.call_delta[0] - down.call_delta[0]) / (2 * hs), 1e-7);
    const double ht = 1e-5;
    const auto later = bumped(i, 1, ht), sooner = bumped(i, 1, -ht);
    EXPECT_NEAR(p.call_theta[i], -(later.call[0] - sooner.call[0]) / (2 * ht), 1e-5);
    EXPECT_NEAR(p.put_theta[i], -(later.put[0] - sooner.put[0]) / (2 * ht), 1e-5);
    const double hr = 1e-6;
    const auto rup = bumped(i, 2, hr), rdown = bumped(i, 2, -hr);
    EXPECT_NEAR(p.call_rho[i], (rup.call[0] - rdown.call[0]) / (2 * hr), 1e-5);
    EXPECT_NEAR(p.put_rho[i], (rup.put[0] - rdown.put[0]) / (2 * hr), 1e-5);
    const double hv = 1e-6;
    const auto vup = bumped(i, 3, hv), vdown = bumped(i, 3, -hv);
    EXPECT_NEAR(p.vega[i], (vup.call[0] - vdown.call[0]) / (2 * hv), 1e-5);
  }
}

// The expected value is the long-double reference's discounted intrinsic value (it takes that
// branch when sigma sqrt(T) == 0 or X == 0), within the price's derived bound: the backends
// compute e^{-qT} and e^{-rT} with their own exp, a few ulps of S or X apart.
TEST_P(BlackScholesScenarios, ZeroMaturityOrVolatilityGivesTheDiscountedIntrinsicValue) {
  Book b;
  // {S, X, T, r, v, q}
  const double cases[][6] = {{100, 90, 0, 0.05, 0.2, 0.01}, {100, 110, 0, 0.05, 0.2, 0.0},
                             {100, 90, 2, 0.05, 0, 0.01},   {100, 120, 2, 0.05, 0, 0.0},
                             {100, 0, 1, 0.03, 0.25, 0.02}, {50, 50, 0, 0.0, 0.0, 0.0}};
  for (const auto& c : cases) {
    b.spot.push_back(c[0]), b.strike.push_back(c[1]), b.maturity.push_back(c[2]);
    b.rate.push_back(c[3]), b.volatility.push_back(c[4]), b.dividend.push_back(c[5]);
  }
  for (NormalCdf cdf : {NormalCdf::erfc, NormalCdf::hull_polynomial}) {
    for (bool greeks : {false, true}) {
      const Priced<double> p = price_on<double>(context(), b, cdf, greeks);
      for (std::size_t i = 0; i < b.size(); ++i) {
        const double fwd = b.spot[i] * std::exp(-b.dividend[i] * b.maturity[i]);
        const double pvk = b.strike[i] * std::exp(-b.rate[i] * b.maturity[i]);
        const auto ref = closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i],
                                     b.volatility[i], b.dividend[i]);
        // The reference's branch is the intrinsic value itself, not the formula near it.
        ASSERT_NEAR(static_cast<double>(ref.call), std::max(fwd - pvk, 0.0), 1e-12) << i;
        ASSERT_NEAR(static_cast<double>(ref.put), std::max(pvk - fwd, 0.0), 1e-12) << i;
        const double tol = testing::price_tolerance<double>(b.spot[i], b.strike[i], b.maturity[i],
                                                            b.rate[i], b.dividend[i], cdf);
        EXPECT_NEAR(p.call[i], static_cast<double>(ref.call), tol) << i << " greeks " << greeks;
        EXPECT_NEAR(p.put[i], static_cast<double>(ref.put), tol) << i << " greeks " << greeks;
        if (!greeks) continue;
        for (const auto* g : {&p.call_delta, &p.put_delta, &p.gamma, &p.vega, &p.call_theta,
                              &p.put_theta, &p.call_rho, &p.put_rho})
          EXPECT_TRUE(std::isfinite((*g)[i])) << i;
        EXPECT_EQ(p.gamma[i], 0.0) << i;
      }
    }
  }
}

TEST_P(BlackScholesScenarios, NaNInputGivesNaNForThatOptionOnly) {
  Book b = testing::seed_like_book(3, 5);
  b.volatility[1] = std::numeric_limits<double>::quiet_NaN();
  const Priced<double> p = price_on<double>(context(), b, NormalCdf::erfc, false);
  EXPECT_TRUE(std::isfinite(p.call[0]) && std::isfinite(p.call[2]));
  EXPECT_TRUE(std::isfinite(p.put[0]) && std::isfinite(p.put[2]));
  EXPECT_TRUE(std::isnan(p.call[1]) && std::isnan(p.put[1]));
}

// Bitwise the same whatever the CPU thread count or the CUDA host path's chunk size (1000 and
// 65537 options: a thousand chunks and ragged ones), each within its bound of the closed form.
TEST_P(BlackScholesScenarios, ResultsDoNotDependOnThreadsOrChunks) {
  const Book b = testing::seed_like_book((1 << 20) + 3, 9);
  const std::tuple<int, std::int64_t> shapes[] = {{2, 1000}, {5, 65537}};
  const Priced<double> first =
      price_on<double>(context(1), b, NormalCdf::erfc, true, /*chunk_options=*/0);
  for (const auto& [threads, chunk] : shapes) {
    SCOPED_TRACE(::testing::Message() << threads << " threads, chunks of " << chunk);
    const Priced<double> p = price_on<double>(context(threads), b, NormalCdf::erfc, true, chunk);
    const std::size_t bytes = b.size() * sizeof(double);
    EXPECT_EQ(0, std::memcmp(p.call.data(), first.call.data(), bytes));
    EXPECT_EQ(0, std::memcmp(p.put.data(), first.put.data(), bytes));
    EXPECT_EQ(0, std::memcmp(p.call_delta.data(), first.call_delta.data(), bytes));
    EXPECT_EQ(0, std::memcmp(p.vega.data(), first.vega.data(), bytes));
    EXPECT_EQ(0, std::memcmp(p.put_rho.data(), first.put_rho.data(), bytes));
    for (std::size_t i = 0; i < b.size(); ++i) {
      const auto ref = closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i],
                                   b.volatility[i], b.dividend[i]);
      const double tol = testing::price_tolerance<double>(
          b.spot[i], b.strike[i], b.maturity[i], b.rate[i], b.dividend[i], NormalCdf::erfc);
      ASSERT_NEAR(p.call[i], static_cast<double>(ref.call), tol) << "option " << i;
      ASSERT_NEAR(p.put[i], static_cast<double>(ref.put), tol) << "option " << i;
    }
  }
}

// Without Greeks the GPU takes the lean call/put kernels, whose vector body and scalar tail
// compute 1/sigma by different routines; chunks of odd sizes move options between the two, so the
// prices must not depend on where the chunks end. Every precision and CDF.
template <class Real>
void expect_prices_independent_of_chunks(const Context& one, const Context& many) {
  const Book b = testing::seed_like_book((1 << 18) + 7, 11);
  for (const NormalCdf cdf :
       {NormalCdf::erfc, NormalCdf::hull_polynomial, NormalCdf::hull_polynomial_fast_math}) {
    const Priced<Real> first = price_on<Real>(one, b, cdf, false, /*chunk_options=*/0);
    for (const std::int64_t chunk : {std::int64_t{1001}, std::int64_t{65537}}) {
      SCOPED_TRACE(::testing::Message() << sizeof(Real) * 8 << "-bit, cdf " << static_cast<int>(cdf)
                                        << ", chunks of " << chunk);
      const Priced<Real> p = price_on<Real>(many, b, cdf, false, chunk);
      const std::size_t bytes = b.size() * sizeof(Real);
      EXPECT_EQ(0, std::memcmp(p.call.data(), first.call.data(), bytes));
      EXPECT_EQ(0, std::memcmp(p.put.data(), first.put.data(), bytes));
    }
  }
}

TEST_P(BlackScholesScenarios, PricesWithoutGreeksDoNotDependOnChunks) {
  expect_prices_independent_of_chunks<float>(context(1), context(3));
  expect_prices_independent_of_chunks<double>(context(1), context(3));
}

// Calls and puts mixed in one book, in an irregular pattern (vectors of the GPU kernels hold
// both, and any non-zero byte is a put): each option gets the bits of its side priced for a whole
// book of that side, its price and, with Greeks, its delta, theta and rho; gamma and vega are the
// same on both sides. Every precision and CDF, outputs poisoned first.
template <class Real>
void expect_each_option_on_its_own_side(const Context& context) {
  const Book b = testing::extreme_book(4099, 31);
  std::vector<std::uint8_t> is_put(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    is_put[i] = (i * 7) % 3 == 0 ? static_cast<std::uint8_t>(1 + i % 255) : 0;
  }
  for (const NormalCdf cdf :
       {NormalCdf::erfc, NormalCdf::hull_polynomial, NormalCdf::hull_polynomial_fast_math}) {
    for (const bool greeks : {false, true}) {
      SCOPED_TRACE(::testing::Message() << sizeof(Real) * 8 << "-bit, cdf " << static_cast<int>(cdf)
                                        << (greeks ? ", greeks" : ""));
      const Priced<Real> both = price_on<Real>(context, b, cdf, greeks);
      const Sided<Real> own = price_sided<Real>(context, b, {is_put.data(), 0}, cdf, greeks);
      for (std::size_t i = 0; i < b.size(); ++i) {
        const bool put = is_put[i] != 0;
        ASSERT_EQ(own.price[i], put ? both.put[i] : both.call[i]) << "option " << i;
        if (!greeks) continue;
        ASSERT_EQ(own.delta[i], put ? both.put_delta[i] : both.call_delta[i]) << "option " << i;
        ASSERT_EQ(own.theta[i], put ? both.put_theta[i] : both.call_theta[i]) << "option " << i;
        ASSERT_EQ(own.rho[i], put ? both.put_rho[i] : both.call_rho[i]) << "option " << i;
        ASSERT_EQ(own.gamma[i], both.gamma[i]) << "option " << i;
        ASSERT_EQ(own.vega[i], both.vega[i]) << "option " << i;
      }
    }
  }
}

TEST_P(BlackScholesScenarios, EachOptionIsPricedOnItsOwnSide) {
  expect_each_option_on_its_own_side<float>(context());
  expect_each_option_on_its_own_side<double>(context());
}

// A book of puts: gamma and vega are those of the calls (they do not depend on the side), and a
// book-wide side reaches every option of a chunked CUDA book.
TEST_P(BlackScholesScenarios, GammaAndVegaAreTheSameOnBothSides) {
  const Book b = testing::seed_like_book(70001, 12);
  const Sided<double> calls = price_sided<double>(context(), b, {nullptr, 0}, NormalCdf::erfc, true,
                                                  /*chunk_options=*/4096);
  const Sided<double> puts = price_sided<double>(context(), b, {nullptr, 1}, NormalCdf::erfc, true,
                                                 /*chunk_options=*/4096);
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(calls.gamma[i], puts.gamma[i]) << "option " << i;
    ASSERT_EQ(calls.vega[i], puts.vega[i]) << "option " << i;
    ASSERT_LE(puts.delta[i], 0.0) << "option " << i;
    ASSERT_GE(calls.delta[i], 0.0) << "option " << i;
  }
}

TEST_P(BlackScholesScenarios, NegativeCountIsInvalidInput) {
  BlackScholesInputs<double> in;
  in.count = -1;
  EXPECT_THROW(price_black_scholes(context(), in, BlackScholesOutputs<double>{}), InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(BlackScholesScenarios);

// A book priced the way `gpukit bs` prices it, checked the way `bs --check` checks it.
struct CheckedBook {
  std::vector<std::uint8_t> is_put;
  Book book;
  OptionBookView view() const { return testing::book_view(book, is_put.data()); }
};

CheckedBook checked_book(Book b) {
  CheckedBook c{std::vector<std::uint8_t>(b.size()), std::move(b)};
  for (std::size_t i = 0; i < c.is_put.size(); ++i) c.is_put[i] = static_cast<std::uint8_t>(i % 2);
  return c;
}

class BlackScholesCheckScenarios : public EveryBackendTest {
 protected:
  EuropeanBookResult price(const CheckedBook& c, Precision precision, NormalCdf cdf) const {
    BlackScholesOptions options;
    options.cdf = cdf;
    return price_european_book(context(/*cpu_threads=*/2), c.view(), precision, false, options);
  }
  BlackScholesCheck price_and_check(const CheckedBook& c, Precision precision,
                                    NormalCdf cdf) const {
    return check_european_book_prices(c.view(), precision, cdf, price(c, precision, cdf).price);
  }
};

// False failures of the old --check (max abs error against the CPU's own double path, 1e-9 in
// double, 1e-4 in float): Hull's polynomial in double is off by up to ~1e-5 of a price, and a
// float book at spot 25000 by ~1e-2; both are correct and pass the derived bounds.
TEST_P(BlackScholesCheckScenarios, CorrectBooksPassInEveryPrecisionAndCdf) {
  const CheckedBook seed_like = checked_book(testing::seed_like_book(20001, 31));
  const CheckedBook extreme = checked_book(testing::extreme_book(20001, 32));
  Book big = testing::seed_like_book(4001, 33);
  for (std::size_t i = 0; i < big.size(); ++i) big.spot[i] *= 1000, big.strike[i] *= 1000;
  const CheckedBook large_spot = checked_book(big);
  for (const CheckedBook* c : {&seed_like, &extreme, &large_spot}) {
    for (const Precision p : {Precision::float64, Precision::float32}) {
      for (const NormalCdf cdf :
           {NormalCdf::erfc, NormalCdf::hull_polynomial, NormalCdf::hull_polynomial_fast_math}) {
        const BlackScholesCheck check = price_and_check(*c, p, cdf);
        EXPECT_TRUE(check.passed) << "precision " << int(p) << " cdf " << int(cdf) << " worst "
                                  << check.worst_ratio << " at " << check.worst_index;
        EXPECT_LE(check.worst_ratio, 1.0);
      }
    }
  }
  // The derived bound is not vacuous: Hull's polynomial in double uses a visible part of it.
  const BlackScholesCheck hull =
      price_and_check(seed_like, Precision::float64, NormalCdf::hull_polynomial);
  EXPECT_GT(hull.worst_ratio, 0.01);
  EXPECT_GT(hull.metrics.max_abs, 1e-9);  // what the old 1e-9 bound refused
}

// False passes: a wrong result must fail, whatever computed it.
TEST_P(BlackScholesCheckScenarios, WrongPricesFail) {
  const CheckedBook c = checked_book(testing::seed_like_book(1001, 34));
  for (const Precision p : {Precision::float64, Precision::float32}) {
    const EuropeanBookResult r = price(c, p, NormalCdf::erfc);
    ASSERT_TRUE(check_european_book_prices(c.view(), p, NormalCdf::erfc, r.price).passed);
    std::vector<double> zero_puts = r.price;
    for (std::size_t i = 0; i < zero_puts.size(); ++i)
      if (c.is_put[i]) zero_puts[i] = 0;
    EXPECT_FALSE(check_european_book_prices(c.view(), p, NormalCdf::erfc, zero_puts).passed);
    // One price off by a part in 10^4 of its size.
    std::vector<double> one_off = r.price;
    std::size_t largest = 0;
    for (std::size_t i = 0; i < one_off.size(); ++i)
      if (one_off[i] > one_off[largest]) largest = i;
    one_off[largest] *= 1 + 1e-4;
    const BlackScholesCheck check =
        check_european_book_prices(c.view(), p, NormalCdf::erfc, one_off);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.worst_index, static_cast<std::int64_t>(largest));
    std::vector<double> nan = r.price;
    nan[7] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_FALSE(check_european_book_prices(c.view(), p, NormalCdf::erfc, nan).passed);
  }
  // Priced with the polynomial but checked as erfc in double: the bound knows the difference.
  const EuropeanBookResult hull = price(c, Precision::float64, NormalCdf::hull_polynomial);
  EXPECT_FALSE(
      check_european_book_prices(c.view(), Precision::float64, NormalCdf::erfc, hull.price).passed);
}

// Issue 30: `gpukit bs --check` on a large book ran for minutes without a word; the check now
// tells its progress every 2^16 rows, and what the report throws stops it.
TEST_P(BlackScholesCheckScenarios, TheCheckReportsItsProgressEveryChunkOfRows) {
  const CheckedBook c = checked_book(testing::seed_like_book((1 << 17) + 5, 35));
  const EuropeanBookResult r = price(c, Precision::float64, NormalCdf::erfc);
  std::vector<double> seen;
  const BlackScholesCheck check =
      check_european_book_prices(c.view(), Precision::float64, NormalCdf::erfc, r.price, 2,
                                 [&](double fraction) { seen.push_back(fraction); });
  EXPECT_TRUE(check.passed);
  const double rows = (1 << 17) + 5;
  EXPECT_EQ(seen, (std::vector<double>{65536 / rows, 131072 / rows, 1.0}));
  int calls = 0;
  EXPECT_THROW(check_european_book_prices(c.view(), Precision::float64, NormalCdf::erfc, r.price, 2,
                                          [&](double) {
                                            ++calls;
                                            throw IoError("stop");
                                          }),
               IoError);
  EXPECT_EQ(calls, 1);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(BlackScholesCheckScenarios);

// --- CPU only: the oracle itself -----------------------------------------------------------------

// The oracle against a literature value (Hull, Options, Futures and Other Derivatives, example
// 15.6: S 42, X 40, r 10%, sigma 20%, T 0.5: call 4.76, put 0.81, to the printed digits) and the
// textbook formula evaluated independently in Python's double math.erfc.
TEST(BlackScholesReference, MatchesTheTextbookExample) {
  const ReferencePrices p = black_scholes_reference(42, 40, 0.5, 0.1, 0.2, 0);
  EXPECT_NEAR(static_cast<double>(p.call), 4.76, 0.005);
  EXPECT_NEAR(static_cast<double>(p.put), 0.81, 0.005);
  EXPECT_NEAR(static_cast<double>(p.call), 4.759422392871535, 1e-12);
  EXPECT_NEAR(static_cast<double>(p.put), 0.8085993729000958, 1e-12);
}

}  // namespace
}  // namespace gpukit::finance
