// gpukit poisson: solves (lap - lambda) u = f with periodic, dirichlet or neumann boundaries per
// axis (spectral or fd2 operator) for a 2D or 3D .npy grid f, written as a .npy grid u of the
// same dtype and shape; `--demo [N]` runs the MATLAB test of the 2008
// NVIDIA case study (slide 43). On a device list (--device cuda:all) or under mpirun the grid is
// spread over the GPUs and ranks by one library call (gpukit/scale_out/poisson.hpp).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bench/poisson_demo.hpp"
#include "cli_common.hpp"
#include "cli_distributed.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/scale_out/poisson.hpp"

namespace gpukit::cli {

namespace {

struct PoissonOptionsCli {
  DeviceOptions device;
  std::string input, output, lengths, gauge = "mean", precision, variant;
  std::string boundary, op = "spectral";
  double helmholtz = 0;
  bool strict = false, check = false;
  int demo = 0;
};

// --length's list; a malformed one is a usage error, found while parsing (before any input is
// read). The messages follow CLI11's "--length: " prefix.
std::vector<double> parse_length_list(const std::string& text) {
  std::vector<double> lengths;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    double value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size())
      throw UsageError(fmt::format("'{}' is not a number", item));
    if (!std::isfinite(value) || !(value > 0))
      throw UsageError(fmt::format("{} must be finite and > 0", item));
    lengths.push_back(value);
  }
  if (!text.empty() && text.back() == ',') throw UsageError("a trailing comma");
  return lengths;
}

// The periods of an array of `rank` axes: pde::axis_lengths's rule (one value for every axis, or
// one per axis), a usage error otherwise.
std::vector<double> parse_lengths(const std::string& text, int rank) {
  try {
    return pde::axis_lengths("--length", parse_length_list(text), rank);
  } catch (const InvalidInput& e) {
    throw UsageError(e.what());
  }
}

// The boundaries of an array of `rank` axes: pde::axis_boundaries's rule (one name for every axis,
// or one per axis), a usage error otherwise.
std::vector<pde::Boundary> parse_boundaries(const std::string& text, int rank) {
  try {
    return pde::axis_boundaries("--boundary", text, rank);
  } catch (const InvalidInput& e) {
    throw UsageError(e.what());
  }
}

// The command-line values of the problem, judged by the library's rules before any input is read
// (usage errors, exit 2): the boundary names (their count waits for the array's axes), the
// operator, lambda.
void check_problem_options(const PoissonOptionsCli& cli) {
  try {
    (void)pde::axis_boundaries("--boundary", cli.boundary, 0);
    (void)pde::parse_operator(cli.op, "--operator");
    (void)pde::helmholtz_lambda("--helmholtz", cli.helmholtz);
  } catch (const InvalidInput& e) {
    throw UsageError(e.what());
  }
}

// --check: an independent reference (the same problem solved in long double with FFTW's
// long-double transforms, no code shared with the CPU or GPU solvers), every element within
// pde::poisson_agreement_bound. Runs after the output is written: a failed check keeps it.
template <class Real>
void check_solution(const Context& context, const pde::PoissonGrid& grid,
                    const pde::PoissonOptions& options, std::span<const Real> f,
                    std::span<const Real> u, const std::string& output) {
  const pde::PoissonCheck check =
      pde::check_poisson_solution<Real>(grid, f, u, options, context.effective_cpu_threads());
  std::cerr << "gpukit: poisson: check: " << pde::describe_poisson_check(check) << "\n";
  if (!check.passed) {
    throw Error(ErrorKind::check_failed,
                fmt::format("poisson --check: the solution differs from the reference beyond the "
                            "bound ('{}' was written)",
                            output));
  }
}

// The options every solve shares, read from the command line.
pde::PoissonOptions solve_options(const PoissonOptionsCli& cli) {
  pde::PoissonOptions options;
  options.gauge = pde::parse_gauge(cli.gauge);
  options.strict = cli.strict;
  options.variant = cli.variant;
  options.op = pde::parse_operator(cli.op, "--operator");
  options.helmholtz = cli.helmholtz;
  return options;
}

