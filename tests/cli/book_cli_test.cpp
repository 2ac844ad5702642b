// `gpukit bs` and `gpukit mc` on CSV books as users hand them over (issue 18): a priced book priced
// again keeps its columns, spreadsheet exports (UTF-16, semicolons, tabs) are named for what they
// are and read with --delimiter, and pass-through fields come out byte for byte.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

std::string path(const std::string& name) { return (scratch() / name).string(); }

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

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
            "delta,vega,vrf_antithetic");

  const Result twice = run("mc" + options + " --input " + path("reprice_mc_1.csv") + " --output " +
                           path("reprice_mc_2.csv"));
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("gpukit: mc: replacing the input's price, std_error, ci_low, ci_high, "
                           "paths, delta, vega, vrf_antithetic columns\n"),
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

TEST(BookCli, PassThroughFieldsComeOutByteForByte) {
  // Blanks around unquoted fields, quotes, embedded delimiters and line breaks, CR LF line ends.
  const std::vector<std::string> rows = {
      "id,note,type,spot,strike,maturity,rate,volatility",
      "  A 1 ,\t tabs and blanks \t,call,100,100,1,0.05,0.2",
      " B2,\"a, b\",put, 100 ,110,0.5,0.05,0.3",
      "C3 ,\"say \"\"hi\"\"\",c,42,40,0.25,0.01,0.35",
      "\"D,4\",\"two\r\nlines\",p,7,7,1,0,0.1",
  };
  std::string crlf;
  for (const std::string& row : rows) crlf += row + "\r\n";
  const std::string book = write_file("bytes.csv", crlf);
  for (const std::string command : {"bs", "mc --paths 256"}) {
    SCOPED_TRACE(command);
    const Result r = run(command + " --device cpu --input " + book + " --output -");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Records end with LF in the output; the quoted CR LF inside a field is kept.
    const std::vector<std::string> out = lines_of(replace_all(r.out, "\r\n", "\x01"));
    ASSERT_EQ(out.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string row = replace_all(rows[i], "\r\n", "\x01");
      EXPECT_EQ(out[i].substr(0, row.size() + 1), row + ",") << "row " << i;
    }
  }
}

}  // namespace
