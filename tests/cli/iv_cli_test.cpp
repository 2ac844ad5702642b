// `gpukit iv` end to end on the CPU (issue 32): a book priced by `gpukit bs` round-trips to the
// volatilities that generated it, within the bound the pricing error and the vega give; every
// status comes out as data with its count on stderr; bad fields stop the command with
// file:line:column and no output; a chain of real-looking quotes with a few crossed and stale
// prices comes back with their statuses; --check passes on correct volatilities (a wrong one
// fails it: check_cli_test.cpp); float precision; Black-76 and Bachelier books.

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

std::string path(const std::string& name) { return (scratch() / name).string(); }

// A CSV without quoted fields, by column name: table[name][row].
struct Table {
  std::vector<std::string> header;
  std::map<std::string, std::vector<std::string>> columns;
  std::size_t rows = 0;

  explicit Table(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    header = split(line);
    while (std::getline(in, line)) {
      const std::vector<std::string> fields = split(line);
      EXPECT_EQ(fields.size(), header.size()) << line;
      for (std::size_t c = 0; c < header.size() && c < fields.size(); ++c) {
        columns[header[c]].push_back(fields[c]);
      }
      ++rows;
    }
  }
  double number(const std::string& name, std::size_t row) const {
    return std::stod(columns.at(name).at(row));
  }
  const std::string& text(const std::string& name, std::size_t row) const {
    return columns.at(name).at(row);
  }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    return fields;
  }
};

// The Black-Scholes vega in long double (the closed form, independent of the library):
// S e^{-qT} sqrt(T) n(d1).
long double black_scholes_vega(long double s, long double k, long double t, long double r,
                               long double q, long double v) {
  const long double st = v * std::sqrt(t);
  const long double d1 = (std::log(s / k) + (r - q) * t) / st + st / 2;
  return s * std::exp(-q * t) * std::sqrt(t) * std::exp(-d1 * d1 / 2) /
         std::sqrt(2 * 3.14159265358979323846264338327950288L);
}

// A book of `n` options with volatilities from 5% to 150%, strikes from 3 standard deviations
// in the money to 3 out (K = F e^{z v sqrt(T)}, |z| <= 3, F the forward), maturities from a day
// to 10 years: the terms a real book spreads over, every price carrying its volatility.
std::string varied_book(int n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::ostringstream csv;
  csv.precision(17);
  csv << "id,type,spot,strike,maturity,rate,dividend,volatility\n";
  for (int i = 0; i < n; ++i) {
    const double spot = 20 + 200 * u(gen), z = 6 * u(gen) - 3;
    const double maturity = std::exp(std::log(1.0 / 365) + std::log(3650.0) * u(gen));
    const double volatility = 0.05 + 1.45 * u(gen), rate = 0.05 * u(gen),
                 dividend = 0.03 * u(gen);
    const double forward = spot * std::exp((rate - dividend) * maturity);
    csv << 'Q' << i << ',' << (i % 2 ? "put" : "call") << ',' << spot << ','
        << forward * std::exp(z * volatility * std::sqrt(maturity)) << ',' << maturity << ','
        << rate << ',' << dividend << ',' << volatility << '\n';
  }
  return csv.str();
}

