// `gpukit bs` and `gpukit mc` on CSV books as users hand them over (issues 18 and 30): a priced
// book priced again keeps its columns, spreadsheet exports (UTF-16, semicolons, tabs, Excel's
// `sep=` line, compressed files) are named for what they are and read with --delimiter,
// pass-through fields, the byte order mark and the line ends come out byte for byte, and a float
// book refuses numbers beyond float's range.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

std::string path(const std::string& name) { return (scratch() / name).string(); }

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

const std::string kBook =
    "id,type,spot,strike,maturity,rate,volatility\n"
    "A1,call,100,100,1,0.05,0.2\n"
    "B2,put,100,110,0.5,0.05,0.3\n"
    "C3,call,42,40,0.25,0.01,0.35\n";

TEST(BookCli, BsPricingAPricedBookReplacesItsColumnsInPlace) {
  const std::string book = write_file("reprice_bs.csv", kBook);
  const Result once =
      run("bs --device cpu --greeks --input " + book + " --output " + path("reprice_bs_1.csv"));
  ASSERT_EQ(once.exit_code, 0) << once.err;
  EXPECT_EQ(once.err.find("replacing"), std::string::npos) << once.err;
  const std::string priced = slurp(path("reprice_bs_1.csv"));
  const std::string header =
      "id,type,spot,strike,maturity,rate,volatility,price,delta,gamma,vega,theta,rho";
  ASSERT_EQ(first_line(priced), header);

  const Result twice = run("bs --device cpu --greeks --input " + path("reprice_bs_1.csv") +
                           " --output " + path("reprice_bs_2.csv"));
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(
      twice.err.find(
          "gpukit: bs: replacing the input's price, delta, gamma, vega, theta, rho columns\n"),
      std::string::npos)
      << twice.err;
  // Same inputs, so the same values in the same places: the whole text is unchanged.
  EXPECT_EQ(slurp(path("reprice_bs_2.csv")), priced);

  // Without --greeks only price is replaced; the other columns pass through as they were.
  const Result price_only = run("bs --device cpu --input " + path("reprice_bs_1.csv") +
                                " --output " + path("reprice_bs_3.csv"));
  ASSERT_EQ(price_only.exit_code, 0) << price_only.err;
  EXPECT_NE(price_only.err.find("gpukit: bs: replacing the input's price column\n"),
            std::string::npos)
      << price_only.err;
  EXPECT_EQ(slurp(path("reprice_bs_3.csv")), priced);
}

TEST(BookCli, McPricingAPricedBookReplacesItsColumnsInPlace) {
  const std::string book = write_file("reprice_mc.csv", kBook);
  const std::string options = " --device cpu --paths 4096 --seed 7 --greeks --antithetic";
  const Result once =
      run("mc" + options + " --input " + book + " --output " + path("reprice_mc_1.csv"));
  ASSERT_EQ(once.exit_code, 0) << once.err;
  const std::string priced = slurp(path("reprice_mc_1.csv"));
  ASSERT_EQ(first_line(priced),
            "id,type,spot,strike,maturity,rate,volatility,price,std_error,ci_low,ci_high,paths,"
            "delta,gamma,vega,vrf_antithetic");

  const Result twice = run("mc" + options + " --input " + path("reprice_mc_1.csv") + " --output " +
                           path("reprice_mc_2.csv"));
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("gpukit: mc: replacing the input's price, std_error, ci_low, ci_high, "
                           "paths, delta, gamma, vega, vrf_antithetic columns\n"),
            std::string::npos)
      << twice.err;
  EXPECT_EQ(slurp(path("reprice_mc_2.csv")), priced);
}

