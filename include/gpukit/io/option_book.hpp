#pragma once
// A European option book read from CSV, kept as structure-of-arrays ready for the pricers, plus the
// text of every input field so that the priced book can be written with the input columns
// unchanged.
//
// Input format: a header line, then one option per line. Known columns, matched case-insensitively
// after trimming spaces, in any order:
//   type       call | put | c | p (any case)                          required
//   spot       > 0                                                      required
//   strike     >= 0                                                     required
//   maturity   >= 0, in years                                           required
//   rate       any finite number, continuously compounded     column or BookDefaults::rate
//   volatility >= 0, annualized                                column or BookDefaults::volatility
//   dividend   any finite number, continuous yield             column, BookDefaults::dividend, or 0
// Any other column is carried through untouched, byte for byte (its field as the input wrote it:
// a quoted field with its quotes, an unquoted one with its blanks; see csv.hpp), and the priced
// book keeps the input's UTF-8 byte order mark, Excel `sep=` line and line ends, so that a book
// saved by a spreadsheet comes back as it was plus the priced columns. Fields are separated by
// ',' unless the reader is given another delimiter (';', '|', tab) or the input's first line is
// `sep=X`; the priced book is written with the input's delimiter. Numbers are read with
// std::from_chars: independent of the locale, '.' as decimal point, surrounding spaces and one
// leading '+' allowed, the whole field must be a number; NaN, infinities and magnitudes outside a
// double's range (1e999, and 1e-400, which would round to zero) are rejected; subnormal values
// are accepted. A book read for float pricing (Precision::float32) also refuses a number outside
// float's range, and a spot or barrier that rounds to 0 in float.
//
// A book of quotes to invert (`gpukit iv`: BookColumns::quotes_on_spot, quotes_on_forward) has
// the columns type, strike, maturity and rate as above, and
//   price      >= 0, the option's present value (the quantity inverted)       required
//   spot       > 0 (quotes_on_spot: black-scholes), with dividend as above    required
//   forward    > 0 (quotes_on_forward: black76, bachelier; no dividend)       required
// volatility, and spot or forward where the model takes the other, are pass-through columns
// there, so that a book priced by `gpukit bs` (which has a price column) is read as it is.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/instrument.hpp"

