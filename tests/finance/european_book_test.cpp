#include "gpukit/finance/european_book.hpp"

#include <gtest/gtest.h>

#include <array>

#include "black_scholes_test_support.hpp"
#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::finance {
namespace {

// A book of calls and puts on every backend: each row gets its own side's price and Greeks.
class EuropeanBookScenarios : public gpukit::testing::EveryBackendTest {};

TEST_P(EuropeanBookScenarios, EachRowTakesItsOwnSideAndGreeks) {
  const testing::Book b = testing::seed_like_book(1001, 31);
  std::vector<std::uint8_t> is_put(b.size());
  for (std::size_t i = 0; i < b.size(); ++i)
    is_put[i] = static_cast<std::uint8_t>((i * 7) % 3 == 0);
  const OptionBookView view = testing::book_view(b, is_put.data());
  for (Precision precision : {Precision::float64, Precision::float32}) {
    const EuropeanBookResult r = price_european_book(context(), view, precision, true);
    ASSERT_EQ(r.price.size(), b.size());
    ASSERT_EQ(r.rho.size(), b.size());
    const double eps = precision == Precision::float32 ? 1.2e-7 : 2.3e-16;
    for (std::size_t i = 0; i < b.size(); ++i) {
      const auto ref = testing::closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i],
                                            b.volatility[i], b.dividend[i]);
      const double scale = b.spot[i] + b.strike[i];
      // float rounds the inputs too: a relative eps in S moves the price by up to eps * S.
      ASSERT_NEAR(r.price[i], double(is_put[i] ? ref.put : ref.call), 128 * eps * scale) << i;
      if (is_put[i]) {
        EXPECT_LE(r.delta[i], 0.0) << i;
        EXPECT_LE(r.rho[i], 0.0) << i;
      } else {
        EXPECT_GE(r.delta[i], 0.0) << i;
        EXPECT_GE(r.rho[i], 0.0) << i;
      }
      EXPECT_GE(r.gamma[i], 0.0) << i;  // underflows to 0 deep out of the money
    }
  }
}

TEST_P(EuropeanBookScenarios, WithoutGreeksOnlyPricesAreReturned) {
  const testing::Book b = testing::seed_like_book(10, 3);
  std::vector<std::uint8_t> is_put(b.size(), 0);
  const OptionBookView view{10,
                            is_put.data(),
                            b.spot.data(),
                            b.strike.data(),
                            b.maturity.data(),
                            {nullptr, 0.02},
                            {nullptr, 0.3},
                            {}};
  const EuropeanBookResult r = price_european_book(context(), view, Precision::float64, false);
  EXPECT_EQ(r.price.size(), 10u);
  EXPECT_TRUE(r.delta.empty());
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto ref = testing::closed_form(b.spot[i], b.strike[i], b.maturity[i], 0.02, 0.3, 0);
    EXPECT_NEAR(r.price[i], double(ref.call), 1e-9) << i;
  }
}

// The one book view carries barrier terms too; Black-Scholes prices European rows only, so a book
// with any barrier row is refused, and one whose rows are all `none` is priced.
TEST_P(EuropeanBookScenarios, RefusesBarrierRowsAndPricesRowsMarkedEuropean) {
  const testing::Book b = testing::seed_like_book(5, 4);
  std::vector<std::uint8_t> is_put(b.size(), 1);
  std::array<BarrierType, 5> barrier_type;  // (a vector here trips g++ 12's -Wfree-nonheap-object)
  barrier_type.fill(BarrierType::none);
  const std::vector<double> barrier(b.size(), 1.0);
  OptionBookView view = testing::book_view(b, is_put.data());
  view.barrier_type = barrier_type.data();
  view.barrier = barrier.data();
  const EuropeanBookResult r = price_european_book(context(), view, Precision::float64, false);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto ref = testing::closed_form(b.spot[i], b.strike[i], b.maturity[i], b.rate[i],
                                          b.volatility[i], b.dividend[i]);
    EXPECT_NEAR(r.price[i], double(ref.put), 1e-9) << i;
  }
  barrier_type[3] = BarrierType::down_out;
  EXPECT_THROW(price_european_book(context(), view, Precision::float64, false), InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(EuropeanBookScenarios);

}  // namespace
}  // namespace gpukit::finance
