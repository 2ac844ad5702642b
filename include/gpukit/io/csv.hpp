#pragma once
// RFC 4180 CSV, read and written by hand, streaming, with the physical line number of every record
// so that a bad row can be reported as "file:line".
//
// Dialect read:
//   - fields separated by a delimiter (',' unless told otherwise: ';', '|' or a tab), optionally
//     enclosed in '"'; a '"' inside a quoted field is doubled; a quoted field may contain the
//     delimiter, CR and LF;
//   - a record ends at LF, CR LF or a lone CR; the last record need not end with a line break;
//   - an unquoted field is every byte between its delimiters, blanks (spaces and tabs) included,
//     so that a field passes through byte for byte; blanks outside the quotes of a quoted field
//     (`a, "b" ,c`) are not part of it;
//   - blank lines (nothing but blanks and line breaks) are skipped, but counted in line numbers;
//   - a UTF-8 byte order mark at the very start of the input is skipped (byte_order_mark() says
//     whether there was one); a UTF-16 one is an error that says to save the file as UTF-8;
//   - a first line `sep=X` (Excel's delimiter hint: "sep=" in any case, one byte X, then the line
//     end), after the byte order mark if any, sets the delimiter to X whatever the reader was given
//     and is not a record (it counts as line 1); sep_line() gives it back;
//   - input that is not text is refused at its start, naming what it is: gzip, bzip2, xz and
//     zstd compressed files (decompress them first) and ZIP archives (an .xlsx workbook: save the
//     sheet as CSV);
//   - malformed input is an error: a '"' inside an unquoted field, text after a closing quote, a
//     quoted field never closed.
// The writer produces what this reader reads back unchanged (tested by a random round trip).

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::io {

/// One CSV record: its fields, unquoted, and the 1-based physical line on which it ends (LF bytes
/// before the record's terminator + 1), so that a record with a quoted line break reports the line
/// where it ends.
struct CsvRecord {
  std::vector<std::string> fields;
  /// One per field: empty where the field's bytes in the input are exactly fields[i] (an unquoted
  /// field), else those bytes (a quoted field: its quotes, its doubled quotes and the blanks
  /// around its quotes), so that a writer can give a field back byte for byte.
  std::vector<std::string> raw_fields;
  std::int64_t line = 0;
};

/// Streaming CSV reader over an std::istream.
///
/// Contract:
///   - reads `in` from its current position in blocks (64 KiB first, then 1 MiB); memory is one
///     block plus the largest record, independent of the input size;
///   - records come out in input order, each with the physical line where it ends (exact for LF and
///     CR LF files, blank lines and quoted line breaks included);
///   - malformed input throws gpukit::InvalidInput "<source>:<line>: <what>"; a stream that fails
///     to read (badbit, or already failed when passed in) throws gpukit::IoError; a record too
///     large for memory throws gpukit::OutOfMemory. After a throw the reader must not be used
///     again.
///   - not copyable; movable (a moved-from reader may only be destroyed or assigned to).
/// Tested in tests/io/csv_test.cpp (quoting, blanks, CR LF vs LF, blank lines, BOMs, delimiters,
/// errors, a record larger than a block, a random writer -> reader round trip per delimiter).
class CsvReader {
 public:
  /// `source_name` names the input in error messages ("book.csv", "<stdin>"). `in` must outlive the
  /// reader. `delimiter` separates fields; a quote, a space, CR or LF is refused (InvalidInput).
  CsvReader(std::istream& in, std::string source_name, char delimiter = ',');
  ~CsvReader();
  CsvReader(CsvReader&&) noexcept;
  CsvReader& operator=(CsvReader&&) noexcept;
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  /// Reads the next record into `record` (its previous strings are recycled, so reading into the
  /// same record in a loop allocates nothing once the field sizes have been seen). Returns false at
  /// the end of the input, leaving `record` unspecified.
  bool next(CsvRecord& record);

  /// Bytes taken from the stream so far (read ahead in blocks, so up to 1 MiB past the last record
  /// returned); meant for progress reporting.
  std::int64_t bytes_read() const;

  const std::string& source_name() const;
  /// The delimiter in use: the one given, or the one a `sep=` first line named.
  char delimiter() const;
  /// Whether the input started with a UTF-8 byte order mark (skipped). Known once next() returned.
  bool byte_order_mark() const;
  /// The `sep=X` first line as written (without its line end), or empty. Known once next()
  /// returned.
  const std::string& sep_line() const;
  /// The line break that ended the first record ("\n", "\r\n" or "\r"; "\n" while none was
  /// seen), so that a book can be written back with the input's line ends. Final once a second
  /// record was read or next() returned false.
  std::string_view line_end() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The delimiter a user names: "," ";" "|", or a tab as "tab", "\\t" (backslash, t) or the tab
/// character itself. Anything else gives nullopt.
std::optional<char> parse_csv_delimiter(std::string_view name);

/// Writes one record followed by "\n", fields separated by `delimiter`. A field is enclosed in
/// quotes only when it must be for the reader above to give it back unchanged: when it contains
/// the delimiter, '"', CR or LF, or starts with what the reader takes specially at the start of
/// an input (a UTF-8 or UTF-16 byte order mark, "sep=" in any case, a compressed file's or a ZIP
/// archive's magic bytes); quotes inside are doubled. Blanks at either end need no quotes (the
/// reader keeps them), except in a record of one field that is empty or all blanks, written as `""`
/// or `" "` (it would read as a blank line); a record of zero fields is an empty line, which a
/// reader skips. Throws gpukit::IoError when the stream fails.
void write_csv_record(std::ostream& out, std::span<const std::string_view> fields,
                      char delimiter = ',');

namespace detail {

/// What a file that starts with `start` is when it is not text a CSV reader should read: "gzip-
/// compressed; decompress it first (gunzip)", ... (gzip, bzip2, xz, zstd, a ZIP archive such as an
/// .xlsx workbook), or nullopt. CsvReader refuses such an input; the writer quotes a field that
/// starts so.
std::optional<std::string_view> binary_file_kind(std::string_view start) noexcept;

/// True when `text` starts with "sep=" in any case (Excel's delimiter hint line).
bool starts_like_sep_line(std::string_view text) noexcept;

/// True when write_csv_record would enclose `field` in quotes (see its contract; the one-field
/// record rule is write_csv_record's own).
bool csv_field_needs_quotes(std::string_view field, char delimiter = ',') noexcept;

/// Appends `field` to `line` as write_csv_record writes it (quoted when needed), without a
/// delimiter; used to build whole lines in memory before one stream write.
void append_csv_field(std::string& line, std::string_view field, char delimiter = ',');

}  // namespace detail

}  // namespace gpukit::io
