// gpukit poisson: solves lap(u) = f with periodic boundaries for a 2D or 3D .npy grid f, written
// as a .npy grid u of the same dtype and shape; `--demo [N]` runs the MATLAB test of the 2008
// NVIDIA case study (slide 43).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/poisson_demo.hpp"
#include "cli_common.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/dist/communicator.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/poisson.hpp"
#include "pde/distributed/npy_slabs.hpp"
#include "pde/distributed/poisson_distributed.hpp"
#include "pde/distributed/process_group.hpp"

namespace gpukit::cli {

namespace {

struct PoissonOptionsCli {
  DeviceOptions device;
  std::string input, output, lengths, gauge = "mean", precision, variant;
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

// --check: an independent reference (the same problem solved in long double with FFTW's
// long-double transforms, no code shared with the CPU or GPU solvers), every element within
// pde::poisson_agreement_bound. Runs after the output is written: a failed check keeps it.
template <class Real>
void check_solution(const Context& context, const pde::PoissonGrid& grid,
                    const pde::PoissonOptions& options, std::span<const Real> f,
                    std::span<const Real> u, const std::string& output) {
  const pde::PoissonCheck check =
      pde::check_poisson_solution<Real>(grid, f, u, options.gauge, context.effective_cpu_threads());
  std::cerr << "gpukit: poisson: check: " << pde::describe_poisson_check(check) << "\n";
  if (!check.passed) {
    throw Error(ErrorKind::check_failed,
                fmt::format("poisson --check: the solution differs from the reference beyond the "
                            "bound ('{}' was written)",
                            output));
  }
}

template <class Real>
void solve_file(const Context& context, const io::NpyArray& array, const PoissonOptionsCli& cli) {
  pde::PoissonGrid grid;
  grid.shape = array.shape;
  grid.lengths = parse_lengths(cli.lengths, static_cast<int>(array.shape.size()));
  pde::validate_grid(grid);
  pde::PoissonOptions options;
  options.gauge = pde::parse_gauge(cli.gauge);
  options.strict = cli.strict;
  options.variant = cli.variant;
  // The input in the solve's precision (a copy only when --precision differs from the dtype).
  std::vector<Real> values(static_cast<std::size_t>(array.size()));
  if (array.dtype == io::NpyDtype::float32) {
    const auto in = array.values<float>();
    std::copy(in.begin(), in.end(), values.begin());
  } else {
    const auto in = array.values<double>();
    std::copy(in.begin(), in.end(), values.begin());
  }
  pde::PoissonPlan<Real> plan(context, grid, options);
  if (!quiet()) {
    std::cerr << fmt::format("gpukit: poisson: {} {}, {} ({}), gauge {}\n", grid.describe(),
                             std::is_same_v<Real, float> ? "float" : "double", context.describe(),
                             plan.variant(), cli.gauge);
  }
  std::vector<Real> f_copy;
  if (cli.check) f_copy = values;
  const pde::PoissonResult result = plan.solve(values, values);
  if (result.mean_removed) {
    std::cerr << "gpukit: poisson: warning: " << pde::describe_removed_mean(result) << "\n";
  }
  inject_test_fault<Real>("poisson-perturb", std::span<Real>(values));
  if (array.dtype == io::NpyDtype::float32) {
    std::vector<float> out(values.begin(), values.end());
    io::write_npy<float>(cli.output, array.shape, out);
  } else {
    std::vector<double> out(values.begin(), values.end());
    io::write_npy<double>(cli.output, array.shape, out);
  }
  if (cli.check) check_solution<Real>(context, grid, options, f_copy, values, cli.output);
}

// ---------------------------------------------------------------------------------------------
// Under mpirun: the grid split into slabs of axis 0 over the ranks (pde/distributed). Each rank
// reads its own rows of the input and writes its own rows of the output (rank 0 creates the
// output and renames it once every rank wrote), so no rank holds the whole grid; rank 0 prints
// the progress line and the warning; a failure on any rank ends every rank with the same
// message and exit code, and no output.

/// Test hook: GPUKIT_TEST_FAULT=poisson-rank-fail:R makes rank R fail (as out of memory) after
/// reading its slab, so that the CLI tests can show that one failing rank ends every rank
/// cleanly. Not for users.
void inject_rank_fault(const pde::distributed::ProcessGroup& group) {
  const char* fault = std::getenv("GPUKIT_TEST_FAULT");
  constexpr std::string_view kPrefix = "poisson-rank-fail:";
  group.agree([&] {
    if (fault == nullptr || !std::string_view(fault).starts_with(kPrefix)) return;
    if (std::string_view(fault).substr(kPrefix.size()) == std::to_string(group.rank()))
      throw OutOfMemory("poisson: a test fault on this rank (GPUKIT_TEST_FAULT)", 0);
  });
}

// The device of this rank: `auto` and `cuda` take the local rank's GPU (local rank modulo the
// GPUs of the host); the CPU threads default to this rank's share of the host.
Context distributed_context(const pde::distributed::ProcessGroup& group,
                            const DeviceOptions& device) {
  DeviceSelection selection;
  group.agree([&] { selection = select_device(device.device, device.threads); });
  Context context = selection.context;
  if (context.backend == Backend::cuda && (device.device == "auto" || device.device == "cuda"))
    context.cuda_device = group.local_rank() % std::max(1, cuda_device_count());
  if (device.threads == 0) {
    const int share = std::max(
        1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, group.local_size()));
    context.cpu_threads = std::min(share, Context::cpu().effective_cpu_threads());
  }
  if (group.rank() == 0 && !selection.notice.empty() && !quiet())
    std::cerr << selection.notice << "\n";
  return context;
}

template <class Real>
void solve_distributed(const pde::distributed::ProcessGroup& group, const Context& context,
                       const io::NpyFileInfo& info, const PoissonOptionsCli& cli) {
  namespace distributed = pde::distributed;
  pde::PoissonGrid grid;
  grid.shape = info.shape;
  grid.lengths = parse_lengths(cli.lengths, static_cast<int>(info.shape.size()));
  pde::PoissonOptions options;
  group.agree([&] {
    pde::validate_grid(grid);
    options.gauge = pde::parse_gauge(cli.gauge);
  });
  options.strict = cli.strict;
  options.variant = cli.variant;
  pde::DistributedPoissonPlan<Real> plan(context, grid, options, group);
  const pde::SlabRange slab = plan.slab(0);
  if (group.rank() == 0 && !quiet()) {
    std::string rows;
    for (int p = 0; p < plan.parts(); ++p)
      rows +=
          fmt::format("{}{}", p ? ", " : "", pde::slab_range(grid.shape[0], plan.parts(), p).count);
    std::cerr << fmt::format(
        "gpukit: poisson: {} {}, {} ({}), gauge {}, {} MPI rank{} (rows of axis 0: {})\n",
        grid.describe(), std::is_same_v<Real, float> ? "float" : "double", context.describe(),
        plan.engine(), cli.gauge, group.size(), group.size() == 1 ? "" : "s", rows);
  }
  constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};
  io::NpyArray rows = distributed::read_npy_rows_collectively(
      group, cli.input, {kFloats, "poisson"}, slab.begin, slab.count);
  inject_rank_fault(group);
  // Solved in place in the rows read when their dtype is the solve's precision (a slab of a grid
  // larger than one device is large: no second copy), else in a converted copy.
  std::vector<Real> converted;
  std::span<Real> values;
  if (rows.dtype == io::npy_dtype_of<Real>()) {
    values = rows.values<Real>();
  } else if (rows.dtype == io::NpyDtype::float32) {
    converted.assign(rows.values<float>().begin(), rows.values<float>().end());
    values = converted;
  } else {
    converted.assign(rows.values<double>().begin(), rows.values<double>().end());
    values = converted;
  }
  const pde::PoissonResult result = plan.solve(std::span<const Real>(values), values);
  if (result.mean_removed && group.rank() == 0) {
    std::cerr << "gpukit: poisson: warning: " << pde::describe_removed_mean(result) << "\n";
  }
  // Written in the input's dtype: straight from the solution when it has it.
  std::vector<std::byte> narrowed;
  std::span<const std::byte> bytes = std::as_bytes(std::span<const Real>(values));
  if (info.dtype != io::npy_dtype_of<Real>()) {
    auto convert = [&](auto element) {
      using T = decltype(element);
      narrowed.resize(values.size() * sizeof(T));
      T* out = reinterpret_cast<T*>(narrowed.data());
      for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
    };
    if (info.dtype == io::NpyDtype::float32) {
      convert(float{});
    } else {
      convert(double{});
    }
    bytes = narrowed;
  }
  distributed::write_npy_rows_collectively(group, cli.output, info.dtype, info.shape, slab.begin,
                                           bytes);
}

// A failure every rank meets alike (one the ranks settled, or a usage error, which depends only
// on the command line and the input's header) is reported by rank 0 alone: the other ranks exit
// with the same code and send their copy of the line to /dev/null, so that the terminal shows one
// line, not one per rank interleaved. Any other failure keeps its message on every rank.
void report_from_rank_zero(const std::exception& e) {
  const bool everywhere =
      pde::distributed::failure_agreed() || dynamic_cast<const CLI::ParseError*>(&e) != nullptr;
  if (!everywhere || dist::launcher_rank() == 0) return;
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
}

void run_distributed(const PoissonOptionsCli& cli) {
  namespace distributed = pde::distributed;
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
  const distributed::MpiSession session;  // initializes MPI unless main() did
  const distributed::ProcessGroup group = distributed::ProcessGroup::mpi_world();
  const Context context = distributed_context(group, cli.device);
  constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};
  const io::NpyFileInfo info =
      distributed::read_npy_info_collectively(group, cli.input, {kFloats, "poisson"});
  group.agree([&] { pde::check_poisson_array_shape(info.shape, cli.input); });
  const bool single =
      cli.precision.empty() ? info.dtype == io::NpyDtype::float32 : cli.precision == "float";
  if (single) {
    solve_distributed<float>(group, context, info, cli);
  } else {
    solve_distributed<double>(group, context, info, cli);
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
      "Solve lap(u) = f with periodic boundaries: a 2D/3D .npy grid (spectral method), or --demo "
      "(the 2008 NVIDIA case study, slides 40-62)");
  auto cli = std::make_shared<PoissonOptionsCli>();
  auto* input = command->add_option("--input,-i", cli->input,
                                    "Right-hand side f: float32/float64 .npy, 2D or 3D");
  auto* output = command->add_option("--output,-o", cli->output,
                                     "Solution u: .npy of the input's dtype and shape");
  command
      ->add_option("--length", cli->lengths,
                   "Periods of the axes in .npy order, L0,L1[,L2], or one L for every axis "
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
  command
      ->add_option("--gauge", cli->gauge,
                   "mean: the mean-zero solution; corner: u[0,...,0] = 0 (as the 2008 case "
                   "study does)")
      ->check(CLI::IsMember({"mean", "corner"}))
      ->capture_default_str();
  command->add_flag("--strict", cli->strict,
                    "Refuse an f whose mean is not zero to rounding (instead of removing it)");
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
  add_device_options(*command, cli->device);
  command->callback([cli] {
    if (dist::started_by_mpi_launcher()) {
      try {
        if (cli->demo > 0)
          throw UsageError("poisson --demo runs in one process: run it without mpirun");
        if (cli->input.empty() || cli->output.empty())
          throw UsageError("poisson: give --input FILE --output FILE");
        run_distributed(*cli);
      } catch (const std::exception& e) {
        report_from_rank_zero(e);
        throw;
      }
      return;
    }
    if (cli->demo > 0) {
      run_demo(resolve_context(cli->device), *cli);
      return;
    }
    if (cli->input.empty() || cli->output.empty())
      throw UsageError("poisson: give --input FILE --output FILE, or --demo [N]");
    const Context context = resolve_context(cli->device);
    constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};
    const io::NpyArray array = io::read_npy(cli->input, {kFloats, "poisson"});
    pde::check_poisson_array_shape(array.shape, cli->input);
    const bool single =
        cli->precision.empty() ? array.dtype == io::NpyDtype::float32 : cli->precision == "float";
    if (single) {
      solve_file<float>(context, array, *cli);
    } else {
      solve_file<double>(context, array, *cli);
    }
  });
}

}  // namespace gpukit::cli
