// The .npy header dict parser.
//
// The header parser is our own: no Debian-packaged C/C++ library parses .npy headers robustly.
// xtensor's xnpy.hpp (libxtensor-dev) finds the keys with string searches, requires them in
// numpy's order (the format says readers must not), reads dimensions with an unchecked stream
// extraction and never checks the shape's product for overflow; cnpy is not packaged and has the
// same weaknesses. The grammar needed is tiny: one dict literal with three known keys, strings,
// True/False and a tuple of integers.

#include "npy_header.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "npy_format.hpp"

namespace gpukit::io::npy_internal {

namespace {

// Parses exactly the Python literal numpy writes: '{' (string ':' value) separated by ',' with an
// optional trailing ',' '}', surrounded by any whitespace; values are a string (descr), True or
// False (fortran_order) and a tuple of non-negative integers (shape). Anything else is refused with
// the byte offset in the header where parsing stopped.
class HeaderParser {
 public:
  // `supported` ends the message for a dtype that is not taken: what the caller reads.
  HeaderParser(std::string_view header, std::string_view name, bool accept_long_suffix,
               std::string_view supported)
      : header_(header),
        name_(name),
        accept_long_suffix_(accept_long_suffix),
        supported_(supported) {}

  NpyHeader parse();

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw InvalidInput(fmt::format("{}: .npy header, byte {}: {}; header: \"{}\"", name_, pos_,
                                   what, printable(header_, 120)));
  }
  bool at_end() const { return pos_ >= header_.size(); }
  char peek() const { return at_end() ? '\0' : header_[pos_]; }
  std::string found() const {
    return at_end() ? std::string("the end of the header")
                    : fmt::format("'{}'", printable(header_.substr(pos_, 1)));
  }
  void skip_whitespace() {
    // Python allows newlines inside brackets; numpy pads with spaces and ends with '\n'.
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }
  void expect(char wanted, std::string_view context) {
    if (peek() != wanted) fail(fmt::format("expected '{}' {}, found {}", wanted, context, found()));
    ++pos_;
  }
  std::string_view parse_string(std::string_view what);
  std::string_view parse_identifier();
  NpyDtype parse_descr();
  bool parse_bool();
  std::vector<std::int64_t> parse_shape();
  std::int64_t parse_dimension();

