// Books of quotes to invert (`gpukit iv`; read_option_book with BookColumns::quotes_on_spot and
// quotes_on_forward): the price and the underlying each model reads, every bad value with its
// file:line:column message, a book priced by `gpukit bs` read as it is, the implied volatility
// view, find_quote_term_problem in the reader's words, and the iv_status column of words written
// (and replaced in place) by write_priced_book.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/io/option_book.hpp"

namespace gpukit::io {
namespace {

OptionBook read_quotes(const std::string& text, BookColumns columns,
                       const BookDefaults& defaults = {},
                       finance::Precision precision = finance::Precision::float64) {
  std::istringstream in(text);
  return read_option_book(in, "quotes.csv", defaults, {}, columns, ',', precision);
}

// The InvalidInput message of reading `text`; fails the test when nothing or another error is
// thrown.
std::string quote_error(const std::string& text, BookColumns columns,
                        const BookDefaults& defaults = {},
                        finance::Precision precision = finance::Precision::float64) {
  try {
    read_quotes(text, columns, defaults, precision);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidInput thrown for:\n" << text;
  return {};
}

BookDefaults rate_default(double rate) { return BookDefaults{rate, std::nullopt, std::nullopt}; }

constexpr BookColumns kOnSpot = BookColumns::quotes_on_spot;
constexpr BookColumns kOnForward = BookColumns::quotes_on_forward;

TEST(QuoteBook, EachModelReadsItsUnderlying) {
  EXPECT_EQ(quote_columns(finance::VolatilityModel::black_scholes), kOnSpot);
  EXPECT_EQ(quote_columns(finance::VolatilityModel::black76), kOnForward);
  EXPECT_EQ(quote_columns(finance::VolatilityModel::bachelier), kOnForward);
}

TEST(QuoteBook, ReadsQuotesOnTheSpotWithTheirDividend) {
  const OptionBook book = read_quotes(
      "id,type,spot,strike,maturity,rate,price,dividend\n"
      "A,call,100,95,0.5,0.01,8.25,0.02\n"
      "B,p,50.5,60,2,-0.005,10,0\n",
      kOnSpot);
  ASSERT_EQ(book.size(), 2u);
  EXPECT_EQ(book.kind, kOnSpot);
  EXPECT_EQ(book.is_put, (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(book.spot, (std::vector<double>{100, 50.5}));
  EXPECT_EQ(book.price, (std::vector<double>{8.25, 10}));
  EXPECT_TRUE(book.forward.empty());
  EXPECT_EQ(book.dividend, (std::vector<double>{0.02, 0}));

  const finance::ImpliedVolatilityBookView view = quote_view(book);
  EXPECT_EQ(view.count, 2);
  EXPECT_EQ(view.is_put, book.is_put.data());
  EXPECT_EQ(view.price, book.price.data());
  EXPECT_EQ(view.underlying, book.spot.data());
  EXPECT_EQ(view.strike, book.strike.data());
  EXPECT_EQ(view.maturity, book.maturity.data());
  EXPECT_EQ(view.rate.values, book.rate.data());
  EXPECT_EQ(view.dividend.values, book.dividend.data());
}

TEST(QuoteBook, ReadsQuotesOnTheForwardWithBookWideRate) {
  // spot, volatility and dividend are pass-through columns of a book of forwards.
  const OptionBook book = read_quotes(
      "type,forward,strike,maturity,price,spot,volatility,dividend\n"
      "put,101.5,100,1,4.5,99,x,y\n",
      kOnForward, rate_default(0.03));
  ASSERT_EQ(book.size(), 1u);
  EXPECT_EQ(book.forward, (std::vector<double>{101.5}));
  EXPECT_TRUE(book.spot.empty());
  EXPECT_TRUE(book.dividend.empty());
  const finance::ImpliedVolatilityBookView view = quote_view(book);
  EXPECT_EQ(view.underlying, book.forward.data());
  EXPECT_EQ(view.rate.values, nullptr);
  EXPECT_EQ(view.rate.scalar, 0.03);
  EXPECT_EQ(view.dividend.values, nullptr);
  EXPECT_EQ(view.dividend.scalar, 0);
}

TEST(QuoteBook, ABookPricedByBsIsReadAsItIs) {
  // `gpukit bs` writes its inputs, then price: volatility passes through.
  const std::string priced =
      "id,type,spot,strike,maturity,rate,volatility,price\n"
      "0,call,100,100,1,0.05,0.2,10.450583572185565\n";
  const OptionBook book = read_quotes(priced, kOnSpot);
  EXPECT_EQ(book.price, (std::vector<double>{10.450583572185565}));
  EXPECT_TRUE(book.volatility.empty());
  EXPECT_EQ(book.field(0, 6), "0.2");
}

TEST(QuoteBook, VolatilityIsNeitherReadNorRequired) {
  const OptionBook book = read_quotes("type,spot,strike,maturity,rate,price\nc,1,1,1,0,0.1\n",
                                      kOnSpot, BookDefaults{std::nullopt, 0.3, std::nullopt});
  EXPECT_EQ(book.size(), 1u);
  EXPECT_TRUE(book.volatility.empty());
}

TEST(QuoteBook, EachBadValueHasFileLineColumnAndName) {
  const std::string header = "type,spot,strike,maturity,rate,price,dividend\n";
  struct Case {
    std::size_t column;
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {5, "-0.01", "quotes.csv:3:6: price: must be >= 0, got \"-0.01\""},
      {5, "abc", "quotes.csv:3:6: price: expected a number, got \"abc\""},
      {5, "", "quotes.csv:3:6: price: empty field, expected a number"},
      {5, "nan", "quotes.csv:3:6: price: must be finite, got \"nan\""},
      {2, "-1", "quotes.csv:3:3: strike: must be >= 0, got \"-1\""},
      {3, "-0.5", "quotes.csv:3:4: maturity: must be >= 0, got \"-0.5\""},
      {1, "0", "quotes.csv:3:2: spot: must be > 0, got \"0\""},
      {4, "x", "quotes.csv:3:5: rate: expected a number, got \"x\""},
      {6, "inf", "quotes.csv:3:7: dividend: must be finite, got \"inf\""},
      {0, "cal", "quotes.csv:3:1: type: expected call, put, c or p, got \"cal\""},
  };
  for (const Case& bad : cases) {
    std::array<std::string, 7> row = {"put", "100", "100", "1", "0.01", "5", "0"};
    row[bad.column] = bad.text;
    std::string text = header + "call,100,100,1,0.01,5,0\n";
    for (std::size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + row[i];
    text += "\n";
    SCOPED_TRACE(text);
    EXPECT_EQ(quote_error(text, kOnSpot), bad.expected);
  }
  EXPECT_EQ(quote_error("type,forward,strike,maturity,rate,price\nc,-3,1,1,0,1\n", kOnForward),
            "quotes.csv:2:2: forward: must be > 0, got \"-3\"");
  // A price at 0 is a price (a worthless option's); below intrinsic is no input error (a status).
  EXPECT_EQ(read_quotes(header + "c,100,200,1,0,0,0\nc,100,50,1,0,1,0\n", kOnSpot).size(), 2u);
}

TEST(QuoteBook, MissingColumnsAreNamedWithTheModelThatReadsTheBook) {
  EXPECT_EQ(quote_error("type,spot,strike,maturity,rate,volatility\nc,1,1,1,0,0.2\n", kOnSpot),
            "quotes.csv:1: price: required column is missing; the header has type, spot, "
            "strike, maturity, rate, volatility");
  EXPECT_EQ(quote_error("type,spot,strike,maturity,price\nc,1,1,1,0.2\n", kOnSpot),
            "quotes.csv:1: rate: required column is missing (or give --rate); the header has "
            "type, spot, strike, maturity, price");
  EXPECT_EQ(quote_error("type,spot,strike,maturity,rate,premium\nc,1,1,1,0,0.2\n", kOnSpot),
            "quotes.csv:1: price: required column is missing; the header has type, spot, strike, "
            "maturity, rate, premium: is \"premium\" meant to be \"price\"?");
  EXPECT_EQ(quote_error("type,spot,strike,maturity,rate,price\nc,1,1,1,0,0.2\n", kOnForward),
            "quotes.csv:1: forward: required column is missing (black76 and bachelier invert on "
            "the forward; a book with a spot is inverted with --model black-scholes); the "
            "header has type, spot, strike, maturity, rate, price");
  EXPECT_EQ(quote_error("type,forward,strike,maturity,rate,price\nc,1,1,1,0,0.2\n", kOnSpot),
            "quotes.csv:1: spot: required column is missing (black-scholes inverts on the spot; "
            "a book with a forward is inverted with --model black76 or bachelier); the header "
            "has type, forward, strike, maturity, rate, price");
  EXPECT_EQ(quote_error("type,fwd,strike,maturity,rate,price\nc,1,1,1,0,0.2\n", kOnForward),
            "quotes.csv:1: forward: required column is missing; the header has type, fwd, "
            "strike, maturity, rate, price: is \"fwd\" meant to be \"forward\"?");
}

TEST(QuoteBook, ABookOfForwardsTakesNoDividend) {
  EXPECT_EQ(quote_error("type,forward,strike,maturity,rate,price\nc,1,1,1,0,0.2\n", kOnForward,
                        BookDefaults{std::nullopt, std::nullopt, 0.01}),
            "quotes.csv: --dividend: a book of forwards takes no dividend (the forward holds it)");
}

TEST(QuoteBook, AFloatBookRefusesWhatDoesNotFitAFloat) {
  EXPECT_EQ(quote_error("type,forward,strike,maturity,rate,price\nc,1e-46,1,1,0,0.2\n", kOnForward,
                        {}, finance::Precision::float32),
            "quotes.csv:2:2: forward: rounds to 0 in float (must be > 0; the smallest float is "
            "1e-45), got \"1e-46\"");
  EXPECT_EQ(quote_error("type,spot,strike,maturity,rate,price\nc,1,1,1,0,1e39\n", kOnSpot, {},
                        finance::Precision::float32),
            "quotes.csv:2:6: price: out of the range of a float (at most 3.4028235e+38 in "
            "magnitude), got \"1e39\"");
}

TEST(QuoteBook, PriceAndForwardArePassThroughInAPricingBook) {
  std::istringstream in(
      "type,spot,strike,maturity,rate,volatility,price,forward\nc,1,1,1,0,0.2,x,y\n");
  const OptionBook book = read_option_book(in, "book.csv", {});
  EXPECT_EQ(book.size(), 1u);
  EXPECT_TRUE(book.price.empty());
  EXPECT_TRUE(book.forward.empty());
  EXPECT_THROW(quote_view(book), InvalidInput);
}

// Parallel columns of three valid quotes, spoilt by each case.
struct QuoteColumns {
  std::vector<std::uint8_t> is_put = {0, 1, 0};
  std::vector<double> price = {5, 6, 7}, underlying = {100, 90, 110}, strike = {100, 95, 105},
                      maturity = {1, 0.5, 2}, rate = {0.01, 0.02, 0.03}, dividend = {0, 0.01, 0.02};
  finance::ImpliedVolatilityBookView view() const {
    return {3,
            is_put.data(),
            price.data(),
            underlying.data(),
            strike.data(),
            maturity.data(),
            {rate.data(), 0},
            {dividend.data(), 0}};
  }
};

std::string quote_problem(const finance::ImpliedVolatilityBookView& view, BookColumns columns,
                          finance::Precision precision = finance::Precision::float64) {
  const std::optional<BookTermProblem> problem = find_quote_term_problem(view, columns, precision);
  if (!problem) return "none";
  return std::to_string(problem->row) + ": " + problem->column + ": " + problem->what;
}

TEST(QuoteBookTerms, EachRuleOfTheCsvReaderIsWordedAsItWordsIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const QuoteColumns valid;
  EXPECT_EQ(quote_problem(valid.view(), kOnSpot), "none");
  QuoteColumns c;
  c.price[1] = -0.5;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot), "1: price: must be >= 0, got -0.5");
  c = {}, c.underlying[2] = 0;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot), "2: spot: must be > 0, got 0");
  finance::ImpliedVolatilityBookView on_forward = c.view();
  on_forward.dividend = {nullptr, 0};  // a book of forwards has none
  EXPECT_EQ(quote_problem(on_forward, kOnForward), "2: forward: must be > 0, got 0");
  c = {}, c.strike[0] = -1;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot), "0: strike: must be >= 0, got -1");
  c = {}, c.maturity[1] = nan;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot), "1: maturity: must be finite, got nan");
  c = {}, c.dividend[1] = nan;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot), "1: dividend: must be finite, got nan");
  // A book of forwards reads no dividend column, and takes no book-wide dividend.
  finance::ImpliedVolatilityBookView forwards = valid.view();
  EXPECT_EQ(quote_problem(forwards, kOnForward),
            "-1: dividend: a book of forwards takes no dividend (the forward holds it)");
  forwards.dividend = {nullptr, 0};
  EXPECT_EQ(quote_problem(forwards, kOnForward), "none");
  forwards.rate = {nullptr, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(quote_problem(forwards, kOnForward), "-1: rate: must be finite, got inf");
  // The first problem in row order, then column order.
  c = {}, c.strike[2] = -1, c.price[1] = -2, c.maturity[1] = -3;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot), "1: price: must be >= 0, got -2");
  c = {}, c.price[0] = 1e39;
  EXPECT_EQ(quote_problem(c.view(), kOnSpot, finance::Precision::float32),
            "0: price: out of the range of a float (at most 3.4028235e+38 in magnitude), got "
            "1e+39");
  finance::ImpliedVolatilityBookView empty;
  EXPECT_EQ(quote_problem(empty, kOnForward), "none");
}

