// Option book CSV: header matching, per-field validation with file:line:col messages, and the
// priced-book writer that passes the input columns through unchanged.

#include "gpukit/io/option_book.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <ios>
#include <istream>
#include <iterator>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"
#include "gpukit/io/steps_requirement.hpp"

namespace gpukit::io {

namespace {

// Role of an input column; the known ones are listed first, in the order of kKnownColumnNames.
enum class ColumnRole : std::uint8_t {
  type,
  spot,
  strike,
  maturity,
  rate,
  volatility,
  dividend,
  barrier,  // BookColumns::with_barriers only, like the two below
  barrier_type,
  steps,
  average,  // BookColumns::european reads these three (to refuse what it cannot price), ...
  exercise,
  model,
  v0,  // ... with_barriers all eight: the Heston parameters, read on heston rows
  kappa,
  theta,
  sigma_v,
  rho,
  price,  // books of quotes (BookColumns::quotes_on_*) only, like forward
  forward,
  pass_through,
};

constexpr std::array<std::string_view, 20> kKnownColumnNames = {
    "type",    "spot",         "strike",  "maturity", "rate",     "volatility", "dividend",
    "barrier", "barrier_type", "steps",   "average",  "exercise", "model",      "v0",
    "kappa",   "theta",        "sigma_v", "rho",      "price",    "forward"};

using RoleSet = std::array<bool, kKnownColumnNames.size()>;

RoleSet role_set(std::initializer_list<ColumnRole> roles) {
  RoleSet set{};
  for (ColumnRole role : roles) set[static_cast<std::size_t>(role)] = true;
  return set;
}

// The known columns of each kind of book; the others' names are pass-through columns there.
RoleSet known_roles(BookColumns columns) {
  using R = ColumnRole;
  switch (columns) {
    case BookColumns::european:
      return role_set({R::type, R::spot, R::strike, R::maturity, R::rate, R::volatility,
                       R::dividend, R::average, R::exercise, R::model});
    case BookColumns::with_barriers:
      return role_set({R::type, R::spot, R::strike, R::maturity, R::rate, R::volatility,
                       R::dividend, R::barrier, R::barrier_type, R::steps, R::average, R::exercise,
                       R::model, R::v0, R::kappa, R::theta, R::sigma_v, R::rho});
    case BookColumns::quotes_on_spot:
      return role_set({R::type, R::price, R::spot, R::strike, R::maturity, R::rate, R::dividend});
    case BookColumns::quotes_on_forward:
      return role_set({R::type, R::price, R::forward, R::strike, R::maturity, R::rate});
  }
  throw std::logic_error("known_roles: unknown BookColumns");
}

// The columns a book of this kind must have (rate, volatility and dividend aside: a column or a
// book-wide value), in the order a missing one is reported.
std::vector<ColumnRole> required_roles(BookColumns columns) {
  using R = ColumnRole;
  switch (columns) {
    case BookColumns::european:
    case BookColumns::with_barriers:
      return {R::type, R::spot, R::strike, R::maturity};
    case BookColumns::quotes_on_spot:
      return {R::type, R::price, R::spot, R::strike, R::maturity};
    case BookColumns::quotes_on_forward:
      return {R::type, R::price, R::forward, R::strike, R::maturity};
  }
  throw std::logic_error("required_roles: unknown BookColumns");
}

bool is_quote_book(BookColumns columns) {
  return columns == BookColumns::quotes_on_spot || columns == BookColumns::quotes_on_forward;
}

constexpr std::int64_t kProgressEveryRows = std::int64_t{1} << 20;

// Output is assembled in memory and written in blocks of this size: one stream call per block
// instead of several per field.
constexpr std::size_t kWriteBlockBytes = std::size_t{1} << 20;

std::string_view trim_blanks(std::string_view text) {
  auto is_blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

// Field text as shown in a message: control bytes escaped and long text cut, so that the message
// stays one readable line whatever the input holds.
std::string printable(std::string_view text) {
  constexpr std::size_t kMaxShownBytes = 40;
  std::string shown;
  for (std::size_t i = 0; i < text.size() && i < kMaxShownBytes; ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) {
      shown += fmt::format("\\x{:02x}", byte);
    } else if (text[i] == '"' || text[i] == '\\') {
      shown.push_back('\\');
      shown.push_back(text[i]);
    } else {
      shown.push_back(text[i]);
    }
  }
  if (text.size() > kMaxShownBytes) shown += "...";
  return shown;
}

std::string quoted(std::string_view text) {
  // Built by appending: `"\"" + std::string` trips GCC 12's -Wrestrict false positive.
  std::string shown(1, '"');
  shown += printable(text);
  shown += '"';
  return shown;
}

enum class NumberStatus { ok, empty, not_a_number, not_finite, out_of_range };

// Locale-independent strict number parse (see option_book.hpp for the accepted form).
NumberStatus parse_number(std::string_view text, double& value) {
  text = trim_blanks(text);
  if (text.empty()) return NumberStatus::empty;
  if (text.front() == '+') {
    // from_chars takes no '+'; after the one allowed '+' only a digit or '.' may follow.
    text.remove_prefix(1);
    if (text.empty() || text.front() == '+' || text.front() == '-') {
      return NumberStatus::not_a_number;
    }
  }
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (stop != end) return NumberStatus::not_a_number;
  if (error == std::errc::result_out_of_range) return NumberStatus::out_of_range;
  if (error != std::errc{}) return NumberStatus::not_a_number;
  if (!std::isfinite(value)) return NumberStatus::not_finite;
  return NumberStatus::ok;
}

// The sign rule of a known numeric column (spot, barrier and kappa > 0; strike, maturity,
// volatility, v0, theta and sigma_v >= 0; rho in [-1, 1]), as the messages word it, or nullptr
// when `value` keeps it (or the column has none). Shared by the CSV reader and
// find_book_term_problem, so that both books obey one set of rules. Heston's kappa must be > 0:
// the QE scheme's moments divide by it (kappa -> 0 is their limit, not a value they take).
const char* broken_sign_rule(ColumnRole role, double value) {
  switch (role) {
    case ColumnRole::spot:
    case ColumnRole::forward:
    case ColumnRole::barrier:
    case ColumnRole::kappa:
      return value > 0 ? nullptr : "must be > 0";
    case ColumnRole::strike:
    case ColumnRole::maturity:
    case ColumnRole::volatility:
    case ColumnRole::price:
    case ColumnRole::v0:
    case ColumnRole::theta:
    case ColumnRole::sigma_v:
      return value >= 0 ? nullptr : "must be >= 0";
    case ColumnRole::rho:
      return value >= -1 && value <= 1 ? nullptr : "must be in [-1, 1]";
    default:
      return nullptr;
  }
}

// The rule of the computing precision, for a number that keeps the rules above: with float, a
// magnitude the pricer's rounding to float would make an infinity, or a spot, forward or barrier
// (> 0) it would make 0. nullptr when `value` keeps it. Shared like broken_sign_rule.
const char* broken_precision_rule(ColumnRole role, double value, finance::Precision precision) {
  if (precision != finance::Precision::float32) return nullptr;
  // The midpoint between FLT_MAX and 2^128: from there on, rounding to float gives an infinity.
  constexpr double kFloatOverflow = 0x1p128 - 0x1p103;
  // Half the smallest subnormal float: up to there, rounding to float gives 0.
  constexpr double kFloatUnderflow = 0x1p-150;
  if (std::fabs(value) >= kFloatOverflow) {
    return "out of the range of a float (at most 3.4028235e+38 in magnitude)";
  }
  if ((role == ColumnRole::spot || role == ColumnRole::forward || role == ColumnRole::barrier) &&
      value > 0 && value <= kFloatUnderflow) {
    return "rounds to 0 in float (must be > 0; the smallest float is 1e-45)";
  }
  return nullptr;
}

constexpr double kMaxSteps = double(1u << 20);
constexpr const char* kStepsRule = "expected an integer in [1, 1048576]";
constexpr const char* kTypeRule = "expected call, put, c or p";
constexpr const char* kBarrierTypeRule = "expected none, down-out, down-in, up-out or up-in";
constexpr const char* kAverageRule = "expected none, arithmetic or geometric";
constexpr const char* kExerciseRule = "expected european, bermudan or american";
constexpr const char* kModelRule = "expected black-scholes or heston";
constexpr std::array<ColumnRole, 5> kHestonRoles = {
    ColumnRole::v0, ColumnRole::kappa, ColumnRole::theta, ColumnRole::sigma_v, ColumnRole::rho};
constexpr std::array<std::string_view, 3> kAverageNames = {"none", "arithmetic", "geometric"};
constexpr std::array<std::string_view, 3> kExerciseNames = {"european", "bermudan", "american"};
constexpr std::array<std::string_view, 2> kModelNames = {"black-scholes", "heston"};

// A word of `names` (any case, blanks around it ignored; empty is the first word) as the
// enumeration whose values they name in order; nullopt for any other text.
template <class Enum, std::size_t N>
std::optional<Enum> parse_word(std::string_view text,
                               const std::array<std::string_view, N>& names) {
  const std::string_view word = trim_blanks(text);
  if (word.empty()) return static_cast<Enum>(0);
  for (std::size_t k = 0; k < N; ++k) {
    if (equals_ignoring_case(word, names[k])) return static_cast<Enum>(k);
  }
  return std::nullopt;
}

// What a row's payoff columns say together, read by the CSV reader and find_book_term_problem
// alike: an Asian row has neither a barrier nor early exercise (its average is its payoff).
struct CombinationProblem {
  ColumnRole role;
  std::string what;
};
std::optional<CombinationProblem> combination_problem(finance::AverageType average,
                                                      finance::ExerciseStyle exercise,
                                                      finance::BarrierType barrier) {
  if (average == finance::AverageType::none) return std::nullopt;
  if (barrier != finance::BarrierType::none) {
    return CombinationProblem{
        ColumnRole::average,
        fmt::format("an Asian ({}) option takes no barrier, got barrier_type {}",
                    kAverageNames[static_cast<std::size_t>(average)],
                    std::array<std::string_view, 5>{"none", "down-out", "down-in", "up-out",
                                                    "up-in"}[static_cast<std::size_t>(barrier)])};
  }
  if (exercise != finance::ExerciseStyle::european) {
    return CombinationProblem{
        ColumnRole::exercise,
        fmt::format("an Asian ({}) option is exercised at maturity only, got {}",
                    kAverageNames[static_cast<std::size_t>(average)],
                    kExerciseNames[static_cast<std::size_t>(exercise)])};
  }
  return std::nullopt;
}

// Why a book read for Black-Scholes (BookColumns::european) cannot price a row, at the column
// that says so; nullopt for a European Black-Scholes row.
std::optional<CombinationProblem> black_scholes_refusal(finance::AverageType average,
                                                        finance::ExerciseStyle exercise,
                                                        finance::AssetModel model) {
  if (average != finance::AverageType::none) {
    return CombinationProblem{ColumnRole::average,
                              "an Asian option: Black-Scholes prices European options only "
                              "(Monte Carlo, gpukit mc, prices Asian ones)"};
  }
  if (exercise != finance::ExerciseStyle::european) {
    return CombinationProblem{
        ColumnRole::exercise,
        fmt::format("a {} option: Black-Scholes prices European exercise only (Monte Carlo, "
                    "gpukit mc, prices early exercise)",
                    kExerciseNames[static_cast<std::size_t>(exercise)])};
  }
  if (model != finance::AssetModel::black_scholes) {
    return CombinationProblem{ColumnRole::model,
                              "a heston row: the Black-Scholes formula prices the black-scholes "
                              "model only (Monte Carlo, gpukit mc, prices heston rows)"};
  }
  return std::nullopt;
}

bool steps_in_range(double value) {
  return value == std::floor(value) && value >= 1 && value <= kMaxSteps;
}

// Parses option rows; keeps what every error message needs.
class BookParser {
 public:
  BookParser(OptionBook& book, std::int64_t header_line, BookColumns columns,
             finance::Precision precision)
      : book_(book),
        header_line_(header_line),
        columns_(columns),
        known_(known_roles(columns)),
        precision_(precision) {}

