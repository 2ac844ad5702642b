#include "bench/monte_carlo_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_variants.hpp"

namespace gpukit::bench {

namespace {

using finance::BarrierMonitoring;
using finance::BarrierType;
using finance::MonteCarloBookResult;
using finance::MonteCarloOptions;
using finance::MonteCarloVariant;

// The seed's problem-size study (000, slides 26-37): 1 .. 256 options x 64K .. 16M paths.
constexpr std::int64_t kGridOptions[] = {1, 4, 16, 64, 256};
constexpr std::int64_t kGridPaths[] = {1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24};
constexpr std::int64_t kMaxGridSamples = std::int64_t{1} << 30;

// An at-the-money call (S = K = 100, T = 1, r = 5%, q = 2%, sigma = 25%), optionally with a
// down-and-out barrier at 90 monitored on `steps` dates.
struct BenchOption {
  BarrierType type = BarrierType::none;
  std::uint32_t steps = 1;
  double spot = 100, strike = 100, maturity = 1, rate = 0.05, volatility = 0.25, dividend = 0.02;
  double barrier = 90;
};

BenchOption bench_option(BarrierType type, std::uint32_t steps) {
  BenchOption in;
  in.type = type, in.steps = steps;
  return in;
}

double reference_price(const BenchOption& in) {
  const double barrier = in.type == BarrierType::none
                             ? 0
                             : finance::discrete_barrier_shift(in.type, in.barrier, in.volatility,
                                                               in.maturity, in.steps);
  return finance::barrier_price_analytic(in.type, false, in.spot, in.strike, barrier, in.maturity,
                                         in.rate, in.dividend, in.volatility);
}

// A price within `within` standard errors of the closed form (BGK-shifted, with a 0.5%
// allowance for the shift's own error, for barriers) passes; the note says how far it was.
struct Verdict {
  bool ok;
  std::string what;
};

Verdict verdict(const BenchOption& in, double price, double std_error, double within) {
  const double reference = reference_price(in);
  const double tolerance =
      within * std_error + (in.type == BarrierType::none ? 0 : 5e-3 * reference);
  const bool ok = std::abs(price - reference) <= tolerance;  // false for NaN
  return {ok, fmt::format("{} (price {:.6f} +- {:.1e}, closed form {:.6f}, bound {:.0f} std err)",
                          ok ? "ok" : "OFF", price, std_error, reference, within)};
}

// `rows` copies of one option, each on its own stream (its row number), in host memory.
class Book {
 public:
  Book(const BenchOption& in, std::int64_t rows)
      : option_(in),
        is_put_(static_cast<std::size_t>(rows), 0),
        spot_(static_cast<std::size_t>(rows), in.spot),
        strike_(static_cast<std::size_t>(rows), in.strike),
        maturity_(static_cast<std::size_t>(rows), in.maturity),
        barrier_(static_cast<std::size_t>(rows), in.barrier),
        type_(static_cast<std::size_t>(rows), in.type),
        steps_(static_cast<std::size_t>(rows), in.steps) {}

  const BenchOption& option() const { return option_; }
  std::int64_t rows() const { return static_cast<std::int64_t>(is_put_.size()); }
  finance::MonteCarloBookView view() const {
    finance::MonteCarloBookView v;
    v.count = rows();
    v.is_put = is_put_.data(), v.spot = spot_.data(), v.strike = strike_.data();
    v.maturity = maturity_.data();
    v.rate = {nullptr, option_.rate}, v.volatility = {nullptr, option_.volatility};
    v.dividend = {nullptr, option_.dividend};
    v.barrier_type = type_.data(), v.barrier = barrier_.data(), v.steps = steps_.data();
    return v;
  }
  // Every row against the closed form: the first failing one, or the furthest; within 6 standard
  // errors for more than one row (up to 4096 independent options, so 4 would fail about once in
  // 4 runs, 6 about once in 10^5), `one_row_within` for one.
  Check check(const MonteCarloBookResult& r, double one_row_within) const {
    if (r.price.size() != is_put_.size()) return {false, "wrong number of results"};
    if (rows() == 1) {
      const Verdict v = verdict(option_, r.price[0], r.std_error[0], one_row_within);
      return {v.ok, v.what};
    }
    std::optional<Verdict> first_failure;
    Verdict furthest{true, ""};
    double furthest_z = -1;
    const double reference = reference_price(option_);
    for (std::size_t i = 0; i < r.price.size(); ++i) {
      const Verdict v = verdict(option_, r.price[i], r.std_error[i], 6);
      if (!v.ok && !first_failure) first_failure = v;
      const double z = std::abs(r.price[i] - reference) / r.std_error[i];
      if (z > furthest_z) furthest_z = z, furthest = v;
    }
    Verdict result = first_failure ? *first_failure : furthest;
    return {result.ok,
            fmt::format("{} options; {}: {}", r.price.size(),
                        first_failure ? "the first failing" : "the furthest", result.what)};
  }