// The line that says what a solve runs on: the grid, the precision, the devices and the engine,
// the problem (the operator and lambda when they are not the defaults; the gauge of a singular
// problem), and how the grid was spread when it was.
std::string describe_solve(const Job& job, const scale_out::PoissonSpread& spread,
                           const pde::PoissonOptions& options) {
  std::string line = fmt::format("gpukit: poisson: {} {}, {} ({})", spread.grid.describe(),
                                 spread.single_precision ? "float" : "double",
                                 job.workers.describe(), spread.engine);
  if (options.op != pde::Operator::spectral)
    line += fmt::format(", operator {}", pde::operator_name(options.op));
  if (options.helmholtz != 0) line += fmt::format(", helmholtz {:g}", options.helmholtz);
  if (pde::poisson_is_singular(spread.grid, options))
    line += fmt::format(", gauge {}", pde::gauge_name(options.gauge));
  const auto parts = static_cast<int>(spread.rows.size());
  if (parts == 1 && spread.ranks == 1) return line;
  std::string rows;
  for (const std::int64_t r : spread.rows) rows += fmt::format("{}{}", rows.empty() ? "" : ", ", r);
  const std::string ranks =
      fmt::format("{} MPI rank{}", spread.ranks, spread.ranks == 1 ? "" : "s");
  if (parts == spread.ranks) return fmt::format("{}, {} (rows of axis 0: {})", line, ranks, rows);
  return fmt::format("{}, {} parts {} (rows of axis 0: {})", line, parts,
                     spread.ranks == 1 ? "in one process" : "over " + ranks, rows);
}

// One process (one device, or a list of them): the whole grid read, solved by one call, checked
// and written, as every command does.
template <class Real>
void solve_file(const Job& job, const io::NpyArray& array, const PoissonOptionsCli& cli) {
  pde::PoissonGrid grid;
  grid.shape = array.shape;
  grid.lengths = parse_lengths(cli.lengths, static_cast<int>(array.shape.size()));
  grid.boundaries = parse_boundaries(cli.boundary, static_cast<int>(array.shape.size()));
  pde::validate_grid(grid);
  const pde::PoissonOptions options = solve_options(cli);
  // The input in the solve's precision (a copy only when --precision differs from the dtype).
  std::vector<Real> values(static_cast<std::size_t>(array.size()));
  if (array.dtype == io::NpyDtype::float32) {
    const auto in = array.values<float>();
    std::copy(in.begin(), in.end(), values.begin());
  } else {
    const auto in = array.values<double>();
    std::copy(in.begin(), in.end(), values.begin());
  }
  std::vector<Real> f_copy;
  if (cli.check) f_copy = values;
  const pde::PoissonResult result = scale_out::solve_poisson<Real>(
      job, grid, options, values, values, [&](const scale_out::PoissonSpread& spread) {
        if (!quiet()) std::cerr << describe_solve(job, spread, options) << "\n";
      });
  if (result.mean_removed) {
    std::cerr << "gpukit: poisson: warning: " << pde::describe_removed_mean(result, grid.boundaries)
              << "\n";
  }
  inject_test_fault<Real>("poisson-perturb", std::span<Real>(values));
  if (array.dtype == io::NpyDtype::float32) {
    std::vector<float> out(values.begin(), values.end());
    io::write_npy<float>(cli.output, array.shape, out);
  } else {
    std::vector<double> out(values.begin(), values.end());
    io::write_npy<double>(cli.output, array.shape, out);
  }
  if (cli.check) {
    check_solution<Real>(job.workers.contexts.front(), grid, options, f_copy, values, cli.output);
  }
}

