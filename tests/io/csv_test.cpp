// CsvReader / write_csv_record: RFC 4180 quoting, line numbers for LF and CR LF files, blank lines,
// byte order mark, malformed input, large records, read failures, and a random round trip.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"
#include "test_seed.hpp"

namespace gpukit::io {
namespace {

struct ReadResult {
  std::vector<std::vector<std::string>> records;
  std::vector<std::int64_t> lines;
};

ReadResult read_all(const std::string& text, const std::string& source = "test.csv",
                    char separator = ',') {
  std::istringstream in(text);
  CsvReader reader(in, source, separator);
  ReadResult result;
  CsvRecord record;
  while (reader.next(record)) {
    result.records.push_back(record.fields);
    result.lines.push_back(record.line);
  }
  return result;
}

using Fields = std::vector<std::string>;

// Message of the gpukit::InvalidInput thrown by reading `text`; fails the test when nothing or
// something else is thrown.
std::string read_error(const std::string& text) {
  try {
    read_all(text);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidInput thrown for: " << text;
  return {};
}

// Linear-time replace (the large-record test feeds it megabytes).
std::string replace_all(const std::string& text, std::string_view from, std::string_view to) {
  std::string result;
  result.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, start)) {
    result.append(text, start, at - start);
    result.append(to);
    start = at + from.size();
  }
  result.append(text, start);
  return result;
}

TEST(CsvReader, QuotedFieldsWithCommasQuotesAndNewlines) {
  ReadResult got = read_all("a,\"b,c\",\"say \"\"hi\"\"\",\"two\nlines\"\nx,\"\",\"\"\"\",z\n");
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(got.records[0], (Fields{"a", "b,c", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(got.lines[0], 2);  // the record ends on the line after its quoted line break
  EXPECT_EQ(got.records[1], (Fields{"x", "", "\"", "z"}));
  EXPECT_EQ(got.lines[1], 3);
}

TEST(CsvReader, EmptyFieldsAndTrailingComma) {
  ReadResult got = read_all(",a,,\n,\n");
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(got.records[0], (Fields{"", "a", "", ""}));
  EXPECT_EQ(got.records[1], (Fields{"", ""}));
}

// An unquoted field is every byte between its separators (issue 18: pass-through columns are
// byte-exact); blanks outside the quotes of a quoted field are not part of it.
TEST(CsvReader, UnquotedBlanksAreKeptQuotedFieldsLoseTheBlanksOutsideTheirQuotes) {
  ReadResult got = read_all("  a b ,\t c\t,\" d \" ,  \"\te\t\"\t\n");
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0], (Fields{"  a b ", "\t c\t", " d ", "\te\t"}));
  // A blank field between separators, and trailing blanks before a CR LF, are kept too.
  got = read_all("x, ,y \r\n  ,\t\r\n");
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(got.records[0], (Fields{"x", " ", "y "}));
  EXPECT_EQ(got.records[1], (Fields{"  ", "\t"}));
}

TEST(CsvReader, CrLfAndLfGiveTheSameRecordsAndLines) {
  const std::string lf = "type,spot\n\ncall,100\n\"q,uoted\",\"x\"\"y\"\n   \nput,7";
  const std::string crlf = replace_all(lf, "\n", "\r\n");
  ASSERT_NE(lf, crlf);
  ReadResult from_lf = read_all(lf);
  ReadResult from_crlf = read_all(crlf);
  ASSERT_EQ(from_lf.records.size(), 4u);
  EXPECT_EQ(from_lf.records, from_crlf.records);
  EXPECT_EQ(from_lf.lines, (std::vector<std::int64_t>{1, 3, 4, 6}));
  EXPECT_EQ(from_crlf.lines, from_lf.lines);
}

TEST(CsvReader, CrLfInsideQuotedFieldIsKept) {
  ReadResult got = read_all("\"a\r\nb\",c\r\nd,e\r\n");
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(got.records[0], (Fields{"a\r\nb", "c"}));
  EXPECT_EQ(got.lines, (std::vector<std::int64_t>{2, 3}));
}

TEST(CsvReader, MissingFinalNewline) {
  for (const std::string& text :
       {std::string("a,b\nc,d"), std::string("a,b\r\nc,d"), std::string("a,b\n\"c\",\"d\"")}) {
    SCOPED_TRACE(text);
    ReadResult got = read_all(text);
    ASSERT_EQ(got.records.size(), 2u);
    EXPECT_EQ(got.records[1], (Fields{"c", "d"}));
    EXPECT_EQ(got.lines[1], 2);
  }
}

TEST(CsvReader, BlankLinesAreSkippedButCounted) {
  ReadResult got = read_all("\n\na,b\n\n  \t\nc,d\r\n\r\ne\n\n");
  ASSERT_EQ(got.records.size(), 3u);
  EXPECT_EQ(got.records[0], (Fields{"a", "b"}));
  EXPECT_EQ(got.records[1], (Fields{"c", "d"}));
  EXPECT_EQ(got.records[2], (Fields{"e"}));
  EXPECT_EQ(got.lines, (std::vector<std::int64_t>{3, 6, 8}));
}

TEST(CsvReader, EmptyAndBlankInputHaveNoRecords) {
  EXPECT_TRUE(read_all("").records.empty());
  EXPECT_TRUE(read_all("\n\r\n  \n").records.empty());
  EXPECT_TRUE(read_all("\xEF\xBB\xBF").records.empty());
}

TEST(CsvReader, ByteOrderMarkAtStartIsSkipped) {
  ReadResult got = read_all("\xEF\xBB\xBFtype,spot\ncall,1\n");
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(got.records[0], (Fields{"type", "spot"}));
  EXPECT_EQ(got.lines, (std::vector<std::int64_t>{1, 2}));
  // Only at the very start: elsewhere the bytes are data.
  ReadResult later = read_all(
      "a\n\xEF\xBB\xBF"
      "b\n");
  ASSERT_EQ(later.records.size(), 2u);
  EXPECT_EQ(later.records[1], (Fields{"\xEF\xBB\xBF"
                                      "b"}));
}

TEST(CsvReader, Utf16ByteOrderMarkIsRefusedWithWhatToDo) {
  // "type,spot" as a spreadsheet's "Unicode text" export writes it: UTF-16 with a byte order mark.
  for (const std::string& bom : {std::string("\xFF\xFE"), std::string("\xFE\xFF")}) {
    std::string text = bom;
    for (char c : std::string("type,spot\n")) {
      text += bom[0] == '\xFF' ? std::string{c, '\0'} : std::string{'\0', c};
    }
    const std::string message = read_error(text);
    EXPECT_EQ(message,
              "test.csv:1: the file is UTF-16 (it starts with a UTF-16 byte order mark); save it "
              "as UTF-8 CSV")
        << message;
  }
}

// Issue 30: Excel writes `sep=;` as the first line of a CSV file meant for another locale; it was
// read as a record (and the book's header as data).
TEST(CsvReader, ExcelSepLineSetsTheDelimiterAndIsNotARecord) {
  std::istringstream in("sep=;\r\na;b,c\r\n1;2\r\n");
  CsvReader reader(in, "x.csv");  // told ','
  CsvRecord record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"a", "b,c"}));
  EXPECT_EQ(record.line, 2);
  EXPECT_EQ(reader.delimiter(), ';');
  EXPECT_EQ(reader.sep_line(), "sep=;");
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"1", "2"}));
  EXPECT_EQ(record.line, 3);
  EXPECT_FALSE(reader.next(record));
  EXPECT_EQ(reader.line_end(), "\r\n");
  EXPECT_FALSE(reader.byte_order_mark());
  // After a byte order mark, in any case, with a tab; alone it leaves no records.
  std::istringstream tabs("\xEF\xBB\xBFSEP=\t\na\tb\n");
  CsvReader tab_reader(tabs, "t.csv");
  ASSERT_TRUE(tab_reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"a", "b"}));
  EXPECT_EQ(tab_reader.delimiter(), '\t');
  EXPECT_EQ(tab_reader.sep_line(), "SEP=\t");
  EXPECT_TRUE(tab_reader.byte_order_mark());
  ReadResult alone = read_all("sep=|");
  EXPECT_TRUE(alone.records.empty());
  // Only a whole first line is one: more text, a quoted one, or a later one are records.
  EXPECT_EQ(read_all("sep=;x\n").records, (std::vector<Fields>{{"sep=;x"}}));
  EXPECT_EQ(read_all("\"sep=;\"\n").records, (std::vector<Fields>{{"sep=;"}}));
  EXPECT_EQ(read_all("a\nsep=;\n").records, (std::vector<Fields>{{"a"}, {"sep=;"}}));
  EXPECT_EQ(read_all("sep=\nx\n").records, (std::vector<Fields>{{"sep="}, {"x"}}));
  EXPECT_EQ(read_error("sep=\"\na\n"),
            "test.csv:1: the first line \"sep=\"\" names a delimiter a CSV file cannot use (a "
            "quote or a space)");
}

