// The lean-math arithmetic (the lean-math CUDA variants' body), each side, on the CPU: against the
// long-double closed form and against price_option on books that reach both tails, and on the
// degenerate and NaN inputs. The GPU tests run the same function in the kernels.

#include "finance/black_scholes_lean_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "black_scholes_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using testing::Book;

// Distance in units in the last place of the correctly rounded result (long double reference).
double ulps(double got, long double exact) {
  const double rounded = static_cast<double>(exact);
  const double ulp = std::nextafter(std::abs(rounded), INFINITY) - std::abs(rounded);
  return static_cast<double>(std::abs(static_cast<long double>(got) - exact) / ulp);
}

TEST(BlackScholesLeanMath, DoubleExpWithinOneUlpAndTheLibraryBeyondItsRange) {
  const gpukit::testing::TestSeed seed;
  std::mt19937_64 rng(seed.value() + 51);
  std::uniform_real_distribution<double> wide(-707.9, 707.9), narrow(-2, 2);
  double worst = 0;
  for (int i = 0; i < 400000; ++i) {
    const double x = i % 2 ? wide(rng) : narrow(rng);
    worst =
        std::max(worst, ulps(detail::lean_exp_double(x), std::exp(static_cast<long double>(x))));
  }
  // Where the reduction switches table entry (x = (j + 1/2) ln2/64) and at the range's ends.
  for (int j = -64 * 1021; j <= 64 * 1021; j += 37) {
    const double edge = (j + 0.5) * (0.69314718055994530942 / 64);
    for (double x : {std::nextafter(edge, -INFINITY), edge, std::nextafter(edge, INFINITY)}) {
      if (std::abs(x) >= 708) continue;
      worst =
          std::max(worst, ulps(detail::lean_exp_double(x), std::exp(static_cast<long double>(x))));
    }
  }
  for (double x : {-707.99999, 707.99999}) {
    worst =
        std::max(worst, ulps(detail::lean_exp_double(x), std::exp(static_cast<long double>(x))));
  }
  std::printf("lean_exp_double: max error %.3f ulp over about 410000 arguments in [-708, 708]\n",
              worst);
  EXPECT_LE(worst, 1.0);
  for (double x : {0.0, -0.0, 1e-300, -1e-300, 0.5 * 0.6931471805599453, 708.5, -709.0, -745.0,
                   -800.0, 800.0}) {
    EXPECT_EQ(detail::lean_exp_double(x), std::exp(x)) << x;
  }
  EXPECT_EQ(detail::lean_exp_double(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_TRUE(std::isnan(detail::lean_exp_double(NAN)));
}

TEST(BlackScholesLeanMath, DoubleLogWithinOneUlpAndTheLibraryBeyondItsRange) {
  const gpukit::testing::TestSeed seed;
  std::mt19937_64 rng(seed.value() + 52);
  // Close to 1 the result is small and its ulp too: the table's two intervals next to 1 and
  // their neighbours, where the sum k ln2 - ln(1/c) + log1p(r) must not lose relative accuracy.
  std::uniform_real_distribution<double> exponent(-1020, 1020), near_one(0.5, 2),
      closest_to_one(1 - 0x1p-5, 1 + 0x1p-5);
  double worst = 0;
  for (int i = 0; i < 450000; ++i) {
    const double x = i % 3 == 0   ? std::exp2(exponent(rng))
                     : i % 3 == 1 ? near_one(rng)
                                  : closest_to_one(rng);
    worst =
        std::max(worst, ulps(detail::lean_log_double(x), std::log(static_cast<long double>(x))));
  }
  // Every interval boundary of the table, and its neighbours, in several binades.
  for (std::int32_t i = 0; i <= 128; ++i) {
    for (int k : {-1000, -1, 0, 1, 1000}) {
      const double edge = std::ldexp(detail::double_from_words(0x3fe6a000 + i * 0x2000, 0),
                                     k);  // z = sqrt(2)/2 ...
      for (double x : {std::nextafter(edge, 0.0), edge, std::nextafter(edge, INFINITY)}) {
        worst = std::max(worst,
                         ulps(detail::lean_log_double(x), std::log(static_cast<long double>(x))));
      }
    }
  }
  std::printf("lean_log_double: max error %.3f ulp over 451935 normal arguments\n", worst);
  EXPECT_LE(worst, 1.0);
  const double finite[] = {1.0,
                           2.0,
                           0.5,
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::denorm_min()};
  for (double x : finite) {
    EXPECT_NEAR(detail::lean_log_double(x), std::log(x), 1e-15 * std::abs(std::log(x))) << x;
  }
  EXPECT_EQ(detail::lean_log_double(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(detail::lean_log_double(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(detail::lean_log_double(-1.0)));
  EXPECT_TRUE(std::isnan(detail::lean_log_double(NAN)));
}

// Both sides of one option through the arithmetic that prices one side (its call, then its put),
// to compare with references that give both.
template <class Real>
struct CallPut {
  Real call, put;
};

template <class Real, NormalCdf Cdf>
CallPut<Real> lean_call_put(Real spot, Real strike, Real maturity, Real rate, Real volatility,
                            Real dividend) {
  return {detail::price_lean<Real, Cdf>(spot, strike, maturity, rate, volatility, dividend, false),
          detail::price_lean<Real, Cdf>(spot, strike, maturity, rate, volatility, dividend, true)};
}

template <class Real, NormalCdf Cdf>
CallPut<Real> shared_call_put(Real spot, Real strike, Real maturity, Real rate, Real volatility,
                              Real dividend) {
  const auto side = [&](bool is_put) {
    return detail::price_option<Real, Cdf, false>(spot, strike, maturity, rate, volatility,
                                                  dividend, is_put)
        .price;
  };
  return {side(false), side(true)};
}

// The vector path's calls and puts of N options, and its prices of the same N options with the
// sides `is_put` mixes.
template <int N, bool kDividend>
void lean_pair_call_put(const double (&spot)[N], const double (&strike)[N],
                        const double (&maturity)[N], const double (&rate)[N],
                        const double (&volatility)[N], const double (&inv_volatility)[N],
                        const double (&dividend)[N], CallPut<double> (&out)[N]) {
  bool calls[N], puts[N];
  double call[N], put[N];
  for (int k = 0; k < N; ++k) calls[k] = false, puts[k] = true;
  detail::price_lean_hull_double<N, kDividend>(spot, strike, maturity, rate, volatility,
                                               inv_volatility, dividend, calls, call);
  detail::price_lean_hull_double<N, kDividend>(spot, strike, maturity, rate, volatility,
                                               inv_volatility, dividend, puts, put);
  for (int k = 0; k < N; ++k) out[k] = {call[k], put[k]};
}

template <class Real, NormalCdf Cdf>
CallPut<Real> lean(const Book& b, std::size_t i) {
  return lean_call_put<Real, Cdf>(Real(b.spot[i]), Real(b.strike[i]), Real(b.maturity[i]),
                                  Real(b.rate[i]), Real(b.volatility[i]), Real(b.dividend[i]));
}

template <class Real, NormalCdf Cdf>
CallPut<Real> shared(const Book& b, std::size_t i) {
  return shared_call_put<Real, Cdf>(Real(b.spot[i]), Real(b.strike[i]), Real(b.maturity[i]),
                                    Real(b.rate[i]), Real(b.volatility[i]), Real(b.dividend[i]));
}

// Extreme books (strikes e^-3..e^3 times spot, 1 day to 30 years, volatilities 0.01-3) and the
// seed's ranges, erfc CND: within the same tolerance as price_option of the closed form.
template <class Real>
void expect_erfc_matches_the_closed_form(const Book& b, std::uint64_t seed) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto got = lean<Real, NormalCdf::erfc>(b, i);
    const auto ref =
        testing::closed_form(Real(b.spot[i]), Real(b.strike[i]), Real(b.maturity[i]),
                             Real(b.rate[i]), Real(b.volatility[i]), Real(b.dividend[i]));
    const double tol = testing::price_tolerance<Real>(b.spot[i], b.strike[i], b.maturity[i],
                                                      b.rate[i], b.dividend[i], NormalCdf::erfc);
    ASSERT_NEAR(got.call, double(ref.call), tol) << "seed " << seed << " option " << i;
    ASSERT_NEAR(got.put, double(ref.put), tol) << "seed " << seed << " option " << i;
  }
}

TEST(BlackScholesLeanMath, ErfcMatchesTheIndependentClosedForm) {
  const gpukit::testing::TestSeed seed;
  expect_erfc_matches_the_closed_form<double>(testing::extreme_book(20000, seed.value() + 31),
                                              seed.value() + 31);
  expect_erfc_matches_the_closed_form<float>(testing::extreme_book(20000, seed.value() + 32),
                                             seed.value() + 32);
  expect_erfc_matches_the_closed_form<double>(testing::seed_like_book(5000, seed.value() + 33),
                                              seed.value() + 33);
  expect_erfc_matches_the_closed_form<float>(testing::seed_like_book(5000, seed.value() + 34),
                                             seed.value() + 34);
}

TEST(BlackScholesLeanMath, DoubleErfcWithin1e9OfTheClosedForm) {
  const gpukit::testing::TestSeed seed;
  const Book b = testing::extreme_book(20000, seed.value() + 35);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto got = lean<double, NormalCdf::erfc>(b, i);
    const auto ref = testing::closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i],
                                          b.volatility[i], b.dividend[i]);
    ASSERT_NEAR(got.call, double(ref.call), 1e-9) << "option " << i;
    ASSERT_NEAR(got.put, double(ref.put), 1e-9) << "option " << i;
  }
}