 private:
  BenchOption option_;
  std::vector<std::uint8_t> is_put_;
  std::vector<double> spot_, strike_, maturity_, barrier_;
  std::vector<BarrierType> type_;
  std::vector<std::uint32_t> steps_;
};

MonteCarloOptions bench_options(std::int64_t paths, bool float32, bool antithetic = false,
                                bool control = false) {
  MonteCarloOptions options;
  options.paths = paths;
  options.seed = 2008;
  options.antithetic = antithetic;
  options.control_variate = control;
  options.monitoring = BarrierMonitoring::discrete;
  options.precision = float32 ? finance::Precision::float32 : finance::Precision::float64;
  return options;
}

// An element is a path-step (an antithetic pair counts once, as the bar asks).
WorkloadShape shape_of(const Book& book, const MonteCarloOptions& options) {
  const double samples =
      static_cast<double>(options.antithetic ? options.paths / 2 : options.paths);
  return {.elements = static_cast<double>(book.rows()) * samples * book.option().steps,
          .value_bytes = options.precision == finance::Precision::float32 ? 4.0 : 8.0};
}

#if GPUKIT_HAVE_CUDA

// A book priced by registry entries on the device: each entry prepares it once (not timed), is
// checked once into poisoned results, then timed launch by launch.
class DeviceWorkload {
 public:
  DeviceWorkload(const Book& book, const MonteCarloOptions& options, cuda::Stream& stream,
                 double one_row_within = 4)
      : book_(book), options_(options), stream_(stream), one_row_within_(one_row_within) {}

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const { return shape_of(book_, options_); }
  void launch(const MonteCarloVariant& v) { prepared(v).launch(stream_.handle()); }
  Check check(const MonteCarloVariant& v) {
    finance::MonteCarloDeviceRun& run = prepared(v);
    run.poison(stream_.handle());
    run.launch(stream_.handle());
    return book_.check(run.result(stream_.handle()), one_row_within_);
  }

 private:
  finance::MonteCarloDeviceRun& prepared(const MonteCarloVariant& v) {
    if (prepared_for_ != &v) {
      run_.reset();  // one book's device memory at a time
      run_ = v.prepare(book_.view(), options_);
      prepared_for_ = &v;
    }
    return *run_;
  }