namespace gpukit::io {

/// Book-wide values given on the command line (--rate, --volatility, --dividend). Each may be given
/// only when the book has no column of that name.
struct BookDefaults {
  std::optional<double> rate, volatility, dividend;
};

/// Which known columns a reader matches. with_barriers (gpukit mc) adds three optional columns:
///   barrier       > 0; required (non-empty) where barrier_type is not none
///   barrier_type  none | down-out | down-in | up-out | up-in (any case; empty = none)
///   steps         integer in [1, 2^20]: monitoring dates / time steps; empty or no column = 1
///                 for a European row, required for a barrier row
/// barrier and barrier_type come together (one without the other is an error). with_barriers
/// also reads the optional columns of issue 33's products (each empty or absent = its default):
///   average       none | arithmetic | geometric (any case): an Asian option on the `steps`
///                 fixings t_i = i T / steps, i = 1..steps
///   exercise      european | bermudan | american (any case)
///   model         black-scholes | heston (any case)
///   v0, theta, sigma_v   >= 0   Heston's initial variance, long-run variance and volatility of
///   kappa                > 0    variance, mean-reversion speed (the QE scheme divides by it),
///   rho                  in [-1, 1]   and correlation; read on heston rows, where all five are
///                 required (volatility is ignored there); a value given on another row is checked
///                 by the same rules and not used
/// and these rules between columns (file:line:column errors): an Asian row has no barrier and
/// european exercise; an Asian, bermudan, american or heston row needs its steps (fixings,
/// exercise dates, time steps) as a barrier row does. With european (gpukit bs) the barrier
/// columns and the Heston parameters are ordinary pass-through columns; average, exercise and
/// model are read so that a row Black-Scholes cannot price (an Asian, an early exercise, a heston
/// row) is an error at its field instead of a wrong price.
/// quotes_on_spot and quotes_on_forward (gpukit iv) read a book of quotes to invert (above): the
/// price column, and the spot (and dividend) or the forward; volatility passes through.
enum class BookColumns { european, with_barriers, quotes_on_spot, quotes_on_forward };

/// The columns a book of quotes inverted under `model` has: quotes_on_spot for black_scholes,
/// quotes_on_forward for black76 and bachelier (whose underlying is the forward).
BookColumns quote_columns(finance::VolatilityModel model);

struct OptionBook {
  std::string source;                // file name for messages
  std::vector<std::string> columns;  // header names as given, in input order
  std::vector<std::uint8_t> is_put;  // 0 call, 1 put
  std::vector<double> spot, strike, maturity;
  // Books of quotes (BookColumns::quotes_on_*) only, else empty: each row's price, and its
  // forward where the book has one (quotes_on_forward; spot is then empty).
  std::vector<double> price, forward;
  BookColumns kind = BookColumns::european;  // the columns the book was read with
  // Per-option values when the column exists, else empty and the scalar holds the book-wide value.
  std::vector<double> rate, volatility, dividend;
  double rate_scalar = 0, volatility_scalar = 0, dividend_scalar = 0;
  // BookColumns::with_barriers only (else empty): one entry per option.
  std::vector<finance::BarrierType> barrier_type;
  std::vector<double> barrier;  // 0 where barrier_type is none
  std::vector<std::uint32_t> steps;
  // Each empty unless the book has the column (then one entry per option): average, exercise and
  // model (BookColumns::european and with_barriers), the Heston parameters (with_barriers; 0 where
  // the field is empty).
  std::vector<finance::AverageType> average;
  std::vector<finance::ExerciseStyle> exercise;
  std::vector<finance::AssetModel> model;
  std::vector<double> v0, kappa, theta, sigma_v, rho;
  // Every input field's text, row-major (rows x columns.size()), kept to pass columns through
  // unchanged: with i = r * cols + c, field (r, c) is field_text[field_offsets[i],
  // field_offsets[i+1]).
  std::string field_text;
  std::vector<std::uint64_t> field_offsets;  // size rows*cols+1
  // The input bytes of the fields whose text above is not them (quoted fields: their quotes,
  // doubled quotes and the blanks around the quotes), in field order: the k-th such field is
  // field raw_field_index[k] (i as above), its bytes raw_field_text[raw_field_offsets[k],
  // raw_field_offsets[k+1]). Empty for a book that was not read from CSV.
  std::vector<std::uint64_t> raw_field_index;
  std::string raw_field_text;
  std::vector<std::uint64_t> raw_field_offsets = {0};
  // The input bytes of each header name where they are not the name (a quoted name), else "";
  // empty for a book that was not read from CSV.
  std::vector<std::string> raw_columns;
  std::vector<std::int64_t> lines;  // each row's physical line in the input (empty: not read)
  char delimiter = ',';             // the input's field delimiter; the output's too
  bool byte_order_mark = false;     // the input started with a UTF-8 byte order mark
  std::string sep_line;             // the input's Excel `sep=X` first line, or empty
  std::string line_end = "\n";      // the line break that ended the input's header