// Hull's CND from one exponential (F phi(d1) = K phi(d2)) against price_option's two: the same
// polynomial, so only rounding separates them, in both tails and for sigma sqrt T up to 30
// (d1 and d2 far apart).
template <class Real>
void expect_hull_matches_price_option(const Book& b, std::uint64_t seed) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto got = lean<Real, NormalCdf::hull_polynomial>(b, i);
    const auto ref = shared<Real, NormalCdf::hull_polynomial>(b, i);
    const double tol = testing::price_tolerance<Real>(b.spot[i], b.strike[i], b.maturity[i],
                                                      b.rate[i], b.dividend[i], NormalCdf::erfc);
    ASSERT_NEAR(got.call, ref.call, tol) << "seed " << seed << " option " << i;
    ASSERT_NEAR(got.put, ref.put, tol) << "seed " << seed << " option " << i;
  }
}

Book very_volatile_book(std::size_t n, std::uint64_t seed) {
  Book b = testing::extreme_book(n, seed);
  for (std::size_t i = 0; i < n; ++i) b.volatility[i] = 0.5 + 5 * (i % 7) / 7.0;
  for (std::size_t i = 0; i < n; ++i) b.maturity[i] = 1 + (i % 29);
  return b;
}

TEST(BlackScholesLeanMath, HullFromOneExponentialMatchesTheSharedArithmetic) {
  const gpukit::testing::TestSeed seed;
  expect_hull_matches_price_option<double>(testing::extreme_book(20000, seed.value() + 41),
                                           seed.value() + 41);
  expect_hull_matches_price_option<float>(testing::extreme_book(20000, seed.value() + 42),
                                          seed.value() + 42);
  expect_hull_matches_price_option<double>(very_volatile_book(5000, seed.value() + 43),
                                           seed.value() + 43);
  expect_hull_matches_price_option<float>(very_volatile_book(5000, seed.value() + 44),
                                          seed.value() + 44);
  expect_hull_matches_price_option<float>(testing::seed_like_book(5000, seed.value() + 45),
                                          seed.value() + 45);
}

