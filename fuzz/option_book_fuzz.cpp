// libFuzzer target for read_option_book: arbitrary bytes must either give a book or throw a
// gpukit::Error; anything else (another exception, a crash, a sanitizer report) is a finding.
// A book that was read must also survive write_priced_book -> read_option_book unchanged, which
// checks the CSV writer's quoting against the reader on whatever field text the fuzzer invents,
// with the ',' ';' and tab delimiters; and the same for books of quotes (`gpukit iv`'s columns).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/io/option_book.hpp"

namespace {

[[noreturn]] void report_finding(const char* what) {
  std::fprintf(stderr, "option_book_fuzz: %s\n", what);
  __builtin_trap();
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  }
  return true;
}

// Header names as the book matches them: ignoring ASCII case and surrounding blanks.
std::string match_key(std::string_view name) {
  while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
  std::string key(name);
  for (char& c : key) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return key;
}

void check_write_read_round_trip(const gpukit::io::OptionBook& book,
                                 const gpukit::io::BookDefaults& defaults) {
  using gpukit::io::OutputColumn;
  // The names may also be input columns (the fuzzer can write them): those are replaced in place.
  std::vector<OutputColumn> extra = {{"fuzz_price", book.spot, false},
                                     {"fuzz_price32", book.strike, true}};
  std::set<std::string> replaced_keys;
  for (const std::string& name : gpukit::io::input_columns_replaced(book, extra)) {
    replaced_keys.insert(match_key(name));
  }
  std::size_t appended = 0;
  for (const OutputColumn& column : extra) appended += replaced_keys.count(column.name) == 0;
  std::ostringstream out;
  gpukit::io::write_priced_book(out, book, extra);
  std::istringstream written(out.str());
  gpukit::io::OptionBook again;
  try {
    again = gpukit::io::read_option_book(written, "written.csv", defaults, {}, book.kind,
                                         book.delimiter);
  } catch (const gpukit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    report_finding("the written book does not read back");
  }
  const std::size_t columns = book.columns.size();
  if (again.size() != book.size() || again.columns.size() != columns + appended) {
    report_finding("the written book reads back with another shape");
  }
  for (std::size_t col = 0; col < columns; ++col) {
    if (again.columns[col] != book.columns[col]) report_finding("a header name changed");
  }
  for (std::size_t row = 0; row < book.size(); ++row) {
    for (std::size_t col = 0; col < columns; ++col) {
      if (replaced_keys.count(match_key(book.columns[col])) != 0) continue;
      if (again.field(row, col) != book.field(row, col)) report_finding("a field changed");
    }
  }
  if (again.is_put != book.is_put || !same_bits(again.spot, book.spot) ||
      !same_bits(again.strike, book.strike) || !same_bits(again.maturity, book.maturity) ||
      !same_bits(again.rate, book.rate) || !same_bits(again.volatility, book.volatility) ||
      !same_bits(again.dividend, book.dividend) || !same_bits(again.price, book.price) ||
      !same_bits(again.forward, book.forward)) {
    report_finding("a value changed");
  }
}

void read_with(const std::string& text, const gpukit::io::BookDefaults& defaults,
               char delimiter = ',',
               gpukit::io::BookColumns columns = gpukit::io::BookColumns::european) {
  std::istringstream in(text);
  gpukit::io::OptionBook book;
  std::int64_t progress_calls = 0;
  try {
    book = gpukit::io::read_option_book(
        in, "fuzz.csv", defaults, [&](std::int64_t, std::int64_t) { ++progress_calls; }, columns,
        delimiter);
  } catch (const gpukit::Error&) {
    return;  // rejecting bad input with a gpukit error is the expected outcome
  }
  if (progress_calls != 1) report_finding("progress not reported exactly once at the end");
  if (book.field_offsets.size() != book.size() * book.columns.size() + 1) {
    report_finding("field_offsets has the wrong size");
  }
  check_write_read_round_trip(book, defaults);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Once without defaults (rate and volatility must be columns), once with all three given (they
  // must not be columns): between them every header rule is reached.
  read_with(text, {});
  read_with(text, {0.01, 0.2, 0.005});
  // The other delimiters (spreadsheet exports), where a tab is a delimiter and not a blank.
  read_with(text, {}, ';');
  read_with(text, {0.01, 0.2, 0.005}, '\t');
  // Books of quotes: on the spot (with a dividend default), on the forward (rate only).
  read_with(text, {0.01, std::nullopt, 0.005}, ',', gpukit::io::BookColumns::quotes_on_spot);
  read_with(text, {}, ',', gpukit::io::BookColumns::quotes_on_forward);
  return 0;
}
