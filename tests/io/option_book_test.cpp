// read_option_book / write_priced_book: column matching in any order, defaults vs columns, every
// validation error with its exact file:line:col message, strict numbers, locale independence,
// pass-through columns, float/double output formatting, progress reporting.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <locale>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"
#include "gpukit/io/option_book.hpp"
#include "gpukit/io/steps_requirement.hpp"
#include "test_seed.hpp"

namespace gpukit::io {
namespace {

using finance::BarrierType;

OptionBook read_book(const std::string& text, const BookDefaults& defaults = {}) {
  std::istringstream in(text);
  return read_option_book(in, "book.csv", defaults);
}

// Message of the gpukit::InvalidInput thrown by reading `text`; fails the test when nothing or
// something else is thrown.
std::string book_error(const std::string& text, const BookDefaults& defaults = {}) {
  try {
    read_book(text, defaults);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidInput thrown for:\n" << text;
  return {};
}

// BookDefaults{rate, volatility, dividend}, spelled out (GCC 12 warns on partial designated
// initializers).
BookDefaults defaults(std::optional<double> rate, std::optional<double> volatility,
                      std::optional<double> dividend) {
  return BookDefaults{rate, volatility, dividend};
}

const std::string kFullHeader = "type,spot,strike,maturity,rate,volatility,dividend\n";

TEST(OptionBook, ReadsAFullBook) {
  OptionBook book = read_book(kFullHeader +
                              "call,100,95,0.5,0.01,0.2,0.02\n"
                              "put,50.5,60,2,-0.005,0.35,0\n");
  ASSERT_EQ(book.size(), 2u);
  EXPECT_EQ(book.source, "book.csv");
  EXPECT_EQ(book.is_put, (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(book.spot, (std::vector<double>{100, 50.5}));
  EXPECT_EQ(book.strike, (std::vector<double>{95, 60}));
  EXPECT_EQ(book.maturity, (std::vector<double>{0.5, 2}));
  EXPECT_EQ(book.rate, (std::vector<double>{0.01, -0.005}));
  EXPECT_EQ(book.volatility, (std::vector<double>{0.2, 0.35}));
  EXPECT_EQ(book.dividend, (std::vector<double>{0.02, 0}));
  EXPECT_EQ(book.field_offsets.size(), 2 * 7 + 1u);
  EXPECT_EQ(book.field(1, 1), "50.5");
  EXPECT_EQ(book.field(1, 4), "-0.005");
}

TEST(OptionBook, ReadsEveryColumnOrder) {
  // Seven columns (six known, one passed through): all 5040 orders give the same options.
  const std::array<std::string, 7> names = {"type", "spot",       "strike", "maturity",
                                            "rate", "volatility", "id"};
  const std::array<std::array<std::string, 7>, 3> rows = {{
      {"call", "100", "90", "0.25", "0.01", "0.2", "first"},
      {"p", "101.5", "110", "1.5", "0.02", "0.3", "second"},
      {"PUT", "7", "0", "0", "-0.01", "0", "third"},
  }};
  std::array<std::size_t, 7> order;
  std::iota(order.begin(), order.end(), 0);
  int permutations = 0;
  do {
    std::string text;
    for (std::size_t i = 0; i < order.size(); ++i) text += (i ? "," : "") + names[order[i]];
    text += '\n';
    for (const auto& row : rows) {
      for (std::size_t i = 0; i < order.size(); ++i) text += (i ? "," : "") + row[order[i]];
      text += '\n';
    }
    SCOPED_TRACE(text);
    OptionBook book = read_book(text);
    ASSERT_EQ(book.size(), 3u);
    ASSERT_EQ(book.is_put, (std::vector<std::uint8_t>{0, 1, 1}));
    ASSERT_EQ(book.spot, (std::vector<double>{100, 101.5, 7}));
    ASSERT_EQ(book.strike, (std::vector<double>{90, 110, 0}));
    ASSERT_EQ(book.maturity, (std::vector<double>{0.25, 1.5, 0}));
    ASSERT_EQ(book.rate, (std::vector<double>{0.01, 0.02, -0.01}));
    ASSERT_EQ(book.volatility, (std::vector<double>{0.2, 0.3, 0}));
    ASSERT_TRUE(book.dividend.empty());
    ASSERT_EQ(book.dividend_scalar, 0.0);
    std::size_t id_column =
        static_cast<std::size_t>(std::find(order.begin(), order.end(), 6) - order.begin());
    ASSERT_EQ(book.columns[id_column], "id");
    for (std::size_t r = 0; r < rows.size(); ++r) ASSERT_EQ(book.field(r, id_column), rows[r][6]);
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(permutations, 5040);
}

TEST(OptionBook, HeaderNamesAreTrimmedAndMatchedIgnoringCase) {
  OptionBook book = read_book(" TYPE ,Spot,\" strike\t\",MaTuRiTy,Volatility\nc,1,2,3,0.5\n",
                              defaults(0.01, {}, {}));
  ASSERT_EQ(book.size(), 1u);
  // Names are kept byte for byte as given, quoted or not.
  EXPECT_EQ(book.columns,
            (std::vector<std::string>{" TYPE ", "Spot", " strike\t", "MaTuRiTy", "Volatility"}));
  EXPECT_EQ(book.strike, (std::vector<double>{2}));
  EXPECT_EQ(book.volatility, (std::vector<double>{0.5}));
}

TEST(OptionBook, TypeAcceptsCallPutCAndPInAnyCase) {
  const std::vector<std::pair<std::string, std::uint8_t>> types = {
      {"call", 0}, {"CALL", 0}, {"Call", 0}, {"c", 0}, {"C", 0},         {"put", 1},
      {"PUT", 1},  {"pUt", 1},  {"p", 1},    {"P", 1}, {"\" put \"", 1}, {"\"\tc\"", 0}};
  std::string text = "type,spot,strike,maturity\n";
  std::vector<std::uint8_t> expected;
  for (const auto& [type, is_put] : types) {
    text += type + ",100,100,1\n";
    expected.push_back(is_put);
  }
  OptionBook book = read_book(text, defaults(0, 0.2, {}));
  EXPECT_EQ(book.is_put, expected);
}

TEST(OptionBook, BadTypeNamesLineColumnAndValue) {
  for (std::string type : {"cal", "puts", "1", "call put", "\"\"", "x"}) {
    SCOPED_TRACE(type);
    std::string message =
        book_error(kFullHeader + "call,1,1,1,0,0,0\n\n" + type + ",1,1,1,0,0,0\n");
    EXPECT_EQ(message.rfind("book.csv:4:1: type: expected call, put, c or p, got \"", 0), 0u)
        << message;
  }
}

TEST(OptionBook, DefaultsStandInForMissingColumns) {
  OptionBook book =
      read_book("type,spot,strike,maturity\nc,100,100,1\np,100,90,2\n", defaults(0.03, 0.25, {}));
  ASSERT_EQ(book.size(), 2u);
  EXPECT_TRUE(book.rate.empty());
  EXPECT_TRUE(book.volatility.empty());
  EXPECT_TRUE(book.dividend.empty());
  EXPECT_EQ(book.rate_scalar, 0.03);
  EXPECT_EQ(book.volatility_scalar, 0.25);
  EXPECT_EQ(book.dividend_scalar, 0.0);

  OptionBook with_dividend =
      read_book("type,spot,strike,maturity\nc,100,100,1\n", defaults(0.03, 0.25, 0.015));
  EXPECT_EQ(with_dividend.dividend_scalar, 0.015);
  EXPECT_TRUE(with_dividend.dividend.empty());
}

TEST(OptionBook, ColumnAndDefaultTogetherIsAnError) {
  EXPECT_EQ(book_error(kFullHeader + "c,1,1,1,0,0,0\n", defaults(0.01, {}, {})),
            "book.csv:1:5: rate: rate is both a column and --rate; give one");
  EXPECT_EQ(book_error(kFullHeader + "c,1,1,1,0,0,0\n", defaults({}, 0.2, {})),
            "book.csv:1:6: volatility: volatility is both a column and --volatility; give one");
  EXPECT_EQ(book_error(kFullHeader + "c,1,1,1,0,0,0\n", defaults({}, {}, 0.0)),
            "book.csv:1:7: dividend: dividend is both a column and --dividend; give one");
}

TEST(OptionBook, RateAndVolatilityNeedAColumnOrADefault) {
  EXPECT_EQ(book_error("type,spot,strike,maturity,volatility\n", {}),
            "book.csv:1: rate: required column is missing (or give --rate); the header has type, "
            "spot, strike, maturity, volatility");
  EXPECT_EQ(book_error("type,spot,strike,maturity,rate\n", {}),
            "book.csv:1: volatility: required column is missing (or give --volatility); the "
            "header has type, spot, strike, maturity, rate");
}

TEST(OptionBook, BadDefaultsAreErrors) {
  const std::string header = "type,spot,strike,maturity\n";
  EXPECT_EQ(book_error(header, defaults(0, -0.1, {})),
            "book.csv: --volatility: must be >= 0, got -0.1");
  EXPECT_EQ(book_error(header, defaults(std::numeric_limits<double>::quiet_NaN(), 0, {})),
            "book.csv: --rate: must be finite, got nan");
  EXPECT_EQ(book_error(header, defaults(0, 0, std::numeric_limits<double>::infinity())),
            "book.csv: --dividend: must be finite, got inf");
}

TEST(OptionBook, MissingRequiredColumnIsNamed) {
  const BookDefaults rate_and_volatility = defaults(0, 0.2, {});
  EXPECT_EQ(book_error("type,spot,strike\n", rate_and_volatility),
            "book.csv:1: maturity: required column is missing; the header has type, spot, strike");
  EXPECT_EQ(book_error("spot,strike,maturity\n", rate_and_volatility),
            "book.csv:1: type: required column is missing; the header has spot, strike, maturity");
  EXPECT_EQ(book_error("\n\ntype,strike,maturity,id\n", rate_and_volatility),
            "book.csv:3: spot: required column is missing; the header has type, strike, maturity, "
            "id");
}

// Issue 30: "required column is missing" said neither what the header held nor which name was
// probably meant.
TEST(OptionBook, MissingColumnListsTheHeaderAndTheNameMeantForIt) {
  EXPECT_EQ(book_error("type,spot,strike,maturity,rate,vol\n"),
            "book.csv:1: volatility: required column is missing (or give --volatility); the "
            "header has type, spot, strike, maturity, rate, vol: is \"vol\" meant to be "
            "\"volatility\"?");
  EXPECT_EQ(book_error("Type, Spot ,Strke,maturity\n", defaults(0, 0.2, {})),
            "book.csv:1: strike: required column is missing; the header has Type, Spot, Strke, "
            "maturity: is \"Strke\" meant to be \"strike\"?");
  EXPECT_EQ(book_error("cp,spot,strike,expiry\n", defaults(0, 0.2, {})),
            "book.csv:1: type: required column is missing; the header has cp, spot, strike, "
            "expiry: is \"cp\" meant to be \"type\"?");
  // A long header is cut after a dozen names.
  std::string header = "type,spot,strike";
  for (int i = 0; i < 20; ++i) header += ",c" + std::to_string(i);
  EXPECT_EQ(book_error(header + "\n", defaults(0, 0.2, {})),
            "book.csv:1: maturity: required column is missing; the header has type, spot, strike, "
            "c0, c1, c2, c3, c4, c5, c6, c7, c8, ... (23 columns)");
}

TEST(OptionBook, NearestColumnNameIsAnAliasAPrefixOrASlipAway) {
  auto nearest = [](std::string_view missing, std::vector<std::string> names) {
    return nearest_column_name(missing, names).value_or("(none)");
  };
  EXPECT_EQ(nearest("volatility", {"type", "vol", "id"}), "vol");
  EXPECT_EQ(nearest("volatility", {"Sigma"}), "Sigma");
  EXPECT_EQ(nearest("volatility", {"volatilty"}), "volatilty");
  EXPECT_EQ(nearest("volatility", {" Volatility_Pct "}), " Volatility_Pct ");
  EXPECT_EQ(nearest("maturity", {"T"}), "T");
  EXPECT_EQ(nearest("maturity", {"Time to expiry", "time-to-maturity"}), "Time to expiry");
  EXPECT_EQ(nearest("barrier_type", {"Barrier Type"}), "Barrier Type");
  EXPECT_EQ(nearest("spot", {"sopt"}), "sopt");
  // An alias beats a slip; the first of equals wins.
  EXPECT_EQ(nearest("strike", {"strik", "K"}), "K");
  EXPECT_EQ(nearest("rate", {"r", "rf"}), "r");
  // Nothing close, a known column, or a short name that differs in its first letter.
  EXPECT_EQ(nearest("rate", {"date", "id", "notes"}), "(none)");
  EXPECT_EQ(nearest("volatility", {"spot", "strike"}), "(none)");
  EXPECT_EQ(nearest("dividend", {"rate", "type"}), "(none)");
  EXPECT_EQ(nearest("strike", {}), "(none)");
}

TEST(OptionBook, DuplicateKnownColumnIsAnError) {
  EXPECT_EQ(book_error("type,spot,Strike,maturity, STRIKE\n", defaults(0, 0, {})),
            "book.csv:1:5: STRIKE: duplicate column (also column 3)");
}

TEST(OptionBook, DuplicatePassThroughColumnsAreKept) {
  OptionBook book = read_book("id,type,spot,strike,maturity,id\nx,c,1,1,1,y\n", defaults(0, 0, {}));
  ASSERT_EQ(book.size(), 1u);
  EXPECT_EQ(book.field(0, 0), "x");
  EXPECT_EQ(book.field(0, 5), "y");
}

TEST(OptionBook, EmptyInputIsAnError) {
  for (const std::string& text :
       {std::string(""), std::string("\n\r\n  \n"), std::string("\xEF\xBB\xBF")}) {
    EXPECT_EQ(book_error(text), "book.csv: empty file, expected a header line");
  }
}

TEST(OptionBook, HeaderOnlyIsAnEmptyBook) {
  for (const std::string& text : {kFullHeader, std::string("type,spot,strike,maturity,rate,"
                                                           "volatility,dividend")}) {
    OptionBook book = read_book(text);
    EXPECT_EQ(book.size(), 0u);
    EXPECT_EQ(book.columns.size(), 7u);
    EXPECT_TRUE(book.spot.empty());
    EXPECT_EQ(book.field_offsets, (std::vector<std::uint64_t>{0}));
    std::ostringstream out;
    std::vector<double> none;
    std::vector<OutputColumn> extra = {{"price", none, false}};
    write_priced_book(out, book, extra);
    EXPECT_EQ(out.str(), "type,spot,strike,maturity,rate,volatility,dividend,price\n");
  }
}

TEST(OptionBook, RowWithWrongFieldCountNamesTheLine) {
  EXPECT_EQ(book_error(kFullHeader + "c,1,1,1,0,0,0\r\n\r\nc,1,1,1,0,0\r\n"),
            "book.csv:4: row has 6 fields, the header has 7");
  EXPECT_EQ(book_error(kFullHeader + "c,1,1,1,0,0,0,extra\n"),
            "book.csv:2: row has 8 fields, the header has 7");
}

// One bad value in an otherwise valid book: the exact message, with file:line:col and column name.
struct BadValueCase {
  std::size_t column;  // 0-based, in kFullHeader's order
  std::string text;    // as written in the CSV
  std::string expected_message;
};

TEST(OptionBook, EachValidationErrorHasFileLineColumnAndName) {
  const std::vector<BadValueCase> cases = {
      {1, "0", "book.csv:3:2: spot: must be > 0, got \"0\""},
      {1, "-2", "book.csv:3:2: spot: must be > 0, got \"-2\""},
      {1, "-0", "book.csv:3:2: spot: must be > 0, got \"-0\""},
      {2, "-1", "book.csv:3:3: strike: must be >= 0, got \"-1\""},
      {3, "-0.5", "book.csv:3:4: maturity: must be >= 0, got \"-0.5\""},
      {5, "-0.2", "book.csv:3:6: volatility: must be >= 0, got \"-0.2\""},
      {4, "abc", "book.csv:3:5: rate: expected a number, got \"abc\""},
      {6, "", "book.csv:3:7: dividend: empty field, expected a number"},
      {6, "\"  \"", "book.csv:3:7: dividend: empty field, expected a number"},
      {2, "1e999", "book.csv:3:3: strike: out of the range of a double, got \"1e999\""},
      {3, "nan", "book.csv:3:4: maturity: must be finite, got \"nan\""},
      {4, "-inf", "book.csv:3:5: rate: must be finite, got \"-inf\""},
      {2, "\"1\n2\"", "book.csv:4:3: strike: expected a number, got \"1\\x0a2\""},
  };
  for (const BadValueCase& bad : cases) {
    std::array<std::string, 7> row = {"put", "100", "100", "1", "0.01", "0.2", "0"};
    row[bad.column] = bad.text;
    std::string text = kFullHeader + "call,100,100,1,0.01,0.2,0\n";
    for (std::size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + row[i];
    text += "\n";
    SCOPED_TRACE(text);
    EXPECT_EQ(book_error(text), bad.expected_message);
  }
}

TEST(OptionBook, ErrorNamesTheColumnAsGivenInTheHeader) {
  EXPECT_EQ(book_error("Type,SPOT,Strike,Maturity\nc,1,-1,1\n", defaults(0, 0, {})),
            "book.csv:2:3: Strike: must be >= 0, got \"-1\"");
}

TEST(OptionBook, NonNumbersAreRejected) {
  for (std::string text :
       {"nan", "NaN",  "-nan",    "nan(123)", "inf",     "-inf", "Infinity", "1e",        "1e+",
        "1e-", "abc",  "1.5x",    "x1.5",     "+-1",     "-+1",  "++1",      "+",         "-",
        ".",   "0x10", "\"1,5\"", "1 5",      "\"+ 1\"", "1..2", "1e5.5",    "\"1\t\t2\""}) {
    SCOPED_TRACE(text);
    std::string message = book_error(kFullHeader + "c,100," + text + ",1,0,0.2,0\n");
    EXPECT_EQ(message.rfind("book.csv:2:3: strike: ", 0), 0u) << message;
  }
}

TEST(OptionBook, NumberFormsThatAreAccepted) {
  const std::vector<std::pair<std::string, double>> numbers = {
      {"+1.5", 1.5},     {"\" 2 \"", 2},
      {"\"\t+3\t\"", 3}, {"1e2", 100},
      {"1E-2", 0.01},    {".5", 0.5},
      {"5.", 5},         {"-0", 0},
      {"007", 7},        {"1.0000000000000002", 1.0000000000000002}};
  for (const auto& [text, value] : numbers) {
    SCOPED_TRACE(text);
    OptionBook book = read_book(kFullHeader + "c,100," + text + ",1,0,0.2,0\n");
    ASSERT_EQ(book.size(), 1u);
    EXPECT_EQ(book.strike[0], value);
  }
}

// Restores the global C++ and C locales on scope exit.
class GlobalLocaleGuard {
 public:
  GlobalLocaleGuard() : saved_(std::locale()) {}
  ~GlobalLocaleGuard() { std::locale::global(saved_); }
  GlobalLocaleGuard(const GlobalLocaleGuard&) = delete;
  GlobalLocaleGuard& operator=(const GlobalLocaleGuard&) = delete;

 private:
  std::locale saved_;
};

TEST(OptionBook, ReadingAndWritingIgnoreTheLocale) {
  GlobalLocaleGuard guard;
  bool comma_locale = false;
  for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"}) {
    try {
      std::locale::global(std::locale(name));
      comma_locale = true;
      break;
    } catch (const std::runtime_error&) {
    }
  }
  if (!comma_locale) GTEST_SKIP() << "no comma-decimal locale installed (e.g. de_DE.UTF-8)";
  // Guard against a vacuous pass: the C and C++ locales really use a decimal comma now.
  ASSERT_EQ(std::strtod("1,5", nullptr), 1.5);
  std::ostringstream probe;
  probe << 1.5;
  ASSERT_EQ(probe.str(), "1,5");

  OptionBook book = read_book(kFullHeader + "c,1234.5,100.25,0.5,0.01,0.2,0\n");
  ASSERT_EQ(book.size(), 1u);
  EXPECT_EQ(book.spot[0], 1234.5);
  EXPECT_EQ(book.strike[0], 100.25);
  std::string message = book_error(kFullHeader + "c,100,\"100,25\",0.5,0.01,0.2,0\n");
  EXPECT_EQ(message, "book.csv:2:3: strike: expected a number, got \"100,25\"");

  std::vector<double> price = {1234.5};
  std::vector<OutputColumn> extra = {{"price", price, false}, {"price32", price, true}};
  std::ostringstream out;
  write_priced_book(out, book, extra);
  EXPECT_EQ(out.str(), kFullHeader.substr(0, kFullHeader.size() - 1) +
                           ",price,price32\nc,1234.5,100.25,0.5,0.01,0.2,0,1234.5,1234.5\n");
}

TEST(OptionBook, PassThroughColumnsArePreservedByteForByte) {
  const std::string input =
      "\xEF\xBB\xBFid,Type,note,spot,strike,maturity,rate,volatility,\"weird, \"\"name\"\"\"\r\n"
      "\"A-1\",call,\"has, comma\",100,95,0.5,0.01,0.2,\" spaced \"\r\n"
      "B2,p,\"multi\r\nline\",100,105,1,0.01,0.2,\"x\"\"y\"\r\n"
      "\xC3\xA9t\xC3\xA9,C,,1e2,0,0,0,0,\"\xEF\xBB\xBF\"\r\n";
  OptionBook book = read_book(input);
  ASSERT_EQ(book.size(), 3u);
  std::vector<double> price = {12.5, 7.125, 100};
  std::vector<double> delta = {0.25, -0.75, 1};
  std::vector<OutputColumn> extra = {{"price", price, false}, {"delta", delta, true}};
  std::ostringstream out;
  write_priced_book(out, book, extra);
  // Issue 30: the byte order mark, the CR LF line ends and every quoted field come back as they
  // were (they used to come back without the mark, with LF, and "A-1" as A-1).
  EXPECT_EQ(out.str(),
            "\xEF\xBB\xBFid,Type,note,spot,strike,maturity,rate,volatility,\"weird, \"\"name\"\"\","
            "price,delta\r\n"
            "\"A-1\",call,\"has, comma\",100,95,0.5,0.01,0.2,\" spaced \",12.5,0.25\r\n"
            "B2,p,\"multi\r\nline\",100,105,1,0.01,0.2,\"x\"\"y\",7.125,-0.75\r\n"
            "\xC3\xA9t\xC3\xA9,C,,1e2,0,0,0,0,\"\xEF\xBB\xBF\",100,1\r\n");

  // Read back: every input field comes out with the same bytes, then the extra columns.
  std::istringstream written(out.str());
  CsvReader reader(written, "out.csv");
  CsvRecord record;
  ASSERT_TRUE(reader.next(record));
  std::vector<std::string> header = book.columns;
  header.push_back("price");
  header.push_back("delta");
  EXPECT_EQ(record.fields, header);
  for (std::size_t row = 0; row < book.size(); ++row) {
    ASSERT_TRUE(reader.next(record));
    ASSERT_EQ(record.fields.size(), book.columns.size() + 2);
    for (std::size_t col = 0; col < book.columns.size(); ++col) {
      EXPECT_EQ(record.fields[col], book.field(row, col)) << "row " << row << " col " << col;
    }
  }
  EXPECT_FALSE(reader.next(record));
}

// Issue 18: unquoted pass-through fields keep their blanks, so a book written in the writer's own
// form (LF line ends, quotes only where needed) comes back byte for byte; issue 30: so does a CR LF
// book.
TEST(OptionBook, UnquotedBlanksPassThroughAndACanonicalBookIsWrittenBackUnchanged) {
  const std::string input =
      "id,type,note,spot,strike,maturity,rate,volatility\n"
      "  A 1 ,call,\t tab and blanks \t,100,95,0.5,0.01,0.2\n"
      " B2,put,\"a, b\", 100 ,105,1,0.01,0.2\n"
      "C3 ,c,\"say \"\"hi\"\"\"\"\", 1e2,0,0,0,0\n"
      "D4,p,\"two\r\nlines\",7,7,1,0,0.1\n";
  OptionBook book = read_book(input);
  ASSERT_EQ(book.size(), 4u);
  EXPECT_EQ(book.field(0, 0), "  A 1 ");
  EXPECT_EQ(book.field(0, 2), "\t tab and blanks \t");
  EXPECT_EQ(book.field(1, 0), " B2");
  EXPECT_EQ(book.field(1, 3), " 100 ");
  EXPECT_EQ(book.spot[1], 100.0);  // numbers are still read through their blanks
  EXPECT_EQ(book.field(2, 0), "C3 ");
  EXPECT_EQ(book.field(2, 2), "say \"hi\"\"");
  EXPECT_EQ(book.field(3, 2), "two\r\nlines");
  std::ostringstream out;
  write_priced_book(out, book, {});
  EXPECT_EQ(out.str(), input);

  std::string crlf;  // the same book with CR LF line ends (the quoted CR LF stays as it is)
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i] == '\n' && (i == 0 || input[i - 1] != '\r')) crlf += '\r';
    crlf += input[i];
  }
  OptionBook from_crlf = read_book(crlf);
  EXPECT_EQ(from_crlf.line_end, "\r\n");
  std::ostringstream out_crlf;
  write_priced_book(out_crlf, from_crlf, {});
  EXPECT_EQ(out_crlf.str(), crlf);
}

// Issue 30: a book saved by a spreadsheet (byte order mark, Excel's `sep=` line, CR LF, quoted
// fields holding the delimiter, doubled quotes and blanks) comes back as it was plus the priced
// columns, and pricing the priced book again gives the same bytes.
TEST(OptionBook, ASpreadsheetBookComesBackByteForByteAndPricedAgainTheSame) {
  const std::string header =
      "\xEF\xBB\xBFsep=;\r\n\"id\";type; \"desk; book\" ;spot;strike;maturity;rate;volatility";
  const std::vector<std::string> rows = {
      "\"T00000\";call;\"Rates; \"\"EU\"\"\";100;95;0.5;0.01;0.2",
      "\" T00001 \";put;  \"a \"\"b\"\" c\"  ;\"100\";105;1;0.01;0.2",
      "T00002;p;plain text ;1e2;0;0;0;0", "\"\";c;\"two\r\nlines\";7;7;1;0;0.1"};
  std::string input = header + "\r\n";
  for (const std::string& row : rows) input += row + "\r\n";
  std::istringstream in(input);
  const OptionBook book = read_option_book(in, "book.csv", {});
  ASSERT_EQ(book.size(), 4u);
  EXPECT_EQ(book.delimiter, ';');
  EXPECT_TRUE(book.byte_order_mark);
  EXPECT_EQ(book.sep_line, "sep=;");
  EXPECT_EQ(book.lines, (std::vector<std::int64_t>{3, 4, 5, 7}));
  EXPECT_EQ(book.field(0, 0), "T00000");  // the text, as stream keys and messages read it
  EXPECT_EQ(book.input_field(0, 0), "\"T00000\"");
  EXPECT_EQ(book.field(1, 2), "a \"b\" c");
  EXPECT_EQ(book.input_field(1, 2), "  \"a \"\"b\"\" c\"  ");
  EXPECT_EQ(book.input_field(2, 2), "plain text ");
  EXPECT_EQ(book.row_location(3), "book.csv:7");

  const std::vector<double> price = {12.5, 7.125, 100, 0.25};
  const std::vector<OutputColumn> extra = {{"price", price, false}};
  std::ostringstream once;
  write_priced_book(once, book, extra);
  std::string expected = header + ";price\r\n";
  const std::vector<std::string> prices = {"12.5", "7.125", "100", "0.25"};
  for (std::size_t i = 0; i < rows.size(); ++i) expected += rows[i] + ";" + prices[i] + "\r\n";
  EXPECT_EQ(once.str(), expected);

  std::istringstream priced_in(once.str());
  const OptionBook priced = read_option_book(priced_in, "priced.csv", {});
  std::ostringstream twice;
  write_priced_book(twice, priced, extra);
  EXPECT_EQ(twice.str(), once.str());
}

TEST(OptionBook, ABookNotReadFromCsvIsQuotedWhereCsvNeedsIt) {
  OptionBook book;
  book.source = "made.csv";
  book.columns = {"sep=x", "note"};
  book.is_put = {0};
  book.field_text = "a,bsep=;";
  book.field_offsets = {0, 3, 8};
  std::ostringstream out;
  write_priced_book(out, book, {});
  // The first name would read as Excel's delimiter line, "a,b" as two fields; "sep=;" later
  // in the file is text.
  EXPECT_EQ(out.str(), "\"sep=x\",note\n\"a,b\",sep=;\n");
}

TEST(OptionBook, ColumnIndexFindsAColumnLikeTheKnownOnes) {
  OptionBook book =
      read_book(" ID ,type,spot,strike,maturity,id,Note\nx,c,1,1,1,y,z\n", defaults(0, 0, {}));
  EXPECT_EQ(book.column_index("id"), std::optional<std::size_t>(0));  // the first of two
  EXPECT_EQ(book.column_index("note"), std::optional<std::size_t>(6));
  EXPECT_EQ(book.column_index("SPOT"), std::optional<std::size_t>(2));
  EXPECT_EQ(book.column_index("price"), std::nullopt);
  EXPECT_EQ(book.field(0, *book.column_index("id")), "x");
}

// Issue 18: pricing a priced book again must not add a second price column.
TEST(OptionBook, AnOutputColumnAlreadyInTheInputIsReplacedInPlace) {
  OptionBook book = read_book(
      "id,type,spot,Price,strike,maturity,rate,volatility, delta \n"
      "a,c,100,1.5,95,0.5,0.01,0.2,0.9\n"
      "b,p,100,,105,1,0.01,0.2,x\n");
  const std::vector<double> price = {12.5, 7.125}, delta = {0.25, -0.75}, vega = {3, 4};
  const std::vector<OutputColumn> extra = {
      {"price", price, false}, {"delta", delta, false}, {"vega", vega, false}};
  EXPECT_EQ(input_columns_replaced(book, extra), (std::vector<std::string>{"Price", " delta "}));
  std::ostringstream out;
  write_priced_book(out, book, extra);
  EXPECT_EQ(out.str(),
            "id,type,spot,Price,strike,maturity,rate,volatility, delta ,vega\n"
            "a,c,100,12.5,95,0.5,0.01,0.2,0.25,3\n"
            "b,p,100,7.125,105,1,0.01,0.2,-0.75,4\n");
  // A book without those columns gets them appended, and nothing is reported replaced.
  OptionBook plain = read_book(kFullHeader + "c,1,1,1,0,0,0\nc,2,2,2,0,0,0\n");
  EXPECT_TRUE(input_columns_replaced(plain, extra).empty());
}

TEST(OptionBook, RepricingAWrittenBookGivesTheSameText) {
  OptionBook book = read_book(kFullHeader + "c,100,95,0.5,0.01,0.2,0\np,50,60,2,0.01,0.3,0\n");
  const std::vector<double> price = {10.25, 0.1}, delta = {0.5, -1.0 / 3.0};
  const std::vector<OutputColumn> extra = {{"price", price, false}, {"delta", delta, true}};
  std::ostringstream once;
  write_priced_book(once, book, extra);
  std::istringstream in(once.str());
  OptionBook priced = read_option_book(in, "priced.csv", {});
  std::ostringstream twice;
  write_priced_book(twice, priced, extra);
  EXPECT_EQ(twice.str(), once.str());
}

TEST(OptionBook, SemicolonBookIsReadAndWrittenWithSemicolons) {
  std::istringstream in(
      "id;type;spot;strike;maturity;rate;volatility\n\"a;1\";call;100;100;1;0.05;0.2\n");
  OptionBook book = read_option_book(in, "book.csv", {}, {}, BookColumns::european, ';');
  ASSERT_EQ(book.size(), 1u);
  EXPECT_EQ(book.delimiter, ';');
  EXPECT_EQ(book.field(0, 0), "a;1");
  EXPECT_EQ(book.spot, (std::vector<double>{100}));
  const std::vector<double> price = {10.5};
  const std::vector<OutputColumn> extra = {{"price", price, false}};
  std::ostringstream out;
  write_priced_book(out, book, extra);
  EXPECT_EQ(
      out.str(),
      "id;type;spot;strike;maturity;rate;volatility;price\n\"a;1\";call;100;100;1;0.05;0.2;10.5\n");
}

// Issue 18: spreadsheet exports used to all say "type: required column is missing".
TEST(OptionBook, SpreadsheetExportsSayWhatWasFound) {
  const BookDefaults none;
  EXPECT_EQ(book_error("type;spot;strike;maturity;rate;volatility\ncall;1;1;1;0;0\n", none),
            "book.csv:1: the header is one column containing ';': use --delimiter ';'");
  EXPECT_EQ(book_error("type\tspot\tstrike\tmaturity\n", defaults(0, 0.2, {})),
            "book.csv:1: the header is one column containing tabs: use --delimiter tab");
  // UTF-16 without a byte order mark: every other byte of the header is NUL.
  std::string utf16;
  for (char c : std::string("type,spot,strike,maturity\n")) utf16 += std::string{c, '\0'};
  const std::string message = book_error(utf16, defaults(0, 0.2, {}));
  EXPECT_NE(message.find("book.csv:1: the header holds NUL bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("save it as UTF-8 CSV"), std::string::npos) << message;
  // A semicolon export with decimal commas, read with --delimiter ';'.
  std::istringstream decimal_commas("type;spot;strike;maturity\ncall;100;100,5;1\n");
  try {
    read_option_book(decimal_commas, "book.csv", defaults(0, 0.2, {}), {}, BookColumns::european,
                     ';');
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "book.csv:2:3: strike: expected a number, got \"100,5\" (write the decimal point "
              "as '.')");
  }
  // A comma-separated file read with --delimiter ';'.
  std::istringstream in("type,spot,strike,maturity\n");
  try {
    read_option_book(in, "book.csv", defaults(0, 0.2, {}), {}, BookColumns::european, ';');
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "book.csv:1: the header is one column containing ',': use --delimiter ','");
  }
}

// Issue 30: with --precision float, a number beyond float's range was rounded to an infinity and
// priced to nan, -nan or inf with exit 0.
TEST(OptionBook, AFloatBookRefusesNumbersThatDoNotFitAFloat) {
  auto error_in = [](const std::string& text, const BookDefaults& given,
                     finance::Precision precision) -> std::string {
    std::istringstream in(text);
    try {
      read_option_book(in, "book.csv", given, {}, BookColumns::with_barriers, ',', precision);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string header =
      "type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n"
      "call,100,100,1,0.05,0.2,,,\n";
  const std::string beyond = "out of the range of a float (at most 3.4028235e+38 in magnitude)";
  const std::string to_zero = "rounds to 0 in float (must be > 0; the smallest float is 1e-45)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"call,1e39,100,1,0.05,0.2,,,", "book.csv:3:2: spot: " + beyond + ", got \"1e39\""},
      {"call,100,3.4028236e38,1,0.05,0.2,,,",
       "book.csv:3:3: strike: " + beyond + ", got \"3.4028236e38\""},
      {"put,100,100,1e40,0.05,0.2,,,", "book.csv:3:4: maturity: " + beyond + ", got \"1e40\""},
      {"put,100,100,1,-1e39,0.2,,,", "book.csv:3:5: rate: " + beyond + ", got \"-1e39\""},
      {"put,100,100,1,0.05,1e300,,,", "book.csv:3:6: volatility: " + beyond + ", got \"1e300\""},
      {"call,1e-46,100,1,0.05,0.2,,,", "book.csv:3:2: spot: " + to_zero + ", got \"1e-46\""},
      {"call,100,100,1,0.05,0.2,1e-50,down-out,10",
       "book.csv:3:7: barrier: " + to_zero + ", got \"1e-50\""},
      {"call,100,100,1,0.05,0.2,4e38,up-out,10",
       "book.csv:3:7: barrier: " + beyond + ", got \"4e38\""},
  };
  for (const auto& [row, expected] : cases) {
    SCOPED_TRACE(row);
    EXPECT_EQ(error_in(header + row + "\n", {}, finance::Precision::float32), expected);
    EXPECT_EQ(error_in(header + row + "\n", {}, finance::Precision::float64), "no error");
  }
  // What rounds to a float is taken: the largest float, a strike that rounds to 0, a tiny spot.
  EXPECT_EQ(error_in(header + "call,3.4028235e38,1e-50,1,0.05,0.2,,,\ncall,2e-45,1,1,0,0,,,\n", {},
                     finance::Precision::float32),
            "no error");
  // Book-wide values given on the command line too.
  EXPECT_EQ(error_in("type,spot,strike,maturity,volatility\n", defaults(1e39, {}, {}),
                     finance::Precision::float32),
            "book.csv: --rate: " + beyond + ", got 1e+39");
}

TEST(OptionBook, ExtraColumnOfWrongSizeIsAnError) {
  OptionBook book = read_book(kFullHeader + "c,1,1,1,0,0,0\n");
  std::vector<double> two = {1, 2};
  std::vector<OutputColumn> extra = {{"price", two, false}};
  std::ostringstream out;
  EXPECT_THROW(write_priced_book(out, book, extra), InvalidInput);
  EXPECT_TRUE(out.str().empty());  // nothing written on failure
}

TEST(OptionBook, WriteToFailedStreamIsAnIoError) {
  OptionBook book = read_book(kFullHeader + "c,1,1,1,0,0,0\n");
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_THROW(write_priced_book(out, book, {}), IoError);
}

// Output text of `values` written as one extra column of a book with as many rows.
std::vector<std::string> formatted(const std::vector<double>& values, bool as_float) {
  std::string text = "type,spot,strike,maturity\n";
  for (std::size_t i = 0; i < values.size(); ++i) text += "c,1,1,1\n";
  OptionBook book = read_book(text, defaults(0, 0, {}));
  std::vector<OutputColumn> extra = {{"v", values, as_float}};
  std::ostringstream out;
  write_priced_book(out, book, extra);
  std::istringstream in(out.str());
  CsvReader reader(in, "out.csv");
  CsvRecord record;
  std::vector<std::string> texts;
  reader.next(record);  // header
  while (reader.next(record)) texts.push_back(record.fields.back());
  return texts;
}

TEST(OptionBook, FloatAndDoubleOutputAreShortestRoundTrips) {
  const std::vector<double> values = {0.1, 1.0 / 3.0, 100, -2.5, 0, 1e-300, 123456789.123};
  EXPECT_EQ(formatted(values, false),
            (std::vector<std::string>{"0.1", "0.3333333333333333", "100", "-2.5", "0", "1e-300",
                                      "123456789.123"}));
  EXPECT_EQ(formatted(values, true),
            (std::vector<std::string>{"0.1", "0.33333334", "100", "-2.5", "0", "0", "123456792"}));
  EXPECT_EQ(formatted({std::numeric_limits<double>::infinity(), 1e300}, true),
            (std::vector<std::string>{"inf", "inf"}));
}

// Issue 30: a NaN with its sign bit set was written "-nan", which is no number to most readers.
TEST(OptionBook, NanIsWrittenAsNanWhateverItsSign) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {nan, -nan, std::copysign(nan, -1.0), inf, -inf};
  for (const bool as_float : {false, true}) {
    EXPECT_EQ(formatted(values, as_float),
              (std::vector<std::string>{"nan", "nan", "nan", "inf", "-inf"}))
        << (as_float ? "float" : "double");
  }
}

TEST(OptionBook, RandomValuesRoundTripAsFloatAndDouble) {
  const gpukit::testing::TestSeed seed;
  std::mt19937_64 random(seed.value());
  std::vector<double> values;
  while (values.size() < 2000) {
    // Random bit patterns cover every exponent and mantissa; keep the finite ones.
    double value = std::bit_cast<double>(random());
    if (std::isfinite(value)) values.push_back(values.size() % 2 ? value : value * 1e-300 * 1e300);
  }
  std::vector<std::string> as_double = formatted(values, false);
  std::vector<std::string> as_float = formatted(values, true);
  ASSERT_EQ(as_double.size(), values.size());
  ASSERT_EQ(as_float.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    double parsed_double = 0;
    auto [end_d, error_d] = std::from_chars(
        as_double[i].data(), as_double[i].data() + as_double[i].size(), parsed_double);
    ASSERT_EQ(error_d, std::errc{}) << as_double[i];
    ASSERT_EQ(end_d, as_double[i].data() + as_double[i].size());
    ASSERT_EQ(std::bit_cast<std::uint64_t>(parsed_double), std::bit_cast<std::uint64_t>(values[i]))
        << "value " << i << " written as " << as_double[i];

    auto expected_float = static_cast<float>(values[i]);
    if (std::isinf(expected_float)) {
      ASSERT_EQ(as_float[i], expected_float > 0 ? "inf" : "-inf");
      continue;
    }
    float parsed_float = 0;
    auto [end_f, error_f] =
        std::from_chars(as_float[i].data(), as_float[i].data() + as_float[i].size(), parsed_float);
    ASSERT_EQ(error_f, std::errc{}) << as_float[i];
    ASSERT_EQ(end_f, as_float[i].data() + as_float[i].size());
    ASSERT_EQ(std::bit_cast<std::uint32_t>(parsed_float),
              std::bit_cast<std::uint32_t>(expected_float))
        << "value " << i << " written as " << as_float[i];
    // A float's shortest text never needs more than 9 significant digits.
    EXPECT_LE(as_float[i].size(), 15u) << as_float[i];
  }
}

// A stream buffer that cannot seek and hands out a few bytes at a time, as a pipe does.
class PipeLikeBuffer : public std::streambuf {
 public:
  explicit PipeLikeBuffer(std::string data) : data_(std::move(data)) {}