  const Book& book_;
  MonteCarloOptions options_;
  cuda::Stream& stream_;
  double one_row_within_;
  const MonteCarloVariant* prepared_for_ = nullptr;
  std::unique_ptr<finance::MonteCarloDeviceRun> run_;
};

// A row of a workload study: the variant's row under the workload's name, the workload in the
// description, no step speedups (the rows are not a ladder).
Row study_row(const BenchConfig& config, const MonteCarloVariant& v, DeviceWorkload& workload,
              std::string label, const std::string& what, const char* seed_reference) {
  Row row = time_variant(config, v, workload, std::move(label));
  row.description = fmt::format("{}; {}", what, row.description);
  row.seed_reference = seed_reference;
  row.ladder = false;
  return row;
}

// One option priced by `variant` with `options` (European: 000 slides 20-25; barrier: 003).
Row one_option_row(const BenchConfig& config, const MonteCarloVariant& v, const BenchOption& in,
                   const MonteCarloOptions& options, std::string label, cuda::Stream& stream,
                   double within = 4) {
  const Book book(in, 1);
  DeviceWorkload workload(book, options, stream, within);
  const std::int64_t samples = options.antithetic ? options.paths / 2 : options.paths;
  return study_row(config, v, workload, std::move(label),
                   fmt::format("1 option, {} {} x {} steps, data on the device", samples,
                               options.antithetic ? "antithetic pairs" : "paths", in.steps),
                   in.type == BarrierType::none ? "000: slides 20-25" : "003: Application 3");
}

void speed_tables(const BenchConfig& config, Report& report) {
  cuda::Stream stream;
  const MonteCarloVariant& best = finance::default_monte_carlo_variant();
  const MonteCarloVariant& curand = finance::find_monte_carlo_variant("curand-philox");
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
  const BenchOption vanilla = bench_option(BarrierType::none, 1);
  if (want_float) {
    // The vendor's estimator differences its sums of squares: 5 standard errors.
    european.rows.push_back(one_option_row(config, curand, vanilla,
                                           bench_options(kEuropeanSamples, true),
                                           "curand-philox-float", stream, 5));
    european.rows.push_back(one_option_row(
        config, best, vanilla, bench_options(kEuropeanSamples, true), "european-float", stream));
    european.rows.push_back(one_option_row(config, best, vanilla,
                                           bench_options(2 * kEuropeanSamples, true, true, false),
                                           "european-float-antithetic", stream));
    european.rows.push_back(one_option_row(config, best, vanilla,
                                           bench_options(kEuropeanSamples, true, false, true),
                                           "european-float-control", stream));
  }
  if (want_double) {
    european.rows.push_back(one_option_row(
        config, best, vanilla, bench_options(kEuropeanSamples, false), "european-double", stream));
  }
  report.tables.push_back(std::move(european));

  Table barrier =
      device_table(report,
                   "Down-and-out call, 252 discrete dates, one option: path-steps/s (bar: float >= "
                   "620 G path-steps/s)");
  barrier.element_name = "path-steps";
  const BenchOption knock_out = bench_option(BarrierType::down_out, 252);
  if (want_float) {
    barrier.rows.push_back(one_option_row(config, curand, knock_out,
                                          bench_options(kBarrierPaths, true), "curand-252-float",
                                          stream, 5));
    barrier.rows.push_back(one_option_row(
        config, best, knock_out, bench_options(kBarrierPaths, true), "barrier-252-float", stream));
  }
  if (want_double) {
    barrier.rows.push_back(one_option_row(config, best, knock_out,
                                          bench_options(kBarrierPaths, false), "barrier-252-double",
                                          stream));
  }
  if (want_float) {
    barrier.rows.push_back(one_option_row(config, best, knock_out,
                                          bench_options(kBarrierPaths * 4, true),
                                          "barrier-252-float 16M", stream));
  }
  report.tables.push_back(std::move(barrier));
}

void grid_table(const BenchConfig& config, Report& report) {
  cuda::Stream stream;
  const MonteCarloVariant& best = finance::default_monte_carlo_variant();
  Table table = device_table(
      report,
      "The seed's problem-size grid (000, slides 26-37): float European calls, options x paths, "
      "automatic launch shape; samples/s should be a horizontal line (note: options/s, and "
      "samples/s as a fraction of the grid's best)");
  table.element_name = "samples";
  const BenchOption vanilla = bench_option(BarrierType::none, 1);
  for (const std::int64_t options : kGridOptions) {
    for (const std::int64_t paths : kGridPaths) {
      if (options * paths > kMaxGridSamples) continue;
      const Book book(vanilla, options);
      DeviceWorkload workload(book, bench_options(paths, true), stream, 6);
      table.rows.push_back(
          study_row(config, best, workload, fmt::format("grid {}x{}", options, paths),
                    fmt::format("{} options x {} paths", options, paths), "000: slides 26-37"));
    }
  }
  double best_rate = 0;
  for (const Row& row : table.rows) best_rate = std::max(best_rate, row.elements / row.median_ms());
  double worst_in_band = best_rate;
  for (std::size_t i = 0, k = 0; i < std::size(kGridOptions); ++i) {
    for (std::size_t j = 0; j < std::size(kGridPaths); ++j) {
      if (kGridOptions[i] * kGridPaths[j] > kMaxGridSamples) continue;
      Row& row = table.rows[k++];
      const double rate = row.elements / row.median_ms();
      row.note = fmt::format("{:.3g} options/s, {:.2f} of best; {}",
                             static_cast<double>(kGridOptions[i]) / (row.median_ms() * 1e-3),
                             rate / best_rate, row.note);
      // The bar's band: from 64 options x 256K paths to 1 option x 16M paths.
      const bool in_band = kGridOptions[i] * kGridPaths[j] >= (std::int64_t{1} << 24);
      if (in_band) worst_in_band = std::min(worst_in_band, rate);
    }
  }
  table.title += fmt::format(
      "; from 64x256K to 1x16M (16M+ samples) the slowest point runs at {:.2f} of the best",
      worst_in_band / best_rate);
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
    const Book book(vanilla, options);
    for (const char* name : {"per-option", "multi-block"}) {
      // Within 6 standard errors even for one row: a launch-shape study, not a speed row.
      DeviceWorkload workload(book, bench_options(paths, true), stream, 6);
      shapes.rows.push_back(study_row(config, finance::find_monte_carlo_variant(name), workload,
                                      fmt::format("{} {}x{}", name, options, paths),
                                      "forced launch shape", "000: slides 34-37"));
    }
  }
  const Book knock_out(bench_option(BarrierType::down_out, 252), 1);
  for (const char* name : {"multi-block", "staged"}) {
    DeviceWorkload workload(knock_out, bench_options(1 << 22, true), stream, 6);
    Row row = study_row(config, finance::find_monte_carlo_variant(name), workload,
                        fmt::format("{} barrier-252 1x4194304", name),
                        "forced launch shape, 252 steps (elements: paths)", "003: Application 3");
    row.elements = static_cast<double>(1 << 22);
    shapes.rows.push_back(std::move(row));
  }
  report.tables.push_back(std::move(shapes));
}

#endif  // GPUKIT_HAVE_CUDA

// The CPU backend as a host-side entry of the same shape as the registry's.
struct HostVariant {
  VariantInfo info;
};
constexpr HostVariant kCpuBackend{
    .info = {.name = "cpu",
             .description = "the CPU backend: OpenMP over tiles, the accurate functions",
             .seed_reference = "CPU backend",
             .role = VariantRole::step,
             // As the registry's rows (monte_carlo_variants.cpp): 10 flops per path-step.
             .traffic = {.reads_per_element = 0, .writes_per_element = 0, .flops_per_element = 10},
             .deterministic = true}};

// A book priced on the CPU, through price_monte_carlo_book.
class HostWorkload {
 public:
  HostWorkload(const Book& book, const MonteCarloOptions& options, const Context& cpu)
      : book_(book), options_(options), cpu_(cpu) {}
  WorkloadShape shape() const { return shape_of(book_, options_); }
  void run(const HostVariant&) {
    result_ = finance::price_monte_carlo_book(cpu_, book_.view(), options_);
  }
  Check check(const HostVariant& v) {
    result_ = {};  // a result the run does not write fails the check
    run(v);
    return book_.check(result_, 4);
  }