  // Matches the header against the known columns and settles the book-wide values.
  void set_columns(const BookDefaults& defaults);
  void diagnose_header() const;
  void add_row(const CsvRecord& record);
  // Reserves the book's arrays for the number of rows the input size suggests, from the size of
  // the first data row: growing them by doubling instead costs a copy and fresh page faults per
  // step, which dominated the time of reading a large book.
  void reserve_for_input(std::int64_t input_bytes, const CsvRecord& first_row);

 private:
  [[noreturn]] void throw_field_error(std::int64_t line, std::size_t col,
                                      std::string_view what) const {
    throw InvalidInput(fmt::format("{}:{}:{}: {}: {}", book_.source, line, col + 1,
                                   printable(trim_blanks(book_.columns[col])), what));
  }
  double parse_value(std::string_view text, std::int64_t line, std::size_t col) const;
  // parse_value, then the column's sign rule and the precision's range rule.
  double parse_known_value(std::string_view text, std::int64_t line, std::size_t col) const;
  // "<source>:<header line>: <name>: required column is missing<detail>", with the header found
  // and the name probably meant for it.
  [[noreturn]] void throw_missing_column(std::string_view name, std::string_view detail) const;
  std::vector<double>& values_of(ColumnRole role);
  void settle_book_wide_value(ColumnRole role, const std::optional<double>& given,
                              std::optional<double> fallback, double& scalar);

  // What a row's optional columns held, for the rules that read several of them.
  struct RowTerms {
    bool barrier_given = false, steps_given = false;
    finance::AverageType average = finance::AverageType::none;
    finance::ExerciseStyle exercise = finance::ExerciseStyle::european;
    finance::AssetModel model = finance::AssetModel::black_scholes;
    std::array<bool, kHestonRoles.size()> heston_given{};
  };
  void finish_row(const CsvRecord& record, const RowTerms& terms);
  void finish_barrier_row(const CsvRecord& record, const RowTerms& terms);
  [[noreturn]] void throw_steps_missing(std::int64_t line, std::string_view needs) const;