// The double Hull path that prices two options at once (the lean kernels' 16-byte vectors):
// inside its ranges within rounding of price_option's Hull (both tails, sigma sqrt T up to 30),
// with and without dividends.
template <bool kDividend>
void expect_hull_pairs_match_price_option(const Book& b, std::uint64_t seed) {
  for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
    const double spot[2] = {b.spot[i], b.spot[i + 1]}, strike[2] = {b.strike[i], b.strike[i + 1]};
    const double maturity[2] = {b.maturity[i], b.maturity[i + 1]};
    const double rate[2] = {b.rate[i], b.rate[i + 1]};
    const double volatility[2] = {b.volatility[i], b.volatility[i + 1]};
    const double inv_volatility[2] = {1 / volatility[0], 1 / volatility[1]};
    const double dividend[2] = {kDividend ? b.dividend[i] : 0.0,
                                kDividend ? b.dividend[i + 1] : 0.0};
    CallPut<double> got[2];
    lean_pair_call_put<2, kDividend>(spot, strike, maturity, rate, volatility, inv_volatility,
                                     dividend, got);
    // A pair of a call and a put gives each the bits of its side.
    const bool mixed[2] = {i % 4 == 0, i % 4 != 0};
    double mixed_price[2];
    detail::price_lean_hull_double<2, kDividend>(spot, strike, maturity, rate, volatility,
                                                 inv_volatility, dividend, mixed, mixed_price);
    for (int k = 0; k < 2; ++k) {
      const auto ref = shared_call_put<double, NormalCdf::hull_polynomial>(
          spot[k], strike[k], maturity[k], rate[k], volatility[k], dividend[k]);
      const double tol = testing::price_tolerance<double>(spot[k], strike[k], maturity[k], rate[k],
                                                          dividend[k], NormalCdf::erfc);
      ASSERT_NEAR(got[k].call, ref.call, tol) << "seed " << seed << " option " << i + k;
      ASSERT_NEAR(got[k].put, ref.put, tol) << "seed " << seed << " option " << i + k;
      ASSERT_EQ(mixed_price[k], mixed[k] ? got[k].put : got[k].call)
          << "seed " << seed << " option " << i + k;
    }
  }
}