// Under mpirun: the grid split into slabs of axis 0 over the ranks, each reading and writing its
// own rows of the files (no rank holds the whole grid) in the one call; rank 0 prints the line
// and the warning; a failure on any rank ends every rank with the same message and exit code
// (printed once, by rank 0), and no output.
void solve_across_ranks(const Job& job, const PoissonOptionsCli& cli) {
  if (cli.check) {
    throw UsageError(
        "poisson --check is not available under mpirun (its long double reference needs the "
        "whole grid in one process): check a grid that fits one process without mpirun");
  }
  if (cli.output == "-") {
    throw UsageError(
        "poisson under mpirun writes its output to a file (each rank writes its rows), not to "
        "standard output");
  }
  scale_out::PoissonFileRequest request;
  request.input = cli.input;
  request.output = cli.output;
  request.lengths = [&](int axes) { return parse_lengths(cli.lengths, axes); };
  request.boundaries = [&](int axes) { return parse_boundaries(cli.boundary, axes); };
  request.options = solve_options(cli);
  if (!cli.precision.empty()) {
    request.precision = cli.precision == "float" ? io::NpyDtype::float32 : io::NpyDtype::float64;
  }
  // The grid's boundaries, one per axis (the warning names them as the single-process one does;
  // --boundary alone does not know the axes before the file is read).
  std::vector<pde::Boundary> boundaries;
  request.planned = [&](const scale_out::PoissonSpread& spread) {
    boundaries = spread.grid.boundaries;
    if (job.is_root() && !quiet()) {
      std::cerr << describe_solve(job, spread, request.options) << "\n";
    }
  };
  const pde::PoissonResult result = scale_out::solve_poisson_file(job, request);
  if (result.mean_removed && job.is_root()) {
    std::cerr << "gpukit: poisson: warning: " << pde::describe_removed_mean(result, boundaries)
              << "\n";
  }
}

void run_demo(const Context& context, const PoissonOptionsCli& cli) {
  const bool single = cli.precision == "float";
  const bench::PoissonDemo d = bench::run_poisson_demo(context, cli.demo, single);
  fmt::print("Poisson solver on a domain {} x {} ({}, {}, variant {})\n", d.n, d.n,
             single ? "float" : "double", context.describe(), d.variant);
  fmt::print("N={}\n", d.n);
  fmt::print("Solution at ({},{}): computed={:10.6f} reference={:10.6f}\n", d.n / 2, d.n / 2,
             d.computed, d.reference);
  fmt::print("Linf err={:10.6e} L2 norm err = {:10.6e}\n", d.linf, d.l2);
  fmt::print("f's mean {:.6e} removed (the 2008 case study's zero-mode fix does the same)\n",
             d.removed_mean);
  fmt::print("Time: plan {:.3f} ms, solve {:.3f} ms (host data, copies included)\n", d.plan_ms,
             d.solve_ms);
  fmt::print("check against a long double solve: max abs error {:.3e} (bound {:.3e}): {}\n",
             d.check.metrics.max_abs, d.check.bound, d.check.passed ? "ok" : "FAILED");
  if (d.n == 64 && !single) {
    fmt::print(
        "The 2008 NVIDIA case study (MATLAB, N=64, slide 43): computed= 0.975879 reference= "
        "0.975882, Linf err=2.404194e-05 "
        "L2 norm err = 9.412790e-08: {}\n",
        d.reproduces_the_seed() ? "reproduced" : "NOT reproduced");
  }
  if (!d.passed()) throw Error(ErrorKind::check_failed, "poisson demo: check failed");
}

}  // namespace

