// CSV writing: the inverse of CsvReader's dialect (see csv.hpp), quoting only where the reader
// would otherwise change or split the field.

#include <algorithm>
#include <ostream>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"

namespace gpukit::io {

namespace detail {

bool csv_field_needs_quotes(std::string_view field) noexcept {
  if (field.empty()) return false;
  auto is_space_or_tab = [](char c) { return c == ' ' || c == '\t'; };
  // The reader drops unquoted surrounding blanks and skips a byte order mark at the input start.
  if (is_space_or_tab(field.front()) || is_space_or_tab(field.back())) return true;
  if (field.starts_with("\xEF\xBB\xBF")) return true;
  return field.find_first_of(",\"\r\n") != std::string_view::npos;
}

void append_csv_field(std::string& line, std::string_view field) {
  if (!csv_field_needs_quotes(field)) {
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

void write_csv_record(std::ostream& out, std::span<const std::string_view> fields) {
  std::string line;
  if (fields.size() == 1 && fields[0].empty()) {
    line = "\"\"";  // an empty line would be read back as a blank line, not as one empty field
  } else {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i != 0) line.push_back(',');
      detail::append_csv_field(line, fields[i]);
    }
  }
  line.push_back('\n');
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
  if (!out) throw IoError("CSV output: write failed");
}

}  // namespace gpukit::io