 protected:
  int_type underflow() override {
    if (next_ == data_.size()) return traits_type::eof();
    std::size_t count = std::min<std::size_t>(7, data_.size() - next_);
    char* begin = data_.data() + next_;
    setg(begin, begin, begin + count);
    next_ += count;
    return traits_type::to_int_type(*begin);
  }

 private:
  std::string data_;
  std::size_t next_ = 0;
};

TEST(OptionBook, ReadsFromANonSeekableStream) {
  std::string text = kFullHeader;
  for (int i = 0; i < 20000; ++i)
    text += (i % 2 ? "c," : "p,") + std::to_string(i + 1) + ",1,1,0,0,0\n";
  PipeLikeBuffer buffer(text);
  std::istream in(&buffer);
  OptionBook book = read_option_book(in, "<stdin>", {});
  ASSERT_EQ(book.size(), 20000u);
  EXPECT_EQ(book.spot.front(), 1);
  EXPECT_EQ(book.spot.back(), 20000);
  EXPECT_EQ(book.is_put.back(), 0);
}

TEST(OptionBook, ProgressIsReportedEveryMillionRowsAndAtTheEnd) {
  const std::int64_t rows = (std::int64_t{1} << 20) + 5;
  std::string text = "type,spot,strike,maturity\n";
  text.reserve(text.size() + static_cast<std::size_t>(rows) * 8);
  for (std::int64_t i = 0; i < rows; ++i) text += "c,1,1,1\n";
  std::istringstream in(text);
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  OptionBook book = read_option_book(
      in, "big.csv", defaults(0, 0.2, {}),
      [&](std::int64_t bytes, std::int64_t done) { calls.emplace_back(bytes, done); });
  EXPECT_EQ(book.size(), static_cast<std::size_t>(rows));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].second, std::int64_t{1} << 20);
  EXPECT_GT(calls[0].first, 0);
  EXPECT_LE(calls[0].first, static_cast<std::int64_t>(text.size()));
  EXPECT_EQ(calls[1], std::make_pair(static_cast<std::int64_t>(text.size()), rows));
}