  /// Number of options (rows after the header).
  std::size_t size() const;
  /// Text of input field `col` (0-based, header order) of option `row`: the field's bytes exactly
  /// as in the input (a quoted field without its quotes and with doubled quotes made single; an
  /// unquoted one with its blanks). Precondition: row < size(), col < columns.size().
  std::string_view field(std::size_t row, std::size_t col) const;
  /// The bytes of that field as the input wrote them: field() for an unquoted field, a quoted one
  /// with its quotes, doubled quotes and the blanks around the quotes.
  std::string_view input_field(std::size_t row, std::size_t col) const;
  /// "<source>:<line>" of option `row` (its physical line in the input), or "<source>: row N"
  /// (1-based) for a book that was not read from CSV. Precondition: row < size().
  std::string row_location(std::size_t row) const;
  /// Index of the first column whose header name is `name`, matched as the known columns are
  /// (ignoring ASCII case and the blanks around the header name), or nullopt. With field() this
  /// gives the raw bytes of a pass-through column by name, e.g. an `id` column.
  std::optional<std::size_t> column_index(std::string_view name) const;
};

/// The book's terms as the pricers read them (finance/instrument.hpp): pointers into `book`, valid
/// while it lives and is not changed; a parameter given book-wide becomes the view's scalar; the
/// barrier columns (null for a BookColumns::european book), average, exercise and model (null
/// where the book has no such column), the Heston parameters (per option where the column
/// exists, else the scalar 0) and no stream keys (stream is null:
/// rows keyed by row number). The one place that turns a book read from CSV into what is priced.
/// Tested in tests/io/option_book_test.cpp.
finance::OptionBookView instrument_view(const OptionBook& book);

/// A book of quotes (BookColumns::quotes_on_*) as finance::implied_volatility_book inverts it:
/// pointers into `book` as instrument_view's; the underlying is the spot or the forward, as the
/// book was read. InvalidInput for a book read with other columns.
finance::ImpliedVolatilityBookView quote_view(const OptionBook& book);

/// One value of a book of parsed terms (a finance::OptionBookView made from arrays, not read from
/// CSV) that read_option_book would refuse as a CSV field.
struct BookTermProblem {
  std::int64_t row = -1;  // 0-based row; -1 for a book-wide value (a PerOption scalar)
  std::string column;     // the known column's name: "spot", "strike", ...
  std::string what;       // read_option_book's words with the value: "must be > 0, got -1"
};

/// The first value of `view` (host memory; rows in order, each row's columns in the order type,
/// spot, strike, maturity, rate, volatility, dividend, barrier, barrier_type, steps, average,
/// exercise, model, v0, kappa, theta, sigma_v, rho; book-wide values first, a book-wide Heston
/// parameter at the first heston row, as row -1) that breaks a rule read_option_book applies to a
/// CSV book read for `precision` with BookColumns::with_barriers:
/// every number finite; spot > 0; strike, maturity and volatility >= 0; barrier_type a known kind;
/// a barrier row's barrier > 0 (a European row's is not read); steps in [1, 2^20]; average,
/// exercise and model known kinds; an Asian row without barrier and with european exercise; a
/// heston row's v0, theta, sigma_v >= 0, kappa > 0 and rho in [-1, 1]; with
/// Precision::float32 every number within float's range and a spot or barrier that does not round
/// to 0 in float. nullopt when there is none. `what` is worded as the CSV reader's message, the
/// value written as the shortest text that reads back to it ("must be >= 0, got -0.5"), so that
/// terms that arrive parsed (the Python module's arrays and pandas frames) are held to the CSV
/// book's rules in its words. Cost: one pass. Tested in tests/io/option_book_test.cpp.
std::optional<BookTermProblem> find_book_term_problem(
    const finance::OptionBookView& view,
    finance::Precision precision = finance::Precision::float64);

/// find_book_term_problem's twin for a book of quotes (Python's implied_volatility and
/// price_book): the first value of `book` (host memory; rows in order, each row's columns in the
/// order type, price, spot or forward (`columns` says which the underlying is), strike,
/// maturity, rate, dividend; book-wide values first) that breaks a rule read_option_book applies
/// to a CSV book of quotes read with `columns` for `precision` (price, strike and maturity >= 0;
/// spot and forward > 0; every number finite; float's range with Precision::float32). nullopt
/// when there is none; the column and words as find_book_term_problem's. A book-wide dividend
/// other than 0 in a book of forwards is a problem too ("a book of forwards takes no dividend").
std::optional<BookTermProblem> find_quote_term_problem(
    const finance::ImpliedVolatilityBookView& book, BookColumns columns,
    finance::Precision precision = finance::Precision::float64);

/// The header name of `names` that was probably meant for the known column `missing` ("vol" for
/// "volatility", "strke" for "strike", "expiry" for "maturity"): matched ignoring case, blanks and
/// the difference between '_', '-' and ' '; a prefix of at least 3 letters, a common alias, or a
/// name within two typing slips. Names that are known columns themselves are not suggested.
/// nullopt when none is close. read_option_book's "required column is missing" uses it; so does
/// the Python module's DataFrame reader.
std::optional<std::string> nearest_column_name(std::string_view missing,
                                               std::span<const std::string> names);

/// A `type` field as read_option_book reads it (call, put, c or p in any case, blanks around it
/// ignored): true for a put, false for a call, nullopt for anything else.
std::optional<bool> parse_option_type(std::string_view text);

/// A `barrier_type` field as read_option_book reads it (none, down-out, down-in, up-out or up-in
/// in any case, blanks around it ignored; empty is none); nullopt for anything else.
std::optional<finance::BarrierType> parse_barrier_type(std::string_view text);

/// An `average` field as read_option_book reads it (none, arithmetic or geometric in any case,
/// blanks around it ignored; empty is none); nullopt for anything else.
std::optional<finance::AverageType> parse_average_type(std::string_view text);
/// An `exercise` field (european, bermudan or american; empty is european), as above.
std::optional<finance::ExerciseStyle> parse_exercise_style(std::string_view text);
/// A `model` field (black-scholes or heston; empty is black-scholes), as above.
std::optional<finance::AssetModel> parse_asset_model(std::string_view text);

/// Called with the bytes read so far and the options parsed so far.
using ProgressCallback = std::function<void(std::int64_t bytes_read, std::int64_t rows)>;

/// Reads an option book (format above) from `in`.
///
/// Contract:
///   - every error is a gpukit::InvalidInput shaped "<source>:<line>:<col>: <column>: <what>"
///     (line: physical 1-based line, col: 1-based field index, column: header name as given), e.g.
///     `book.csv:7:3: strike: must be >= 0, got "-1"`; errors about a whole row (wrong number of
///     fields) or a missing column omit col (and the column for row errors); an empty input gives
///     "<source>: empty file, expected a header line". Errors of the CSV layer come from CsvReader
///     (InvalidInput "<source>:<line>: ..."; IoError on a failed read); running out of memory
///     throws gpukit::OutOfMemory (bytes: about what the book held, the size of the failed growth);
///   - required: type, spot, strike, maturity; rate and volatility as a column or a default, not
///     both; dividend as a column or a default (not both), else 0; a known column given twice is
///     an error. A book of quotes (quotes_on_*): type, price, spot or forward, strike, maturity;
///     rate as above; volatility is not read (defaults.volatility is ignored); a book of forwards
///     takes no dividend (defaults.dividend given is an error naming --dividend). A missing
///     column's message lists the header found and names the header name probably meant for it
///     (nearest_column_name). Defaults are checked like column values (finite; volatility >= 0;
///     within `precision`'s range);
///   - `precision`: the precision the book will be priced in; with Precision::float32 a number
///     outside float's range, or a spot or barrier that rounds to 0 in float, is an error naming
///     its field (as find_book_term_problem);
///   - the input's byte order mark, `sep=` line, header line end, each row's line and the input
///     bytes of quoted fields are kept in the book for write_priced_book;
///   - every row has as many fields as the header; a header-only input gives an empty book;
///   - a header that shows the file is not what was expected says so instead of naming a missing
///     column: NUL bytes (UTF-16 without a byte order mark: "save it as UTF-8 CSV"), or one column
///     holding ';', a tab, '|' or ',' other than `delimiter` ("use --delimiter ';'");
///   - `progress`, when set, is called every 2^20 rows and once at the end;
///   - cost: one pass, no per-field heap allocation once the first rows have sized the buffers.
/// Tested in tests/io/option_book_test.cpp and fuzzed by fuzz/option_book_fuzz.cpp.
OptionBook read_option_book(std::istream& in, const std::string& source_name,
                            const BookDefaults& defaults, const ProgressCallback& progress = {},
                            BookColumns columns = BookColumns::european, char delimiter = ',',
                            finance::Precision precision = finance::Precision::float64);

/// Extra output column: name + values; as_float formats each value as the shortest text that
/// round-trips a float (the value is first rounded to float), else a double (std::to_chars).
/// Infinities are written as "inf" and "-inf", a NaN as "nan" whatever its sign bit (never
/// "-nan", which some readers do not take).
/// A column of words instead (`iv_status`): `codes` non-empty (then `values` is not read), row
/// r written as words[codes[r]].
struct OutputColumn {
  std::string name;
  std::span<const double> values;
  bool as_float = false;
  bool as_integer = false;  // whole numbers written without exponent or decimals ("1000000")
  std::span<const std::uint8_t> codes = {};
  std::span<const std::string_view> words = {};

