#include "bench/mc_bench.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "finance/monte_carlo_internal.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/monte_carlo.hpp"

#if GPUKIT_HAVE_CUDA
#include "finance/cuda/monte_carlo_curand_reference.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"
#endif

namespace gpukit::bench {

namespace {

using finance::BarrierMonitoring;
using finance::BarrierType;
namespace mc = finance::mc;

// The seed's problem-size study (000, slides 26-37): 1 .. 256 options x 64K .. 16M paths.
constexpr std::int64_t kGridOptions[] = {1, 4, 16, 64, 256};
constexpr std::int64_t kGridPaths[] = {1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24};
constexpr std::int64_t kMaxGridSamples = std::int64_t{1} << 30;

// An at-the-money call (S = K = 100, T = 1, r = 5%, q = 2%, sigma = 25%), optionally with a
// down-and-out barrier at 90 monitored on `steps` dates.
mc::OptionInputs bench_option(BarrierType type, std::uint32_t steps) {
  mc::OptionInputs in;
  in.spot = 100, in.strike = 100, in.maturity = 1, in.rate = 0.05, in.volatility = 0.25;
  in.dividend = 0.02, in.barrier_type = type, in.barrier = 90, in.steps = steps;
  return in;
}

double reference_price(const mc::OptionInputs& in) {
  const double barrier =
      in.barrier_type == BarrierType::none
          ? 0
          : finance::discrete_barrier_shift(in.barrier_type, in.barrier, in.volatility, in.maturity,
                                            in.steps);
  return finance::barrier_price_analytic(in.barrier_type, in.is_put, in.spot, in.strike, barrier,
                                         in.maturity, in.rate, in.dividend, in.volatility);
}

// A price within `within` standard errors of the closed form (BGK-shifted, with a 0.5%
// allowance for the shift's own error, for barriers) passes; the note says how far it was.
struct Verdict {
  bool ok;
  std::string what;
};

Verdict verdict(const mc::OptionInputs& in, double price, double std_error, double within) {
  const double reference = reference_price(in);
  const double tolerance =
      within * std_error + (in.barrier_type == BarrierType::none ? 0 : 5e-3 * reference);
  const bool ok = std::abs(price - reference) <= tolerance;  // false for NaN
  return {ok, fmt::format("{} (price {:.6f} +- {:.1e}, closed form {:.6f}, bound {:.0f} std err)",
                          ok ? "ok" : "OFF", price, std_error, reference, within)};
}

#if GPUKIT_HAVE_CUDA

// Options on the device, a workspace, and a launch.
template <class Real>
struct DeviceBook {
  cuda::DeviceBuffer<mc::PathParams<Real>> params;
  cuda::DeviceBuffer<mc::Moments<double>> moments;
  cuda::DeviceBuffer<unsigned char> workspace;
  mc::DeviceRun run;