// Every row of `priced` (a book priced by `gpukit bs`, possibly with its spot renamed forward)
// inverted in `inverted` (the same rows, with implied_volatility and iv_status): the volatility
// within the error the price carries divided by the vega, |iv - v| <= 2 b / vega with b
// black_scholes_price_bound (the error of the price bs wrote; the inversion's own, a few ulps of
// the price, is within it). A price that bs's rounding put at or beyond a no-arbitrage bound
// (a deep in-the-money option's value is its intrinsic value to the last bits) may come back
// below-intrinsic or above-maximum, but only where it is within b of that bound.
// Returns the number of rows recovered to 1e-12 relative (the callers check they are many: the
// comparison is not vacuous).
std::size_t expect_recovered(const Table& priced, const Table& inverted) {
  EXPECT_EQ(inverted.rows, priced.rows);
  std::size_t close = 0;
  const bool has_dividend = priced.columns.count("dividend") > 0;
  for (std::size_t i = 0; i < priced.rows && i < inverted.rows; ++i) {
    const double s = priced.number("spot", i), k = priced.number("strike", i),
                 t = priced.number("maturity", i), r = priced.number("rate", i),
                 q = has_dividend ? priced.number("dividend", i) : 0.0,
                 v = priced.number("volatility", i), price = priced.number("price", i);
    const bool put = priced.text("type", i) == "put";
    const double b = gpukit::finance::black_scholes_price_bound<double>(
        s, k, t, r, q, gpukit::finance::NormalCdf::erfc);
    const std::string& status = inverted.text("iv_status", i);
    const long double forward_value = s * std::exp(-static_cast<long double>(q) * t),
                      strike_value = k * std::exp(-static_cast<long double>(r) * t);
    if (status == "below-intrinsic") {
      const long double intrinsic =
          std::max(put ? strike_value - forward_value : forward_value - strike_value, 0.0L);
      EXPECT_LE(std::fabs(price - intrinsic), b) << "row " << i << " is below intrinsic";
      continue;
    }
    if (status == "above-maximum") {
      EXPECT_LE(std::fabs(price - (put ? strike_value : forward_value)), b)
          << "row " << i << " is above the maximum";
      continue;
    }
    EXPECT_EQ(status, "ok") << "row " << i;
    const double iv = inverted.number("implied_volatility", i);
    const double bound = 2 * b / static_cast<double>(black_scholes_vega(s, k, t, r, q, v));
    EXPECT_LE(std::fabs(iv - v), bound) << "row " << i << ": " << iv << " for " << v;
    if (std::fabs(iv - v) <= 1e-12 * v) ++close;
  }
  return close;
}

TEST(IvCli, ABookPricedByBsRoundTripsToItsVolatilities) {
  for (const int n : {1, 33, 1025}) {
    SCOPED_TRACE(std::to_string(n) + " options");
    const std::string book = write_file("varied.csv", varied_book(n, 17 + n));
    const std::string priced = path("varied_priced.csv"), inverted = path("varied_iv.csv");
    const Result bs = run("bs --device cpu -i " + book + " -o " + priced);
    ASSERT_EQ(bs.exit_code, 0) << bs.err;
    const Result iv = run("iv --device cpu -i " + priced + " -o " + inverted);
    ASSERT_EQ(iv.exit_code, 0) << iv.err;
    EXPECT_NE(iv.err.find("gpukit: iv: " + std::to_string(n) + " row" + (n > 1 ? "s" : "") + ": " +
                          std::to_string(n) + " ok\n"),
              std::string::npos)
        << iv.err;
    const Table p(slurp(priced)), out(slurp(inverted));
    // The input columns, then the two outputs.
    std::vector<std::string> header = p.header;
    header.push_back("implied_volatility");
    header.push_back("iv_status");
    EXPECT_EQ(out.header, header);
    for (std::size_t i = 0; i < p.rows && i < out.rows; ++i) {
      EXPECT_EQ(out.text("id", i), p.text("id", i));
      EXPECT_EQ(out.text("price", i), p.text("price", i));
    }
    const std::size_t close = expect_recovered(p, out);
    EXPECT_GE(close * 10, p.rows * 8) << close << " of " << p.rows << " within 1e-12";
  }
}