 private:
  const Book& book_;
  MonteCarloOptions options_;
  Context cpu_;
  MonteCarloBookResult result_;
};

// time_variant's host twin: checked once, then timed by time_on_host (at most 3 samples: a CPU
// row takes seconds).
Row time_host_variant(const BenchConfig& config, const HostVariant& entry, HostWorkload& workload,
                      std::string label) {
  Check check = workload.check(entry);
  Row row = variant_row(entry.info, workload.shape(), std::move(label));
  row.verify(check.passed, std::move(check.note));
  row.samples_ms = time_on_host(0, std::min(config.repeat, 3), [&] { workload.run(entry); });
  return row;
}

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
    const Book book(in, 1);
    HostWorkload workload(book, bench_options(paths, false), cpu);
    Row row = time_host_variant(config, kCpuBackend, workload, name);
    row.description = fmt::format("{} paths x {} steps; {}", paths, in.steps, row.description);
    row.ladder = false;
    table.rows.push_back(std::move(row));
  }
  report.tables.push_back(std::move(table));
}

// ---- Sobol against Philox -------------------------------------------------------------------

#if GPUKIT_HAVE_CUDA

constexpr HostVariant kSamplerRow{
    .info = {.name = "sampler",
             .description = "price_monte_carlo_book on one option, host data",
             .seed_reference = "issue 33",
             .role = VariantRole::step,
             .traffic = {.reads_per_element = 0, .writes_per_element = 0, .flops_per_element = 10},
             .deterministic = true}};