  OptionBook& book_;
  std::int64_t header_line_;
  BookColumns columns_;
  RoleSet known_;  // the columns this kind of book reads
  finance::Precision precision_;
  std::vector<ColumnRole> roles_;
  std::array<std::size_t, kKnownColumnNames.size()> column_of_role_{};  // valid when has_role_
  std::array<bool, kKnownColumnNames.size()> has_role_{};
};

// A header that cannot be a book because the file is another kind of text: say what was found
// instead of "type: required column is missing".
void BookParser::diagnose_header() const {
  for (const std::string& name : book_.columns) {
    if (name.find('\0') != std::string::npos) {
      throw InvalidInput(fmt::format(
          "{}:{}: the header holds NUL bytes (a UTF-16 file without a byte order mark?); save it "
          "as UTF-8 CSV",
          book_.source, header_line_));
    }
  }
  if (book_.columns.size() != 1) return;
  struct Hint {
    char delimiter;
    std::string_view shown, option;
  };
  constexpr std::array<Hint, 4> kHints = {
      {{';', "';'", "';'"}, {'\t', "tabs", "tab"}, {'|', "'|'", "'|'"}, {',', "','", "','"}}};
  for (const Hint& hint : kHints) {
    if (hint.delimiter != book_.delimiter &&
        book_.columns[0].find(hint.delimiter) != std::string::npos) {
      throw InvalidInput(
          fmt::format("{}:{}: the header is one column containing {}: use "
                      "--delimiter {}",
                      book_.source, header_line_, hint.shown, hint.option));
    }
  }
}

void BookParser::set_columns(const BookDefaults& defaults) {
  diagnose_header();
  roles_.assign(book_.columns.size(), ColumnRole::pass_through);
  for (std::size_t col = 0; col < book_.columns.size(); ++col) {
    std::string_view name = trim_blanks(book_.columns[col]);
    for (std::size_t known = 0; known < kKnownColumnNames.size(); ++known) {
      if (!known_[known] || !equals_ignoring_case(name, kKnownColumnNames[known])) continue;
      if (has_role_[known]) {
        throw_field_error(
            header_line_, col,
            fmt::format("duplicate column (also column {})", column_of_role_[known] + 1));
      }
      has_role_[known] = true;
      column_of_role_[known] = col;
      roles_[col] = static_cast<ColumnRole>(known);
    }
  }
  for (ColumnRole required : required_roles(columns_)) {
    auto known = static_cast<std::size_t>(required);
    if (has_role_[known]) continue;
    // A book of quotes with the other model's underlying: say which model reads it.
    std::string_view detail;
    if (required == ColumnRole::forward && book_.column_index("spot")) {
      detail =
          " (black76 and bachelier invert on the forward; a book with a spot is inverted "
          "with --model black-scholes)";
    } else if (is_quote_book(columns_) && required == ColumnRole::spot &&
               book_.column_index("forward")) {
      detail =
          " (black-scholes inverts on the spot; a book with a forward is inverted with "
          "--model black76 or bachelier)";
    }
    throw_missing_column(kKnownColumnNames[known], detail);
  }
  const bool has_barrier = has_role_[static_cast<std::size_t>(ColumnRole::barrier)];
  const bool has_type = has_role_[static_cast<std::size_t>(ColumnRole::barrier_type)];
  if (has_barrier != has_type) {
    throw_missing_column(
        has_barrier ? "barrier_type" : "barrier",
        fmt::format(" (the {} column is given)", has_barrier ? "barrier" : "barrier_type"));
  }
  settle_book_wide_value(ColumnRole::rate, defaults.rate, std::nullopt, book_.rate_scalar);
  if (!is_quote_book(columns_)) {
    settle_book_wide_value(ColumnRole::volatility, defaults.volatility, std::nullopt,
                           book_.volatility_scalar);
  }
  if (columns_ != BookColumns::quotes_on_forward) {
    settle_book_wide_value(ColumnRole::dividend, defaults.dividend, 0.0, book_.dividend_scalar);
  } else if (defaults.dividend) {
    // The forward already holds the dividend yield: a --dividend would silently change nothing.
    throw InvalidInput(
        fmt::format("{}: --dividend: a book of forwards takes no dividend (the forward holds it)",
                    book_.source));
  }
}

void BookParser::settle_book_wide_value(ColumnRole role, const std::optional<double>& given,
                                        std::optional<double> fallback, double& scalar) {
  auto known = static_cast<std::size_t>(role);
  std::string_view name = kKnownColumnNames[known];
  if (has_role_[known]) {
    if (given) {
      // Silently preferring one would price with a value the user did not mean.
      throw_field_error(header_line_, column_of_role_[known],
                        fmt::format("{} is both a column and --{}; give one", name, name));
    }
    return;
  }
  if (!given && !fallback) throw_missing_column(name, fmt::format(" (or give --{})", name));
  double value = given ? *given : *fallback;
  if (!std::isfinite(value)) {
    throw InvalidInput(fmt::format("{}: --{}: must be finite, got {}", book_.source, name, value));
  }
  if (role == ColumnRole::volatility && value < 0) {
    throw InvalidInput(fmt::format("{}: --{}: must be >= 0, got {}", book_.source, name, value));
  }
  if (const char* rule = broken_precision_rule(role, value, precision_)) {
    throw InvalidInput(fmt::format("{}: --{}: {}, got {}", book_.source, name, rule, value));
  }
  scalar = value;
}

void BookParser::throw_missing_column(std::string_view name, std::string_view detail) const {
  // What the header holds (cut after a dozen names) and the name probably meant, so that a
  // header with `vol` for `volatility` says so at once.
  constexpr std::size_t kShownNames = 12;
  std::string found;
  for (std::size_t col = 0; col < book_.columns.size() && col < kShownNames; ++col) {
    if (col != 0) found += ", ";
    found += printable(trim_blanks(book_.columns[col]));
  }
  if (book_.columns.size() > kShownNames) {
    found += fmt::format(", ... ({} columns)", book_.columns.size());
  }
  std::string hint;
  if (const std::optional<std::string> meant = nearest_column_name(name, book_.columns)) {
    hint = fmt::format(": is {} meant to be \"{}\"?", quoted(trim_blanks(*meant)), name);
  }
  throw InvalidInput(fmt::format("{}:{}: {}: required column is missing{}; the header has {}{}",
                                 book_.source, header_line_, name, detail, found, hint));
}

std::vector<double>& BookParser::values_of(ColumnRole role) {
  switch (role) {
    case ColumnRole::spot:
      return book_.spot;
    case ColumnRole::strike:
      return book_.strike;
    case ColumnRole::maturity:
      return book_.maturity;
    case ColumnRole::rate:
      return book_.rate;
    case ColumnRole::volatility:
      return book_.volatility;
    case ColumnRole::dividend:
      return book_.dividend;
    case ColumnRole::barrier:
      return book_.barrier;
    case ColumnRole::v0:
      return book_.v0;
    case ColumnRole::kappa:
      return book_.kappa;
    case ColumnRole::theta:
      return book_.theta;
    case ColumnRole::sigma_v:
      return book_.sigma_v;
    case ColumnRole::rho:
      return book_.rho;
    case ColumnRole::price:
      return book_.price;
    case ColumnRole::forward:
      return book_.forward;
    case ColumnRole::type:
    case ColumnRole::barrier_type:
    case ColumnRole::steps:
    case ColumnRole::average:
    case ColumnRole::exercise:
    case ColumnRole::model:
    case ColumnRole::pass_through:
      break;
  }
  throw std::logic_error("values_of: column role without numeric values");
}

void BookParser::reserve_for_input(std::int64_t input_bytes, const CsvRecord& first_row) {
  if (input_bytes <= 0) return;
  const std::size_t column_count = std::max<std::size_t>(1, book_.columns.size());
  std::size_t row_bytes = first_row.fields.size();  // separators and line end
  for (const std::string& field : first_row.fields) row_bytes += field.size();
  const auto bytes = static_cast<std::size_t>(input_bytes);
  // Every row takes at least one byte per column (its separators and line end): a hard cap.
  const std::size_t rows =
      std::min(bytes / column_count, bytes / std::max<std::size_t>(1, row_bytes) * 5 / 4 + 16);
  try {
    book_.field_text.reserve(bytes);
    book_.field_offsets.reserve(rows * column_count + 1);
    book_.is_put.reserve(rows);
    book_.lines.reserve(rows);
    for (ColumnRole role :
         {ColumnRole::spot, ColumnRole::strike, ColumnRole::maturity, ColumnRole::rate,
          ColumnRole::volatility, ColumnRole::dividend, ColumnRole::price, ColumnRole::forward}) {
      if (has_role_[static_cast<std::size_t>(role)]) values_of(role).reserve(rows);
    }
  } catch (const std::bad_alloc&) {
    // Only an optimization (the estimate may overshoot): fall back to growing as rows come.
  }
}

double BookParser::parse_known_value(std::string_view text, std::int64_t line,
                                     std::size_t col) const {
  const double value = parse_value(text, line, col);
  if (const char* rule = broken_sign_rule(roles_[col], value)) {
    throw_field_error(line, col, fmt::format("{}, got {}", rule, quoted(text)));
  }
  if (const char* rule = broken_precision_rule(roles_[col], value, precision_)) {
    throw_field_error(line, col, fmt::format("{}, got {}", rule, quoted(text)));
  }
  return value;
}

double BookParser::parse_value(std::string_view text, std::int64_t line, std::size_t col) const {
  double value = 0;
  switch (parse_number(text, value)) {
    case NumberStatus::ok:
      return value;
    case NumberStatus::empty:
      throw_field_error(line, col, "empty field, expected a number");
    case NumberStatus::not_a_number: {
      // A semicolon-separated export from a spreadsheet often writes decimal commas.
      std::string with_point(text);
      std::replace(with_point.begin(), with_point.end(), ',', '.');
      double ignored = 0;
      const bool decimal_comma =
          with_point != text && parse_number(with_point, ignored) == NumberStatus::ok;
      throw_field_error(line, col,
                        fmt::format("expected a number, got {}{}", quoted(text),
                                    decimal_comma ? " (write the decimal point as '.')" : ""));
    }
    case NumberStatus::not_finite:
      throw_field_error(line, col, fmt::format("must be finite, got {}", quoted(text)));
    case NumberStatus::out_of_range:
      throw_field_error(line, col,
                        fmt::format("out of the range of a double, got {}", quoted(text)));
  }
  return value;
}

void BookParser::add_row(const CsvRecord& record) {
  const std::size_t column_count = book_.columns.size();
  RowTerms terms;
  if (record.fields.size() != column_count) {
    throw InvalidInput(fmt::format("{}:{}: row has {} fields, the header has {}", book_.source,
                                   record.line, record.fields.size(), column_count));
  }
  book_.lines.push_back(record.line);
  for (std::size_t col = 0; col < column_count; ++col) {
    const std::string& text = record.fields[col];
    book_.field_text.append(text);
    book_.field_offsets.push_back(book_.field_text.size());
    if (!record.raw_fields[col].empty()) {
      book_.raw_field_index.push_back(book_.field_offsets.size() - 2);
      book_.raw_field_text.append(record.raw_fields[col]);
      book_.raw_field_offsets.push_back(book_.raw_field_text.size());
    }
    switch (roles_[col]) {
      case ColumnRole::type: {
        const std::optional<bool> is_put = parse_option_type(text);
        if (!is_put) {
          throw_field_error(record.line, col, fmt::format("{}, got {}", kTypeRule, quoted(text)));
        }
        book_.is_put.push_back(*is_put ? 1 : 0);
        break;
      }
      case ColumnRole::spot:
      case ColumnRole::strike:
      case ColumnRole::maturity:
      case ColumnRole::volatility:
      case ColumnRole::rate:
      case ColumnRole::dividend:
      case ColumnRole::price:
      case ColumnRole::forward:
        values_of(roles_[col]).push_back(parse_known_value(text, record.line, col));
        break;
      case ColumnRole::barrier: {
        if (trim_blanks(text).empty()) {
          terms.barrier_given = false;
          book_.barrier.push_back(0);
          break;
        }
        terms.barrier_given = true;
        book_.barrier.push_back(parse_known_value(text, record.line, col));
        break;
      }
      case ColumnRole::barrier_type: {
        const std::optional<finance::BarrierType> type = parse_barrier_type(text);
        if (!type) {
          throw_field_error(record.line, col,
                            fmt::format("{}, got {}", kBarrierTypeRule, quoted(text)));
        }
        book_.barrier_type.push_back(*type);
        break;
      }
      case ColumnRole::steps: {
        if (trim_blanks(text).empty()) {
          terms.steps_given = false;
          book_.steps.push_back(1);
          break;
        }
        double value = parse_value(text, record.line, col);
        if (!steps_in_range(value)) {
          throw_field_error(record.line, col, fmt::format("{}, got {}", kStepsRule, quoted(text)));
        }
        terms.steps_given = true;
        book_.steps.push_back(static_cast<std::uint32_t>(value));
        break;
      }
      case ColumnRole::average: {
        const std::optional<finance::AverageType> average = parse_average_type(text);
        if (!average) {
          throw_field_error(record.line, col,
                            fmt::format("{}, got {}", kAverageRule, quoted(text)));
        }
        book_.average.push_back(terms.average = *average);
        break;
      }
      case ColumnRole::exercise: {
        const std::optional<finance::ExerciseStyle> exercise = parse_exercise_style(text);
        if (!exercise) {
          throw_field_error(record.line, col,
                            fmt::format("{}, got {}", kExerciseRule, quoted(text)));
        }
        book_.exercise.push_back(terms.exercise = *exercise);
        break;
      }
      case ColumnRole::model: {
        const std::optional<finance::AssetModel> model = parse_asset_model(text);
        if (!model) {
          throw_field_error(record.line, col, fmt::format("{}, got {}", kModelRule, quoted(text)));
        }
        book_.model.push_back(terms.model = *model);
        break;
      }
      case ColumnRole::v0:
      case ColumnRole::kappa:
      case ColumnRole::theta:
      case ColumnRole::sigma_v:
      case ColumnRole::rho: {
        // Read on heston rows only: empty elsewhere is fine (finish_row says where it is not).
        const auto k =
            static_cast<std::size_t>(roles_[col]) - static_cast<std::size_t>(ColumnRole::v0);
        terms.heston_given[k] = !trim_blanks(text).empty();
        values_of(roles_[col])
            .push_back(terms.heston_given[k] ? parse_known_value(text, record.line, col) : 0.0);
        break;
      }
      case ColumnRole::pass_through:
        break;
    }
  }
  finish_row(record, terms);
}

// Row-level rules that read several columns, once every field of the row is read.
void BookParser::finish_row(const CsvRecord& record, const RowTerms& terms) {
  const auto column_of = [this](ColumnRole role) {
    return column_of_role_[static_cast<std::size_t>(role)];
  };
  if (columns_ == BookColumns::european) {
    if (const auto refusal = black_scholes_refusal(terms.average, terms.exercise, terms.model)) {
      throw_field_error(record.line, column_of(refusal->role), refusal->what);
    }
    return;
  }
  if (columns_ != BookColumns::with_barriers) return;
  finish_barrier_row(record, terms);
  if (const auto problem =
          combination_problem(terms.average, terms.exercise, book_.barrier_type.back())) {
    throw_field_error(record.line, column_of(problem->role), problem->what);
  }
  if (terms.model == finance::AssetModel::heston) {
    for (std::size_t k = 0; k < kHestonRoles.size(); ++k) {
      if (!has_role_[static_cast<std::size_t>(kHestonRoles[k])]) {
        throw InvalidInput(fmt::format(
            "{}:{}: {}: required column is missing (a heston row needs v0, kappa, theta, "
            "sigma_v and rho)",
            book_.source, record.line,
            kKnownColumnNames[static_cast<std::size_t>(kHestonRoles[k])]));
      }
      if (!terms.heston_given[k]) {
        throw_field_error(record.line, column_of(kHestonRoles[k]),
                          "empty field, a heston row needs v0, kappa, theta, sigma_v and rho");
      }
    }
  }
  if (terms.steps_given) return;
  // Barrier rows were checked by finish_barrier_row; the Asian, early-exercise and heston rows
  // here (a barrier type of none: the requirement of the row's other terms).
  const std::optional<std::string_view> needs =
      steps_requirement(finance::BarrierType::none, terms.average, terms.exercise, terms.model);
  if (needs) throw_steps_missing(record.line, *needs);
}

// The error of a row that needs its steps (steps_requirement's `needs`) and has none: an empty
// field, or no steps column.
void BookParser::throw_steps_missing(std::int64_t line, std::string_view needs) const {
  if (has_role_[static_cast<std::size_t>(ColumnRole::steps)]) {
    throw_field_error(line, column_of_role_[static_cast<std::size_t>(ColumnRole::steps)],
                      fmt::format("empty field, {}", needs));
  }
  throw InvalidInput(
      fmt::format("{}:{}: steps: required column is missing ({})", book_.source, line, needs));
}

// Row-level rules of the barrier columns, once every field of the row is read.
void BookParser::finish_barrier_row(const CsvRecord& record, const RowTerms& terms) {
  const auto role_index = [](ColumnRole role) { return static_cast<std::size_t>(role); };
  if (!has_role_[role_index(ColumnRole::barrier_type)]) {
    book_.barrier_type.push_back(finance::BarrierType::none);
    book_.barrier.push_back(0);
  }
  if (!has_role_[role_index(ColumnRole::steps)]) book_.steps.push_back(1);
  if (book_.barrier_type.back() == finance::BarrierType::none) return;
  if (!terms.barrier_given) {
    throw_field_error(record.line, column_of_role_[role_index(ColumnRole::barrier)],
                      "empty field, a barrier option needs a barrier level");
  }
  if (!terms.steps_given) {
    throw_steps_missing(record.line, *steps_requirement(book_.barrier_type.back(), terms.average,
                                                        terms.exercise, terms.model));
  }
}

// Bytes left in a seekable stream (a file, a string stream), or -1 when it cannot tell (a pipe).
// The stream is left where it was.
std::int64_t remaining_bytes(std::istream& in) {
  // tellg on a stream with eofbit set would set failbit; leave such a stream to CsvReader.
  if (in.rdstate() != std::ios::goodbit) return -1;
  const std::istream::pos_type here = in.tellg();
  if (here == std::istream::pos_type(-1)) return -1;
  in.seekg(0, std::ios::end);
  const std::istream::pos_type end = in.tellg();
  in.clear();
  in.seekg(here);
  if (!in || end == std::istream::pos_type(-1) || end < here) {
    in.clear();
    return -1;
  }
  return static_cast<std::int64_t>(end - here);
}

std::size_t held_bytes(const OptionBook& book) {
  std::size_t bytes =
      book.field_text.capacity() + book.is_put.capacity() +
      book.field_offsets.capacity() * sizeof(std::uint64_t) +
      book.lines.capacity() * sizeof(std::int64_t) + book.raw_field_text.capacity() +
      (book.raw_field_index.capacity() + book.raw_field_offsets.capacity()) * sizeof(std::uint64_t);
  for (const std::vector<double>* values :
       {&book.spot, &book.strike, &book.maturity, &book.rate, &book.volatility, &book.dividend,
        &book.price, &book.forward, &book.v0, &book.kappa, &book.theta, &book.sigma_v, &book.rho}) {
    bytes += values->capacity() * sizeof(double);
  }
  return bytes;
}

void write_block(std::ostream& out, std::string& block) {
  try {
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  } catch (const std::ios_base::failure& e) {
    throw IoError(fmt::format("priced book output: write failed: {}", e.what()));
  }
  if (!out) throw IoError("priced book output: write failed");
  block.clear();
}

void append_number(std::string& line, double value, bool as_float, bool as_integer) {
  // to_chars writes a NaN with its sign bit set as "-nan", which is no number to most readers
  // (and a NaN's sign means nothing).
  if (std::isnan(value)) {
    line.append("nan");
    return;
  }
  // Longest shortest-round-trip text: a double needs 24 characters ("-2.2250738585072014e-308").
  char text[32];
  if (as_integer && std::isfinite(value) && std::abs(value) < 1e300) {
    char digits[320];
    std::to_chars_result whole =
        std::to_chars(digits, digits + sizeof digits, value, std::chars_format::fixed, 0);
    line.append(digits, whole.ptr);
    return;
  }
  std::to_chars_result result =
      as_float ? std::to_chars(text, text + sizeof text, static_cast<float>(value))
               : std::to_chars(text, text + sizeof text, value);
  line.append(text, result.ptr);
}

// Row `row` of an output column: its word, or its number.
void append_value(std::string& line, const OutputColumn& column, std::size_t row) {
  if (!column.words.empty()) {
    line.append(column.words[column.codes[row]]);
    return;
  }
  append_number(line, column.values[row], column.as_float, column.as_integer);
}

}  // namespace

std::size_t OptionBook::size() const { return is_put.size(); }

std::optional<std::size_t> OptionBook::column_index(std::string_view name) const {
  name = trim_blanks(name);
  for (std::size_t col = 0; col < columns.size(); ++col) {
    if (equals_ignoring_case(trim_blanks(columns[col]), name)) return col;
  }
  return std::nullopt;
}

std::string_view OptionBook::field(std::size_t row, std::size_t col) const {
  std::size_t index = row * columns.size() + col;
  auto begin = static_cast<std::size_t>(field_offsets[index]);
  auto end = static_cast<std::size_t>(field_offsets[index + 1]);
  return std::string_view(field_text).substr(begin, end - begin);
}

namespace {

// The input bytes of the k-th field that has them (OptionBook::raw_field_index).
std::string_view raw_field_bytes(const OptionBook& book, std::size_t k) {
  const auto begin = static_cast<std::size_t>(book.raw_field_offsets[k]);
  const auto end = static_cast<std::size_t>(book.raw_field_offsets[k + 1]);
  return std::string_view(book.raw_field_text).substr(begin, end - begin);
}

}  // namespace

std::string_view OptionBook::input_field(std::size_t row, std::size_t col) const {
  const std::uint64_t index = row * columns.size() + col;
  const auto at = std::lower_bound(raw_field_index.begin(), raw_field_index.end(), index);
  if (at == raw_field_index.end() || *at != index) return field(row, col);
  return raw_field_bytes(*this, static_cast<std::size_t>(at - raw_field_index.begin()));
}

std::string OptionBook::row_location(std::size_t row) const {
  if (row < lines.size()) return fmt::format("{}:{}", source, lines[row]);
  return fmt::format("{}: row {}", source, row + 1);
}

finance::OptionBookView instrument_view(const OptionBook& book) {
  auto parameter = [](const std::vector<double>& values, double scalar) {
    return finance::PerOption<double>{values.empty() ? nullptr : values.data(), scalar};
  };
  auto optional_column = [](const auto& values) {
    return values.empty() ? nullptr : values.data();
  };
  finance::OptionBookView view;
  view.count = static_cast<std::int64_t>(book.size());
  view.is_put = book.is_put.data();
  view.spot = book.spot.data();
  view.strike = book.strike.data();
  view.maturity = book.maturity.data();
  view.rate = parameter(book.rate, book.rate_scalar);
  view.volatility = parameter(book.volatility, book.volatility_scalar);
  view.dividend = parameter(book.dividend, book.dividend_scalar);
  view.barrier_type = optional_column(book.barrier_type);
  view.barrier = optional_column(book.barrier);
  view.steps = optional_column(book.steps);
  view.average = optional_column(book.average);
  view.exercise = optional_column(book.exercise);
  view.model = optional_column(book.model);
  view.v0 = parameter(book.v0, 0);
  view.kappa = parameter(book.kappa, 0);
  view.theta = parameter(book.theta, 0);
  view.sigma_v = parameter(book.sigma_v, 0);
  view.rho = parameter(book.rho, 0);
  return view;
}

BookColumns quote_columns(finance::VolatilityModel model) {
  return model == finance::VolatilityModel::black_scholes ? BookColumns::quotes_on_spot
                                                          : BookColumns::quotes_on_forward;
}

finance::ImpliedVolatilityBookView quote_view(const OptionBook& book) {
  if (!is_quote_book(book.kind)) {
    throw InvalidInput(
        fmt::format("{}: not read as a book of quotes (no price column read)", book.source));
  }
  auto parameter = [](const std::vector<double>& values, double scalar) {
    return finance::PerOption<double>{values.empty() ? nullptr : values.data(), scalar};
  };
  finance::ImpliedVolatilityBookView view;
  view.count = static_cast<std::int64_t>(book.size());
  view.is_put = book.is_put.data();
  view.price = book.price.data();
  view.underlying =
      book.kind == BookColumns::quotes_on_forward ? book.forward.data() : book.spot.data();
  view.strike = book.strike.data();
  view.maturity = book.maturity.data();
  view.rate = parameter(book.rate, book.rate_scalar);
  view.dividend = parameter(book.dividend, book.dividend_scalar);
  return view;
}

std::optional<bool> parse_option_type(std::string_view text) {
  const std::string_view type = trim_blanks(text);
  if (equals_ignoring_case(type, "call") || equals_ignoring_case(type, "c")) return false;
  if (equals_ignoring_case(type, "put") || equals_ignoring_case(type, "p")) return true;
  return std::nullopt;
}

std::optional<finance::BarrierType> parse_barrier_type(std::string_view text) {
  const std::string_view type = trim_blanks(text);
  if (type.empty()) return finance::BarrierType::none;
  // In the order of finance::BarrierType.
  constexpr std::array<std::string_view, 5> kNames = {"none", "down-out", "down-in", "up-out",
                                                      "up-in"};
  for (std::size_t k = 0; k < kNames.size(); ++k) {
    if (equals_ignoring_case(type, kNames[k])) return static_cast<finance::BarrierType>(k);
  }
  return std::nullopt;
}

std::optional<std::string_view> steps_requirement(finance::BarrierType barrier,
                                                  finance::AverageType average,
                                                  finance::ExerciseStyle exercise,
                                                  finance::AssetModel model) {
  // The rows whose dates are part of their terms: barrier rows (monitoring dates), Asian rows
  // (fixings), early exercise (exercise dates) and heston rows (the time steps of the scheme,
  // whose bias the user chooses).
  if (barrier != finance::BarrierType::none) {
    return "a barrier option needs its number of monitoring dates";
  }
  if (average != finance::AverageType::none) return "an Asian option needs its number of fixings";
  if (exercise == finance::ExerciseStyle::bermudan) {
    return "a bermudan option needs its number of exercise dates";
  }
  if (exercise == finance::ExerciseStyle::american) {
    return "an american option needs its number of exercise dates";
  }
  if (model == finance::AssetModel::heston) return "a heston row needs its number of time steps";
  return std::nullopt;
}

std::optional<finance::AverageType> parse_average_type(std::string_view text) {
  return parse_word<finance::AverageType>(text, kAverageNames);
}

std::optional<finance::ExerciseStyle> parse_exercise_style(std::string_view text) {
  return parse_word<finance::ExerciseStyle>(text, kExerciseNames);
}

std::optional<finance::AssetModel> parse_asset_model(std::string_view text) {
  return parse_word<finance::AssetModel>(text, kModelNames);
}

namespace {

// A header name as nearest_column_name compares it: blanks around it dropped, ASCII lower case,
// '-' and ' ' as '_'.
std::string comparable_name(std::string_view name) {
  std::string key(trim_blanks(name));
  for (char& c : key) c = c == '-' || c == ' ' ? '_' : ascii_lower(c);
  return key;
}

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring):
// insertions, deletions, substitutions and swaps of two neighbours each count one.
std::size_t typing_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Other names books use for the known columns (alias, column; compared as comparable_name gives
// them).
constexpr std::pair<std::string_view, std::string_view> kColumnAliases[] = {
    {"cp", "type"},
    {"call_put", "type"},
    {"put_call", "type"},
    {"callput", "type"},
    {"putcall", "type"},
    {"option_type", "type"},
    {"cp_flag", "type"},
    {"right", "type"},
    {"s", "spot"},
    {"s0", "spot"},
    {"underlying", "spot"},
    {"spot_price", "spot"},
    {"stock", "spot"},
    {"stock_price", "spot"},
    {"price_underlying", "spot"},
    {"k", "strike"},
    {"x", "strike"},
    {"strike_price", "strike"},
    {"exercise_price", "strike"},
    {"t", "maturity"},
    {"expiry", "maturity"},
    {"expiration", "maturity"},
    {"tenor", "maturity"},
    {"ttm", "maturity"},
    {"time", "maturity"},
    {"years", "maturity"},
    {"time_to_maturity", "maturity"},
    {"time_to_expiry", "maturity"},
    {"r", "rate"},
    {"rf", "rate"},
    {"interest", "rate"},
    {"interest_rate", "rate"},
    {"risk_free", "rate"},
    {"riskfree", "rate"},
    {"risk_free_rate", "rate"},
    {"vol", "volatility"},
    {"sigma", "volatility"},
    {"iv", "volatility"},
    {"implied_vol", "volatility"},
    {"implied_volatility", "volatility"},
    {"premium", "price"},
    {"option_price", "price"},
    {"market_price", "price"},
    {"mid", "price"},
    {"mid_price", "price"},
    {"px", "price"},
    {"quote", "price"},
    {"value", "price"},
    {"fwd", "forward"},
    {"f", "forward"},
    {"forward_price", "forward"},
    {"future", "forward"},
    {"futures", "forward"},
    {"futures_price", "forward"},
    {"q", "dividend"},
    {"div", "dividend"},
    {"yield", "dividend"},
    {"dividend_yield", "dividend"},
    {"div_yield", "dividend"},
    {"h", "barrier"},
    {"level", "barrier"},
    {"barrier_level", "barrier"},
    {"barriertype", "barrier_type"},
    {"barrier_kind", "barrier_type"},
    {"knock", "barrier_type"},
    {"n_steps", "steps"},
    {"nsteps", "steps"},
    {"dates", "steps"},
    {"monitoring", "steps"},
    {"monitoring_dates", "steps"},
};

}  // namespace

std::optional<std::string> nearest_column_name(std::string_view missing,
                                               std::span<const std::string> names) {
  const std::string wanted = comparable_name(missing);
  auto is_alias = [&wanted](std::string_view key) {
    return std::any_of(
        std::begin(kColumnAliases), std::end(kColumnAliases),
        [&](const auto& alias) { return alias.first == key && alias.second == wanted; });
  };
  // The closest name: an alias (0), a prefix of 3 letters or more either way (1), or a name a
  // slip or two away (1 + distance; for names of 4 letters or fewer one slip, first letter kept,
  // so that `date` is not offered for `rate`).
  std::optional<std::string> best;
  std::size_t best_score = std::numeric_limits<std::size_t>::max();
  for (const std::string& name : names) {
    const std::string key = comparable_name(name);
    // A known column's own name (as the reader matches it) is meant for that column.
    const bool known = std::any_of(kKnownColumnNames.begin(), kKnownColumnNames.end(),
                                   [&name](std::string_view column) {
                                     return equals_ignoring_case(trim_blanks(name), column);
                                   });
    if (key.empty() || known) continue;
    std::size_t score = std::numeric_limits<std::size_t>::max();
    if (is_alias(key)) {
      score = 0;
    } else if (std::min(key.size(), wanted.size()) >= 3 &&
               (wanted.starts_with(key) || key.starts_with(wanted))) {
      score = 1;
    } else {
      const std::size_t distance = typing_distance(key, wanted);
      const bool short_name = wanted.size() <= 4;
      if (short_name ? distance <= 1 && key.front() == wanted.front() : distance <= 2) {
        score = 1 + distance;
      }
    }
    if (score < best_score) best_score = score, best = name;
  }
  return best;
}

namespace {

std::string role_name(ColumnRole role) {
  return std::string(kKnownColumnNames[static_cast<std::size_t>(role)]);
}

// A parsed number's problem under its column's rules, in the CSV reader's words ("" when none):
// what find_book_term_problem and find_quote_term_problem report.
std::string number_problem(ColumnRole role, double value, finance::Precision precision) {
  if (!std::isfinite(value)) return fmt::format("must be finite, got {}", value);
  if (const char* rule = broken_sign_rule(role, value)) {
    return fmt::format("{}, got {}", rule, value);
  }
  if (const char* rule = broken_precision_rule(role, value, precision)) {
    return fmt::format("{}, got {}", rule, value);
  }
  return {};
}

std::optional<double> value_in_row(const finance::PerOption<double>& parameter, std::int64_t row) {
  return parameter.values != nullptr ? std::optional<double>(parameter.values[row]) : std::nullopt;
}

}  // namespace

std::optional<BookTermProblem> find_book_term_problem(const finance::OptionBookView& view,
                                                      finance::Precision precision) {
  // Book-wide values first, as the CSV reader checks its defaults before any row.
  for (const auto& [role, parameter] :
       {std::pair{ColumnRole::rate, view.rate}, std::pair{ColumnRole::volatility, view.volatility},
        std::pair{ColumnRole::dividend, view.dividend}}) {
    if (parameter.values != nullptr) continue;
    std::string what = number_problem(role, parameter.scalar, precision);
    if (!what.empty()) return BookTermProblem{-1, role_name(role), std::move(what)};
  }
  for (std::int64_t row = 0; row < view.count; ++row) {
    const std::pair<ColumnRole, std::optional<double>> numbers[] = {
        {ColumnRole::spot, view.spot[row]},
        {ColumnRole::strike, view.strike[row]},
        {ColumnRole::maturity, view.maturity[row]},
        {ColumnRole::rate, value_in_row(view.rate, row)},
        {ColumnRole::volatility, value_in_row(view.volatility, row)},
        {ColumnRole::dividend, value_in_row(view.dividend, row)}};
    for (const auto& [role, value] : numbers) {
      if (!value) continue;
      std::string what = number_problem(role, *value, precision);
      if (!what.empty()) return BookTermProblem{row, role_name(role), std::move(what)};
    }
    const finance::BarrierType type =
        view.barrier_type != nullptr ? view.barrier_type[row] : finance::BarrierType::none;
    if (static_cast<unsigned>(type) > static_cast<unsigned>(finance::BarrierType::up_in)) {
      return BookTermProblem{
          row, role_name(ColumnRole::barrier_type),
          fmt::format("{}, got {}", kBarrierTypeRule, static_cast<unsigned>(type))};
    }
    if (type != finance::BarrierType::none && view.barrier != nullptr) {
      std::string what = number_problem(ColumnRole::barrier, view.barrier[row], precision);
      if (!what.empty())
        return BookTermProblem{row, role_name(ColumnRole::barrier), std::move(what)};
    }
    if (view.steps != nullptr && !steps_in_range(view.steps[row])) {
      return BookTermProblem{row, role_name(ColumnRole::steps),
                             fmt::format("{}, got {}", kStepsRule, view.steps[row])};
    }
    const auto average = view.average != nullptr ? view.average[row] : finance::AverageType::none;
    const auto exercise =
        view.exercise != nullptr ? view.exercise[row] : finance::ExerciseStyle::european;
    const auto model = view.model != nullptr ? view.model[row] : finance::AssetModel::black_scholes;
    if (static_cast<std::size_t>(average) >= kAverageNames.size()) {
      return BookTermProblem{
          row, role_name(ColumnRole::average),
          fmt::format("{}, got {}", kAverageRule, static_cast<unsigned>(average))};
    }
    if (static_cast<std::size_t>(exercise) >= kExerciseNames.size()) {
      return BookTermProblem{
          row, role_name(ColumnRole::exercise),
          fmt::format("{}, got {}", kExerciseRule, static_cast<unsigned>(exercise))};
    }
    if (static_cast<std::size_t>(model) >= kModelNames.size()) {
      return BookTermProblem{row, role_name(ColumnRole::model),
                             fmt::format("{}, got {}", kModelRule, static_cast<unsigned>(model))};
    }
    if (const auto problem = combination_problem(average, exercise, type)) {
      return BookTermProblem{row, role_name(problem->role), problem->what};
    }
    if (model == finance::AssetModel::heston) {
      const finance::PerOption<double> parameters[] = {view.v0, view.kappa, view.theta,
                                                       view.sigma_v, view.rho};
      for (std::size_t k = 0; k < kHestonRoles.size(); ++k) {
        const finance::PerOption<double>& p = parameters[k];
        std::string what = number_problem(
            kHestonRoles[k], p.values != nullptr ? p.values[row] : p.scalar, precision);
        if (!what.empty()) {
          return BookTermProblem{p.values != nullptr ? row : -1, role_name(kHestonRoles[k]),
                                 std::move(what)};
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<BookTermProblem> find_quote_term_problem(
    const finance::ImpliedVolatilityBookView& book, BookColumns columns,
    finance::Precision precision) {
  if (!is_quote_book(columns)) {
    throw std::logic_error("find_quote_term_problem: not the columns of a book of quotes");
  }
  const bool on_forward = columns == BookColumns::quotes_on_forward;
  const ColumnRole underlying = on_forward ? ColumnRole::forward : ColumnRole::spot;
  // Book-wide values first, as the CSV reader checks its defaults before any row.
  std::vector<std::pair<ColumnRole, finance::PerOption<double>>> parameters = {
      {ColumnRole::rate, book.rate}};
  if (!on_forward) parameters.emplace_back(ColumnRole::dividend, book.dividend);
  for (const auto& [role, parameter] : parameters) {
    if (parameter.values != nullptr) continue;
    std::string what = number_problem(role, parameter.scalar, precision);
    if (!what.empty()) return BookTermProblem{-1, role_name(role), std::move(what)};
  }
  if (on_forward && (book.dividend.values != nullptr || book.dividend.scalar != 0)) {
    return BookTermProblem{-1, role_name(ColumnRole::dividend),
                           "a book of forwards takes no dividend (the forward holds it)"};
  }
  for (std::int64_t row = 0; row < book.count; ++row) {
    const std::pair<ColumnRole, std::optional<double>> numbers[] = {
        {ColumnRole::price, book.price[row]},
        {underlying, book.underlying[row]},
        {ColumnRole::strike, book.strike[row]},
        {ColumnRole::maturity, book.maturity[row]},
        {ColumnRole::rate, value_in_row(book.rate, row)},
        {ColumnRole::dividend, on_forward ? std::nullopt : value_in_row(book.dividend, row)}};
    for (const auto& [role, value] : numbers) {
      if (!value) continue;
      std::string what = number_problem(role, *value, precision);
      if (!what.empty()) return BookTermProblem{row, role_name(role), std::move(what)};
    }
  }
  return std::nullopt;
}

OptionBook read_option_book(std::istream& in, const std::string& source_name,
                            const BookDefaults& defaults, const ProgressCallback& progress,
                            BookColumns columns, char delimiter, finance::Precision precision) {
  const std::int64_t input_bytes = remaining_bytes(in);  // before the reader takes any
  CsvReader reader(in, source_name, delimiter);
  CsvRecord record;
  if (!reader.next(record)) {
    throw InvalidInput(fmt::format("{}: empty file, expected a header line", source_name));
  }
  OptionBook book;
  book.source = source_name;
  book.kind = columns;
  book.delimiter = reader.delimiter();  // a `sep=` line names the file's own
  book.byte_order_mark = reader.byte_order_mark();
  book.sep_line = reader.sep_line();
  book.columns = record.fields;
  book.raw_columns = record.raw_fields;
  book.field_offsets.push_back(0);

  BookParser parser(book, record.line, columns, precision);
  parser.set_columns(defaults);

  std::int64_t rows = 0;
  try {
    while (reader.next(record)) {
      if (rows == 0) parser.reserve_for_input(input_bytes, record);
      parser.add_row(record);
      ++rows;
      if (progress && rows % kProgressEveryRows == 0) progress(reader.bytes_read(), rows);
    }
  } catch (const std::bad_alloc&) {
    // The arrays grow by doubling, so the failed request was about the size already held.
    throw OutOfMemory(fmt::format("{}: option book after {} rows", source_name, rows),
                      held_bytes(book));
  }
  if (progress) progress(reader.bytes_read(), rows);
  book.line_end = reader.line_end();
  return book;
}

namespace {

// For each input column, the index of the extra column that replaces it, or -1 (kept as read).
std::vector<std::ptrdiff_t> replacement_of_columns(const OptionBook& book,
                                                   std::span<const OutputColumn> extra) {
  std::vector<std::ptrdiff_t> replacement(book.columns.size(), -1);
  for (std::size_t col = 0; col < book.columns.size(); ++col) {
    std::string_view name = trim_blanks(book.columns[col]);
    for (std::size_t i = 0; i < extra.size() && replacement[col] < 0; ++i) {
      if (equals_ignoring_case(name, trim_blanks(extra[i].name))) {
        replacement[col] = static_cast<std::ptrdiff_t>(i);
      }
    }
  }
  return replacement;
}

}  // namespace

std::string OutputProblem::what(finance::Precision precision) const {
  const std::string_view arithmetic = precision == finance::Precision::float32 ? "float" : "double";
  return fmt::format("{} is {} in {}: the terms are beyond what {} arithmetic can price", column,
                     std::isnan(value) ? "nan" : "infinite", arithmetic, arithmetic);
}

std::optional<OutputProblem> find_non_finite_output(std::span<const OutputColumn> columns) {
  // A value written as a float (OutputColumn::as_float) from this magnitude on reads "inf": the
  // midpoint between the largest float and 2^128, where rounding to float goes to infinity.
  constexpr double kFloatOverflow = 0x1p128 - 0x1p103;
  std::size_t rows = 0;
  for (const OutputColumn& column : columns) rows = std::max(rows, column.values.size());
  for (std::size_t row = 0; row < rows; ++row) {
    for (const OutputColumn& column : columns) {
      if (row >= column.values.size() || column.name.starts_with("vrf_")) continue;
      const double value = column.values[row];
      if (std::isfinite(value) && !(column.as_float && std::fabs(value) >= kFloatOverflow)) {
        continue;
      }
      return OutputProblem{static_cast<std::int64_t>(row), column.name, value};
    }
  }
  return std::nullopt;
}

std::vector<std::string> input_columns_replaced(const OptionBook& book,
                                                std::span<const OutputColumn> extra) {
  const std::vector<std::ptrdiff_t> replacement = replacement_of_columns(book, extra);
  std::vector<std::string> names;
  for (std::size_t col = 0; col < book.columns.size(); ++col) {
    if (replacement[col] >= 0) names.push_back(book.columns[col]);
  }
  return names;
}

void write_priced_book(std::ostream& out, const OptionBook& book,
                       std::span<const OutputColumn> extra) {
  for (const OutputColumn& column : extra) {
    if (column.size() != book.size()) {
      throw InvalidInput(fmt::format("{}: output column {} has {} values, the book has {} options",
                                     book.source, quoted(column.name), column.size(), book.size()));
    }
  }
  const char delimiter = book.delimiter;
  const std::vector<std::ptrdiff_t> replacement = replacement_of_columns(book, extra);
  std::vector<bool> in_place(extra.size(), false);
  for (std::ptrdiff_t i : replacement) {
    if (i >= 0) in_place[static_cast<std::size_t>(i)] = true;
  }
  std::string_view line_end = book.line_end;
  if (line_end.empty()) line_end = "\n";
  std::string block;  // grows to about kWriteBlockBytes, then is written and reused
  if (book.byte_order_mark) block.append("\xEF\xBB\xBF");
  if (!book.sep_line.empty()) block.append(book.sep_line).append(line_end);

  bool first = true;
  auto separate = [&] {
    if (!first) block.push_back(delimiter);
    first = false;
  };
  // A field without input bytes of its own is written as its text, quoted where a reader would
  // otherwise split it or change it: for a field read from CSV never (it was read unquoted, so
  // its text is its bytes); the first header name also where the start of a file is read
  // specially (csv.hpp).
  const char special[] = {delimiter, '"', '\r', '\n'};
  auto append_text = [&](std::string_view text, bool starts_file) {
    const bool needs_quotes = starts_file
                                  ? detail::csv_field_needs_quotes(text, delimiter)
                                  : text.find_first_of(std::string_view(special, sizeof special)) !=
                                        std::string_view::npos;
    if (needs_quotes) {
      detail::append_csv_field(block, text, delimiter);
    } else {
      block.append(text);
    }
  };
  for (std::size_t col = 0; col < book.columns.size(); ++col) {
    separate();
    if (col < book.raw_columns.size() && !book.raw_columns[col].empty()) {
      block.append(book.raw_columns[col]);
    } else {
      append_text(book.columns[col], col == 0 && !book.byte_order_mark && book.sep_line.empty());
    }
  }
  for (std::size_t i = 0; i < extra.size(); ++i) {
    if (in_place[i]) continue;
    separate();
    detail::append_csv_field(block, extra[i].name, delimiter);
  }
  block.append(line_end);

  std::size_t next_raw = 0;  // the next field with input bytes of its own, in field order
  for (std::size_t row = 0; row < book.size(); ++row) {
    first = true;
    for (std::size_t col = 0; col < book.columns.size(); ++col) {
      separate();
      const std::uint64_t index = row * book.columns.size() + col;
      const bool has_raw =
          next_raw < book.raw_field_index.size() && book.raw_field_index[next_raw] == index;
      if (replacement[col] >= 0) {
        append_value(block, extra[static_cast<std::size_t>(replacement[col])], row);
      } else if (has_raw) {
        block.append(raw_field_bytes(book, next_raw));
      } else {
        append_text(book.field(row, col), false);
      }
      if (has_raw) ++next_raw;
    }
    for (std::size_t i = 0; i < extra.size(); ++i) {
      if (in_place[i]) continue;
      separate();
      append_value(block, extra[i], row);
    }
    block.append(line_end);
    if (block.size() >= kWriteBlockBytes) write_block(out, block);
  }
  write_block(out, block);
}

}  // namespace gpukit::io
