#pragma once
// Shared by the implied volatility CPU and GPU tests: books of quotes whose prices are generated
// in long double (implied_volatility_model_price, the independent reference) from known
// volatilities, on the grid.

#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "gpukit/finance/choices.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/implied_volatility_reference.hpp"

namespace gpukit::finance::testing {

inline constexpr VolatilityModel kModels[] = {VolatilityModel::black_scholes,
                                              VolatilityModel::black76, VolatilityModel::bachelier};
inline constexpr Precision kPrecisions[] = {Precision::float64, Precision::float32};

inline std::string_view model_name(VolatilityModel model) { return volatility_model_name(model); }
inline const char* precision_name(Precision precision) {
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
inline QuoteBook grid_book(VolatilityModel model, Precision precision, std::size_t n,
                           std::uint64_t seed) {
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

}  // namespace gpukit::finance::testing
