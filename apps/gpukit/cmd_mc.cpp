// gpukit mc: price a CSV option book (European and barrier rows) by Monte Carlo, or run the
// demo of the 2008 NVIDIA case study (slides 16-39).

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cli_dist.hpp"
#include "gpukit/bench/monte_carlo_demo.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/dist/workers.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"
#include "gpukit/finance/option_book_bytes.hpp"
#include "gpukit/io/csv.hpp"
#include "gpukit/io/option_book.hpp"

namespace gpukit::cli {

namespace {

struct McArgs {
  std::string input, output;
  std::int64_t paths = 1 << 20;
  std::uint64_t seed = 2008;
  std::string monitoring = "discrete";
  bool antithetic = false, control_variate = false, greeks = false, check = false;
  std::int64_t demo_options = 128;
  std::string precision = "double";
  std::optional<double> rate, volatility, dividend;
  char delimiter = ',';
  DeviceOptions device;
};

finance::MonteCarloOptions options_of(const McArgs& args) {
  finance::MonteCarloOptions options;
  options.paths = args.paths;
  options.seed = args.seed;
  options.monitoring = args.monitoring == "continuous" ? finance::BarrierMonitoring::continuous
                                                       : finance::BarrierMonitoring::discrete;
  options.antithetic = args.antithetic;
  options.control_variate = args.control_variate;
  options.greeks = args.greeks;
  options.variance_reduction_factors = args.antithetic || args.control_variate;
  options.precision =
      args.precision == "float" ? finance::Precision::float32 : finance::Precision::float64;
  return options;
}

// --check: the independent reference (finance::check_monte_carlo_book: the same estimator on the
// same random numbers, path by path in long double, by code that shares only Philox with the
// pricer) and its derived bound per row, on whichever backend priced the book. The verdict comes
// after the output is written (the pricing was paid for): price_file throws check_failed then.
std::optional<std::string> check_against_reference(const std::string& device, int threads,
                                                   const finance::MonteCarloBookView& view,
                                                   const finance::MonteCarloOptions& options,
                                                   const finance::MonteCarloBookResult& result,
                                                   const std::string& precision) {
  const finance::MonteCarloAgreement a =
      finance::check_monte_carlo_book(view, options, result, threads);
  fmt::print(stderr,
             "gpukit: mc: check: {} {} vs an independent long-double reference on the same "
             "random numbers ({} options): max abs price difference {:E} ({:.3E} standard errors, "
             "{:.3f} of the derived bound)\n",
             device, precision, a.rows, a.max_abs_price_difference,
             a.max_price_difference_in_std_errors, a.max_price_difference_over_bound);
  if (a.rows_over_bound == 0) return std::nullopt;
  return fmt::format(
      "mc --check: {} of {} rows differ from the independent reference by more than the bound "
      "derived from the precision (price or standard error); the output was written",
      a.rows_over_bound, a.rows);
}

// A long run, watched (stderr is a terminal), reports its progress (a line per 5%, one huge row
// too) through MonteCarloOptions::progress.
finance::MonteCarloBookResult price_with_progress(const Context& context,
                                                  const finance::MonteCarloBookView& view,
                                                  finance::MonteCarloOptions options) {
  if (::isatty(2) == 0 || quiet() || finance::monte_carlo_path_steps(view, options) < 0x1p33) {
    return finance::price_monte_carlo_book(context, view, options);
  }
  int reported = 0;
  options.progress = [&reported, &view](double fraction) {
    const int percent = static_cast<int>(fraction * 100);
    if (percent < reported + 5 && percent < 100) return;
    reported = percent;
    fmt::print(stderr, "gpukit: mc: pricing {}% ({} options)\n", percent, view.count);
  };
  return finance::price_monte_carlo_book(context, view, options);
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

// Writes the priced book, then with --check checks it (the verdict after the output: the pricing
// was paid for).
void write_and_check(const McArgs& args, const io::OptionBook& book,
                     const finance::MonteCarloBookView& view,
                     const finance::MonteCarloOptions& options,
                     const finance::MonteCarloBookResult& r, const std::string& device) {
  std::optional<std::string> check_failure;
  if (args.check)
    check_failure =
        check_against_reference(device, args.device.threads, view, options, r, args.precision);

  const bool as_float = options.precision == finance::Precision::float32;
  std::vector<io::OutputColumn> columns = {{"price", r.price, as_float},
                                           {"std_error", r.std_error, as_float},
                                           {"ci_low", r.ci_low, as_float},
                                           {"ci_high", r.ci_high, as_float},
                                           {"paths", r.paths, false, true}};
  if (args.greeks) {
    columns.push_back({"delta", r.delta, as_float});
    columns.push_back({"vega", r.vega, as_float});
  }
  if (args.antithetic) columns.push_back({"vrf_antithetic", r.vrf_antithetic, false});
  if (args.control_variate) columns.push_back({"vrf_control", r.vrf_control, false});
  note_replaced_columns("mc", book, columns);
  write_output_atomically(args.output,
                          [&](std::ostream& out) { io::write_priced_book(out, book, columns); });
  if (check_failure) throw Error(ErrorKind::check_failed, *check_failure);
}

void price_file(const McArgs& args, const Context& context) {
  const io::OptionBook book =
      read_book_with_progress("mc", args.input, {args.rate, args.volatility, args.dividend},
                              io::BookColumns::with_barriers, args.delimiter);
  finance::MonteCarloBookView view = io::instrument_view(book);
  // A trade's random numbers follow its id (the FNV-1a 64 hash of the field's bytes), so its price
  // does not depend on where it sits in which book; without an id column, on the row number.
  const finance::MonteCarloStreamKeys streams = stream_keys_of(book);
  if (!streams.keys.empty()) view.stream = streams.keys.data();
  const finance::MonteCarloOptions options = options_of(args);
  const finance::MonteCarloBookResult r = price_with_progress(context, view, options);
  write_and_check(args, book, view, options, r, context.describe());
}

// The book across every worker of the job (several GPUs, several ranks): rank 0 reads it and
// keys its rows, every rank receives its terms, each worker prices its share of the fixed blocks
// (finance/monte_carlo_blocks.hpp), and rank 0 merges the blocks' moments in block order, which
// gives the bits of the book priced on one device (of the job's backend), then checks and writes.
void price_file_across(const McArgs& args, const Job& job) {
  dist::Communicator& comm = *job.comm;
  const finance::MonteCarloOptions options = options_of(args);
  std::optional<io::OptionBook> book;  // rank 0's
  std::vector<std::byte> packed = dist::agree(comm, [&] {
    if (!comm.is_root()) return std::vector<std::byte>{};
    book.emplace(read_book_with_progress("mc", args.input,
                                         {args.rate, args.volatility, args.dividend},
                                         io::BookColumns::with_barriers, args.delimiter));
    finance::MonteCarloBookView view = io::instrument_view(*book);
    const finance::MonteCarloStreamKeys streams = stream_keys_of(*book);
    if (!streams.keys.empty()) view.stream = streams.keys.data();
    return finance::pack_option_book(view, 0, view.count);
  });
  comm.broadcast(packed);
  std::unique_ptr<finance::PackedOptionBook> terms;
  const finance::MonteCarloBlocks blocks = dist::agree(comm, [&] {
    terms = std::make_unique<finance::PackedOptionBook>(packed);
    return finance::monte_carlo_blocks(terms->view(), options);
  });
  std::vector<std::byte>().swap(packed);
  const finance::MonteCarloBookView& view = terms->view();
  warn_if_mixed(job, "mc");
  inject_lone_failure(job);
  const dist::WorkPlan plan =
      dist::plan_work(comm, static_cast<int>(job.workers.contexts.size()), blocks.weight);
  const std::vector<finance::MonteCarloBlockMoments> moments =
      dist::compute_blocks<finance::MonteCarloBlockMoments>(
          comm, job.workers.contexts, plan, finance::monte_carlo_scenarios(options),
          [&](const Context& context, dist::BlockRange range, const dist::ReportProgress& report) {
            inject_rank_fault(job);
            finance::MonteCarloOptions mine = options;
            mine.progress = report;
            return finance::price_monte_carlo_blocks(context, view, mine, range.first, range.count);
          },
          progress_lines(
              job,
              [count = view.count](int percent) {
                return fmt::format("gpukit: mc: pricing {}% ({} options)", percent, count);
              },
              finance::monte_carlo_path_steps(view, options) >= 0x1p33));
  dist::agree(comm, [&] {
    if (!comm.is_root()) return;
    const finance::MonteCarloBookResult r =
        finance::monte_carlo_result_from_blocks(view, options, moments, job.arithmetic());
    write_and_check(args, *book, view, options, r, job.description);
  });
}

void run_demo(const McArgs& args, const Context& context, bool paths_given) {
  // The case study's 200M paths on a GPU; a CPU gets 2^18 unless told otherwise.
  const std::int64_t paths =
      paths_given ? args.paths : (context.backend == Backend::cuda ? 200'000'000 : 1 << 18);
  const finance::Precision precision =
      args.precision == "float" ? finance::Precision::float32 : finance::Precision::float64;
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
    "  steps         monitoring dates, 1 to 1048576; empty = 1 for a European row\n"
    "barrier and barrier_type come together. Any other column is copied through unchanged.\n"
    "Output: the input columns, then price, std_error, ci_low, ci_high (95%), paths (and delta,\n"
    "vega with --greeks; vrf_antithetic, vrf_control with the variance reductions). A bad row\n"
    "stops the command with file:line:column and writes nothing.";

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
          ->add_option("--demo", args->demo_options,
                       "The 2008 NVIDIA case study's demo (slides 16-39): N European calls "
                       "(default 128) by Monte Carlo beside Black-Scholes")
          ->expected(0, 1)
          ->default_str("128")
          ->transform(integer_in(1, std::numeric_limits<std::int32_t>::max()));
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
      ->check(CLI::IsMember({"discrete", "continuous"}))
      ->capture_default_str();
  command->add_flag("--antithetic", args->antithetic,
                    "Antithetic variates (adds vrf_antithetic; paths must be even)");
  command->add_flag("--control-variate", args->control_variate,
                    "The discounted terminal price as control variate (adds vrf_control)");
  command->add_flag("--greeks", args->greeks, "Add delta and vega (bump and reprice, CRN)");
  command->add_flag("--check", args->check,
                    "Compare with an independent long-double reference on the same random "
                    "numbers, within a bound derived from the precision (stderr; exit 8 after "
                    "writing the output if a row is outside it)");
  command->add_option("--precision", args->precision, "double | float")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  command->add_option("--demo-options", args->demo_options, "Options in the --demo book (--demo N)")
      ->transform(integer_in(1, std::numeric_limits<std::int32_t>::max()))
      ->capture_default_str();
  command->add_option("--rate", args->rate, "Risk-free rate for the whole book");
  command->add_option("--volatility", args->volatility, "Volatility for the whole book");
  command->add_option("--dividend", args->dividend, "Dividend yield for the whole book");
  add_delimiter_option(*command, args->delimiter);
  add_device_options(*command, args->device, DeviceLists::accepted);
  command->callback([args, input, demo, paths] {
    if (input->count() == 0 && demo->count() == 0)
      throw UsageError("mc: give --input FILE --output FILE, or --demo [N]");
    if (demo->count() > 0) {
      refuse_device_list_and_ranks("mc --demo", args->device);
      run_demo(*args, resolve_context(args->device), paths->count() > 0);
      return;
    }
    const Job job = join_job(args->device, "mc");
    if (job.spread) {
      price_file_across(*args, job);
    } else {
      price_file(*args, job.workers.contexts.front());
    }
  });
}

}  // namespace gpukit::cli