TEST(IvCli, TheGeneratedBookRoundTripsAndItsCheckPasses) {
  const std::string book = path("generated.csv"), inverted = path("generated_iv.csv");
  ASSERT_EQ(run("bs --device cpu --generate 2000 --seed 11 -o " + book).exit_code, 0);
  const Result iv = run("iv --device cpu --check -i " + book + " -o " + inverted);
  ASSERT_EQ(iv.exit_code, 0) << iv.err;
  EXPECT_NE(iv.err.find("long double reference"), std::string::npos) << iv.err;
  EXPECT_NE(iv.err.find(": ok\n"), std::string::npos) << iv.err;
  const Table p(slurp(book)), out(slurp(inverted));
  // The case study's book (spots 5 to 30, strikes 1 to 100) has many options far from the money,
  // whose prices say little about their volatility: a quarter recovered to 1e-12 at least.
  EXPECT_GE(expect_recovered(p, out) * 4, p.rows);
}

TEST(IvCli, EveryStatusIsDataWithItsCount) {
  // rate 0: the discount factor is 1, the bounds are plain numbers.
  const std::string book = write_file("statuses.csv",
                                      "id,type,spot,strike,maturity,price\n"
                                      "ok,call,100,100,1,8\n"
                                      "worthless-call,call,100,150,1,0\n"
                                      "below,put,100,120,1,19.5\n"
                                      "above-call,call,100,90,1,100\n"
                                      "above-put,put,100,90,0.5,95\n"
                                      "expiring,call,100,100,0,1\n"
                                      "worthless-put,put,100,50,1,0\n");
  const std::string out = path("statuses_iv.csv");
  const Result r = run("iv --device cpu --rate 0 -i " + book + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gpukit: iv: 7 rows: 3 ok, 1 below-intrinsic, 2 above-maximum, 1 "
                       "zero-maturity\n"),
            std::string::npos)
      << r.err;
  const Table t(slurp(out));
  ASSERT_EQ(t.rows, 7u);
  const std::vector<std::string> expected = {
      "ok", "ok", "below-intrinsic", "above-maximum", "above-maximum", "zero-maturity", "ok"};
  for (std::size_t i = 0; i < t.rows; ++i) {
    SCOPED_TRACE(t.text("id", i));
    EXPECT_EQ(t.text("iv_status", i), expected[i]);
    if (expected[i] != "ok") {
      EXPECT_EQ(t.text("implied_volatility", i), "nan");
    }
  }
  EXPECT_GT(t.number("implied_volatility", 0), 0.19);  // about 0.2 for an at-the-money 8
  EXPECT_LT(t.number("implied_volatility", 0), 0.21);
  // A price exactly at intrinsic (0 for an out-of-the-money option) is volatility 0.
  EXPECT_EQ(t.number("implied_volatility", 1), 0);
  EXPECT_EQ(t.number("implied_volatility", 6), 0);
}