TEST(BlackScholesLeanMath, HullPairsMatchTheSharedArithmetic) {
  const gpukit::testing::TestSeed seed;
  expect_hull_pairs_match_price_option<true>(testing::extreme_book(20000, seed.value() + 61),
                                             seed.value() + 61);
  expect_hull_pairs_match_price_option<false>(testing::extreme_book(20000, seed.value() + 62),
                                              seed.value() + 62);
  expect_hull_pairs_match_price_option<true>(very_volatile_book(5000, seed.value() + 63),
                                             seed.value() + 63);
  expect_hull_pairs_match_price_option<false>(testing::seed_like_book(5000, seed.value() + 64),
                                              seed.value() + 64);
}

// Outside the pair path's ranges (either option of the pair) both options take
// price_lean, bit for bit: degenerate, NaN, huge and tiny inputs, |d1| at 37.
TEST(BlackScholesLeanMath, HullPairsTakeTheCheckedPathOnlyForTheOptionOutsideItsRanges) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::numeric_limits<double>::denorm_min();
  // {S, X, T, r, v, q}
  const double odd[][6] = {{100, 90, 0, 0.05, 0.2, 0.01},       {100, 0, 1, 0.03, 0.25, 0.02},
                           {100, 100, tiny, 0, 0.3, 0},         {100, 100, 1, 0, tiny, 0},
                           {nan, 95, 1, 0.03, 0.25, 0.01},      {100, nan, 1, 0.03, 0.25, 0.01},
                           {100, 95, nan, 0.03, 0.25, 0.01},    {100, 95, 1, nan, 0.25, 0.01},
                           {100, 95, 1, 0.03, nan, 0.01},       {100, 95, 1, 0.03, 0.25, nan},
                           {100, 95, 1, 0.03, 0.25, inf},       {inf, 95, 1, 0.03, 0.25, 0},
                           {0x1p256, 95, 1, 0.03, 0.25, 0},     {100, 0x1p-257, 1, 0.03, 0.25, 0},
                           {100, 95, 0x1p300, 1e-80, 1e-80, 0}, {100, 95, 1, 0.03, 0x1p257, 0},
                           {100, 95, 10, 50.1, 0.25, 0},        {100, 95, 10, 0.03, 0.25, -50.1},
                           {1e16, 1, 1, 0, 0.001, 0},           {-100, 95, 1, 0.03, 0.25, 0},
                           {100, -95, 1, 0.03, 0.25, 0},        {100, 95, -1, 0.03, 0.25, 0}};
  const double good[6] = {100, 95, 1, 0.03, 0.25, 0.01};
  for (const auto& o : odd) {
    for (int slot = 0; slot < 2; ++slot) {
      const double* a = slot == 0 ? o : good;
      const double* c = slot == 0 ? good : o;
      const double spot[2] = {a[0], c[0]}, strike[2] = {a[1], c[1]}, maturity[2] = {a[2], c[2]};
      const double rate[2] = {a[3], c[3]}, volatility[2] = {a[4], c[4]}, dividend[2] = {a[5], c[5]};
      const double inv_volatility[2] = {1 / a[4], 1 / c[4]};
      CallPut<double> got[2];
      lean_pair_call_put<2, true>(spot, strike, maturity, rate, volatility, inv_volatility,
                                  dividend, got);
      for (int k = 0; k < 2; ++k) {
        // The odd option takes the checked path; the good one keeps the bits it has alone (an
        // option's bits never depend on the option it shares a vector with).
        auto want = lean_call_put<double, NormalCdf::hull_polynomial>(
            spot[k], strike[k], maturity[k], rate[k], volatility[k], dividend[k]);
        if ((slot == 0) != (k == 0)) {
          const double s1[1] = {spot[k]}, x1[1] = {strike[k]}, t1[1] = {maturity[k]},
                       r1[1] = {rate[k]}, v1[1] = {volatility[k]}, q1[1] = {dividend[k]},
                       iv1[1] = {inv_volatility[k]};
          CallPut<double> alone[1];
          lean_pair_call_put<1, true>(s1, x1, t1, r1, v1, iv1, q1, alone);
          want = alone[0];
        }
        const auto same = [](double x, double y) {
          return std::memcmp(&x, &y, sizeof x) == 0 || (std::isnan(x) && std::isnan(y));
        };
        EXPECT_TRUE(same(got[k].call, want.call) && same(got[k].put, want.put))
            << o[0] << " " << o[1] << " " << o[2] << " " << o[3] << " " << o[4] << " " << o[5]
            << " in slot " << slot << ", option " << k << ": " << got[k].call << " " << want.call
            << " " << got[k].put << " " << want.put;
      }
    }
  }
}

