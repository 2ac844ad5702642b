// gpukit bs: price a CSV option book with Black-Scholes, or run the demo of the 2008 NVIDIA case
// study (slides 3-15).

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include <cstdlib>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "bench/black_scholes_seed_demo.hpp"
#include "cli_common.hpp"
#include "cli_distributed.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"
#include "gpukit/finance/choices.hpp"
#include "gpukit/finance/european_book.hpp"
#include "gpukit/io/csv.hpp"
#include "gpukit/io/option_book.hpp"
#include "gpukit/io/option_book_from_view.hpp"
#include "gpukit/scale_out/black_scholes.hpp"

namespace gpukit::cli {

namespace {

struct BsArgs {
  std::string input, output;
  bool greeks = false;
  bool check = false;
  std::string precision = "double";
  std::string cdf = "erfc";
  std::string variant;
  std::optional<double> rate, volatility, dividend;
  std::int64_t generate = -1;
  std::int64_t demo = 1000000;
  std::uint64_t seed = 2008;
  char delimiter = ',';
  DeviceOptions device;
};

/// Test hook: GPUKIT_TEST_FAULT=bs-zero-puts sets every put price to 0 after pricing, so that the
/// CLI tests can show that --check catches a wrong result on every backend. Not for users.
void inject_test_fault(const finance::OptionBookView& view, std::vector<double>& price) {
  const char* fault = std::getenv("GPUKIT_TEST_FAULT");
  if (fault == nullptr || std::string_view(fault) != "bs-zero-puts") return;
  for (std::size_t i = 0; i < price.size(); ++i)
    if (view.is_put[i]) price[i] = 0;
}

/// --check: every price against the long double reference (erfc on long double), which shares
/// no code with any backend, within its own bound for the precision and CDF; exit 8 otherwise.
/// Runs after the output is written.
void check_prices(const Job& job, const std::string& device, const BsArgs& args,
                  const finance::OptionBookView& view, finance::Precision precision,
                  finance::NormalCdf cdf, std::span<const double> price) {
  const finance::BlackScholesCheck check = finance::check_european_book_prices(
      view, precision, cdf, price, Context::cpu(args.device.threads).effective_cpu_threads(),
      progress_lines(job, [count = view.count](int percent) {
        return fmt::format("gpukit: bs: checking {}% ({} options)", percent, count);
      }));
  fmt::print(stderr,
             "gpukit: bs: check: {} {} --cdf {} prices against the long double reference: L1 norm "
             "{:E}, max "
             "abs error {:E}, worst error {:.3g} of its bound{}: {}\n",
             device, args.precision, args.cdf, check.metrics.relative_l1, check.metrics.max_abs,
             check.worst_ratio,
             check.worst_index >= 0 ? fmt::format(" (data row {})", check.worst_index + 1) : "",
             check.passed ? "ok" : "FAILED");
  if (!check.passed) {
    throw Error(ErrorKind::check_failed,
                fmt::format("bs --check: a price is outside its error bound ({} was written)",
                            args.output == "-" ? std::string("stdout") : "'" + args.output + "'"));
  }
}

finance::BlackScholesOptions pricing_options(const BsArgs& args) {
  finance::BlackScholesOptions options;
  options.cdf = finance::parse_normal_cdf("--cdf", args.cdf);
  options.variant = args.variant;
  return options;
}

finance::Precision precision_of(const BsArgs& args) {
  return finance::parse_precision("--precision", args.precision);
}

/// Writes `book` with its price (and Greek) columns, and with --check checks every price after
/// writing: a failed check keeps the priced book (the user paid for it) and exits 8 after saying
/// so.
void write_and_check(const BsArgs& args, const Job& job, const std::string& device,
                     const io::OptionBook& book, const finance::OptionBookView& view,
                     finance::EuropeanBookResult& result) {
  const finance::Precision precision = precision_of(args);
  inject_test_fault(view, result.price);
  const bool as_float = precision == finance::Precision::float32;
  std::vector<io::OutputColumn> columns = {{"price", result.price, as_float}};
  if (args.greeks) {
    columns.push_back({"delta", result.delta, as_float});
    columns.push_back({"gamma", result.gamma, as_float});
    columns.push_back({"vega", result.vega, as_float});
    columns.push_back({"theta", result.theta, as_float});
    columns.push_back({"rho", result.rho, as_float});
  }
  refuse_non_finite_results(book, columns, precision);
  note_replaced_columns("bs", book, columns);
  write_output_atomically(args.output,
                          [&](std::ostream& out) { io::write_priced_book(out, book, columns); });
  if (args.check) {
    check_prices(job, device, args, view, precision, finance::parse_normal_cdf("--cdf", args.cdf),
                 result.price);
  }
}

/// Prices the book `load` makes on rank 0, writes it and checks it: one call of the pricer over
/// the job's devices (gpukit/scale_out/black_scholes.hpp: on one device the pricer itself; across
/// several GPUs or ranks, each row priced where the split puts it, with the same bits), rank 0
/// reading and writing.
void price_write_and_check(const BsArgs& args, const Job& job,
                           const std::function<io::OptionBook()>& load) {
  const std::optional<io::OptionBook> book = scale_out::on_root(job, load);
  const finance::OptionBookView view =
      book ? io::instrument_view(*book) : finance::OptionBookView{};
  warn_if_mixed(job, "bs");
  finance::EuropeanBookResult result = scale_out::price_black_scholes_book(
      job, view, precision_of(args), args.greeks, pricing_options(args));
  scale_out::on_root(job,
                     [&] { write_and_check(args, job, job.description, *book, view, result); });
}

void price_file(const BsArgs& args, const Job& job) {
  price_write_and_check(args, job, [&args] {
    return read_book_with_progress("bs", args.input, {args.rate, args.volatility, args.dividend},
                                   io::BookColumns::european, args.delimiter, precision_of(args));
  });
}

// The case study's random book (its ranges, calls and puts alternating) as a CSV book, then
// priced, written and checked as a book read from a file is.
void generate(const BsArgs& args, const Job& job) {
  price_write_and_check(args, job, [&args] {
    const bench::GeneratedBook g = bench::generate_seed_book(args.generate, args.seed);
    const finance::OptionBookView view{static_cast<std::int64_t>(g.is_put.size()),
                                       g.is_put.data(),
                                       g.spot.data(),
                                       g.strike.data(),
                                       g.maturity.data(),
                                       {nullptr, args.rate.value_or(g.rate)},
                                       {nullptr, args.volatility.value_or(g.volatility)},
                                       {nullptr, args.dividend.value_or(0.0)}};
    // --rate, --volatility and --dividend under the CSV book's rules (--rate 1e39 with --precision
    // float would price to infinities).
    if (const std::optional<io::BookTermProblem> problem =
            io::find_book_term_problem(view, precision_of(args))) {
      throw InvalidInput(fmt::format("bs --generate: --{}: {}", problem->column, problem->what));
    }
    return io::option_book_from_view(view, "the generated book");
  });
}

// The help screen's footer: what the book holds and what comes out.
constexpr const char* kBsBookHelp =
    "Input: a CSV book with a header row; columns in any order, names in any case:\n"
    "  type        call, put, c or p (any case)               required\n"
    "  spot        > 0                                         required\n"
    "  strike      >= 0                                        required\n"
    "  maturity    >= 0, in years                              required\n"
    "  rate        continuously compounded                     a column or --rate\n"
    "  volatility  >= 0, annualized                            a column or --volatility\n"
    "  dividend    continuous yield                            a column, --dividend, or 0\n"
    "Any other column (an id, say) is copied through byte for byte (the input's byte order\n"
    "mark, sep= line and line ends too).\n"
    "Output: the input columns, then price (and delta, gamma, vega, theta (per year), rho with\n"
    "--greeks). A bad row stops the command with file:line:column and writes nothing.";

}  // namespace

void register_bs(CLI::App& app) {
  auto* command = app.add_subcommand(
      "bs",
      "Price European options with Black-Scholes: a CSV book, or --demo (the 2008 NVIDIA case "
      "study, slides 3-15)");
  command->footer(kBsBookHelp);
  auto args = std::make_shared<BsArgs>();
  auto [input, output] = add_book_file_options(*command, args->input, args->output);
  auto* demo =
      command
          ->add_option(
              "--demo", args->demo,
              "The 2008 NVIDIA case study's demo (slides 3-15): N random options "
              "(default 1000000) priced in float and checked against a long double reference")
          ->expected(0, 1)
          ->default_str("1000000")
          ->transform(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  auto* gen = command
                  ->add_option("--generate", args->generate,
                               "Write a random book of N options (the case study's ranges) to "
                               "--output, priced (without --output: the same as --demo N)")
                  ->transform(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  input->excludes(gen);
  input->excludes(demo);
  gen->excludes(demo);
  output->excludes(demo);
  command->add_option("--seed", args->seed, "Random seed for --demo and --generate")
      ->transform(any_uint64())
      ->capture_default_str();
  command->add_flag("--greeks", args->greeks, "Add delta, gamma, vega, theta, rho columns");
  command->add_flag("--check", args->check,
                    "Check every price against an independent long double reference (stderr; exit "
                    "8 on a mismatch, the output is still written)");
  command
      ->add_option("--precision", args->precision,
                   "double | float (float: every number must fit a float)")
      ->check(one_of(finance::precision_names()))
      ->capture_default_str();
  command
      ->add_option("--cdf", args->cdf,
                   "erfc (accurate) | hull (the polynomial of the 2008 case study) | hull-fast "
                   "(the same with fast float intrinsics, as in the CUDA SDK sample)")
      ->check(one_of(finance::normal_cdf_names()))
      ->capture_default_str();
  command
      ->add_option(
          "--variant", args->variant,
          "CUDA kernel variant (default: the fastest; `gpukit bench black_scholes` lists them)")
      ->check(
          accepted_by([](std::string_view name) { finance::find_black_scholes_variant(name); }));
  command->add_option("--rate", args->rate, "Risk-free rate for the whole book");
  command->add_option("--volatility", args->volatility, "Volatility for the whole book");
  command->add_option("--dividend", args->dividend, "Dividend yield for the whole book");
  add_delimiter_option(*command, args->delimiter);
  add_device_options(*command, args->device, DeviceLists::accepted);
  command->callback([args, input, gen, demo] {
    if (input->count() == 0 && gen->count() == 0 && demo->count() == 0)
      throw UsageError("bs: give --input FILE --output FILE, --demo [N] or --generate N");
    const bool demo_run = demo->count() > 0 || (gen->count() > 0 && args->output.empty());
    if (demo_run) {
      refuse_device_list_and_ranks(
          demo->count() > 0 ? "bs --demo" : "bs --generate without --output", args->device);
      const Context context = resolve_context(args->device);
      const std::int64_t n = demo->count() > 0 ? args->demo : args->generate;
      if (!print_black_scholes_demo(bench::run_black_scholes_seed_demo(context, n, args->seed))) {
        throw Error(ErrorKind::check_failed,
                    demo->count() > 0
                        ? "bs --demo: results differ from the CPU reference"
                        : "bs: the demo's check failed (a price outside its error bound)");
      }
      return;
    }
    const Job job = join_job(args->device, "bs");
    if (gen->count() > 0) {
      generate(*args, job);
    } else {
      price_file(*args, job);
    }
  });
}

}  // namespace gpukit::cli
