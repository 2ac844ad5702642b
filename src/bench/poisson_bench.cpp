#include "bench/poisson_bench.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_random.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/pde/poisson.hpp"
#include "pde/cuda/poisson_device_ops.hpp"
#include "pde/poisson_variants.hpp"

namespace gpukit::bench {

namespace {

using pde::PoissonGrid;
using pde::PoissonVariant;

// A smooth mean-zero right-hand side plus a little noise (mean removed), so that every mode
// carries data and rounding is exercised. Element i is a function of i alone.
template <class Real>
std::vector<Real> bench_rhs(std::int64_t n) {
  std::vector<Real> f(static_cast<std::size_t>(n));
  double sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (std::int64_t i = 0; i < n; ++i) {
    const double noise = double(hash_index(static_cast<std::uint64_t>(i)) >> 11) * 0x1p-53 - 0.5;
    const double v = std::sin(2 * 3.14159265358979 * double(i % 1031) / 1031.0) + noise;
    f[static_cast<std::size_t>(i)] = static_cast<Real>(v);
    sum += v;
  }
  const double mean = sum / double(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    f[static_cast<std::size_t>(i)] = static_cast<Real>(f[static_cast<std::size_t>(i)] - mean);
  return f;
}

std::string shape_name(const PoissonGrid& g) {
  std::string s;
  for (const std::int64_t n : g.shape) s += fmt::format("{}{}", s.empty() ? "" : "x", n);
  return s;
}

template <class Real>
Row skipped_row(const PoissonVariant& v, const std::string& why) {
  Row row;
  row.variant = std::string(v.name);
  row.description = std::string(v.description);
  row.seed_reference = std::string(v.seed_reference);
  row.ladder = false;
  row.note = "skipped: " + why;
  return row;
}

// One table: every selected variant (those with `only_best`: the default and the vendor) on one
// grid, device-resident data, verified against the vendor's result (and the CPU's when given).
template <class Real>
void grid_table(const BenchConfig& config, Report& report, const PoissonGrid& grid,
                bool only_best) {
  const char* type = std::is_same_v<Real, float> ? "float" : "double";
  const std::int64_t n = grid.size();
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(Real);
  const pde::GridShape shape = pde::grid_shape(grid);
  const std::string best = pde::default_poisson_variant<Real>(grid);
  Table table = device_table(
      report, fmt::format("Poisson {} {} ({}D, periodic, spectral): device-resident f and u; "
                          "GB/s counts one read of f and one write of u",
                          shape_name(grid), type, grid.rank()));
  table.element_name = "points";
  const std::vector<Real> host_f = bench_rhs<Real>(n);
  cuda::DeviceBuffer<Real> f(static_cast<std::size_t>(n)), u(static_cast<std::size_t>(n));
  f.copy_from_host(host_f);
  cuda::synchronize_device();  // the pageable copy has landed before the non-blocking stream reads
                               // f
  cuda::Stream stream;
  std::vector<Real> expected;  // the vendor's solution, computed first
  double bound = 0;
  // The vendor first (it is the reference of the others), then the ladder in order.
  std::vector<const PoissonVariant*> order;
  for (const PoissonVariant& v : pde::poisson_variants())
    if (v.vendor) order.push_back(&v);
  for (const PoissonVariant& v : pde::poisson_variants())
    if (!v.vendor) order.push_back(&v);
  std::vector<Row> rows(order.size());
  for (std::size_t r = 0; r < order.size(); ++r) {
    const PoissonVariant& v = *order[r];
    if (!variant_selected(config, v.name) && !v.vendor) continue;
    if (only_best && !v.vendor && v.name != best && v.name != "r2c") continue;
    if (!v.supports(shape)) {
      rows[r] = skipped_row<Real>(v, "does not support the shape");
      continue;
    }
    const std::size_t need = v.device_bytes<Real>(shape);
    const std::size_t free_bytes = pde::cuda_detail::device_free_bytes();
    if (need > free_bytes) {
      rows[r] = skipped_row<Real>(
          v, fmt::format("needs {} MB, {} MB free", need >> 20, free_bytes >> 20));
      continue;
    }
    std::unique_ptr<pde::DeviceSolver<Real>> solver = v.make<Real>(shape);
    const auto run = [&] { solver->solve(f.data(), u.data(), stream.handle()); };
    cuda::fill_bytes_async(u.data(), 0xFF, bytes, stream.handle());  // NaN
    run();
    stream.synchronize();
    std::vector<Real> result(static_cast<std::size_t>(n));
    u.copy_to_host(result);
    Row row;
    row.variant = std::string(v.name);
    row.description = std::string(v.description);
    row.seed_reference = std::string(v.seed_reference);
    row.elements = static_cast<double>(n);
    row.bytes = 2.0 * static_cast<double>(bytes);
    row.vendor = v.vendor;
    row.ladder = !v.vendor;
    if (v.vendor) {
      expected = result;
      double max_f = 0, max_u = 0;
      for (const Real x : host_f) max_f = std::max(max_f, double(std::fabs(x)));
      for (const Real x : expected) max_u = std::max(max_u, double(std::fabs(x)));
      bound = 2 * pde::poisson_agreement_bound<Real>(grid, max_f, max_u);
      bool finite = true;
      for (const Real x : expected) finite = finite && std::isfinite(x);
      row.note = finite ? "reference" : "NOT FINITE";
    } else {
      const ErrorMetrics m = compare<Real, Real>(expected, result);
      row.note = fmt::format("{} (max err {:.2g} vs cufft)", m.max_abs <= bound ? "ok" : "MISMATCH",
                             m.max_abs);
    }
    if (v.name == best) row.note += ", default";
    row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, run);
    rows[r] = std::move(row);
  }
  // Print in ladder order with the vendor last.
  for (std::size_t r = 1; r < rows.size(); ++r)
    if (!rows[r].variant.empty()) table.rows.push_back(std::move(rows[r]));
  if (!rows.empty() && !rows[0].variant.empty()) table.rows.push_back(std::move(rows[0]));
  report.tables.push_back(std::move(table));
}

void cpu_table(const BenchConfig& config, Report& report, const std::vector<PoissonGrid>& grids) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  Table table;
  table.title = fmt::format("Poisson on the CPU backend (FFTW r2c/c2r, {} threads), host data",
                            cpu.effective_cpu_threads());
  table.element_name = "points";
  for (const PoissonGrid& grid : grids) {
    for (const bool single : {true, false}) {
      if ((single && config.precision == "double") || (!single && config.precision == "float"))
        continue;
      Row row;
      row.variant = fmt::format("cpu-fftw {} {}", shape_name(grid), single ? "float" : "double");
      row.description = "FFTW_ESTIMATE plans, fftw3_omp";
      row.seed_reference = "CPU backend";
      row.elements = static_cast<double>(grid.size());
      row.ladder = false;
      const auto measure = [&](auto zero) {
        using Real = decltype(zero);
        const std::vector<Real> f = bench_rhs<Real>(grid.size());
        std::vector<Real> u(f.size());
        pde::PoissonPlan<Real> plan(cpu, grid);
        row.bytes = 2.0 * static_cast<double>(grid.size()) * sizeof(Real);
        row.samples_ms = time_on_host(1, std::min(config.repeat, 5), [&] { plan.solve(f, u); });
      };
      if (single)
        measure(float{});
      else
        measure(double{});
      row.note = "ok";
      table.rows.push_back(std::move(row));
    }
  }
  report.tables.push_back(std::move(table));
}

}  // namespace

void run_poisson_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
  std::vector<PoissonGrid> grids;
  if (config.size > 0) {
    grids.push_back({{config.size, config.size}, {}});
  } else {
    for (const std::int64_t n : {1024, 2048, 4096, 8192}) grids.push_back({{n, n}, {}});
    for (const std::int64_t n : {128, 256, 512}) grids.push_back({{n, n, n}, {}});
  }
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    for (const PoissonGrid& grid : grids) {
      if (config.precision != "double") grid_table<float>(config, report, grid, false);
      if (config.precision != "float") grid_table<double>(config, report, grid, true);
    }
  }
  std::vector<PoissonGrid> small;
  for (const PoissonGrid& g : grids)
    if (g.size() <= (std::int64_t{1} << 22)) small.push_back(g);
  cpu_table(config, report, small);
}

}  // namespace gpukit::bench