template <class Real, NormalCdf Cdf>
void expect_degenerate_cases() {
  SCOPED_TRACE(::testing::Message() << "bytes " << sizeof(Real) << " cdf " << int(Cdf));
  const Real tiny = std::numeric_limits<Real>::denorm_min();
  // {S, X, T, r, v, q}: zero or subnormal maturity or volatility, zero strike, at the money with
  // sigma sqrt T far below the smallest normal number.
  const Real cases[][6] = {{100, 90, 0, 0.05, 0.2, 0.01},
                           {100, 110, 0, 0.05, 0.2, 0},
                           {100, 90, 2, 0.05, 0, 0.01},
                           {100, 120, 2, 0.05, 0, 0},
                           {100, 0, 1, 0.03, 0.25, 0.02},
                           {50, 50, 0, 0, 0, 0},
                           {100, 100, tiny, 0, 0.3, 0},
                           {100, 90, tiny, 0.05, 0.3, 0},
                           {100, 100, 1, 0, tiny, 0},
                           {100, 100, 1e-30f, 0, 1e-30f, 0},
                           // 1/sigma overflows while sigma sqrt T is a normal number
                           {100, 100, 1e30f, 0, tiny * Real(1 << 20), 0}};
  for (const auto& c : cases) {
    const auto got = lean_call_put<Real, Cdf>(c[0], c[1], c[2], c[3], c[4], c[5]);
    const double fwd = double(c[0]) * std::exp(-double(c[5]) * double(c[2]));
    const double pvk = double(c[1]) * std::exp(-double(c[3]) * double(c[2]));
    // Exact up to rounding, except at the money, where Hull's polynomial misses N(0) = 1/2.
    const double tol = 4 * std::numeric_limits<Real>::epsilon() * (fwd + pvk) +
                       (Cdf != NormalCdf::erfc ? 7.5e-8 * (fwd + pvk) : 0.0);
    EXPECT_NEAR(got.call, std::max(fwd - pvk, 0.0), tol) << c[0] << " " << c[1] << " " << c[2];
    EXPECT_NEAR(got.put, std::max(pvk - fwd, 0.0), tol) << c[0] << " " << c[1] << " " << c[2];
  }
  // A NaN in any input gives NaN call and put.
  for (int field = 0; field < 6; ++field) {
    Real in[6] = {100, 95, 1, 0.03, 0.25, 0.01};
    in[field] = std::numeric_limits<Real>::quiet_NaN();
    const auto got = lean_call_put<Real, Cdf>(in[0], in[1], in[2], in[3], in[4], in[5]);
    EXPECT_TRUE(std::isnan(got.call) && std::isnan(got.put)) << "NaN in input " << field;
  }
}

TEST(BlackScholesLeanMath, DegenerateAndNaNInputs) {
  expect_degenerate_cases<double, NormalCdf::erfc>();
  expect_degenerate_cases<double, NormalCdf::hull_polynomial>();
  expect_degenerate_cases<float, NormalCdf::erfc>();
  expect_degenerate_cases<float, NormalCdf::hull_polynomial>();
  expect_degenerate_cases<float, NormalCdf::hull_polynomial_fast_math>();
}

}  // namespace
}  // namespace gpukit::finance