  DeviceBook(const mc::OptionInputs& in, std::int64_t options, std::int64_t samples,
             bool antithetic = false, bool control = false)
      : params(static_cast<std::size_t>(options)), moments(static_cast<std::size_t>(options)) {
    std::vector<mc::PathParams<Real>> host;
    for (std::int64_t i = 0; i < options; ++i) {
      host.push_back(
          mc::path_params<Real>(in, static_cast<std::uint32_t>(i), BarrierMonitoring::discrete));
    }
    params.copy_from_host(host);
    run = {options,    samples, 2008,
           antithetic, control, mc::common_path_kind(host.data(), host.size())};
    workspace =
        cuda::DeviceBuffer<unsigned char>(static_cast<std::size_t>(mc::workspace_bytes(run)));
  }
  void launch(StreamHandle stream, const mc::LaunchConfig& config = {}) {
    mc::launch_monte_carlo<Real>(params.data(), run, moments.data(), workspace.data(), stream,
                                 config);
  }
  // Option 0 within 4 standard errors of the closed form (BGK-shifted for barriers).
  Verdict check(const mc::OptionInputs& in) const {
    std::vector<mc::Moments<double>> host(static_cast<std::size_t>(run.options));
    moments.copy_to_host(host);
    const mc::Estimate e = mc::estimate(host[0], in, run.antithetic, run.control);
    return verdict(in, e.price, e.std_error, 4);
  }
  // One launch into poisoned moments (NaN), then every option against the closed form, within 6
  // standard errors: up to 4096 independent options, so 4 would fail about once in 4 runs, 6
  // about once in 10^5.
  Verdict check_every_option(const mc::OptionInputs& in, StreamHandle stream,
                             const mc::LaunchConfig& config = {}) {
    cuda::fill_bytes_async(moments.data(), 0xFF, moments.size() * sizeof(mc::Moments<double>),
                           stream);
    launch(stream, config);
    cuda::synchronize_stream(stream);
    std::vector<mc::Moments<double>> host(static_cast<std::size_t>(run.options));
    moments.copy_to_host(host);
    std::optional<Verdict> first_failure;
    Verdict furthest{true, ""};
    double furthest_z = -1;
    const double reference = reference_price(in);
    for (std::size_t i = 0; i < host.size(); ++i) {
      const mc::Estimate e = mc::estimate(host[i], in, run.antithetic, run.control);
      const Verdict v = verdict(in, e.price, e.std_error, 6);
      if (!v.ok && !first_failure) first_failure = v;
      const double z = std::abs(e.price - reference) / e.std_error;
      if (z > furthest_z) furthest_z = z, furthest = v;
    }
    Verdict result = first_failure ? *first_failure : furthest;
    result.what = fmt::format("{} options; {}: {}", host.size(),
                              first_failure ? "the first failing" : "the furthest", result.what);
    return result;
  }
};

// `samples` per row: paths, or antithetic pairs (a pair counts once, as the bar asks).
template <class Real>
Row speed_row(const BenchConfig& config, const std::string& name, const mc::OptionInputs& in,
              std::int64_t samples, cuda::Stream& stream, bool antithetic = false,
              bool control = false) {
  DeviceBook<Real> book(in, 1, samples, antithetic, control);
  book.launch(stream.handle());
  stream.synchronize();
  Row row;
  row.variant = name;
  row.description = fmt::format("1 option, {} {} x {} steps, data on the device", samples,
                                antithetic ? "antithetic pairs" : "paths", in.steps);
  row.seed_reference =
      in.barrier_type == BarrierType::none ? "000: slides 20-25" : "003: Application 3";
  row.elements = static_cast<double>(samples) * in.steps;
  row.ladder = false;
  const Verdict v = book.check(in);
  row.verify(v.ok, v.what);
  row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat,
                                  [&] { book.launch(stream.handle()); });
  return row;
}

// The vendor row: cuRAND's device API in a plain kernel (monte_carlo_curand_reference.hpp).
Row curand_row(const BenchConfig& config, const mc::OptionInputs& in, std::int64_t paths,
               cuda::Stream& stream) {
  const mc::PathParams<float> p = mc::path_params<float>(in, 0, BarrierMonitoring::discrete);
  mc::CurandReferenceProblem problem;
  problem.paths = paths;
  problem.seed = 2008;
  problem.drift_dt = p.drift_dt, problem.vol_sqrt_dt = p.vol_sqrt_dt;
  problem.strike_over_spot = p.strike_over_spot;
  problem.steps = in.steps;
  problem.down_and_out = in.barrier_type == BarrierType::down_out;
  problem.log_barrier = p.log_barrier;
  cuda::DeviceBuffer<double> sums(2);
  auto launch = [&] {
    cuda::fill_bytes_async(sums.data(), 0, mc::kCurandReferenceSumsBytes, stream.handle());
    mc::launch_curand_reference(problem, sums.data(), stream.handle());
  };
  launch();
  stream.synchronize();
  std::vector<double> host(2);
  sums.copy_to_host(host);
  const double n = static_cast<double>(paths / 4 * 4);
  const double mean = host[0] / n;
  const double variance = std::max(0.0, (host[1] - host[0] * mean) / (n - 1));
  const double scale = in.spot * std::exp(-in.rate * in.maturity);
  Row row;
  row.variant = in.barrier_type == BarrierType::none ? "curand-philox-float" : "curand-252-float";
  row.description = fmt::format(
      "cuRAND device API (Philox4_32_10, curand_normal4, fast math), plain kernel, {} paths x {} "
      "steps",
      paths, in.steps);
  row.seed_reference = "vendor";
  row.elements = n * in.steps;
  row.ladder = false;
  row.vendor = true;
  const Verdict v = verdict(in, scale * mean, scale * std::sqrt(variance / n), 5);
  row.verify(v.ok, v.what);
  row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, launch);
  return row;
}

