// gpukit iv: invert a CSV book of option quotes to implied volatilities (Black-Scholes, Black-76
// or Bachelier), each row with its status.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cli_distributed.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/choices.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/implied_volatility_reference.hpp"
#include "gpukit/io/option_book.hpp"
#include "gpukit/scale_out/implied_volatility.hpp"

namespace gpukit::cli {

namespace {

struct IvArgs {
  std::string input, output;
  std::string model = "black-scholes";
  std::string precision = "double";
  std::optional<double> rate, dividend;
  bool check = false;
  char delimiter = ',';
  DeviceOptions device;
};

finance::VolatilityModel model_of(const IvArgs& args) {
  return finance::parse_volatility_model("--model", args.model);
}

finance::Precision precision_of(const IvArgs& args) {
  return finance::parse_precision("--precision", args.precision);
}

// Every status's name (finance::status_name), indexed by the status's value: the words of the
// iv_status column and of the counts on stderr.
constexpr std::size_t kStatusCount =
    static_cast<std::size_t>(finance::ImpliedVolatilityStatus::invalid_input) + 1;

std::array<std::string_view, kStatusCount> status_words() {
  std::array<std::string_view, kStatusCount> words;
  for (std::size_t k = 0; k < kStatusCount; ++k) {
    words[k] = finance::status_name(static_cast<finance::ImpliedVolatilityStatus>(k));
  }
  return words;
}

// "gpukit: iv: 7 rows: 4 ok, 2 below-intrinsic, 1 zero-maturity": every status that some row
// has (ok always).
void print_status_counts(std::span<const finance::ImpliedVolatilityStatus> status) {
  const std::vector<std::int64_t> counts = finance::count_statuses(status);
  const std::array<std::string_view, kStatusCount> words = status_words();
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < counts.size() && k < kStatusCount; ++k) {
    if (counts[k] > 0 || k == 0) parts.push_back(fmt::format("{} {}", counts[k], words[k]));
  }
  fmt::print(stderr, "gpukit: iv: {}: {}\n",
             count_text(static_cast<std::int64_t>(status.size()), "row"), fmt::join(parts, ", "));
}

// "book.csv:7, data row 6": where row `row` (0-based) of the book is.
std::string row_named(const io::OptionBook& book, std::int64_t row) {
  return fmt::format("{}, data row {}", book.row_location(static_cast<std::size_t>(row)), row + 1);
}

/// --check: every row against the independent long double reference
/// (finance::check_implied_volatility_book: each status recomputed, each volatility within the
/// bound the price's conditioning gives); exit 8 naming the worst row otherwise. Runs after the
/// output is written.
void check_volatilities(const Job& job, const IvArgs& args, const io::OptionBook& book,
                        const finance::ImpliedVolatilityBookView& view,
                        const finance::ImpliedVolatilityBookResult& result) {
  const finance::ImpliedVolatilityCheck check = finance::check_implied_volatility_book(
      view, precision_of(args), model_of(args), result.volatility, result.status,
      Context::cpu(args.device.threads).effective_cpu_threads(),
      progress_lines(job, [count = view.count](int percent) {
        return fmt::format("gpukit: iv: checking {}% ({} rows)", percent, count);
      }));
  const std::string worst =
      check.worst_index >= 0 ? fmt::format(" ({})", row_named(book, check.worst_index)) : "";
  const std::string mismatches =
      check.status_mismatches > 0
          ? fmt::format("; {} status{} differ from the reference's, the first at {}",
                        check.status_mismatches, check.status_mismatches > 1 ? "es" : "",
                        row_named(book, check.first_mismatch))
          : "";
  fmt::print(stderr,
             "gpukit: iv: check: {} {} --model {} volatilities against the long double "
             "reference: worst error {:.3g} of its bound{}{}: {}\n",
             job.description, args.precision, args.model, check.worst_ratio, worst, mismatches,
             check.passed ? "ok" : "FAILED");
  if (!check.passed) {
    throw Error(ErrorKind::check_failed,
                fmt::format("iv --check: a volatility is outside its error bound ({} was written)",
                            args.output == "-" ? std::string("stdout") : "'" + args.output + "'"));
  }
}

/// Writes the book with its implied_volatility and iv_status columns (an input that has them,
/// a book inverted before, gets them replaced in place), says how many rows have each status,
/// and with --check checks every row after writing.
void write_and_check(const IvArgs& args, const Job& job, const io::OptionBook& book,
                     const finance::ImpliedVolatilityBookView& view,
                     finance::ImpliedVolatilityBookResult& result) {
  // Test hook: GPUKIT_TEST_FAULT=iv-perturb changes the middle row's volatility, so that the
  // CLI tests can show that --check catches a wrong result. Not for users.
  inject_test_fault<double>("iv-perturb", std::span<double>(result.volatility));
  const std::array<std::string_view, kStatusCount> words = status_words();
  static_assert(sizeof(finance::ImpliedVolatilityStatus) == sizeof(std::uint8_t));
  const std::span<const std::uint8_t> codes(
      reinterpret_cast<const std::uint8_t*>(result.status.data()), result.status.size());
  const std::vector<io::OutputColumn> columns = {
      {"implied_volatility", result.volatility, precision_of(args) == finance::Precision::float32},
      {"iv_status", {}, false, false, codes, words}};
  note_replaced_columns("iv", book, columns);
  write_output_atomically(args.output,
                          [&](std::ostream& out) { io::write_priced_book(out, book, columns); });
  print_status_counts(result.status);
  if (args.check) check_volatilities(job, args, book, view, result);
}

void invert_file(const IvArgs& args, const Job& job) {
  const finance::VolatilityModel model = model_of(args);
  const std::optional<io::OptionBook> book = scale_out::on_root(job, [&] {
    return read_book_with_progress("iv", args.input, {args.rate, std::nullopt, args.dividend},
                                   io::quote_columns(model), args.delimiter, precision_of(args));
  });
  const finance::ImpliedVolatilityBookView view =
      book ? io::quote_view(*book) : finance::ImpliedVolatilityBookView{};
  warn_if_mixed(job, "iv");
  finance::ImpliedVolatilityOptions options;
  options.model = model;
  finance::ImpliedVolatilityBookResult result =
      scale_out::implied_volatility_book(job, view, precision_of(args), options);
  scale_out::on_root(job, [&] { write_and_check(args, job, *book, view, result); });
}

// The help screen's footer: what the book holds and what comes out.
constexpr const char* kIvBookHelp =
    "Input: a CSV book of quotes with a header row; columns in any order, names in any case:\n"
    "  type        call, put, c or p (any case)               required\n"
    "  price       >= 0, the option's present value            required\n"
    "  spot        > 0 (black-scholes)                         required for black-scholes\n"
    "  forward     > 0 (black76, bachelier)                    required for those\n"
    "  strike      >= 0                                        required\n"
    "  maturity    >= 0, in years                              required\n"
    "  rate        continuously compounded                     a column or --rate\n"
    "  dividend    continuous yield (black-scholes only)       a column, --dividend, or 0\n"
    "Any other column (an id, a volatility) is copied through byte for byte; a book written by\n"
    "gpukit bs (its price column) is read as it is.\n"
    "Output: the input columns, then implied_volatility (nan unless the status is ok) and\n"
    "iv_status: ok, below-intrinsic (under the discounted intrinsic value), above-maximum (at or\n"
    "above the discounted forward for a call, strike for a put), zero-maturity. Such quotes are\n"
    "data, not errors: stderr counts the rows of each status. A bad field (not a number, a\n"
    "negative price, strike or maturity) stops the command with file:line:column and writes\n"
    "nothing.";

}  // namespace