TEST(OptionBook, ProgressOnSmallBookIsCalledOnceAtTheEnd) {
  std::string text = kFullHeader + "c,1,1,1,0,0,0\np,1,1,1,0,0,0\n";
  std::istringstream in(text);
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  read_option_book(in, "small.csv", {},
                   [&](std::int64_t bytes, std::int64_t done) { calls.emplace_back(bytes, done); });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::make_pair(static_cast<std::int64_t>(text.size()), std::int64_t{2}));
}
// ---- The barrier columns of BookColumns::with_barriers (gpukit mc) -----------------------------

OptionBook read_barrier_book(const std::string& text) {
  std::istringstream in(text);
  return read_option_book(in, "book.csv", defaults(0.01, 0.2, {}), {}, BookColumns::with_barriers);
}

std::string barrier_book_error(const std::string& text) {
  try {
    read_barrier_book(text);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidInput thrown for:\n" << text;
  return {};
}

const std::string kBarrierHeader = "type,spot,strike,maturity,barrier,barrier_type,steps\n";

TEST(OptionBook, ReadsBarrierTypeLevelAndSteps) {
  const OptionBook book = read_barrier_book(kBarrierHeader +
                                            "call,100,100,1,,,\n"
                                            "put,100,95,1,90,down-out,252\n"
                                            "c,100,100,2,120,UP-IN,12\n"
                                            "p,100,100,1,80, Down-In ,1\n"
                                            "call,100,100,1,130,up-out,1048576\n"
                                            "call,100,100,1,,none,7\n");
  ASSERT_EQ(book.size(), 6u);
  EXPECT_EQ(book.barrier_type, (std::vector<BarrierType>{BarrierType::none, BarrierType::down_out,
                                                         BarrierType::up_in, BarrierType::down_in,
                                                         BarrierType::up_out, BarrierType::none}));
  EXPECT_EQ(book.barrier, (std::vector<double>{0, 90, 120, 80, 130, 0}));
  EXPECT_EQ(book.steps, (std::vector<std::uint32_t>{1, 252, 12, 1, 1u << 20, 7}));
}

TEST(OptionBook, BarrierColumnsMayBeAbsentOrInAnyOrder) {
  // No barrier columns: every row European with one step.
  const OptionBook plain = read_barrier_book("type,spot,strike,maturity\nc,1,1,1\np,2,2,2\n");
  EXPECT_EQ(plain.barrier_type, (std::vector<BarrierType>{BarrierType::none, BarrierType::none}));
  EXPECT_EQ(plain.barrier, (std::vector<double>{0, 0}));
  EXPECT_EQ(plain.steps, (std::vector<std::uint32_t>{1, 1}));
  // Steps alone: European rows with several steps.
  const OptionBook stepped = read_barrier_book("steps,type,spot,strike,maturity\n3,c,1,1,1\n");
  EXPECT_EQ(stepped.steps, (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(stepped.barrier_type, (std::vector<BarrierType>{BarrierType::none}));
  // Reordered, with names in other cases.
  const OptionBook reordered = read_barrier_book(
      "Steps,Barrier_Type,type,BARRIER,spot,strike,maturity\n5,up-out,c,110,100,"
      "100,1\n");
  EXPECT_EQ(reordered.barrier_type, (std::vector<BarrierType>{BarrierType::up_out}));
  EXPECT_EQ(reordered.barrier, (std::vector<double>{110}));
  EXPECT_EQ(reordered.steps, (std::vector<std::uint32_t>{5}));
}

TEST(OptionBook, BarrierNamesArePassThroughColumnsForEuropeanBooks) {
  const OptionBook book =
      read_book(kBarrierHeader + "call,100,100,1,90,sideways,x\n", defaults(0.01, 0.2, {}));
  EXPECT_EQ(book.size(), 1u);
  EXPECT_TRUE(book.barrier_type.empty());
  EXPECT_TRUE(book.barrier.empty());
  EXPECT_TRUE(book.steps.empty());
  EXPECT_EQ(book.columns.size(), 7u);
}

TEST(OptionBook, InstrumentViewPointsAtEveryColumnAndTakesBookWideScalars) {
  // A barrier book with per-row rate and dividend, a book-wide volatility.
  const OptionBook book = [] {
    std::istringstream in(
        "id,type,spot,strike,maturity,rate,dividend,barrier,barrier_type,steps\n"
        "a,put,100,95,1,0.01,0.02,90,down-out,252\n"
        "b,call,101,96,2,0.03,0.04,,,\n");
    return read_option_book(in, "book.csv", defaults({}, 0.25, {}), {}, BookColumns::with_barriers);
  }();
  const finance::OptionBookView view = instrument_view(book);
  ASSERT_EQ(view.count, 2);
  EXPECT_EQ(view.is_put[0], 1);
  EXPECT_EQ(view.is_put[1], 0);
  EXPECT_EQ(view.spot[1], 101.0);
  EXPECT_EQ(view.strike[0], 95.0);
  EXPECT_EQ(view.maturity[1], 2.0);
  ASSERT_NE(view.rate.values, nullptr);
  EXPECT_EQ(view.rate.values[1], 0.03);
  EXPECT_EQ(view.volatility.values, nullptr);
  EXPECT_EQ(view.volatility.scalar, 0.25);
  ASSERT_NE(view.dividend.values, nullptr);
  EXPECT_EQ(view.dividend.values[0], 0.02);
  ASSERT_NE(view.barrier_type, nullptr);
  EXPECT_EQ(view.barrier_type[0], BarrierType::down_out);
  EXPECT_EQ(view.barrier_type[1], BarrierType::none);
  EXPECT_EQ(view.barrier[0], 90.0);
  EXPECT_EQ(view.steps[0], 252u);
  EXPECT_EQ(view.steps[1], 1u);
  EXPECT_EQ(view.stream, nullptr);  // the id column keys nothing until the caller says so

  // A European book: no barrier columns in the view; the dividend defaults to a 0 scalar.
  const OptionBook european =
      read_book("type,spot,strike,maturity\nc,1,2,3\n", defaults(0.05, 0.2, {}));
  const finance::OptionBookView e = instrument_view(european);
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(e.barrier_type, nullptr);
  EXPECT_EQ(e.barrier, nullptr);
  EXPECT_EQ(e.steps, nullptr);
  EXPECT_EQ(e.rate.values, nullptr);
  EXPECT_EQ(e.rate.scalar, 0.05);
  EXPECT_EQ(e.dividend.values, nullptr);
  EXPECT_EQ(e.dividend.scalar, 0.0);
}

TEST(OptionBook, EachBarrierColumnErrorHasFileLineColumnAndName) {
  // Columns (1-based): barrier 5, barrier_type 6, steps 7; the bad row is line 3.
  struct Case {
    std::string row, expected_message;
  };
  const std::vector<Case> cases = {
      {"call,100,100,1,0,down-out,12", "book.csv:3:5: barrier: must be > 0, got \"0\""},
      {"call,100,100,1,-90,down-out,12", "book.csv:3:5: barrier: must be > 0, got \"-90\""},
      {"call,100,100,1,abc,down-out,12", "book.csv:3:5: barrier: expected a number, got \"abc\""},
      {"call,100,100,1,inf,down-out,12", "book.csv:3:5: barrier: must be finite, got \"inf\""},
      {"call,100,100,1,90,sideways,12",
       "book.csv:3:6: barrier_type: expected none, down-out, down-in, up-out or up-in, got "
       "\"sideways\""},
      {"call,100,100,1,90,down_out,12",
       "book.csv:3:6: barrier_type: expected none, down-out, down-in, up-out or up-in, got "
       "\"down_out\""},
      {"call,100,100,1,90,down-out,0",
       "book.csv:3:7: steps: expected an integer in [1, 1048576], got \"0\""},
      {"call,100,100,1,90,down-out,2.5",
       "book.csv:3:7: steps: expected an integer in [1, 1048576], got \"2.5\""},
      {"call,100,100,1,90,down-out,1048577",
       "book.csv:3:7: steps: expected an integer in [1, 1048576], got \"1048577\""},
      {"call,100,100,1,90,down-out,-3",
       "book.csv:3:7: steps: expected an integer in [1, 1048576], got \"-3\""},
      {"call,100,100,1,90,down-out,x", "book.csv:3:7: steps: expected a number, got \"x\""},
      {"call,100,100,1,,down-out,12",
       "book.csv:3:5: barrier: empty field, a barrier option needs a barrier level"},
      {"call,100,100,1,90,up-in,",
       "book.csv:3:7: steps: empty field, a barrier option needs its number of monitoring dates"},
  };
  for (const Case& bad : cases) {
    const std::string text = kBarrierHeader + "call,100,100,1,,,\n" + bad.row + "\n";
    SCOPED_TRACE(text);
    EXPECT_EQ(barrier_book_error(text), bad.expected_message);
  }
}

TEST(OptionBook, BarrierColumnsThatAreMissingAreNamed) {
  EXPECT_EQ(barrier_book_error("type,spot,strike,maturity,barrier\nc,1,1,1,0.5\n"),
            "book.csv:1: barrier_type: required column is missing (the barrier column is given); "
            "the header has type, spot, strike, maturity, barrier");
  EXPECT_EQ(barrier_book_error("type,spot,strike,maturity,barrier_type\nc,1,1,1,none\n"),
            "book.csv:1: barrier: required column is missing (the barrier_type column is given); "
            "the header has type, spot, strike, maturity, barrier_type");
  EXPECT_EQ(
      barrier_book_error(
          "type,spot,strike,maturity,Barrier Level,barrier_type\nc,1,1,1,0.5,none\n"),
      "book.csv:1: barrier: required column is missing (the barrier_type column is given); the "
      "header has type, spot, strike, maturity, Barrier Level, barrier_type: is \"Barrier Level\" "
      "meant to be \"barrier\"?");
  EXPECT_EQ(barrier_book_error("type,spot,strike,maturity,barrier,barrier_type\n"
                               "c,1,1,1,,none\n"
                               "c,1,1,1,0.5,down-in\n"),
            "book.csv:3: steps: required column is missing (a barrier option needs its number of "
            "monitoring dates)");
}

// Terms that arrive parsed (the Python module's arrays and DataFrames) obey the CSV book's rules,
// worded as read_option_book words them, with the value instead of the field's text.
struct TermColumns {
  std::vector<std::uint8_t> is_put = {0, 1, 0};
  std::vector<double> spot = {100, 101, 102}, strike = {95, 96, 97}, maturity = {1, 2, 0};
  std::vector<double> rate = {0.01, 0.02, -0.01}, volatility = {0.2, 0, 0.3}, dividend = {0, 0, 0};
  std::vector<BarrierType> barrier_type = {BarrierType::none, BarrierType::up_in,
                                           BarrierType::none};
  std::vector<double> barrier = {0, 120, 0};
  std::vector<std::uint32_t> steps = {1, 252, 1};

  finance::OptionBookView view() const {
    finance::OptionBookView v;
    v.count = static_cast<std::int64_t>(is_put.size());
    v.is_put = is_put.data();
    v.spot = spot.data(), v.strike = strike.data(), v.maturity = maturity.data();
    v.rate = {rate.data(), 0}, v.volatility = {volatility.data(), 0};
    v.dividend = {dividend.data(), 0};
    v.barrier_type = barrier_type.data(), v.barrier = barrier.data(), v.steps = steps.data();
    return v;
  }
};

std::string term_problem(const finance::OptionBookView& view,
                         finance::Precision precision = finance::Precision::float64) {
  const std::optional<BookTermProblem> problem = find_book_term_problem(view, precision);
  if (!problem) return "none";
  return std::to_string(problem->row) + ": " + problem->column + ": " + problem->what;
}

TEST(OptionBookTerms, AValidBookHasNoProblem) {
  const TermColumns columns;
  EXPECT_EQ(term_problem(columns.view()), "none");
  // Barrier levels and steps are not read where the view has no barrier columns.
  finance::OptionBookView european = columns.view();
  european.barrier_type = nullptr, european.barrier = nullptr, european.steps = nullptr;
  EXPECT_EQ(term_problem(european), "none");
  // An empty book has none either.
  european.count = 0;
  EXPECT_EQ(term_problem(european), "none");
}

TEST(OptionBookTerms, EachRuleOfTheCsvReaderIsWordedAsItWordsIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::function<void(TermColumns&)> spoil;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](TermColumns& c) { c.spot[1] = 0; }, "1: spot: must be > 0, got 0"},
      {[](TermColumns& c) { c.spot[2] = -2.5; }, "2: spot: must be > 0, got -2.5"},
      {[](TermColumns& c) { c.spot[0] = -0.0; }, "0: spot: must be > 0, got -0"},
      {[&](TermColumns& c) { c.spot[1] = nan; }, "1: spot: must be finite, got nan"},
      {[](TermColumns& c) { c.strike[1] = -1; }, "1: strike: must be >= 0, got -1"},
      {[&](TermColumns& c) { c.strike[0] = inf; }, "0: strike: must be finite, got inf"},
      {[](TermColumns& c) { c.maturity[2] = -0.5; }, "2: maturity: must be >= 0, got -0.5"},
      {[&](TermColumns& c) { c.rate[1] = -inf; }, "1: rate: must be finite, got -inf"},
      {[](TermColumns& c) { c.volatility[0] = -0.2; }, "0: volatility: must be >= 0, got -0.2"},
      {[&](TermColumns& c) { c.dividend[2] = nan; }, "2: dividend: must be finite, got nan"},
      {[](TermColumns& c) { c.barrier[1] = 0; }, "1: barrier: must be > 0, got 0"},
      {[&](TermColumns& c) { c.barrier[1] = inf; }, "1: barrier: must be finite, got inf"},
      {[](TermColumns& c) { c.barrier_type[2] = static_cast<BarrierType>(7); },
       "2: barrier_type: expected none, down-out, down-in, up-out or up-in, got 7"},
      {[](TermColumns& c) { c.steps[1] = 0; },
       "1: steps: expected an integer in [1, 1048576], got 0"},
      {[](TermColumns& c) { c.steps[0] = 1048577; },
       "0: steps: expected an integer in [1, 1048576], got 1048577"},
      // The first problem in row order, then column order, is the one named.
      {[](TermColumns& c) { c.volatility[1] = -1, c.spot[2] = 0, c.strike[1] = -3; },
       "1: strike: must be >= 0, got -3"},
  };
  for (const Case& bad : cases) {
    TermColumns columns;
    bad.spoil(columns);
    SCOPED_TRACE(bad.expected);
    EXPECT_EQ(term_problem(columns.view()), bad.expected);
  }
  // A European row's barrier level is not read (the CSV reader stores 0 there).
  TermColumns european_row;
  european_row.barrier[0] = -5;
  EXPECT_EQ(term_problem(european_row.view()), "none");
}

