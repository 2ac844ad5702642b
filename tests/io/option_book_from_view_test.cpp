// A book view made in memory becomes the CSV book a reader would have made of its text: the
// columns, the exact text of each field, and the round trip through write_priced_book and
// read_option_book back to the same values, bit for bit.

#include "gpukit/io/option_book_from_view.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "gpukit/core/error.hpp"

namespace gpukit::io {
namespace {

struct Columns {
  std::vector<std::uint8_t> is_put = {0, 1, 0};
  std::vector<double> spot = {25.5, 0.1, 1.0 / 3};
  std::vector<double> strike = {30, 1e-7, 12345.678};
  std::vector<double> maturity = {0.25, 10, 0};
  finance::OptionBookView view() const {
    return {3,
            is_put.data(),
            spot.data(),
            strike.data(),
            maturity.data(),
            {nullptr, 0.02},
            {nullptr, 0.3},
            {}};
  }
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(OptionBookFromView, ColumnsAndTheShortestTextOfEveryValue) {
  const Columns c;
  const OptionBook book = option_book_from_view(c.view(), "generated");
  EXPECT_EQ(book.source, "generated");
  EXPECT_EQ(book.columns, (std::vector<std::string>{"id", "type", "spot", "strike", "maturity",
                                                    "rate", "volatility"}));
  ASSERT_EQ(book.size(), 3u);
  const char* row1[] = {"1", "put", "0.1", "1e-07", "10", "0.02", "0.3"};
  for (std::size_t col = 0; col < 7; ++col) EXPECT_EQ(book.field(1, col), row1[col]) << col;
  EXPECT_EQ(book.field(2, 2), "0.3333333333333333");
  EXPECT_EQ(book.field(2, 3), "12345.678");
  EXPECT_EQ(book.field(0, 1), "call");

  std::ostringstream out;
  const std::vector<double> price = {1.5, 2.25, 0};
  const OutputColumn extra[] = {{"price", price}};
  write_priced_book(out, book, extra);
  EXPECT_EQ(out.str(),
            "id,type,spot,strike,maturity,rate,volatility,price\n"
            "0,call,25.5,30,0.25,0.02,0.3,1.5\n"
            "1,put,0.1,1e-07,10,0.02,0.3,2.25\n"
            "2,call,0.3333333333333333,12345.678,0,0.02,0.3,0\n");
}

TEST(OptionBookFromView, ReadsBackAsTheSameValues) {
  Columns c;
  std::vector<double> dividend = {0.01, 0, 1.0 / 7};
  finance::OptionBookView view = c.view();
  view.dividend = {dividend.data()};
  const OptionBook book = option_book_from_view(view, "generated");
  EXPECT_EQ(book.columns.back(), "dividend");
  std::ostringstream out;
  write_priced_book(out, book, {});
  std::istringstream in(out.str());
  const OptionBook back = read_option_book(in, "back", {});
  const finance::OptionBookView v = instrument_view(back);
  ASSERT_EQ(v.count, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(v.is_put[i], c.is_put[i]) << i;
    EXPECT_TRUE(same_bits(v.spot[i], c.spot[i])) << i;
    EXPECT_TRUE(same_bits(v.strike[i], c.strike[i])) << i;
    EXPECT_TRUE(same_bits(v.maturity[i], c.maturity[i])) << i;
    ASSERT_NE(v.rate.values, nullptr);
    EXPECT_EQ(v.rate.values[i], 0.02) << i;
    EXPECT_EQ(v.volatility.values[i], 0.3) << i;
    EXPECT_TRUE(same_bits(v.dividend.values[i], dividend[i])) << i;
  }
}

TEST(OptionBookFromView, RefusesBarrierRowsAndNegativeCounts) {
  const Columns c;
  finance::OptionBookView view = c.view();
  const std::vector<finance::BarrierType> types = {
      finance::BarrierType::none, finance::BarrierType::up_in, finance::BarrierType::none};
  view.barrier_type = types.data();
  EXPECT_THROW(option_book_from_view(view, "generated"), InvalidInput);
  view = c.view();
  view.count = -1;
  EXPECT_THROW(option_book_from_view(view, "generated"), InvalidInput);
  view.count = 0;
  EXPECT_EQ(option_book_from_view(view, "generated").size(), 0u);
}

}  // namespace
}  // namespace gpukit::io