void register_poisson(CLI::App& app) {
  auto* command = app.add_subcommand(
      "poisson",
      "Solve (lap - lambda) u = f with periodic, dirichlet or neumann boundaries: a 2D/3D .npy "
      "grid (fast spectral solve), or --demo (the 2008 NVIDIA case study, slides 40-62)");
  auto cli = std::make_shared<PoissonOptionsCli>();
  auto* input = command->add_option("--input,-i", cli->input,
                                    "Right-hand side f: float32/float64 .npy, 2D or 3D");
  auto* output = command->add_option("--output,-o", cli->output,
                                     "Solution u: .npy of the input's dtype and shape");
  command
      ->add_option("--length", cli->lengths,
                   "Lengths of the axes in .npy order, L0,L1[,L2], or one L for every axis "
                   "(default 1)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              parse_length_list(text);
            } catch (const UsageError& e) {
              return e.what();
            }
            return {};
          },
          "", "lengths"));
  auto* boundary = command->add_option(
      "--boundary", cli->boundary,
      "periodic (default), dirichlet (u = 0 at the ends; the array holds the interior nodes) or "
      "neumann (du/dn = 0; cell centres): one for every axis, or B0,B1[,B2] in .npy order");
  auto* op = command
                 ->add_option("--operator", cli->op,
                              "spectral: the Laplacian's exact eigenvalues; fd2: the 3-point "
                              "second difference an axis (the 5/7-point stencil), solved exactly")
                 ->capture_default_str();
  auto* helmholtz = command->add_option(
      "--helmholtz", cli->helmholtz,
      "LAMBDA >= 0: solve (lap - LAMBDA) u = f, an implicit heat or diffusion step (default 0)");
  command
      ->add_option("--gauge", cli->gauge,
                   "mean: the mean-zero solution; corner: u[0,...,0] = 0 (as the 2008 case "
                   "study does); only when the constant solves the homogeneous problem (no "
                   "dirichlet axis, LAMBDA 0)")
      ->check(CLI::IsMember({"mean", "corner"}))
      ->capture_default_str();
  command->add_flag("--strict", cli->strict,
                    "Refuse an f whose mean is not zero to rounding (instead of removing it; no "
                    "dirichlet axis, LAMBDA 0)");
  command
      ->add_option("--precision", cli->precision,
                   "double | float (default: the input's dtype; the demo: double)")
      ->check(CLI::IsMember({"double", "float"}));
  command->add_option("--variant", cli->variant,
                      "CUDA variant (default: the best that supports "
                      "the grid)");
  command->add_flag(
      "--check", cli->check,
      "Check u against an independent long double solve (exit 8 on a mismatch, u is still "
      "written; about 40 bytes of memory a grid point)");
  auto* demo = command
                   ->add_option("--demo", cli->demo,
                                "The 2008 NVIDIA case study's test (slide 43, from MATLAB) on an "
                                "N x N grid (default 64)")
                   ->expected(0, 1)
                   ->default_str("64")
                   ->transform(integer_in(2, 1 << 15));
  demo->excludes(input);
  demo->excludes(output);
  demo->excludes(boundary);
  demo->excludes(op);
  demo->excludes(helmholtz);
  add_device_options(*command, cli->device, DeviceLists::accepted,
                     "in slabs of axis 0: one GPU's result within --check's bound");
  command->callback([cli] {
    if (cli->demo > 0) {
      refuse_device_list_and_ranks("poisson --demo", cli->device);
      run_demo(resolve_context(cli->device), *cli);
      return;
    }
    if (cli->input.empty() || cli->output.empty())
      throw UsageError("poisson: give --input FILE --output FILE, or --demo [N]");
    check_problem_options(*cli);
    const Job job = join_job(cli->device, "poisson", /*announce=*/false);
    if (job.ranks() > 1) {
      solve_across_ranks(job, *cli);
      return;
    }
    constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};
    const io::NpyArray array = io::read_npy(cli->input, {kFloats, "poisson"});
    pde::check_poisson_array_shape(array.shape, cli->input);
    const bool single =
        cli->precision.empty() ? array.dtype == io::NpyDtype::float32 : cli->precision == "float";
    if (single) {
      solve_file<float>(job, array, *cli);
    } else {
      solve_file<double>(job, array, *cli);
    }
  });
}

}  // namespace gpukit::cli
