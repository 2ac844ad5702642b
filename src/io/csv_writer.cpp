// CSV writing: the inverse of CsvReader's dialect (see csv.hpp), quoting only where the reader
// would otherwise change or split the field.

#include <algorithm>
#include <ostream>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"

namespace gpukit::io {

namespace detail {

bool csv_field_needs_quotes(std::string_view field, char delimiter) noexcept {
  if (field.empty()) return false;
  // What the reader takes specially at the start of an input: it skips a UTF-8 byte order mark,
  // refuses a UTF-16 one and binary files, and takes `sep=X` for the delimiter.
  if (field.starts_with("\xEF\xBB\xBF") || field.starts_with("\xFF\xFE") ||
      field.starts_with("\xFE\xFF") || starts_like_sep_line(field) ||
      binary_file_kind(field).has_value()) {
    return true;
  }
  const char special[] = {delimiter, '"', '\r', '\n'};
  return field.find_first_of(std::string_view(special, sizeof special)) != std::string_view::npos;
}

void append_csv_field(std::string& line, std::string_view field, char delimiter) {
  if (!csv_field_needs_quotes(field, delimiter)) {
    line.append(field);
    return;
  }
  line.push_back('"');
  for (std::size_t start = 0;;) {
    std::size_t quote = field.find('"', start);
    if (quote == std::string_view::npos) {
      line.append(field.substr(start));
      break;
    }
    line.append(field.substr(start, quote - start + 1));
    line.push_back('"');  // a quote inside a quoted field is written twice
    start = quote + 1;
  }
  line.push_back('"');
}

}  // namespace detail

void write_csv_record(std::ostream& out, std::span<const std::string_view> fields, char delimiter) {
  std::string line;
  auto is_blank = [delimiter](char c) { return (c == ' ' || c == '\t') && c != delimiter; };
  if (fields.size() == 1 && std::all_of(fields[0].begin(), fields[0].end(), is_blank)) {
    // An empty or all-blank line would be read back as a blank line, not as one field.
    line.push_back('"');
    line.append(fields[0]);
    line.push_back('"');
  } else {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i != 0) line.push_back(delimiter);
      detail::append_csv_field(line, fields[i], delimiter);
    }
  }
  line.push_back('\n');
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
  if (!out) throw IoError("CSV output: write failed");
}

}  // namespace gpukit::io