// Issue 30: a gzipped book was read as text and reported as "type: required column is missing".
TEST(CsvReader, CompressedFilesAndWorkbooksAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string("\x1F\x8B\x08\x00\x00\x00\x00\x00", 8) + "rest",
       "test.csv:1: the file is gzip-compressed; decompress it first (gunzip)"},
      {"BZh91AY&SY\x01\x02",
       "test.csv:1: the file is bzip2-compressed; decompress it first (bunzip2)"},
      {std::string("\xFD"
                   "7zXZ\0\0\x04",
                   8),
       "test.csv:1: the file is xz-compressed; decompress it first (unxz)"},
      {"\x28\xB5\x2F\xFD\x24",
       "test.csv:1: the file is zstd-compressed; decompress it first (unzstd)"},
      {"PK\x03\x04\x14\x00\x06\x00",
       "test.csv:1: the file is a ZIP archive (an .xlsx workbook?); save the sheet as CSV UTF-8 "
       "(comma delimited)"},
  };
  for (const auto& [bytes, expected] : cases) EXPECT_EQ(read_error(bytes), expected);
  // Text that merely starts like one is text.
  EXPECT_EQ(read_all("BZh,PK\n").records, (std::vector<Fields>{{"BZh", "PK"}}));
}

// Issue 30: a book's quoted fields could not be written back as they were.
TEST(CsvReader, RawFieldsGiveTheInputBytesOfQuotedFields) {
  std::istringstream in("a, \"b \"\"c\"\"\" \t,\"\",d \n\"x\r\ny\",\" \"\n");
  CsvReader reader(in, "r.csv");
  CsvRecord record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"a", "b \"c\"", "", "d "}));
  EXPECT_EQ(record.raw_fields, (Fields{"", " \"b \"\"c\"\"\" \t", "\"\"", ""}));
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"x\r\ny", " "}));
  EXPECT_EQ(record.raw_fields, (Fields{"\"x\r\ny\"", "\" \""}));
  EXPECT_FALSE(reader.next(record));
}