void register_iv(CLI::App& app) {
  auto* command = app.add_subcommand(
      "iv",
      "Implied volatilities of a CSV book of option quotes (Black-Scholes, Black-76 or "
      "Bachelier), a status for every row");
  command->footer(kIvBookHelp);
  auto args = std::make_shared<IvArgs>();
  const BookFileOptions files = add_book_file_options(*command, args->input, args->output);
  files.input->required()->description("Book of quotes CSV ('-' for stdin)");
  files.output->required()->description(
      "The book with implied_volatility and iv_status columns ('-' for stdout)");
  command
      ->add_option("--model", args->model,
                   "black-scholes (spot, dividend) | black76 (forward) | bachelier (forward, "
                   "normal volatility)")
      ->check(one_of(finance::volatility_model_names()))
      ->capture_default_str();
  command
      ->add_option("--precision", args->precision,
                   "double | float (float: every number must fit a float)")
      ->check(one_of(finance::precision_names()))
      ->capture_default_str();
  command->add_option("--rate", args->rate, "Risk-free rate for the whole book");
  auto* dividend = command->add_option("--dividend", args->dividend,
                                       "Dividend yield for the whole book (black-scholes only)");
  command->add_flag("--check", args->check,
                    "Check every volatility against an independent long double reference "
                    "(stderr; exit 8 on a mismatch, the output is still written)");
  add_delimiter_option(*command, args->delimiter);
  add_device_options(*command, args->device, DeviceLists::accepted);
  command->callback([args, dividend] {
    if (dividend->count() > 0 && model_of(*args) != finance::VolatilityModel::black_scholes) {
      throw UsageError(fmt::format(
          "iv: --dividend applies to --model black-scholes; a {} book's forward holds the "
          "dividend",
          args->model));
    }
    invert_file(*args, join_job(args->device, "iv"));
  });
}

}  // namespace gpukit::cli
