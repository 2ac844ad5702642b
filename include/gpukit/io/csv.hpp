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
//   - a UTF-8 byte order mark at the very start of the input is skipped; a UTF-16 one is an error
//     that says to save the file as UTF-8;
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
  char delimiter() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The delimiter a user names: "," ";" "|", or a tab as "tab", "\\t" (backslash, t) or the tab
/// character itself. Anything else gives nullopt.
std::optional<char> parse_csv_delimiter(std::string_view name);

/// Writes one record followed by "\n", fields separated by `delimiter`. A field is enclosed in
/// quotes only when it must be for the reader above to give it back unchanged: when it contains
/// the delimiter, '"', CR or LF, or starts with a UTF-8 or UTF-16 byte order mark; quotes inside
/// are doubled. Blanks at either end need no quotes (the reader keeps them), except in a record of
/// one field that is empty or all blanks, written as `""` or `" "` (it would read as a blank line);
/// a record of zero fields is an empty line, which a reader skips.
/// Throws gpukit::IoError when the stream fails.
void write_csv_record(std::ostream& out, std::span<const std::string_view> fields,
                      char delimiter = ',');

namespace detail {

/// True when write_csv_record would enclose `field` in quotes (see its contract; the one-field
/// record rule is write_csv_record's own).
bool csv_field_needs_quotes(std::string_view field, char delimiter = ',') noexcept;

/// Appends `field` to `line` as write_csv_record writes it (quoted when needed), without a
/// delimiter; used to build whole lines in memory before one stream write.
void append_csv_field(std::string& line, std::string_view field, char delimiter = ',');

}  // namespace detail

}  // namespace gpukit::io