TEST(CsvReader, LineEndIsThatOfTheFirstRecord) {
  auto line_end = [](const std::string& text) {
    std::istringstream in(text);
    CsvReader reader(in, "e.csv");
    CsvRecord record;
    while (reader.next(record)) {
    }
    return std::string(reader.line_end());
  };
  EXPECT_EQ(line_end("a\r\nb\n"), "\r\n");
  EXPECT_EQ(line_end("a\nb\r\n"), "\n");
  EXPECT_EQ(line_end("\"a\"\r\nb\n"), "\r\n");
  EXPECT_EQ(line_end("a,\r\n"), "\r\n");
  EXPECT_EQ(line_end("a\rb\r\n"), "\r");
  EXPECT_EQ(line_end("\n\na\r"), "\r");
  EXPECT_EQ(line_end("a"), "\n");
  EXPECT_EQ(line_end(""), "\n");
}

TEST(CsvReader, SemicolonAndTabDelimiters) {
  std::istringstream semicolons("a;b,c; \"d;e\" ;\n1;2;3;\n");
  CsvReader reader(semicolons, "s.csv", ';');
  CsvRecord record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"a", "b,c", "d;e", ""}));
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"1", "2", "3", ""}));
  EXPECT_FALSE(reader.next(record));
  // With tabs as separators a tab is never a blank: a line of tabs is a record of empty fields.
  std::istringstream tabs("a\t b \t\"c\td\"\n\t\n  \n");
  CsvReader tab_reader(tabs, "t.tsv", '\t');
  ASSERT_TRUE(tab_reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"a", " b ", "c\td"}));
  ASSERT_TRUE(tab_reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"", ""}));
  EXPECT_EQ(record.line, 2);
  EXPECT_FALSE(tab_reader.next(record));
}