  std::string_view header_;
  std::string_view name_;
  bool accept_long_suffix_;
  std::string_view supported_;
  std::size_t pos_ = 0;
};

std::string_view HeaderParser::parse_string(std::string_view what) {
  const char quote = peek();
  if (quote != '\'' && quote != '"') fail(fmt::format("expected {}, found {}", what, found()));
  const std::size_t begin = ++pos_;
  while (!at_end() && peek() != quote) {
    // numpy never writes an escape, and no accepted key or dtype contains one.
    if (peek() == '\\') fail("escape sequences in strings are not supported");
    if (peek() == '\n') fail("line break inside a string");
    ++pos_;
  }
  if (at_end()) {
    pos_ = begin - 1;
    fail("string not closed");
  }
  return header_.substr(begin, pos_++ - begin);
}

std::string_view HeaderParser::parse_identifier() {
  const std::size_t begin = pos_;
  auto is_word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  while (!at_end() && is_word(peek())) ++pos_;
  return header_.substr(begin, pos_ - begin);
}

NpyDtype HeaderParser::parse_descr() {
  if (peek() == '[') fail("'descr' is a list: structured dtypes are not supported");
  const std::string_view descr = parse_string("a dtype string for 'descr'");
  for (const DtypeInfo& info : kDtypes) {
    if (descr == info.descr) return info.dtype;
  }
  if (!descr.empty() && descr.front() == '>') {
    throw InvalidInput(fmt::format("{}: dtype '{}' is big-endian, which is not supported ({})",
                                   name_, printable(descr), supported_));
  }
  throw InvalidInput(
      fmt::format("{}: unsupported dtype '{}' ({})", name_, printable(descr), supported_));
}

bool HeaderParser::parse_bool() {
  const std::size_t begin = pos_;
  const std::string_view word = parse_identifier();
  if (word == "True") return true;
  if (word == "False") return false;
  pos_ = begin;
  fail(fmt::format("'fortran_order' must be True or False, found {}", found()));
}

std::int64_t HeaderParser::parse_dimension() {
  const std::size_t begin = pos_;
  const bool negative = peek() == '-';
  if (negative) ++pos_;
  if (peek() < '0' || peek() > '9') {
    pos_ = begin;
    fail(fmt::format("expected a dimension (an integer) in 'shape', found {}", found()));
  }
  // Python 3 refuses leading zeros ("05" is a syntax error), so numpy never wrote them.
  if (peek() == '0' && pos_ + 1 < header_.size() && header_[pos_ + 1] >= '0' &&
      header_[pos_ + 1] <= '9') {
    fail("a dimension has a leading zero");
  }
  std::uint64_t magnitude = 0;
  bool too_large = false;
  while (!at_end() && peek() >= '0' && peek() <= '9') {
    const auto digit = static_cast<std::uint64_t>(peek() - '0');
    if (magnitude > (std::uint64_t{1} << 63) / 10 ||
        magnitude * 10 + digit > (std::uint64_t{1} << 63)) {
      too_large = true;
    } else {
      magnitude = magnitude * 10 + digit;
    }
    ++pos_;
  }
  // Python 2 numpy wrote long integers as "3L"; numpy still accepts them in 1.0 and 2.0 headers.
  if (accept_long_suffix_ && (peek() == 'L' || peek() == 'l')) ++pos_;
  if (too_large) {
    throw InvalidInput(fmt::format("{}: dimension {} in 'shape' does not fit in 64 bits", name_,
                                   printable(header_.substr(begin, pos_ - begin))));
  }
  if (negative && magnitude != 0) {
    throw InvalidInput(fmt::format("{}: negative dimension -{} in 'shape'", name_, magnitude));
  }
  if (magnitude > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
    throw InvalidInput(
        fmt::format("{}: dimension {} in 'shape' does not fit in 64 bits", name_, magnitude));
  }
  return static_cast<std::int64_t>(magnitude);
}

std::vector<std::int64_t> HeaderParser::parse_shape() {
  if (peek() != '(') fail(fmt::format("'shape' must be a tuple like (3, 4), found {}", found()));
  ++pos_;
  std::vector<std::int64_t> shape;
  skip_whitespace();
  if (peek() == ')') {
    ++pos_;
    return shape;
  }
  while (true) {
    shape.push_back(parse_dimension());
    skip_whitespace();
    if (peek() == ')') {
      // (5) is the integer 5 in Python, not a tuple; numpy refuses it.
      if (shape.size() == 1) fail("'shape' (n) is not a tuple; a 1-D shape is written (n,)");
      ++pos_;
      return shape;
    }
    expect(',', "or ')' after a dimension");
    skip_whitespace();
    if (peek() == ')') {
      ++pos_;
      return shape;
    }
  }
}

NpyHeader HeaderParser::parse() {
  NpyHeader header;
  bool has_descr = false, has_fortran_order = false, has_shape = false;
  skip_whitespace();
  if (peek() != '{') fail(fmt::format("not a dict literal: expected '{{', found {}", found()));
  ++pos_;
  while (true) {
    skip_whitespace();
    if (peek() == '}') break;
    const std::size_t key_pos = pos_;
    const std::string_view key = parse_string("a quoted key or '}'");
    bool* seen = nullptr;
    if (key == "descr") {
      seen = &has_descr;
    } else if (key == "fortran_order") {
      seen = &has_fortran_order;
    } else if (key == "shape") {
      seen = &has_shape;
    } else {
      pos_ = key_pos;
      fail(fmt::format(
          "unknown key '{}' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')",
          printable(key)));
    }
    if (*seen) {
      // Python would silently keep the last value; a file saying two things is refused.
      pos_ = key_pos;
      fail(fmt::format("duplicate key '{}'", key));
    }
    *seen = true;
    skip_whitespace();
    expect(':', fmt::format("after the key '{}'", key));
    skip_whitespace();
    if (key == "descr") {
      header.dtype = parse_descr();
    } else if (key == "fortran_order") {
      header.fortran_order = parse_bool();
    } else {
      header.shape = parse_shape();
    }
    skip_whitespace();
    if (peek() == '}') break;
    expect(',', "or '}' after a value");
  }
  ++pos_;  // '}'
  skip_whitespace();
  if (!at_end()) fail(fmt::format("unexpected {} after the dict", found()));
  for (auto [present, key] :
       {std::pair{has_descr, "descr"}, std::pair{has_fortran_order, "fortran_order"},
        std::pair{has_shape, "shape"}}) {
    if (!present) {
      throw InvalidInput(fmt::format("{}: .npy header lacks the key '{}'; header: \"{}\"", name_,
                                     key, printable(header_, 120)));
    }
  }
  return header;
}

}  // namespace

NpyHeader parse_npy_header(std::string_view header, std::string_view name, bool accept_long_suffix,
                           std::string_view supported) {
  return HeaderParser(header, name, accept_long_suffix, supported).parse();
}

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t continuation_count = 0;
    std::uint32_t code_point = 0, min_code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xe0) == 0xc0) {
      continuation_count = 1, code_point = lead & 0x1f, min_code_point = 0x80;
    } else if ((lead & 0xf0) == 0xe0) {
      continuation_count = 2, code_point = lead & 0x0f, min_code_point = 0x800;
    } else if ((lead & 0xf8) == 0xf0) {
      continuation_count = 3, code_point = lead & 0x07, min_code_point = 0x10000;
    } else {
      return i;
    }
    if (text.size() - i <= continuation_count) return i;
    for (std::size_t k = 1; k <= continuation_count; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if ((byte & 0xc0) != 0x80) return i;
      code_point = (code_point << 6) | (byte & 0x3f);
    }
    if (code_point < min_code_point || code_point > 0x10ffff ||
        (code_point >= 0xd800 && code_point <= 0xdfff)) {
      return i;
    }
    i += continuation_count + 1;
  }
  return std::nullopt;
}

}  // namespace gpukit::io::npy_internal