void speed_tables(const BenchConfig& config, Report& report) {
  cuda::Stream stream;
  const bool want_float = config.precision != "double", want_double = config.precision != "float";
  // Every row of a table prices the same number of samples, so "vs vendor" compares rates.
  constexpr std::int64_t kEuropeanSamples = std::int64_t{1} << 28;
  constexpr std::int64_t kBarrierPaths = std::int64_t{1} << 22;
  Table european = device_table(
      report,
      "European call, one step, one option: paths/s (Philox4x32-10 + Box-Muller in the "
      "kernel; float uses the MUFU approximations; an antithetic pair counts once; bar: float >= "
      "560 G paths/s)");
  european.element_name = "paths";
  const mc::OptionInputs vanilla = bench_option(BarrierType::none, 1);
  if (want_float) {
    european.rows.push_back(curand_row(config, vanilla, kEuropeanSamples, stream));
    european.rows.push_back(
        speed_row<float>(config, "european-float", vanilla, kEuropeanSamples, stream));
    european.rows.push_back(speed_row<float>(config, "european-float-antithetic", vanilla,
                                             kEuropeanSamples, stream, true, false));
    european.rows.push_back(speed_row<float>(config, "european-float-control", vanilla,
                                             kEuropeanSamples, stream, false, true));
  }
  if (want_double) {
    european.rows.push_back(
        speed_row<double>(config, "european-double", vanilla, kEuropeanSamples, stream));
  }
  report.tables.push_back(std::move(european));

  Table barrier =
      device_table(report,
                   "Down-and-out call, 252 discrete dates, one option: path-steps/s (bar: float >= "
                   "620 G path-steps/s)");
  barrier.element_name = "path-steps";
  const mc::OptionInputs knock_out = bench_option(BarrierType::down_out, 252);
  if (want_float) {
    barrier.rows.push_back(curand_row(config, knock_out, kBarrierPaths, stream));
    barrier.rows.push_back(
        speed_row<float>(config, "barrier-252-float", knock_out, kBarrierPaths, stream));
  }
  if (want_double) {
    barrier.rows.push_back(
        speed_row<double>(config, "barrier-252-double", knock_out, kBarrierPaths, stream));
  }
  if (want_float) {
    barrier.rows.push_back(
        speed_row<float>(config, "barrier-252-float 16M", knock_out, kBarrierPaths * 4, stream));
  }
  report.tables.push_back(std::move(barrier));
}