TEST(OptionBookTerms, BookWideValuesAreCheckedAsTheCommandLineDefaults) {
  TermColumns columns;
  finance::OptionBookView view = columns.view();
  view.volatility = {nullptr, -0.25};
  EXPECT_EQ(term_problem(view), "-1: volatility: must be >= 0, got -0.25");
  view.volatility = {nullptr, 0.25};
  view.rate = {nullptr, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(term_problem(view), "-1: rate: must be finite, got inf");
  view.rate = {nullptr, -0.5};  // a negative rate is a rate
  EXPECT_EQ(term_problem(view), "none");
}

// Issue 30: the CSV reader's rule for a book priced in float, on terms that arrive parsed.
TEST(OptionBookTerms, FloatTermsMustFitAFloat) {
  const finance::Precision f32 = finance::Precision::float32;
  TermColumns columns;
  columns.spot[1] = 1e39;
  EXPECT_EQ(term_problem(columns.view(), f32),
            "1: spot: out of the range of a float (at most 3.4028235e+38 in magnitude), got "
            "1e+39");
  EXPECT_EQ(term_problem(columns.view()), "none");  // a double holds it
  columns = TermColumns();
  columns.barrier[1] = 1e-50;
  EXPECT_EQ(term_problem(columns.view(), f32),
            "1: barrier: rounds to 0 in float (must be > 0; the smallest float is 1e-45), got "
            "1e-50");
  columns = TermColumns();
  columns.strike[0] = 1e-50;            // a strike may round to 0
  columns.dividend[2] = -3.4028235e38;  // rounds to -FLT_MAX, not to an infinity
  EXPECT_EQ(term_problem(columns.view(), f32), "none");
  finance::OptionBookView view = columns.view();
  view.rate = {nullptr, -1e39};
  EXPECT_EQ(term_problem(view, f32),
            "-1: rate: out of the range of a float (at most 3.4028235e+38 in magnitude), got "
            "-1e+39");
}

TEST(OptionBookOutput, TheFirstValueThatIsNoPriceIsFoundRowByRow) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> price = {1, 2, 3, 4}, delta = {0.5, 0.5, 0.5, 0.5};
  std::vector<double> vrf = {inf, inf, 1, 1};  // infinite by definition where nothing varies
  const std::vector<io::OutputColumn> columns = {
      {"price", price, false}, {"delta", delta, false}, {"vrf_control", vrf, false}};
  EXPECT_FALSE(io::find_non_finite_output(columns).has_value());
  delta[2] = nan;
  price[3] = -inf;
  std::optional<io::OutputProblem> problem = io::find_non_finite_output(columns);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->row, 2);  // rows in order, then columns in order
  EXPECT_EQ(problem->column, "delta");
  EXPECT_EQ(problem->what(finance::Precision::float64),
            "delta is nan in double: the terms are beyond what double arithmetic can price");
  delta[2] = 0.5;
  problem = io::find_non_finite_output(columns);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->row, 3);
  EXPECT_EQ(problem->what(finance::Precision::float32),
            "price is infinite in float: the terms are beyond what float arithmetic can price");
  // Written as a float, a double from the midpoint of FLT_MAX and 2^128 on reads back as inf;
  // just below it rounds to FLT_MAX.
  price[3] = 0x1p128 - 0x1p103;
  std::vector<io::OutputColumn> as_float = columns;
  as_float[0].as_float = true;
  EXPECT_EQ(io::find_non_finite_output(as_float)->row, 3);
  EXPECT_FALSE(io::find_non_finite_output(columns).has_value());  // a double holds it
  price[3] = std::nextafter(0x1p128 - 0x1p103, 0.0);
  EXPECT_FALSE(io::find_non_finite_output(as_float).has_value());
}