// One option priced through the library call (host data: the transfers of one row are nothing
// beside the paths) with one sampler, checked against the closed form as the other rows are.
class SamplerWorkload {
 public:
  SamplerWorkload(const Context& context, const BenchOption& in, MonteCarloOptions options)
      : context_(context), book_(in, 1), options_(std::move(options)) {}
  WorkloadShape shape() const { return shape_of(book_, options_); }
  void launch(const HostVariant&) {
    result_ = finance::price_monte_carlo_book(context_, book_.view(), options_);
  }
  Check check(const HostVariant& v) {
    result_ = {};
    launch(v);
    return book_.check(result_, 4);
  }

 private:
  Context context_;
  Book book_;
  MonteCarloOptions options_;
  MonteCarloBookResult result_;
};

// Scrambled Sobol points through the Brownian bridge against the in-kernel Philox numbers, on
// the same product and the same number of paths, each as the library prices it (bar: Sobol at
// >= 0.8x Philox's rate).
void sampler_table(const BenchConfig& config, Report& report) {
  Table table;
  table.title =
      "Sobol (Owen-scrambled, 16 replicates, Brownian bridge) against Philox, one option, float, "
      "the library call on host data: path-steps/s (bar: sobol >= 0.8x philox)";
  table.element_name = "path-steps";
  const struct {
    const char* name;
    BenchOption option;
    std::int64_t paths;
  } products[] = {{"european", bench_option(BarrierType::none, 1), std::int64_t{1} << 28},
                  {"barrier-252", bench_option(BarrierType::down_out, 252), std::int64_t{1} << 22}};
  for (const auto& product : products) {
    double philox_ms = 0;
    for (const finance::MonteCarloSampler sampler :
         {finance::MonteCarloSampler::philox, finance::MonteCarloSampler::sobol}) {
      MonteCarloOptions options = bench_options(product.paths, true);
      options.sampler = sampler;
      SamplerWorkload workload(config.context, product.option, options);
      const bool sobol = sampler == finance::MonteCarloSampler::sobol;
      Row row = time_variant(config, kSamplerRow, workload,
                             fmt::format("{}-float-{}", product.name, sobol ? "sobol" : "philox"));
      if (sobol && row.median_ms() > 0) {
        row.note += fmt::format("; {:.2f}x the philox rate", philox_ms / row.median_ms());
      } else {
        philox_ms = row.median_ms();
      }
      table.rows.push_back(std::move(row));
    }
  }
  report.tables.push_back(std::move(table));
}