void grid_table(const BenchConfig& config, Report& report) {
  cuda::Stream stream;
  Table table = device_table(
      report,
      "The seed's problem-size grid (000, slides 26-37): float European calls, options x paths, "
      "automatic launch shape; samples/s should be a horizontal line (note: options/s, and "
      "samples/s as a fraction of the grid's best)");
  table.element_name = "samples";
  const mc::OptionInputs vanilla = bench_option(BarrierType::none, 1);
  for (const std::int64_t options : kGridOptions) {
    for (const std::int64_t paths : kGridPaths) {
      if (options * paths > kMaxGridSamples) continue;
      DeviceBook<float> book(vanilla, options, paths);
      Row row;
      row.variant = fmt::format("grid {}x{}", options, paths);
      row.description = fmt::format("{} options x {} paths", options, paths);
      row.seed_reference = "000: slides 26-37";
      row.elements = static_cast<double>(options * paths);
      row.ladder = false;
      const Verdict v = book.check_every_option(vanilla, stream.handle());
      row.verify(v.ok, v.what);
      row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat,
                                      [&] { book.launch(stream.handle()); });
      table.rows.push_back(std::move(row));
    }
  }
  double best = 0;
  for (const Row& row : table.rows) best = std::max(best, row.elements / row.median_ms());
  double worst_in_band = best;
  for (std::size_t i = 0, k = 0; i < std::size(kGridOptions); ++i) {
    for (std::size_t j = 0; j < std::size(kGridPaths); ++j) {
      if (kGridOptions[i] * kGridPaths[j] > kMaxGridSamples) continue;
      Row& row = table.rows[k++];
      const double rate = row.elements / row.median_ms();
      row.note = fmt::format("{:.3g} options/s, {:.2f} of best; {}",
                             static_cast<double>(kGridOptions[i]) / (row.median_ms() * 1e-3),
                             rate / best, row.note);
      // The bar's band: from 64 options x 256K paths to 1 option x 16M paths.
      const bool in_band = kGridOptions[i] * kGridPaths[j] >= (std::int64_t{1} << 24);
      if (in_band) worst_in_band = std::min(worst_in_band, rate);
    }
  }
  table.title += fmt::format(
      "; from 64x256K to 1x16M (16M+ samples) the slowest point runs at {:.2f} of the best",
      worst_in_band / best);
  report.tables.push_back(std::move(table));

  // The seed's two kernels at the two sizes it names, forced: the bits agree (tested), the times
  // show why the choice is automatic.
  Table shapes = device_table(report,
                              "Launch shapes forced (000, slide 36: one block per option "
                              "vs several blocks and a reduction)");
  shapes.element_name = "samples";
  for (const auto& [options, paths] : {std::pair<std::int64_t, std::int64_t>{64, 1 << 18},
                                       {256, 1 << 16},
                                       {1, 1 << 24},
                                       {4096, 1 << 12}}) {
    for (const mc::LaunchShape shape :
         {mc::LaunchShape::per_option, mc::LaunchShape::multi_block}) {
      DeviceBook<float> book(vanilla, options, paths);
      Row row;
      row.variant = fmt::format("{} {}x{}",
                                shape == mc::LaunchShape::per_option ? "per-option" : "multi-block",
                                options, paths);
      row.description = "forced launch shape";
      row.seed_reference = "000: slides 34-37";
      row.elements = static_cast<double>(options * paths);
      row.ladder = false;
      mc::LaunchConfig launch;
      launch.shape = shape;
      const Verdict v = book.check_every_option(vanilla, stream.handle(), launch);
      row.verify(v.ok, v.what);
      row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat,
                                      [&] { book.launch(stream.handle(), launch); });
      shapes.rows.push_back(std::move(row));
    }
  }
  const mc::OptionInputs knock_out = bench_option(BarrierType::down_out, 252);
  for (const mc::LaunchShape shape : {mc::LaunchShape::multi_block, mc::LaunchShape::staged}) {
    DeviceBook<float> book(knock_out, 1, 1 << 22);
    Row row;
    row.variant = fmt::format("{} barrier-252 1x4194304",
                              shape == mc::LaunchShape::staged ? "staged" : "multi-block");
    row.description = "forced launch shape, 252 steps (elements: paths)";
    row.seed_reference = "003: Application 3";
    row.elements = static_cast<double>(1 << 22);
    row.ladder = false;
    mc::LaunchConfig launch;
    launch.shape = shape;
    const Verdict v = book.check_every_option(knock_out, stream.handle(), launch);
    row.verify(v.ok, v.what);
    row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat,
                                    [&] { book.launch(stream.handle(), launch); });
    shapes.rows.push_back(std::move(row));
  }
  report.tables.push_back(std::move(shapes));
}

#endif  // GPUKIT_HAVE_CUDA

void cpu_table(const BenchConfig& config, Report& report) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  Table table;
  table.title = fmt::format("Monte Carlo on the CPU backend ({} threads), one option",
                            cpu.effective_cpu_threads());
  table.element_name = "path-steps";
  for (const auto& [name, in, paths] :
       {std::tuple{"european-double", bench_option(BarrierType::none, 1), std::int64_t{1} << 22},
        std::tuple{"barrier-252-double", bench_option(BarrierType::down_out, 252),
                   std::int64_t{1} << 14}}) {
    const std::vector<mc::PathParams<double>> params = {
        mc::path_params<double>(in, 0, BarrierMonitoring::discrete)};
    Row row;
    row.variant = name;
    row.description = fmt::format("{} paths x {} steps", paths, in.steps);
    row.seed_reference = "CPU backend";
    row.elements = static_cast<double>(paths) * in.steps;
    row.ladder = false;
    std::vector<mc::Moments<double>> moments;
    row.samples_ms = time_on_host(0, std::min(config.repeat, 3), [&] {
      moments = mc::cpu_moments(params, paths, 2008, false, false, config.context.cpu_threads);
    });
    const mc::Estimate e = mc::estimate(moments[0], in, false, false);
    const Verdict v = verdict(in, e.price, e.std_error, 4);
    row.verify(v.ok, v.what);
    table.rows.push_back(std::move(row));
  }
  report.tables.push_back(std::move(table));
}

}  // namespace

void run_monte_carlo_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
#if GPUKIT_HAVE_CUDA
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    speed_tables(config, report);
    grid_table(config, report);
  }
#endif
  cpu_table(config, report);
}

}  // namespace gpukit::bench