TEST(CsvReader, DelimiterNamesAreParsed) {
  EXPECT_EQ(parse_csv_delimiter(","), ',');
  EXPECT_EQ(parse_csv_delimiter(";"), ';');
  EXPECT_EQ(parse_csv_delimiter("|"), '|');
  EXPECT_EQ(parse_csv_delimiter("tab"), '\t');
  EXPECT_EQ(parse_csv_delimiter("\\t"), '\t');
  EXPECT_EQ(parse_csv_delimiter("\t"), '\t');
  for (std::string_view bad : {"", " ", "\"", "\n", "\r", ",,", "x", "space", "tabs"}) {
    EXPECT_FALSE(parse_csv_delimiter(bad).has_value()) << bad;
  }
}

TEST(CsvReader, UnterminatedQuoteNamesTheLineWhereTheRecordStarts) {
  std::string message = read_error("a,b\n\nc,\"d\ne,f\n");
  EXPECT_NE(message.find("test.csv:3: unterminated quoted field"), std::string::npos) << message;
  message = read_error("\"abc");
  EXPECT_NE(message.find("test.csv:1: unterminated"), std::string::npos) << message;
}

TEST(CsvReader, QuoteInsideUnquotedFieldIsAnError) {
  std::string message = read_error("a,b\r\nc,d\"e\r\n");
  EXPECT_NE(message.find("test.csv:2: malformed CSV: quote character inside an unquoted field"),
            std::string::npos)
      << message;
}

TEST(CsvReader, TextAfterClosingQuoteIsAnError) {
  std::string message = read_error("a\n\"multi\nline\"x,b\n");
  EXPECT_NE(message.find("test.csv:3: malformed CSV: text after the closing quote"),
            std::string::npos)
      << message;
}

TEST(CsvReader, RecordsBeforeAnErrorAreDelivered) {
  std::istringstream in("a,b\nc,\"d");
  CsvReader reader(in, "x.csv");
  CsvRecord record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields, (Fields{"a", "b"}));
  EXPECT_THROW(reader.next(record), InvalidInput);
}

TEST(CsvReader, RecordLargerThanOneReadBlock) {
  // 3 MiB quoted field with line breaks: crosses the 1 MiB read blocks and the 64 KiB pieces.
  std::string big;
  for (int i = 0; big.size() < (std::size_t{3} << 20); ++i) {
    big += "line " + std::to_string(i) + ", with \"\"quotes\"\"\n";
  }
  std::int64_t line_feeds = 0;
  for (char c : big) line_feeds += c == '\n';
  std::string text = "head\n\"" + big + "\",tail\nlast\n";
  ReadResult got = read_all(text);
  ASSERT_EQ(got.records.size(), 3u);
  EXPECT_EQ(got.records[1][0], replace_all(big, "\"\"", "\""));
  EXPECT_EQ(got.records[1][1], "tail");
  EXPECT_EQ(got.lines, (std::vector<std::int64_t>{1, 2 + line_feeds, 3 + line_feeds}));
}

TEST(CsvReader, ReportsBytesReadAndSourceName) {
  std::string text = "a,b\nc,d\n";
  std::istringstream in(text);
  CsvReader reader(in, "<stdin>");
  EXPECT_EQ(reader.source_name(), "<stdin>");
  CsvRecord record;
  while (reader.next(record)) {
  }
  EXPECT_EQ(reader.bytes_read(), static_cast<std::int64_t>(text.size()));
}

// A stream buffer that yields some bytes, then fails as a disk read error would.
class FailingBuffer : public std::streambuf {
 public:
  explicit FailingBuffer(std::string data) : data_(std::move(data)) {
    setg(data_.data(), data_.data(), data_.data() + data_.size());
  }

 protected:
  int_type underflow() override { throw std::runtime_error("simulated device error"); }

 private:
  std::string data_;
};

TEST(CsvReader, ReadFailureIsAnIoError) {
  FailingBuffer buffer("a,b\nc,d\n");
  std::istream in(&buffer);
  CsvRecord record;
  EXPECT_THROW(
      {
        CsvReader reader(in, "disk.csv");
        while (reader.next(record)) {
        }
      },
      IoError);
}

TEST(CsvReader, FailedStreamIsAnIoError) {
  std::istringstream in("a,b\n");
  in.setstate(std::ios::failbit);  // as an std::ifstream that could not open its file
  EXPECT_THROW(CsvReader(in, "missing.csv"), IoError);
}

std::string write_one(std::vector<std::string_view> fields) {
  std::ostringstream out;
  write_csv_record(out, fields);
  return out.str();
}