  /// Its number of rows: codes' for a column of words, else values'.
  std::size_t size() const { return words.empty() ? values.size() : codes.size(); }
};

/// Writes the book's byte order mark and `sep=` line if it has them, the header (input columns,
/// then extra columns), then each row: input fields as the input wrote them (input_field(); a
/// field of a book not read from CSV is quoted only where CSV requires it), so that
/// read_option_book or CsvReader give back the same text, then the extra values, separated by
/// book.delimiter, each line ended by book.line_end. Locale-independent.
/// An extra column whose name is already an input column's (matched as column_index matches)
/// takes that column's place instead of being appended: the input's header name stays and its
/// values are replaced, so that pricing a priced book again gives the same columns. Every input
/// column of that name is replaced (input_columns_replaced lists them).
/// Throws gpukit::InvalidInput when an extra column's size differs from book.size(), and
/// gpukit::IoError when the stream fails. Output is written in blocks of about 1 MiB.
void write_priced_book(std::ostream& out, const OptionBook& book,
                       std::span<const OutputColumn> extra);

/// A priced value that is no price (find_non_finite_output).
struct OutputProblem {
  std::int64_t row = 0;  // 0-based
  std::string column;    // the output column's name: "price", "delta", ...
  double value = 0;
  /// What is wrong, for a front door to place after the row: "price is infinite in float: the
  /// terms are beyond what float arithmetic can price" (`precision` names the arithmetic).
  std::string what(finance::Precision precision) const;
};

/// The first value of `columns` (rows in order, each row's columns in order) that is not a finite
/// number as it is written: NaN, an infinity, or in an as_float column a magnitude that reads back
/// as inf. Terms that keep the book's rules (find_book_term_problem) can still overflow the
/// arithmetic (a rate of -100 discounts by e^100, beyond a float), and inf or nan is no price:
/// `gpukit bs` and `gpukit mc` refuse such a book (invalid input naming the row, nothing written)
/// and Python's black_scholes, monte_carlo and price_book raise ValueError. Variance reduction
/// factors (columns named vrf_*), infinite by definition when the reduced variance is 0, and
/// columns of words are not checked. Tested in tests/io/option_book_test.cpp and
/// tests/cli/book_cli_test.cpp.
std::optional<OutputProblem> find_non_finite_output(std::span<const OutputColumn> columns);

/// The input header names, in input order, that write_priced_book(book, extra) fills with extra
/// columns' values instead of passing them through (empty when every extra column is appended).
std::vector<std::string> input_columns_replaced(const OptionBook& book,
                                                std::span<const OutputColumn> extra);

}  // namespace gpukit::io