TEST(IvCli, BadFieldsStopTheCommandWithFileLineAndColumn) {
  const std::string header = "id,type,spot,strike,maturity,rate,price\n";
  const struct {
    std::string row, expected;
  } cases[] = {
      {"A,call,100,100,1,0.01,abc", ":3:7: price: expected a number, got \"abc\""},
      {"A,call,100,100,1,0.01,-0.5", ":3:7: price: must be >= 0, got \"-0.5\""},
      {"A,call,100,-100,1,0.01,5", ":3:4: strike: must be >= 0, got \"-100\""},
      {"A,call,100,100,-1,0.01,5", ":3:5: maturity: must be >= 0, got \"-1\""},
      {"A,call,0,100,1,0.01,5", ":3:3: spot: must be > 0, got \"0\""},
      {"A,call,100,100,1,,5", ":3:6: rate: empty field, expected a number"},
      {"A,cll,100,100,1,0.01,5", ":3:2: type: expected call, put, c or p, got \"cll\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.row);
    const std::string book =
        write_file("bad.csv", header + "B,put,100,100,1,0.01,5\n" + c.row + "\n");
    const std::string out = path("bad_iv.csv");
    std::filesystem::remove(out);
    const Result r = run("iv --device cpu -i " + book + " -o " + out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("gpukit: invalid input: " + book + c.expected), std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // The model reads the other underlying: the message says which model reads this book.
  const std::string spot_book = write_file("spot.csv", header + "A,call,100,100,1,0.01,5\n");
  const Result wrong_model =
      run("iv --device cpu --model black76 -i " + spot_book + " -o " + path("never.csv"));
  EXPECT_EQ(wrong_model.exit_code, 3) << wrong_model.err;
  EXPECT_NE(wrong_model.err.find("forward: required column is missing (black76 and bachelier "
                                 "invert on the forward"),
            std::string::npos)
      << wrong_model.err;
  // A forward book's forward holds the dividend: --dividend is a usage error there.
  const Result dividend = run("iv --device cpu --model bachelier --dividend 0.01 -i " + spot_book +
                              " -o " + path("never.csv"));
  EXPECT_EQ(dividend.exit_code, 2) << dividend.err;
  EXPECT_NE(dividend.err.find("--dividend applies to --model black-scholes"), std::string::npos)
      << dividend.err;
  EXPECT_FALSE(std::filesystem::exists(path("never.csv")));
  const Result model = run("iv --model heston -i " + spot_book + " -o " + path("never.csv"));
  EXPECT_EQ(model.exit_code, 2) << model.err;
  EXPECT_NE(model.err.find("black-scholes"), std::string::npos) << model.err;
}

// An index option chain as a data vendor sends it at the close: two expiries, strikes around the
// spot, prices from a skewed volatility (bs prices them), then a few quotes spoilt as real feeds
// spoil them: a deep in-the-money call left at yesterday's price after the index rose (below
// intrinsic now), a put quoted above its strike (a fat finger), an option expiring today, and a
// stale out-of-the-money quote that still has a volatility (a wrong one, which is data too).
TEST(IvCli, AChainWithCrossedAndStaleQuotesComesBackWithTheirStatuses) {
  std::ostringstream chain;
  chain.precision(17);
  chain << "symbol,type,spot,strike,maturity,rate,dividend,volatility\n";
  const double spot = 4512.25;
  int row = 0;
  for (const double maturity : {9.0 / 365, 37.0 / 365}) {
    for (int strike = 3800; strike <= 5200; strike += 100) {
      for (const char* type : {"call", "put"}) {
        const double skew = 0.16 - 0.25 * std::log(strike / spot);  // puts richer
        chain << "SPX" << row++ << ',' << type << ',' << spot << ',' << strike << ',' << maturity
              << ",0.0531,0.0142," << skew << '\n';
      }
    }
  }
  const std::string book = write_file("chain.csv", chain.str());
  const std::string priced = path("chain_priced.csv");
  ASSERT_EQ(run("bs --device cpu -i " + book + " -o " + priced).exit_code, 0);
  Table quotes(slurp(priced));
  ASSERT_EQ(quotes.rows, 60u);
  // Row 0: call 3800, 9 days: worth about 716; quoted at yesterday's price, 100 lower (the index
  // was 100 lower): below its intrinsic value now.
  // Row 3: put 3900, 9 days: a fat finger, 3950 for a put struck at 3900.
  // Row 16: call 4600, 9 days: stale at 80% of its price: still a volatility, a lower one.
  // Row 40: call 4300, 37 days: expiring today (maturity 0).
  auto replace_field = [&](std::size_t r, const std::string& name, const std::string& value) {
    quotes.columns[name][r] = value;
  };
  replace_field(0, "price", std::to_string(quotes.number("price", 0) - 100));
  replace_field(3, "price", "3950");
  replace_field(16, "price", std::to_string(quotes.number("price", 16) * 0.8));
  replace_field(40, "maturity", "0");
  std::ostringstream spoilt;
  for (std::size_t c = 0; c < quotes.header.size(); ++c)
    spoilt << (c ? "," : "") << quotes.header[c];
  spoilt << '\n';
  for (std::size_t r = 0; r < quotes.rows; ++r) {
    for (std::size_t c = 0; c < quotes.header.size(); ++c) {
      spoilt << (c ? "," : "") << quotes.text(quotes.header[c], r);
    }
    spoilt << '\n';
  }
  const std::string feed = write_file("chain_feed.csv", spoilt.str());
  const std::string out = path("chain_iv.csv");
  const Result r = run("iv --device cpu --check -i " + feed + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gpukit: iv: 60 rows: 57 ok, 1 below-intrinsic, 1 above-maximum, 1 "
                       "zero-maturity\n"),
            std::string::npos)
      << r.err;
  const Table t(slurp(out));
  ASSERT_EQ(t.rows, 60u);
  for (std::size_t i = 0; i < t.rows; ++i) {
    const std::string expected = i == 0    ? "below-intrinsic"
                                 : i == 3  ? "above-maximum"
                                 : i == 40 ? "zero-maturity"
                                           : "ok";
    EXPECT_EQ(t.text("iv_status", i), expected) << "row " << i;
  }
  // The fresh quotes give back the skew that priced them (the spoilt rows aside).
  Table fresh(slurp(priced)), fresh_out = t;
  for (const std::size_t spoilt_row : {40, 16, 3, 0}) {
    for (auto* table : {&fresh, &fresh_out}) {
      for (auto& [name, column] : table->columns) {
        column.erase(column.begin() + static_cast<std::ptrdiff_t>(spoilt_row));
      }
      --table->rows;
    }
  }
  EXPECT_GE(expect_recovered(fresh, fresh_out) * 10, fresh.rows * 8);
  // The stale quote is below its fresh price: a lower volatility, flagged by nothing but data.
  EXPECT_LT(t.number("implied_volatility", 16), t.number("volatility", 16));
  EXPECT_GT(t.number("implied_volatility", 16), 0.5 * t.number("volatility", 16));
}

TEST(IvCli, FloatPrecisionWritesFloatsAndPassesItsCheck) {
  const std::string book = write_file("float_book.csv", varied_book(257, 3));
  const std::string priced = path("float_priced.csv"), out = path("float_iv.csv");
  ASSERT_EQ(run("bs --device cpu -i " + book + " -o " + priced).exit_code, 0);
  const Result r = run("iv --device cpu --precision float --check -i " + priced + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(": ok\n"), std::string::npos) << r.err;
  const Table p(slurp(priced)), t(slurp(out));
  std::size_t close = 0;
  for (std::size_t i = 0; i < t.rows; ++i) {
    const double iv = t.number("implied_volatility", i);
    // Written as the shortest text that reads back as the float it is.
    const std::string& text = t.text("implied_volatility", i);
    char shortest[32];
    const std::to_chars_result end =
        std::to_chars(shortest, shortest + sizeof shortest, std::stof(text));
    EXPECT_EQ(std::string(shortest, end.ptr), text) << "row " << i;
    if (std::fabs(iv - p.number("volatility", i)) <= 1e-4 * p.number("volatility", i)) ++close;
  }
  EXPECT_GE(close * 10, t.rows * 8);
}

// Black-76 on the forward: a Black-Scholes book with the dividend yield equal to the rate has
// forward = spot, so bs prices Black-76 options; renamed spot -> forward, the book inverts back.
TEST(IvCli, Black76InvertsOnTheForward) {
  std::mt19937_64 gen(76);
  std::uniform_real_distribution<double> u(0, 1);
  std::ostringstream csv;
  csv.precision(17);
  csv << "type,spot,strike,maturity,rate,dividend,volatility\n";
  for (int i = 0; i < 101; ++i) {
    const double rate = 0.06 * u(gen);
    csv << (i % 2 ? "put" : "call") << ',' << 70.0 << ',' << 40 + 60 * u(gen) << ','
        << 0.1 + 4 * u(gen) << ',' << rate << ',' << rate << ',' << 0.1 + 0.6 * u(gen) << '\n';
  }
  const std::string priced = path("b76_priced.csv");
  ASSERT_EQ(
      run("bs --device cpu -i " + write_file("b76.csv", csv.str()) + " -o " + priced).exit_code, 0);
  std::string text = slurp(priced);
  text.replace(text.find("spot"), 4, "forward");
  text.replace(text.find("dividend"), 8, "yield");  // a pass-through column now
  const std::string forwards = write_file("b76_forwards.csv", text), out = path("b76_iv.csv");
  const Result r = run("iv --device cpu --model black76 --check -i " + forwards + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table p(slurp(priced)), t(slurp(out));
  EXPECT_GE(expect_recovered(p, t) * 10, p.rows * 8);
}

// Bachelier: prices from the normal model's closed form in long double (here, independent of the
// library), D ((F - K) N(d) + s n(d)) for a call with s = sigma sqrt(T), d = (F - K) / s, put by
// parity; the volatility comes back within the price's error over the vega D sqrt(T) n(d).
TEST(IvCli, BachelierInvertsNormalVolatilities) {
  std::mt19937_64 gen(1900);
  std::uniform_real_distribution<double> u(0, 1);
  struct Quote {
    bool put;
    double forward, strike, maturity, rate, volatility, price;
    long double vega;
  };
  std::vector<Quote> quotes;
  std::ostringstream csv;
  csv.precision(17);
  csv << "type,forward,strike,maturity,rate,price\n";
  const long double pi = 3.14159265358979323846264338327950288L;
  for (int i = 0; i < 77; ++i) {
    // Strikes within 3 standard deviations of the forward: every price carries its volatility.
    const double maturity = 0.05 + 1.95 * u(gen), volatility = 2 + 18 * u(gen);
    const double strike = 100 + (6 * u(gen) - 3) * volatility * std::sqrt(maturity);
    Quote q{i % 2 == 1, 100.0, strike, maturity, 0.04 * u(gen), volatility, 0, 0};
    const long double s = q.volatility * std::sqrt(static_cast<long double>(q.maturity));
    const long double d = (q.forward - static_cast<long double>(q.strike)) / s;
    const long double density = std::exp(-d * d / 2) / std::sqrt(2 * pi);
    const long double cdf = std::erfc(-d / std::sqrt(2.0L)) / 2;
    const long double discount = std::exp(-static_cast<long double>(q.rate) * q.maturity);
    long double call =
        discount * ((q.forward - static_cast<long double>(q.strike)) * cdf + s * density);
    const long double price =
        q.put ? call - discount * (q.forward - static_cast<long double>(q.strike)) : call;
    q.price = static_cast<double>(price);
    q.vega = discount * std::sqrt(static_cast<long double>(q.maturity)) * density;
    quotes.push_back(q);
    csv << (q.put ? "put" : "call") << ',' << q.forward << ',' << q.strike << ',' << q.maturity
        << ',' << q.rate << ',' << q.price << '\n';
  }
  const std::string out = path("bachelier_iv.csv");
  const Result r = run("iv --device cpu --model bachelier --check -i " +
                       write_file("bachelier.csv", csv.str()) + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table t(slurp(out));
  ASSERT_EQ(t.rows, quotes.size());
  for (std::size_t i = 0; i < quotes.size(); ++i) {
    const Quote& q = quotes[i];
    EXPECT_EQ(t.text("iv_status", i), "ok") << "row " << i;
    // The price as written carries half an ulp of itself and of the forward-strike terms; the
    // inversion a few ulps more: 16 ulps of the option's scale over the vega.
    const double bound = 16 * 0x1p-52 * (q.forward + q.strike) / static_cast<double>(q.vega);
    EXPECT_NEAR(t.number("implied_volatility", i), q.volatility, bound) << "row " << i;
  }
}

TEST(IvCli, HelpNamesTheColumnsAndTheStatuses) {
  const Result r = run("iv --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* word : {"price", "forward", "--model", "black76", "bachelier", "below-intrinsic",
                           "above-maximum", "zero-maturity", "iv_status"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  }
}

}  // namespace
