// gpukit mc: price a CSV option book (European, barrier, Asian, early-exercise, Heston rows) by
// Monte Carlo, or run the demo of the 2008 NVIDIA case study (slides 16-39).

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/monte_carlo_demo.hpp"
#include "cli_common.hpp"
#include "cli_distributed.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/choices.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/io/csv.hpp"
#include "gpukit/io/option_book.hpp"
#include "gpukit/scale_out/monte_carlo.hpp"

namespace gpukit::cli {

namespace {

struct McArgs {
  std::string input, output;
  std::int64_t paths = 1 << 20;
  std::uint64_t seed = 2008;
  std::string monitoring = "discrete";
  std::string sampler = "philox";
  std::int64_t replicates = 16;
  bool antithetic = false, control_variate = false, greeks = false, check = false;
  std::int64_t demo_options = 128;
  std::string demo_text;                  // --demo's N as given; empty for --demo alone
  std::int64_t demo_options_again = 128;  // --demo-options N, the older spelling of --demo N
  std::string precision = "double";
  std::optional<double> rate, volatility, dividend;
  char delimiter = ',';
  DeviceOptions device;
};

finance::MonteCarloOptions options_of(const McArgs& args) {
  return finance::monte_carlo_options(
      {.paths = args.paths,
       .seed = args.seed,
       .monitoring = finance::parse_barrier_monitoring("--monitoring", args.monitoring),
       .antithetic = args.antithetic,
       .control_variate = args.control_variate,
       .greeks = args.greeks,
       .precision = finance::parse_precision("--precision", args.precision),
       .sampler = finance::parse_monte_carlo_sampler("--sampler", args.sampler),
       .replicates = args.replicates});
}

// --check: the independent reference (finance::check_monte_carlo_book: the same estimator on the
// same random numbers, path by path in long double, by code that shares only Philox with the
// pricer) and its derived bound per row, on whichever backend priced the book. The verdict comes
// after the output is written (the pricing was paid for): price_file throws check_failed then.
std::optional<std::string> check_against_reference(const Job& job, const std::string& device,
                                                   int threads,
                                                   const finance::MonteCarloBookView& view,
                                                   const finance::MonteCarloOptions& options,
                                                   const finance::MonteCarloBookResult& result,
                                                   const std::string& precision) {
  const finance::MonteCarloAgreement a = finance::check_monte_carlo_book(
      view, options, result, threads, progress_lines(job, [count = view.count](int percent) {
        return fmt::format("gpukit: mc: checking {}% ({} options)", percent, count);
      }));
  fmt::print(stderr,
             "gpukit: mc: check: {} {} vs an independent long-double reference on the same "
             "random numbers ({} options): max abs price difference {:E} ({:.3E} standard errors, "
             "{:.3f} of the derived bound)\n",
             device, precision, a.rows, a.max_abs_price_difference,
             a.max_price_difference_in_std_errors, a.max_price_difference_over_bound);
  if (a.rows_with_loose_bound > 0) {
    fmt::print(stderr,
               "gpukit: mc: check: {} of {} rows are checked only within a bound above their "
               "standard error (float early exercise: the float regression's coefficients cannot "
               "be bounded tightly; --precision double checks them to the rounding)\n",
               a.rows_with_loose_bound, a.rows);
  }
  if (a.rows_over_bound == 0) return std::nullopt;
  return fmt::format(
      "mc --check: {} of {} rows differ from the independent reference by more than the bound "
      "derived from the precision (price or standard error); the output was written",
      a.rows_over_bound, a.rows);
}

// The progress line of the pricing: a run watched (stderr a terminal) that lasts says how far it
// is (progress_lines: after 2 seconds, then every 5% or 30 seconds; one huge row too).
std::function<void(double)> pricing_progress(const Job& job, std::int64_t options) {
  return progress_lines(job, [options](int percent) {
    return fmt::format("gpukit: mc: pricing {}% ({} options)", percent, options);
  });
}

// The stream keys of a book with an `id` column (its rows' random numbers follow their ids), with
// a note on stderr about ids found on several rows; none (row numbers) without one.
finance::MonteCarloStreamKeys stream_keys_of(const io::OptionBook& book) {
  finance::MonteCarloStreamKeys streams;
  if (const std::optional<std::size_t> id = book.column_index("id")) {
    streams = finance::monte_carlo_stream_keys(
        static_cast<std::int64_t>(book.size()),
        [&](std::int64_t row) { return book.field(static_cast<std::size_t>(row), *id); });
    if (streams.repeated_ids > 0) {
      fmt::print(stderr,
                 "gpukit: mc: {} on more than one row ({} rows); rows with the same id get the "
                 "same random numbers\n",
                 streams.repeated_ids == 1 ? "1 id appears"
                                           : fmt::format("{} ids appear", streams.repeated_ids),
                 streams.rows_with_repeated_ids);
    }
  }
  return streams;
}

// A warning per barrier row breached at the start (priced as knocked at once: usually a typo), up
// to a dozen, then how many more.
void warn_breached_at_start(const io::OptionBook& book, const finance::MonteCarloBookView& view,
                            finance::Precision precision) {
  constexpr std::size_t kNamed = 12;
  const std::vector<std::int64_t> rows =
      finance::monte_carlo_rows_breached_at_start(view, precision);
  for (std::size_t i = 0; i < rows.size() && i < kNamed; ++i) {
    fmt::print(stderr, "gpukit: mc: warning: {}: {}\n",
               book.row_location(static_cast<std::size_t>(rows[i])),
               finance::monte_carlo_breached_at_start_note(view, rows[i]));
  }
  if (rows.size() > kNamed) {
    fmt::print(stderr, "gpukit: mc: warning: {} more rows have a barrier breached at the start\n",
               rows.size() - kNamed);
  }
}

// A warning about the rows none of whose paths paid (price, std_error and ci all 0).
void warn_no_paying_path(const io::OptionBook& book, const finance::MonteCarloBookView& view,
                         const finance::MonteCarloOptions& options,
                         const finance::MonteCarloBookResult& r) {
  const std::vector<std::int64_t> rows =
      finance::monte_carlo_rows_without_paying_path(view, options, r);
  if (rows.empty()) return;
  std::vector<std::string> locations;
  for (std::size_t i = 0; i < rows.size() && i < 5; ++i) {
    locations.push_back(book.row_location(static_cast<std::size_t>(rows[i])));
  }
  fmt::print(stderr, "gpukit: mc: warning: {}\n",
             finance::monte_carlo_no_paying_path_note(
                 locations, static_cast<std::int64_t>(rows.size()), view.count, options));
}

// Writes the priced book, then with --check checks it (the verdict after the output: the pricing
// was paid for).
void write_and_check(const McArgs& args, const Job& job, const io::OptionBook& book,
                     const finance::MonteCarloBookView& view,
                     const finance::MonteCarloOptions& options,
                     const finance::MonteCarloBookResult& r, const std::string& device) {
  const bool as_float = options.precision == finance::Precision::float32;
  std::vector<io::OutputColumn> columns = {{"price", r.price, as_float},
                                           {"std_error", r.std_error, as_float},
                                           {"ci_low", r.ci_low, as_float},
                                           {"ci_high", r.ci_high, as_float},
                                           {"paths", r.paths, false, true}};
  if (args.greeks) {
    columns.push_back({"delta", r.delta, as_float});
    columns.push_back({"gamma", r.gamma, as_float});
    columns.push_back({"vega", r.vega, as_float});
  }
  if (args.antithetic) columns.push_back({"vrf_antithetic", r.vrf_antithetic, false});
  if (args.control_variate) columns.push_back({"vrf_control", r.vrf_control, false});
  refuse_non_finite_results(book, columns, options.precision);
  warn_no_paying_path(book, view, options, r);
  std::optional<std::string> check_failure;
  if (args.check) {
    check_failure =
        check_against_reference(job, device, args.device.threads, view, options, r, args.precision);
  }
  note_replaced_columns("mc", book, columns);
  write_output_atomically(args.output,
                          [&](std::ostream& out) { io::write_priced_book(out, book, columns); });
  if (check_failure) throw Error(ErrorKind::check_failed, *check_failure);
}

// Rank 0 reads the book and keys its rows, one call prices it over the job's devices
// (gpukit/scale_out/monte_carlo.hpp: on one device the pricer itself; across several GPUs or
// ranks, the book's fixed blocks shared out and merged in block order, with the same bits), and
// rank 0 writes and checks it.
void price_file(const McArgs& args, const Job& job) {
  const finance::MonteCarloOptions options = options_of(args);
  std::optional<io::OptionBook> book;  // rank 0's
  finance::MonteCarloStreamKeys streams;
  finance::MonteCarloBookView view{};
  scale_out::on_root(job, [&] {
    book.emplace(
        read_book_with_progress("mc", args.input, {args.rate, args.volatility, args.dividend},
                                io::BookColumns::with_barriers, args.delimiter, options.precision));
    view = io::instrument_view(*book);
    // A trade's random numbers follow its id (the FNV-1a 64 hash of the field's bytes), so its
    // price does not depend on where it sits in which book; without an id column, on the row
    // number.
    streams = stream_keys_of(*book);
    if (!streams.keys.empty()) view.stream = streams.keys.data();
    warn_breached_at_start(*book, view, options.precision);
  });
  warn_if_mixed(job, "mc");
  finance::MonteCarloOptions watched = options;
  watched.progress = pricing_progress(job, view.count);
  const finance::MonteCarloBookResult r = scale_out::price_monte_carlo_book(job, view, watched);
  scale_out::on_root(job,
                     [&] { write_and_check(args, job, *book, view, options, r, job.description); });
}

void run_demo(const McArgs& args, const Context& context, bool paths_given) {
  // The case study's 200M paths on a GPU; a CPU gets 2^18 unless told otherwise.
  const std::int64_t paths =
      paths_given ? args.paths : (context.backend == Backend::cuda ? 200'000'000 : 1 << 18);
  const finance::Precision precision = finance::parse_precision("--precision", args.precision);
  const bench::MonteCarloDemo demo =
      bench::run_monte_carlo_demo(context, args.demo_options, paths, precision, args.seed);
  fmt::print("MonteCarlo simulation for European call options ({} paths each, {} options, {})\n",
             demo.paths, demo.options, args.precision);
  fmt::print("Device: {}\n", demo.device);
  fmt::print("Pricing time {:.3f} ms ({:.3f} G paths/s, host to host)\n\n", demo.seconds * 1e3,
             demo.paths_per_second() * 1e-9);
  for (std::size_t i = 0; i < demo.mc.size() && i < 8; ++i) {
    fmt::print("MC: {:.6f}; BS: {:.6f}\nAbs: {:e}; Rel: {:e}; std_error: {:e}\n\n", demo.mc[i],
               demo.black_scholes[i], demo.abs_difference[i], demo.rel_difference[i],
               demo.std_error[i]);
  }
  fmt::print(
      "All {} options: max Abs {:e}, max Rel {:e}, max |MC - BS| / std_error {:.2f}; {} of {} "
      "({:.1f}%) inside the 95% interval\n",
      demo.options, demo.max_abs_difference, demo.max_rel_difference,
      demo.max_difference_in_std_errors, demo.inside_95_interval, demo.options,
      demo.percent_inside_95_interval());
}

// The help screen's footer: what the book holds and what comes out.
constexpr const char* kMcBookHelp =
    "Input: a CSV book with a header row; columns in any order, names in any case:\n"
    "  type          call, put, c or p (any case)             required\n"
    "  spot          > 0                                       required\n"
    "  strike        >= 0                                      required\n"
    "  maturity      >= 0, in years                            required\n"
    "  rate          continuously compounded                   a column or --rate\n"
    "  volatility    >= 0, annualized                          a column or --volatility\n"
    "  dividend      continuous yield                          a column, --dividend, or 0\n"
    "  barrier       > 0; needed where barrier_type is not none\n"
    "  barrier_type  none, down-out, down-in, up-out or up-in (any case; empty = none)\n"
    "  steps         monitoring dates, fixings or time steps, 1 to 1048576; empty = 1 for a\n"
    "                European row; required on barrier, Asian, bermudan, american and\n"
    "                heston rows\n"
    "  average       none, arithmetic or geometric (any case; empty = none): an Asian option on\n"
    "                the steps fixings t_i = i T/steps; no barrier, european exercise\n"
    "  exercise      european, bermudan or american (any case; empty = european)\n"
    "  model         black-scholes or heston (any case; empty = black-scholes)\n"
    "  v0, theta, sigma_v  >= 0; kappa > 0; rho in [-1, 1]: Heston's initial and long-run\n"
    "                variance, volatility of variance, mean reversion and correlation; required\n"
    "                on heston rows (whose volatility is ignored)\n"
    "  id            optional: keys the trade's random numbers (FNV-1a of its bytes), so a\n"
    "                trade keeps its price in any book; without it, the row number does\n"
    "barrier and barrier_type come together. Any other column is copied through byte for byte\n"
    "(the input's byte order mark, sep= line and line ends too).\n"
    "Output: the input columns, then price, std_error, ci_low, ci_high (95%), paths (and delta,\n"
    "gamma, vega with --greeks: pathwise on European and Asian rows, gamma the difference of\n"
    "pathwise deltas at spot +-1%; central differences of prices on barrier, American and\n"
    "--sampler sobol rows; a heston row's vega is dP/d sqrt(v0); vrf_antithetic, vrf_control\n"
    "with the variance reductions). A bad row stops the command with file:line:column and\n"
    "writes nothing. A row none of whose paths paid (stderr counts them) has price, std_error\n"
    "and ci 0: no confidence interval, only that a path pays with a probability below 3/paths.\n"
    "A barrier breached at the start is a warning.";

}  // namespace

void register_mc(CLI::App& app) {
  auto* command = app.add_subcommand(
      "mc",
      "Price European and barrier options by Monte Carlo: a CSV book, or --demo (the 2008 NVIDIA "
      "case study, slides 16-39)");
  command->footer(kMcBookHelp);
  auto args = std::make_shared<McArgs>();
  auto [input, output] = add_book_file_options(*command, args->input, args->output);
  auto* demo =
      command
          ->add_option("--demo", args->demo_text,
                       "The 2008 NVIDIA case study's demo (slides 16-39): N European calls "
                       "(default 128) by Monte Carlo beside Black-Scholes")
          ->expected(0, 1)
          ->type_name("N")
          // --demo alone gives "" (so that --demo-options N can tell it from --demo 128).
          ->transform(CLI::Validator(
              [count = integer_in(1, std::numeric_limits<std::int32_t>::max())](
                  std::string& value) { return value.empty() ? std::string() : count(value); },
              "", "integer"));
  input->excludes(demo);
  output->excludes(demo);
  auto* paths = command
                    ->add_option("--paths", args->paths,
                                 "Paths per option, 2 to 2^34; memory does not grow with it (the "
                                 "--demo default: 200000000 on a GPU, 262144 on the CPU)")
                    ->transform(integer_in(2, finance::kMonteCarloMaxPaths))
                    ->capture_default_str();
  command->add_option("--seed", args->seed, "Random seed (Philox key)")
      ->transform(any_uint64())
      ->capture_default_str();
  command->add_option("--monitoring", args->monitoring, "discrete | continuous (barrier rows)")
      ->check(one_of(finance::barrier_monitoring_names()))
      ->capture_default_str();
  command
      ->add_option("--sampler", args->sampler,
                   "philox | sobol (scrambled Sobol points and a Brownian bridge, priced as the "
                   "mean of --replicates independent scramblings)")
      ->check(one_of(finance::monte_carlo_sampler_names()))
      ->capture_default_str();
  command
      ->add_option("--replicates", args->replicates,
                   "Independent scramblings with --sampler sobol, 2 to 65536; --paths is their "
                   "total and a multiple of them (std_error: their spread / sqrt(replicates))")
      ->transform(integer_in(2, finance::kMonteCarloMaxReplicates))
      ->capture_default_str();
  command->add_flag("--antithetic", args->antithetic,
                    "Antithetic variates (adds vrf_antithetic; paths must be even)");
  command->add_flag("--control-variate", args->control_variate,
                    "The discounted terminal price as control variate (the geometric Asian on "
                    "arithmetic Asian rows; adds vrf_control)");
  command->add_flag("--greeks", args->greeks,
                    "Add delta, gamma and vega (pathwise or bump and reprice, CRN)");
  command->add_flag("--check", args->check,
                    "Compare with an independent long-double reference on the same random "
                    "numbers, within a bound derived from the precision (stderr; exit 8 after "
                    "writing the output if a row is outside it)");
  command
      ->add_option("--precision", args->precision,
                   "double | float (float: every number must fit a float)")
      ->check(one_of(finance::precision_names()))
      ->capture_default_str();
  auto* demo_options =
      command
          ->add_option("--demo-options", args->demo_options_again,
                       "The same as --demo N (the older spelling; with --demo N, the same N)")
          ->transform(integer_in(1, std::numeric_limits<std::int32_t>::max()));
  input->excludes(demo_options);
  output->excludes(demo_options);
  command->add_option("--rate", args->rate, "Risk-free rate for the whole book");
  command->add_option("--volatility", args->volatility, "Volatility for the whole book");
  command->add_option("--dividend", args->dividend, "Dividend yield for the whole book");
  add_delimiter_option(*command, args->delimiter);
  add_device_options(*command, args->device, DeviceLists::accepted);
  command->callback([args, input, demo, demo_options, paths] {
    if (input->count() == 0 && demo->count() == 0 && demo_options->count() == 0)
      throw UsageError("mc: give --input FILE --output FILE, or --demo [N]");
    const std::optional<std::int64_t> demo_number =
        args->demo_text.empty() ? std::nullopt : std::optional(std::stoll(args->demo_text));
    if (demo_options->count() > 0) {
      // One number of demo options: --demo-options N alone is --demo N.
      if (demo_number && *demo_number != args->demo_options_again) {
        throw UsageError(fmt::format(
            "mc: --demo {} and --demo-options {} give two numbers of demo options; give one "
            "(--demo N)",
            *demo_number, args->demo_options_again));
      }
      args->demo_options = args->demo_options_again;
    } else if (demo_number) {
      args->demo_options = *demo_number;
    }
    if (demo->count() > 0 || demo_options->count() > 0) {
      refuse_device_list_and_ranks("mc --demo", args->device);
      run_demo(*args, resolve_context(args->device), paths->count() > 0);
      return;
    }
    price_file(*args, join_job(args->device, "mc"));
  });
}

}  // namespace gpukit::cli