// One path-dependent option of 252 dates (an arithmetic Asian call, or a Heston European call)
// priced through the library call on host data. No closed form exists for either: the tests
// check them against their oracles (monte_carlo_products_tests); here a finite, positive price
// with a positive standard error.
class ProductWorkload {
 public:
  ProductWorkload(const Context& context, bool asian, std::int64_t paths)
      : context_(context), options_(bench_options(paths, true)) {
    if (asian)
      average_ = finance::AverageType::arithmetic;
    else
      model_ = finance::AssetModel::heston;
  }
  WorkloadShape shape() const {
    return {.elements = double(options_.paths) * kDates, .value_bytes = 4.0};
  }
  void launch(const HostVariant&) {
    finance::MonteCarloBookView v;
    v.count = 1;
    v.is_put = &is_put_, v.spot = &spot_, v.strike = &spot_, v.maturity = &maturity_;
    v.rate = {nullptr, 0.05}, v.volatility = {nullptr, 0.25}, v.dividend = {nullptr, 0.02};
    v.steps = &steps_, v.average = &average_, v.model = &model_;
    // Heston: v0 = theta = 0.0625 (the Black-Scholes rows' 25% volatility), Feller's condition
    // broken as in most calibrations (2 kappa theta < sigma_v^2), strong negative correlation.
    v.v0 = {nullptr, 0.0625}, v.kappa = {nullptr, 1.5}, v.theta = {nullptr, 0.0625};
    v.sigma_v = {nullptr, 0.6}, v.rho = {nullptr, -0.7};
    result_ = finance::price_monte_carlo_book(context_, v, options_);
  }
  Check check(const HostVariant& v) {
    result_ = {};
    launch(v);
    const double price = result_.price.empty() ? -1 : result_.price[0];
    const double std_error = result_.std_error.empty() ? -1 : result_.std_error[0];
    const bool ok = std::isfinite(price) && price > 0 && std_error > 0;
    return {ok, fmt::format("{} (price {:.6f} +- {:.1e}; the oracles are the tests')",
                            ok ? "ok" : "OFF", price, std_error)};
  }

 private:
  static constexpr std::uint32_t kDates = 252;
  Context context_;
  MonteCarloOptions options_;
  std::uint8_t is_put_ = 0;
  double spot_ = 100, maturity_ = 1;
  std::uint32_t steps_ = kDates;
  finance::AverageType average_ = finance::AverageType::none;
  finance::AssetModel model_ = finance::AssetModel::black_scholes;
  MonteCarloBookResult result_;
};

// Asian and Heston paths against the barrier engine's, 252 dates, float, the library call on host
// data (bars: Asian arithmetic >= 0.9x the barrier's path-steps/s, Heston QE >= 0.5x).
void products_table(const BenchConfig& config, Report& report) {
  Table table;
  table.title =
      "Path-dependent products, 252 dates, one option, float, the library call on host data: "
      "path-steps/s (bars: asian >= 0.9x barrier, heston >= 0.5x barrier)";
  table.element_name = "path-steps";
  constexpr std::int64_t kPaths = std::int64_t{1} << 22;
  MonteCarloOptions options = bench_options(kPaths, true);
  SamplerWorkload barrier(config.context, bench_option(BarrierType::down_out, 252), options);
  table.rows.push_back(time_variant(config, kSamplerRow, barrier, "barrier-252-float"));
  const double barrier_ms = table.rows.back().median_ms();
  for (const bool asian : {true, false}) {
    ProductWorkload workload(config.context, asian, kPaths);
    Row row = time_variant(config, kSamplerRow, workload,
                           asian ? "asian-arithmetic-252-float" : "heston-qe-252-float");
    if (row.median_ms() > 0) {
      row.note += fmt::format("; {:.2f}x the barrier's rate", barrier_ms / row.median_ms());
    }
    table.rows.push_back(std::move(row));
  }
  report.tables.push_back(std::move(table));
}

#endif  // GPUKIT_HAVE_CUDA

// ---- Early exercise (Longstaff-Schwartz) ---------------------------------------------------

// Longstaff and Schwartz's put (S = 36, K = 40, r = 6%, sigma = 20%, T = 1) on 50 Bermudan dates,
// whose value a binomial tree of 10,000 steps with exercise on those dates gives as 4.47787
// (tests/finance/binomial_tree_oracle.hpp; the tests check the tree against published values).
constexpr double kAmericanTreePrice = 4.47787;
constexpr std::uint32_t kAmericanDates = 50;
constexpr std::int64_t kAmericanPaths = std::int64_t{1} << 20;

