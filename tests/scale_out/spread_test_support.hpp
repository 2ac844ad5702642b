#pragma once
// What the scale-out tests of books and arrays share (spread_test.cpp in one process,
// spread_mpi_test.cpp under mpirun): a random option book that owns its columns, and bitwise
// comparison of result columns.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpukit/finance/instrument.hpp"

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

/// Whether two columns hold the same bits, element by element (NaN payloads and signed zeros
/// included), with the first difference in the failure message.
inline ::testing::AssertionResult same_bits(const std::vector<double>& expected,
                                            const std::vector<double>& got) {
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " values where " << expected.size() << " were expected";
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&expected[i], &got[i], sizeof(double)) != 0) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got[i] << " where " << expected[i] << " was expected";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace gpukit::scale_out_testing