TEST(OptionBookTerms, TypeAndBarrierTypeWordsAreTheCsvReaders) {
  for (const char* put : {"put", "PUT", "p", "P", " put "}) EXPECT_EQ(parse_option_type(put), true);
  for (const char* call : {"call", "Call", "c", "C", "\tcall "}) {
    EXPECT_EQ(parse_option_type(call), false) << call;
  }
  for (const char* bad : {"", "cal", "puts", "1", "call put"}) {
    EXPECT_EQ(parse_option_type(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(parse_barrier_type(""), BarrierType::none);
  EXPECT_EQ(parse_barrier_type(" None"), BarrierType::none);
  EXPECT_EQ(parse_barrier_type("down-out"), BarrierType::down_out);
  EXPECT_EQ(parse_barrier_type("DOWN-IN"), BarrierType::down_in);
  EXPECT_EQ(parse_barrier_type("up-out "), BarrierType::up_out);
  EXPECT_EQ(parse_barrier_type("Up-In"), BarrierType::up_in);
  for (const char* bad : {"down_out", "sideways", "up", "-"}) {
    EXPECT_EQ(parse_barrier_type(bad), std::nullopt) << bad;
  }
}

// ---- Issue 33's columns: average, exercise, model and the Heston parameters --------------------

namespace issue33 {

using finance::AssetModel;
using finance::AverageType;
using finance::ExerciseStyle;

// Columns (1-based): type 1 .. maturity 4, barrier 5, barrier_type 6, steps 7, average 8,
// exercise 9, model 10, v0 11, kappa 12, theta 13, sigma_v 14, rho 15.
const std::string kHeader =
    "type,spot,strike,maturity,barrier,barrier_type,steps,average,exercise,model,v0,kappa,theta,"
    "sigma_v,rho\n";

TEST(OptionBook, ReadsAverageExerciseModelAndHestonParametersInAnyCase) {
  const OptionBook book = read_barrier_book(kHeader +
                                            "c,100,100,1,,,,,,,,,,,\n"
                                            "p,100,100,1,,,12,Arithmetic,,,,,,,\n"
                                            "c,100,100,1,,,52, GEOMETRIC ,european,,,,,,\n"
                                            "c,100,100,1,,,50,none,Bermudan,,,,,,\n"
                                            "p,100,100,1,,,50,,AMERICAN,black-scholes,,,,,\n"
                                            "c,100,100,1,90,down-out,64,,,Heston,0.04,1.5,"
                                            "0.05,0.3,-0.7\n"
                                            "c,100,100,1,,,4,,,,0.01,,,,\n");
  ASSERT_EQ(book.size(), 7u);
  EXPECT_EQ(book.average,
            (std::vector<AverageType>{AverageType::none, AverageType::arithmetic,
                                      AverageType::geometric, AverageType::none, AverageType::none,
                                      AverageType::none, AverageType::none}));
  EXPECT_EQ(book.exercise,
            (std::vector<ExerciseStyle>{ExerciseStyle::european, ExerciseStyle::european,
                                        ExerciseStyle::european, ExerciseStyle::bermudan,
                                        ExerciseStyle::american, ExerciseStyle::european,
                                        ExerciseStyle::european}));
  EXPECT_EQ(book.model,
            (std::vector<AssetModel>{AssetModel::black_scholes, AssetModel::black_scholes,
                                     AssetModel::black_scholes, AssetModel::black_scholes,
                                     AssetModel::black_scholes, AssetModel::heston,
                                     AssetModel::black_scholes}));
  // Empty fields are 0; a value on a black-scholes row is read (by the rules) and not used.
  EXPECT_EQ(book.v0, (std::vector<double>{0, 0, 0, 0, 0, 0.04, 0.01}));
  EXPECT_EQ(book.kappa, (std::vector<double>{0, 0, 0, 0, 0, 1.5, 0}));
  EXPECT_EQ(book.theta, (std::vector<double>{0, 0, 0, 0, 0, 0.05, 0}));
  EXPECT_EQ(book.sigma_v, (std::vector<double>{0, 0, 0, 0, 0, 0.3, 0}));
  EXPECT_EQ(book.rho, (std::vector<double>{0, 0, 0, 0, 0, -0.7, 0}));

  const finance::OptionBookView view = instrument_view(book);
  ASSERT_NE(view.average, nullptr);
  ASSERT_NE(view.exercise, nullptr);
  ASSERT_NE(view.model, nullptr);
  EXPECT_EQ(view.average[1], AverageType::arithmetic);
  EXPECT_EQ(view.exercise[4], ExerciseStyle::american);
  EXPECT_EQ(view.model[5], AssetModel::heston);
  ASSERT_NE(view.kappa.values, nullptr);
  EXPECT_EQ(view.kappa.values[5], 1.5);
  EXPECT_EQ(view.rho.values[5], -0.7);
  // A row range keeps them in step with the other columns.
  const finance::OptionBookView rows = finance::book_rows(view, 5, 2);
  EXPECT_EQ(rows.model[0], AssetModel::heston);
  EXPECT_EQ(rows.v0.values[1], 0.01);
}

TEST(OptionBook, WithoutTheNewColumnsTheViewIsTheBookOfBefore) {
  const OptionBook book = read_barrier_book(kBarrierHeader + "call,100,100,1,90,down-out,12\n");
  EXPECT_TRUE(book.average.empty());
  EXPECT_TRUE(book.model.empty());
  EXPECT_TRUE(book.v0.empty());
  const finance::OptionBookView view = instrument_view(book);
  EXPECT_EQ(view.average, nullptr);
  EXPECT_EQ(view.exercise, nullptr);
  EXPECT_EQ(view.model, nullptr);
  EXPECT_EQ(view.v0.values, nullptr);
  EXPECT_EQ(view.rho.values, nullptr);
}

TEST(OptionBook, EachIssue33ColumnErrorHasFileLineColumnAndName) {
  struct Case {
    std::string row, expected_message;
  };
  const std::string heston = ",,,heston,0.04,1.5,0.05,0.3,-0.7";
  const std::vector<Case> cases = {
      {"c,100,100,1,,,12,harmonic,,,,,,,",
       "book.csv:3:8: average: expected none, arithmetic or geometric, got \"harmonic\""},
      {"c,100,100,1,,,12,,asian,,,,,,",
       "book.csv:3:9: exercise: expected european, bermudan or american, got \"asian\""},
      {"c,100,100,1,,,12,,,sabr,,,,,",
       "book.csv:3:10: model: expected black-scholes or heston, got \"sabr\""},
      {"c,100,100,1,90,down-out,12,arithmetic,,,,,,,",
       "book.csv:3:8: average: an Asian (arithmetic) option takes no barrier, got barrier_type "
       "down-out"},
      {"c,100,100,1,,,12,geometric,american,,,,,,",
       "book.csv:3:9: exercise: an Asian (geometric) option is exercised at maturity only, got "
       "american"},
      {"c,100,100,1,,,,arithmetic,,,,,,,",
       "book.csv:3:7: steps: empty field, an Asian option needs its number of fixings"},
      {"c,100,100,1,,,,,bermudan,,,,,,",
       "book.csv:3:7: steps: empty field, a bermudan option needs its number of exercise dates"},
      {"c,100,100,1,,," + heston,
       "book.csv:3:7: steps: empty field, a heston row needs its number of time steps"},
      {"c,100,100,1,,,12,,,heston,,1.5,0.05,0.3,-0.7",
       "book.csv:3:11: v0: empty field, a heston row needs v0, kappa, theta, sigma_v and rho"},
      {"c,100,100,1,,,12,,,heston,0.04,1.5,0.05,0.3,",
       "book.csv:3:15: rho: empty field, a heston row needs v0, kappa, theta, sigma_v and rho"},
      {"c,100,100,1,,,12,,,heston,-0.04,1.5,0.05,0.3,-0.7",
       "book.csv:3:11: v0: must be >= 0, got \"-0.04\""},
      {"c,100,100,1,,,12,,,heston,0.04,0,0.05,0.3,-0.7",
       "book.csv:3:12: kappa: must be > 0, got \"0\""},
      {"c,100,100,1,,,12,,,heston,0.04,1.5,-1e-9,0.3,-0.7",
       "book.csv:3:13: theta: must be >= 0, got \"-1e-9\""},
      {"c,100,100,1,,,12,,,heston,0.04,1.5,0.05,-0.3,-0.7",
       "book.csv:3:14: sigma_v: must be >= 0, got \"-0.3\""},
      {"c,100,100,1,,,12,,,heston,0.04,1.5,0.05,0.3,-1.01",
       "book.csv:3:15: rho: must be in [-1, 1], got \"-1.01\""},
      {"c,100,100,1,,,12,,,heston,0.04,1.5,0.05,0.3,nan",
       "book.csv:3:15: rho: must be finite, got \"nan\""},
      // The rules hold on a black-scholes row too, where the values are not used.
      {"c,100,100,1,,,12,,,,,,,,2", "book.csv:3:15: rho: must be in [-1, 1], got \"2\""},
  };
  for (const Case& bad : cases) {
    const std::string text = kHeader + "c,100,100,1,,,,,,,,,,,\n" + bad.row + "\n";
    SCOPED_TRACE(text);
    EXPECT_EQ(barrier_book_error(text), bad.expected_message);
  }
  // The boundaries are values: rho = +-1, v0 = theta = sigma_v = 0.
  const OptionBook edge = read_barrier_book(kHeader +
                                            "c,100,100,1,,,12,,,heston,0,1e-9,0,0,1\n"
                                            "c,100,100,1,,,12,,,heston,0,1e-9,0,0,-1\n");
  EXPECT_EQ(edge.rho, (std::vector<double>{1, -1}));
}

TEST(OptionBook, AHestonRowNeedsTheParameterColumnsAndAnAsianRowTheStepsColumn) {
  EXPECT_EQ(barrier_book_error("type,spot,strike,maturity,steps,model,v0,kappa,theta,sigma_v\n"
                               "c,1,1,1,4,,,,,\n"
                               "c,1,1,1,4,heston,0.04,1,0.04,0.2\n"),
            "book.csv:3: rho: required column is missing (a heston row needs v0, kappa, theta, "
            "sigma_v and rho)");
  EXPECT_EQ(barrier_book_error("type,spot,strike,maturity,average\nc,1,1,1,\nc,1,1,1,geometric\n"),
            "book.csv:3: steps: required column is missing (an Asian option needs its number of "
            "fixings)");
  // Without a heston row the parameter columns may be missing, and the model column alone is
  // fine.
  const OptionBook book = read_barrier_book("type,spot,strike,maturity,model\nc,1,1,1,\n");
  EXPECT_EQ(book.model, (std::vector<AssetModel>{AssetModel::black_scholes}));
}

TEST(OptionBook, ABlackScholesBookRefusesRowsItCannotPriceAtTheirField) {
  // gpukit bs reads average, exercise and model to refuse what the formula cannot price; the
  // barrier columns and Heston parameters stay pass-through there.
  struct Case {
    std::string text, expected_message;
  };
  const std::vector<Case> cases = {
      {"type,spot,strike,maturity,average\nc,1,1,1,\nc,1,1,1,arithmetic\n",
       "book.csv:3:5: average: an Asian option: Black-Scholes prices European options only "
       "(Monte Carlo, gpukit mc, prices Asian ones)"},
      {"type,spot,strike,maturity,exercise\nc,1,1,1,american\n",
       "book.csv:2:5: exercise: a american option: Black-Scholes prices European exercise only "
       "(Monte Carlo, gpukit mc, prices early exercise)"},
      {"type,model,spot,strike,maturity,kappa\nc,HESTON,1,1,1,-5\n",
       "book.csv:2:2: model: a heston row: the Black-Scholes formula prices the black-scholes "
       "model only (Monte Carlo, gpukit mc, prices heston rows)"},
  };
  for (const Case& bad : cases) {
    SCOPED_TRACE(bad.text);
    try {
      read_book(bad.text, defaults(0.01, 0.2, {}));
      ADD_FAILURE() << "no error";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(std::string(e.what()), bad.expected_message);
    }
  }
  const OptionBook fine = read_book(
      "type,spot,strike,maturity,average,exercise,model,kappa\nc,1,1,1,none,European,,x\n",
      defaults(0.01, 0.2, {}));
  EXPECT_EQ(fine.size(), 1u);
  EXPECT_TRUE(fine.kappa.empty());  // a pass-through column of a Black-Scholes book
}

TEST(OptionBook, TheWordParsersReadWhatTheReaderReads) {
  EXPECT_EQ(parse_average_type(""), AverageType::none);
  EXPECT_EQ(parse_average_type(" Geometric "), AverageType::geometric);
  EXPECT_EQ(parse_average_type("mean"), std::nullopt);
  EXPECT_EQ(parse_exercise_style("BERMUDAN"), ExerciseStyle::bermudan);
  EXPECT_EQ(parse_exercise_style(""), ExerciseStyle::european);
  EXPECT_EQ(parse_exercise_style("early"), std::nullopt);
  EXPECT_EQ(parse_asset_model("Black-Scholes"), AssetModel::black_scholes);
  EXPECT_EQ(parse_asset_model("heston"), AssetModel::heston);
  EXPECT_EQ(parse_asset_model("black_scholes"), std::nullopt);
}

TEST(OptionBook, StepsRequirementIsTheReasonTheReaderGives) {
  using B = BarrierType;
  EXPECT_EQ(steps_requirement(B::none, AverageType::none, ExerciseStyle::european,
                              AssetModel::black_scholes),
            std::nullopt);
  EXPECT_EQ(
      steps_requirement(B::up_in, AverageType::none, ExerciseStyle::european, AssetModel::heston),
      "a barrier option needs its number of monitoring dates");
  EXPECT_EQ(steps_requirement(B::none, AverageType::geometric, ExerciseStyle::european,
                              AssetModel::heston),
            "an Asian option needs its number of fixings");
  EXPECT_EQ(steps_requirement(B::none, AverageType::none, ExerciseStyle::american,
                              AssetModel::black_scholes),
            "an american option needs its number of exercise dates");
  EXPECT_EQ(
      steps_requirement(B::none, AverageType::none, ExerciseStyle::european, AssetModel::heston),
      "a heston row needs its number of time steps");
  // The reader's message ends with these words, whether the field is empty or the column absent.
  EXPECT_EQ(barrier_book_error("type,spot,strike,maturity,model,v0,kappa,theta,sigma_v,rho\n"
                               "c,1,1,1,heston,0.04,1,0.04,0.2,-0.5\n"),
            "book.csv:2: steps: required column is missing (a heston row needs its number of "
            "time steps)");
}

TEST(OptionBookTerms, Issue33RulesAreWordedAsTheReaderWordsThem) {
  TermColumns columns;
  std::vector<AverageType> average = {AverageType::none, AverageType::none, AverageType::geometric};
  std::vector<ExerciseStyle> exercise(3, ExerciseStyle::european);
  std::vector<AssetModel> model = {AssetModel::heston, AssetModel::black_scholes,
                                   AssetModel::black_scholes};
  std::vector<double> v0 = {0.04, 0, 0}, kappa = {1.5, 0, 0}, rho = {-0.7, 5, 5};
  auto view = [&] {
    finance::OptionBookView v = columns.view();
    v.average = average.data(), v.exercise = exercise.data(), v.model = model.data();
    v.v0 = {v0.data(), 0}, v.kappa = {kappa.data(), 0}, v.rho = {rho.data(), 0};
    v.theta = {nullptr, 0.05}, v.sigma_v = {nullptr, 0.3};
    return v;
  };
  EXPECT_EQ(term_problem(view()), "none");  // rho 5 on black-scholes rows is not read
  kappa[0] = 0;
  EXPECT_EQ(term_problem(view()), "0: kappa: must be > 0, got 0");
  kappa[0] = 1.5, rho[0] = 1.5;
  EXPECT_EQ(term_problem(view()), "0: rho: must be in [-1, 1], got 1.5");
  rho[0] = -0.7;
  finance::OptionBookView book_wide = view();
  book_wide.sigma_v.scalar = -1;
  EXPECT_EQ(term_problem(book_wide), "-1: sigma_v: must be >= 0, got -1");
  average[1] = AverageType::arithmetic;  // row 1 is the up-in barrier row
  EXPECT_EQ(term_problem(view()),
            "1: average: an Asian (arithmetic) option takes no barrier, got barrier_type up-in");
  average[1] = AverageType::none, exercise[2] = ExerciseStyle::bermudan;
  EXPECT_EQ(term_problem(view()),
            "2: exercise: an Asian (geometric) option is exercised at maturity only, got "
            "bermudan");
  exercise[2] = static_cast<ExerciseStyle>(9);
  EXPECT_EQ(term_problem(view()), "2: exercise: expected european, bermudan or american, got 9");
}

}  // namespace issue33

}  // namespace
}  // namespace gpukit::io
