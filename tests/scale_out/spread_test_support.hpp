#pragma once
// What the scale-out tests of books and arrays share (spread_test.cpp in one process,
// spread_mpi_test.cpp under mpirun): a random option book and a random book of quotes that own
// their columns, and bitwise comparison of result columns.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/instrument.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::scale_out_testing {

/// A book of `rows` options with random terms from `seed`: calls and puts; with `barriers`, every
/// barrier kind and a few monitoring dates too (Monte Carlo's rows), else European rows only.
struct RandomBook {
  std::vector<std::uint8_t> is_put;
  std::vector<double> spot, strike, maturity, volatility;
  std::vector<finance::BarrierType> barrier_type;
  std::vector<double> barrier;
  std::vector<std::uint32_t> steps;
  finance::OptionBookView view;

  RandomBook(std::int64_t rows, std::uint64_t seed, bool barriers) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::int64_t i = 0; i < rows; ++i) {
      is_put.push_back(static_cast<std::uint8_t>(gen() % 2));
      spot.push_back(80 + 40 * u(gen));
      strike.push_back(80 + 40 * u(gen));
      maturity.push_back(0.1 + u(gen));
      volatility.push_back(0.1 + 0.4 * u(gen));
      const auto kind = static_cast<finance::BarrierType>(barriers ? i % 5 : 0);
      barrier_type.push_back(kind);
      const bool down =
          kind == finance::BarrierType::down_out || kind == finance::BarrierType::down_in;
      barrier.push_back(spot.back() * (down ? 0.8 : 1.25));
      steps.push_back(static_cast<std::uint32_t>(barriers ? 1 + i % 4 : 1));
    }
    view.count = rows;
    view.is_put = is_put.data();
    view.spot = spot.data();
    view.strike = strike.data();
    view.maturity = maturity.data();
    view.rate = {nullptr, 0.03};
    view.volatility = {volatility.data(), 0};
    view.dividend = {nullptr, 0.01};
    if (barriers) {
      view.barrier_type = barrier_type.data();
      view.barrier = barrier.data();
      view.steps = steps.data();
    }
  }
  RandomBook(const RandomBook&) = delete;
  RandomBook& operator=(const RandomBook&) = delete;
};

/// The two books of the scale-out's newer Monte Carlo paths, on a RandomBook of barrier kinds
/// (7 rows or more): the book itself with the sobol sampler (4 replicates), and the book with
/// early exercise on rows 0 (american) and 5 (bermudan), the rows without a barrier, with Greeks.
struct SobolAndEarlyExercise {
  std::vector<finance::ExerciseStyle> exercise;
  finance::OptionBookView early_view;
  finance::MonteCarloOptions sobol, early;

  SobolAndEarlyExercise(const RandomBook& book, std::uint64_t seed)
      : exercise(static_cast<std::size_t>(book.view.count), finance::ExerciseStyle::european),
        early_view(book.view) {
    exercise[0] = finance::ExerciseStyle::american, exercise[5] = finance::ExerciseStyle::bermudan;
    early_view.exercise = exercise.data();
    sobol.sampler = finance::MonteCarloSampler::sobol;
    sobol.replicates = 4;
    sobol.paths = 4 * 1000;
    sobol.seed = seed;
    early.paths = 3001;
    early.seed = seed;
    early.greeks = true;
  }
};

/// A book of `rows` quotes to invert with random terms from `seed`, calls and puts: most prices
/// between the discounted intrinsic value and the upper bound, every 7th below intrinsic, every
/// 11th at zero maturity and every 13th above the bound, so that each status occurs.
struct RandomQuotes {
  std::vector<std::uint8_t> is_put;
  std::vector<double> price, underlying, strike, maturity, rate;
  finance::ImpliedVolatilityBookView view;

  RandomQuotes(std::int64_t rows, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::int64_t i = 0; i < rows; ++i) {
      const bool put = gen() % 2 == 1;
      is_put.push_back(put ? 1 : 0);
      underlying.push_back(80 + 40 * u(gen));
      strike.push_back(80 + 40 * u(gen));
      maturity.push_back(i % 11 == 10 ? 0.0 : 0.05 + 2 * u(gen));
      rate.push_back(0.05 * u(gen));
      const double discount = std::exp(-rate.back() * maturity.back());
      const double intrinsic = discount * std::max(put ? strike.back() - underlying.back()
                                                       : underlying.back() - strike.back(),
                                                   0.0);
      const double bound = discount * (put ? strike.back() : underlying.back());
      double quote = intrinsic + (bound - intrinsic) * 0.3 * u(gen);
      if (i % 7 == 6) quote = intrinsic * 0.9;
      if (i % 13 == 12) quote = bound * 1.01;
      price.push_back(quote);
    }
    view.count = rows;
    view.is_put = is_put.data();
    view.price = price.data();
    view.underlying = underlying.data();
    view.strike = strike.data();
    view.maturity = maturity.data();
    view.rate = {rate.data(), 0};
    view.dividend = {nullptr, 0};
  }
  RandomQuotes(const RandomQuotes&) = delete;
  RandomQuotes& operator=(const RandomQuotes&) = delete;
};

/// Whether two columns hold the same bits, element by element (NaN payloads and signed zeros
/// included), with the first difference in the failure message.
template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& expected, const std::vector<T>& got) {
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " values where " << expected.size() << " were expected";
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&expected[i], &got[i], sizeof(T)) != 0) {
      const auto shown = [](T value) {  // a status by its number
        if constexpr (std::is_enum_v<T>) {
          return static_cast<int>(value);
        } else {
          return value;
        }
      };
      return ::testing::AssertionFailure() << "element " << i << ": " << shown(got[i]) << " where "
                                           << shown(expected[i]) << " was expected";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace gpukit::scale_out_testing