TEST(CsvWriter, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(write_one({"plain", "1.5", "", "x y"}), "plain,1.5,,x y\n");
  // Blanks at either end need no quotes: the reader keeps an unquoted field's blanks.
  EXPECT_EQ(write_one({"a,b", "say \"hi\"", " lead", "trail ", "\ttab"}),
            "\"a,b\",\"say \"\"hi\"\"\", lead,trail ,\ttab\n");
  // ... except a record of one blank field, which would read as a blank line.
  EXPECT_EQ(write_one({" \t"}), "\" \t\"\n");
  EXPECT_EQ(write_one({"line\nbreak", "cr\r", "\"\""}), "\"line\nbreak\",\"cr\r\",\"\"\"\"\"\"\n");
  EXPECT_EQ(write_one({""}), "\"\"\n");
  EXPECT_EQ(write_one({"\xEF\xBB\xBFid"}), "\"\xEF\xBB\xBFid\"\n");
  // Unquoted at the start of a file these would read as a UTF-16 byte order mark.
  EXPECT_EQ(write_one({"\xFF\xFEx", "\xFE\xFF"}), "\"\xFF\xFEx\",\"\xFE\xFF\"\n");
  // ... these as Excel's delimiter line or a compressed file.
  EXPECT_EQ(write_one({"Sep=;"}), "\"Sep=;\"\n");
  EXPECT_EQ(write_one({"sep=", ""}), "\"sep=\",\n");
  EXPECT_EQ(write_one({"\x1F\x8Bz"}), "\"\x1F\x8Bz\"\n");
  EXPECT_EQ(write_one({"PK\x03\x04"}), "\"PK\x03\x04\"\n");
  EXPECT_EQ(write_one({"BZh", "sept"}), "BZh,sept\n");
}

TEST(CsvWriter, QuotesFieldsHoldingTheDelimiterInUse) {
  std::vector<std::string_view> fields = {"a;b", "c,d", "e\tf", ""};
  std::ostringstream semicolons, tabs;
  write_csv_record(semicolons, fields, ';');
  write_csv_record(tabs, fields, '\t');
  EXPECT_EQ(semicolons.str(), "\"a;b\";c,d;e\tf;\n");
  EXPECT_EQ(tabs.str(), "a;b\tc,d\t\"e\tf\"\t\n");
}

TEST(CsvWriter, FailedStreamIsAnIoError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  std::vector<std::string_view> fields = {"a"};
  EXPECT_THROW(write_csv_record(out, fields), IoError);
}

class CsvRoundTrip : public ::testing::TestWithParam<char> {};

TEST_P(CsvRoundTrip, RandomRecordsThroughWriterAndReader) {
  const char separator = GetParam();
  const gpukit::testing::TestSeed seed;
  SCOPED_TRACE("separator " + std::to_string(int(separator)));
  std::mt19937 random(static_cast<std::uint32_t>(seed.value()));
  // Bytes that stress quoting and trimming, plus ordinary text and a multi-byte UTF-8 character.
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           "0",
                                           ".",
                                           " ",
                                           "\t",
                                           ",",
                                           ";",
                                           "|",
                                           "\"",
                                           "\r",
                                           "\n",
                                           "\r\n",
                                           "\xC3\xA9",
                                           std::string(1, '\0'),
                                           "\xEF\xBB\xBF",
                                           "\xFF\xFE",
                                           "\xFE\xFF",
                                           "sep=",
                                           "\x1F\x8B"};
  std::vector<std::vector<std::string>> records(2000);
  for (auto& record : records) {
    record.resize(1 + random() % 6);
    for (auto& field : record) {
      std::size_t length = random() % 8;
      for (std::size_t i = 0; i < length; ++i) field += pieces[random() % pieces.size()];
    }
  }
  std::string text;
  std::vector<std::int64_t> expected_lines;
  std::int64_t line_feeds = 0;
  for (const auto& record : records) {
    std::vector<std::string_view> views(record.begin(), record.end());
    std::ostringstream out;
    write_csv_record(out, views, separator);
    for (char c : out.str()) line_feeds += c == '\n';
    expected_lines.push_back(line_feeds);  // the record ends on the line of its final LF
    text += out.str();
  }
  ReadResult got = read_all(text, "test.csv", separator);
  ASSERT_EQ(got.records.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    ASSERT_EQ(got.records[i], records[i]) << "record " << i;
    ASSERT_EQ(got.lines[i], expected_lines[i]) << "record " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Separators, CsvRoundTrip, ::testing::Values(',', ';', '\t', '|'));

}  // namespace
}  // namespace gpukit::io