TEST(BookCli, SpreadsheetExportsAreNamedForWhatTheyAre) {
  std::string utf16le = "\xFF\xFE", utf16be = "\xFE\xFF";
  for (char c : kBook) {
    utf16le += std::string{c, '\0'};
    utf16be += std::string{'\0', c};
  }
  const struct {
    std::string name, text, expected;
  } cases[] = {
      {"utf16le.csv", utf16le,
       "utf16le.csv:1: the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as "
       "UTF-8 CSV"},
      {"utf16be.csv", utf16be,
       "utf16be.csv:1: the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as "
       "UTF-8 CSV"},
      {"semicolons.csv", replace_all(kBook, ",", ";"),
       "semicolons.csv:1: the header is one column containing ';': use --delimiter ';'"},
      {"tabs.csv", replace_all(kBook, ",", "\t"),
       "tabs.csv:1: the header is one column containing tabs: use --delimiter tab"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string book = write_file(c.name, c.text);
    for (const std::string command : {"bs", "mc --paths 64"}) {
      const auto out = scratch() / ("never_" + c.name);
      const Result r = run(command + " --device cpu --input " + book + " --output " + out.string());
      EXPECT_EQ(r.exit_code, 3) << r.err;
      EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("required column"), std::string::npos) << r.err;
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
}

TEST(BookCli, DelimiterOptionReadsAndWritesSemicolonsAndTabs) {
  const std::string comma_book = write_file("delim_comma.csv", kBook);
  const Result comma = run("bs --device cpu --input " + comma_book + " --output -");
  ASSERT_EQ(comma.exit_code, 0) << comma.err;
  const Result mc_comma = run("mc --device cpu --paths 1024 --input " + comma_book + " --output -");
  ASSERT_EQ(mc_comma.exit_code, 0) << mc_comma.err;

  const struct {
    std::string spelling, delimiter;
  } cases[] = {{"';'", ";"}, {"tab", "\t"}, {"'\\t'", "\t"}, {"'|'", "|"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spelling);
    const std::string book = write_file("delim.csv", replace_all(kBook, ",", c.delimiter));
    // The output uses the input's delimiter; the values are those of the comma book.
    const Result bs =
        run("bs --device cpu --delimiter " + c.spelling + " --input " + book + " --output -");
    ASSERT_EQ(bs.exit_code, 0) << bs.err;
    EXPECT_EQ(bs.out, replace_all(comma.out, ",", c.delimiter));
    const Result mc = run("mc --device cpu --paths 1024 --delimiter " + c.spelling + " --input " +
                          book + " --output -");
    ASSERT_EQ(mc.exit_code, 0) << mc.err;
    EXPECT_EQ(mc.out, replace_all(mc_comma.out, ",", c.delimiter));
  }
  for (const std::string bad : {"x", "',,'", "space", "'\"'", "''"}) {
    const Result r =
        run("bs --device cpu --delimiter " + bad + " --input " + comma_book + " --output -");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--delimiter"), std::string::npos) << r.err;
  }
}

// Issue 30: a book saved by a spreadsheet came back without its byte order mark, with LF line ends
// and with its pass-through fields re-quoted ("T00000" as T00000). Now every input byte comes
// back, the priced columns added, and a priced book priced again comes back unchanged.
TEST(BookCli, ASpreadsheetBookComesBackByteForByte) {
  const std::vector<std::string> rows = {
      "\"id\",note,type,spot,strike,maturity,rate,volatility",
      "\"T00000\",\"Rates, \"\"EU\"\" desk\",call,100,100,1,0.05,0.2",
      "\" T00001 \",  \"a, b\"  ,put, 100 ,110,0.5,0.05,0.3",
      "  T00002 ,\t tabs and blanks \t,c,\"42\",40,0.25,0.01,0.35",
      "\"D,4\",\"two\r\nlines\",p,7,7,1,0,0.1",
  };
  std::string text = "\xEF\xBB\xBF";
  for (const std::string& row : rows) text += row + "\r\n";
  const std::string book = write_file("spreadsheet.csv", text);
  for (const std::string command : {"bs --greeks", "mc --paths 256"}) {
    SCOPED_TRACE(command);
    const std::string once = path("spreadsheet_1.csv"), twice = path("spreadsheet_2.csv");
    const Result r = run(command + " --device cpu --input " + book + " --output " + once);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string priced = slurp(once);
    // The mark, then each input row as it was, a delimiter, the priced columns and CR LF.
    ASSERT_EQ(priced.substr(0, 3), "\xEF\xBB\xBF");
    std::size_t at = 3;
    for (const std::string& row : rows) {
      ASSERT_EQ(priced.compare(at, row.size() + 1, row + ","), 0)
          << "expected " << row << "\ngot " << priced.substr(at);
      const std::size_t line_end = priced.find("\r\n", at + row.size());
      ASSERT_NE(line_end, std::string::npos);
      EXPECT_EQ(priced.find('\n', at + row.size()), line_end + 1);  // no LF alone
      at = line_end + 2;
    }
    EXPECT_EQ(at, priced.size());
    const Result again = run(command + " --device cpu --input " + once + " --output " + twice);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(slurp(twice), priced);
  }
}

// Issue 30: Excel writes `sep=;` as the first line of a semicolon file; it names the delimiter and
// comes back in the priced book.
TEST(BookCli, ExcelSepLineNamesTheDelimiter) {
  const std::string text = "sep=;\n" + replace_all(kBook, ",", ";");
  const std::string book = write_file("sep_line.csv", text);
  const Result comma =
      run("bs --device cpu --input " + write_file("sep_comma.csv", kBook) + " --output -");
  ASSERT_EQ(comma.exit_code, 0) << comma.err;
  const Result r = run("bs --device cpu --input " + book + " --output -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "sep=;\n" + replace_all(comma.out, ",", ";"));
  // A bad row names its line, the `sep=` line counted.
  const std::string bad = write_file("sep_bad.csv", text + "Z9;put;100;-1;1;0.05;0.2\n");
  const Result refused = run("mc --device cpu --input " + bad + " --output -");
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_NE(refused.err.find("sep_bad.csv:6:4: strike: must be >= 0"), std::string::npos)
      << refused.err;
}

// Issue 30: a gzipped book and a header with `vol` for `volatility` both said only
// "required column is missing".
TEST(BookCli, CsvErrorsSayWhatTheFileIsAndWhichNameWasMeant) {
  const std::string gz = write_file(
      "book.csv.gz", std::string("\x1F\x8B\x08\x08\x00\x00\x00\x00\x00\x03", 10) + "binary");
  const std::string vol = write_file("vol.csv", replace_all(kBook, "volatility", "vol"));
  for (const std::string command : {"bs", "mc --paths 64"}) {
    SCOPED_TRACE(command);
    const std::string out = path("csv_errors_never.csv");
    Result r = run(command + " --device cpu --input " + gz + " --output " + out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("book.csv.gz:1: the file is gzip-compressed; decompress it first"),
              std::string::npos)
        << r.err;
    r = run(command + " --device cpu --input " + vol + " --output " + out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("vol.csv:1: volatility: required column is missing (or give "
                         "--volatility); the header has id, type, spot, strike, maturity, rate, "
                         "vol: is \"vol\" meant to be \"volatility\"?"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// Issue 30: with --precision float a number beyond float's range was priced as an infinity and
// written as nan, -nan or inf with exit 0.
TEST(BookCli, AFloatBookRefusesNumbersBeyondFloatNamingTheRow) {
  const struct {
    std::string row, expected;
    int exit_in_double;  // 3: a double overflows too (e^1e39 is no double)
  } cases[] = {
      {"Z9,call,1e39,100,1,0.05,0.2", "float_range.csv:5:3: spot: out of the range of a float", 0},
      {"Z9,put,100,4e38,1,0.05,0.2", "float_range.csv:5:4: strike: out of the range of a float", 0},
      {"Z9,call,100,100,1,-1e39,0.2", "float_range.csv:5:6: rate: out of the range of a float", 3},
      {"Z9,call,100,100,1,0.05,1e300",
       "float_range.csv:5:7: volatility: out of the range of a float", 0},
  };
  for (const auto& [row, expected, exit_in_double] : cases) {
    SCOPED_TRACE(row);
    const std::string book = write_file("float_range.csv", kBook + row + "\n");
    for (const std::string command : {"bs", "mc --paths 64"}) {
      const std::string out = path("float_range_never.csv");
      const Result r =
          run(command + " --device cpu --precision float --input " + book + " --output " + out);
      EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err;
      EXPECT_NE(r.err.find(expected), std::string::npos) << command << ": " << r.err;
      EXPECT_FALSE(std::filesystem::exists(out)) << command;
      // In double the same book prices, or its price is refused for overflowing a double.
      const Result in_double = run(command + " --device cpu --input " + book + " --output -");
      EXPECT_EQ(in_double.exit_code, exit_in_double) << command << ": " << in_double.err;
      EXPECT_EQ(in_double.out.find("nan"), std::string::npos) << in_double.out;
    }
  }
  // Terms within range whose price is not: a rate of -100 discounts by e^100, beyond a float
  // (nan and inf were written).
  const std::string overflow =
      write_file("float_overflow.csv", kBook + "Z9,put,100,100,1,-100,0.2\n");
  for (const std::string command : {"bs --greeks", "mc --paths 64"}) {
    const std::string out = path("float_overflow_never.csv");
    const Result r =
        run(command + " --device cpu --precision float --input " + overflow + " --output " + out);
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err;
    EXPECT_NE(r.err.find(overflow + ":5: price is infinite in float: the terms are beyond what "
                                    "float arithmetic can price (--precision double may)"),
              std::string::npos)
        << command << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << command;
    const Result in_double = run(command + " --device cpu --input " + overflow + " --output -");
    EXPECT_EQ(in_double.exit_code, 0) << command << ": " << in_double.err;
    EXPECT_NE(in_double.out.find("Z9,put,100,100,1,-100,0.2,2.68811714"), std::string::npos)
        << in_double.out;
  }
  const Result rate = run("bs --device cpu --precision float --rate 1e39 --input " +
                          write_file("float_rate.csv",
                                     "type,spot,strike,maturity,volatility\n"
                                     "call,100,100,1,0.2\n") +
                          " --output -");
  EXPECT_EQ(rate.exit_code, 3) << rate.err;
  EXPECT_NE(rate.err.find("float_rate.csv: --rate: out of the range of a float"), std::string::npos)
      << rate.err;
}

}  // namespace