TEST(QuoteBookOutput, AColumnOfWordsIsWrittenAndReplacedInPlace) {
  OptionBook book = read_quotes(
      "type,spot,strike,maturity,rate,price\nc,100,100,1,0,8\np,100,100,1,0,0.001\n", kOnSpot);
  const std::vector<double> volatility = {0.2, std::numeric_limits<double>::quiet_NaN()};
  const std::vector<std::uint8_t> codes = {0, 1};
  const std::array<std::string_view, 2> words = {"ok", "below-intrinsic"};
  const std::vector<OutputColumn> extra = {{"implied_volatility", volatility},
                                           {"iv_status", {}, false, false, codes, words}};
  std::ostringstream out;
  write_priced_book(out, book, extra);
  const std::string written = out.str();
  EXPECT_EQ(written,
            "type,spot,strike,maturity,rate,price,implied_volatility,iv_status\n"
            "c,100,100,1,0,8,0.2,ok\n"
            "p,100,100,1,0,0.001,nan,below-intrinsic\n");
  // Inverted again: the two columns are replaced where they are, the text is unchanged.
  const OptionBook again = read_quotes(written, kOnSpot);
  std::ostringstream twice;
  write_priced_book(twice, again, extra);
  EXPECT_EQ(twice.str(), written);
  EXPECT_EQ(input_columns_replaced(again, extra),
            (std::vector<std::string>{"implied_volatility", "iv_status"}));
  // A column of words of the wrong size is refused as a column of numbers is.
  const std::vector<std::uint8_t> one_code = {0};
  const std::vector<OutputColumn> short_words = {{"iv_status", {}, false, false, one_code, words}};
  std::ostringstream refused;
  EXPECT_THROW(write_priced_book(refused, book, short_words), InvalidInput);
  // Words are not numbers to check.
  EXPECT_FALSE(find_non_finite_output(std::vector<OutputColumn>{extra[1]}));
}

}  // namespace
}  // namespace gpukit::io