constexpr HostVariant kAmericanRow{
    .info = {.name = "lsm",
             .description = "Longstaff-Schwartz: both passes and the regression, host data",
             .seed_reference = "issue 33",
             .role = VariantRole::step,
             // Per path-date: about the European engine's 10 flops in each pass, and the
             // regression's 11 sums.
             .traffic = {.reads_per_element = 0, .writes_per_element = 0, .flops_per_element = 30},
             .deterministic = true}};

// The put's book priced by price_monte_carlo_book on one backend; checked against the tree
// (low-biased: above it by 4 standard errors at most, below it by 4 standard errors and the
// tests' 0.5% allowance for the fitted rule's bias).
class AmericanWorkload {
 public:
  AmericanWorkload(const Context& context, bool float32) : context_(context) {
    options_ = bench_options(kAmericanPaths, float32);
  }
  WorkloadShape shape() const {
    return {.elements = double(kAmericanPaths) * kAmericanDates,
            .value_bytes = options_.precision == finance::Precision::float32 ? 4.0 : 8.0};
  }
  void launch(const HostVariant&) {
    finance::MonteCarloBookView v;
    v.count = 1;
    v.is_put = &is_put_, v.spot = &spot_, v.strike = &strike_, v.maturity = &maturity_;
    v.rate = {nullptr, 0.06}, v.volatility = {nullptr, 0.2}, v.dividend = {nullptr, 0};
    v.steps = &dates_, v.exercise = &exercise_;
    result_ = finance::price_monte_carlo_book(context_, v, options_);
  }
  Check check(const HostVariant& v) {
    result_ = {};
    launch(v);
    if (result_.price.size() != 1) return {false, "no result"};
    const double price = result_.price[0], std_error = result_.std_error[0];
    const bool ok = price <= kAmericanTreePrice + 4 * std_error &&
                    price >= kAmericanTreePrice - 4 * std_error - 5e-3 * kAmericanTreePrice;
    return {ok, fmt::format("{} (price {:.5f} +- {:.1e}, tree {:.5f})", ok ? "ok" : "OFF", price,
                            std_error, kAmericanTreePrice)};
  }

 private:
  Context context_;
  MonteCarloOptions options_;
  std::uint8_t is_put_ = 1;
  double spot_ = 36, strike_ = 40, maturity_ = 1;
  std::uint32_t dates_ = kAmericanDates;
  finance::ExerciseStyle exercise_ = finance::ExerciseStyle::bermudan;
  MonteCarloBookResult result_;
};

void american_table(const BenchConfig& config, Report& report) {
  Table table;
  table.title = fmt::format(
      "Bermudan put by Longstaff-Schwartz, {} paths x {} dates, float, the whole price (host "
      "data; bar on an H200: under 20 ms and >= 20x the CPU backend)",
      kAmericanPaths, kAmericanDates);
  table.element_name = "path-dates";
  std::vector<Context> contexts;
  if (config.context.backend == Backend::cuda) contexts.push_back(config.context);
  contexts.push_back(Context::cpu(config.context.cpu_threads));
  for (const Context& context : contexts) {
    AmericanWorkload workload(context, true);
    const std::string name =
        context.backend == Backend::cuda
            ? "lsm-float-cuda"
            : fmt::format("lsm-float-cpu ({} threads)", context.effective_cpu_threads());
    Row row = time_variant(config, kAmericanRow, workload, name);
    table.rows.push_back(std::move(row));
  }
  if (table.rows.size() == 2 && table.rows[1].median_ms() > 0) {
    table.rows[0].note += fmt::format("; {:.1f}x the CPU backend",
                                      table.rows[1].median_ms() / table.rows[0].median_ms());
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
    sampler_table(config, report);
    products_table(config, report);
  }
#endif
  cpu_table(config, report);
  american_table(config, report);
}

}  // namespace gpukit::bench
