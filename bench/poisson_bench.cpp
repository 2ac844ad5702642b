#include "bench/poisson_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_random.hpp"
#include "bench/poisson_walls_bench.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "pde/cuda/poisson_device_ops.hpp"

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

// A manufactured problem with its closed-form solution, the independent reference every row is
// verified against: u = the sum of two separable products of sines, one of the lowest modes
// (m = 1) and one of moderate modes (m = 7; both at most (n_a - 1) / 2, so resolvable), and
// f = lap u = -|k|^2 u term by term. Each term oscillates along some axis, so mean(u) = 0 (the
// solver's mean gauge); a grid too small for any mode has u = f = 0.
struct Manufactured {
  std::vector<double> f, u;
  double max_f = 0, max_u = 0;
};

Manufactured manufactured(const PoissonGrid& g) {
  const int rank = g.rank();
  const std::int64_t n = g.size();
  constexpr int kModes[2] = {1, 7};
  constexpr double kPhase[3] = {0.3, 1.1, 2.3};
  constexpr double kTwoPi = 6.283185307179586;
  // table[t][a][i]: term t's factor along axis a at index i (1 where the axis does not oscillate).
  std::vector<double> table[2][3];
  double k2[2] = {0, 0};
  bool oscillates[2] = {false, false};
  for (int t = 0; t < 2; ++t) {
    for (int a = 0; a < rank; ++a) {
      const std::int64_t na = g.shape[static_cast<std::size_t>(a)];
      const int m = static_cast<int>(std::min<std::int64_t>(kModes[t], (na - 1) / 2));
      const double k = kTwoPi * m / g.length(a);
      k2[t] += k * k;
      oscillates[t] = oscillates[t] || m != 0;
      table[t][a].resize(static_cast<std::size_t>(na));
      for (std::int64_t i = 0; i < na; ++i) {
        const double x = double(i) * g.length(a) / double(na);
        table[t][a][static_cast<std::size_t>(i)] = m == 0 ? 1.0 : std::sin(k * x + kPhase[a] + t);
      }
    }
  }
  Manufactured out{std::vector<double>(static_cast<std::size_t>(n)),
                   std::vector<double>(static_cast<std::size_t>(n))};
  double max_f = 0, max_u = 0;
#pragma omp parallel for schedule(static) reduction(max : max_f, max_u)
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i, idx[3] = {0, 0, 0};
    for (int a = rank - 1; a >= 0; --a) {
      idx[a] = rest % g.shape[static_cast<std::size_t>(a)];
      rest /= g.shape[static_cast<std::size_t>(a)];
    }
    double u = 0, f = 0;
    for (int t = 0; t < 2; ++t) {
      if (!oscillates[t]) continue;
      double p = 1;
      for (int a = 0; a < rank; ++a) p *= table[t][a][static_cast<std::size_t>(idx[a])];
      u += p;
      f -= k2[t] * p;
    }
    out.u[static_cast<std::size_t>(i)] = u;
    out.f[static_cast<std::size_t>(i)] = f;
    max_f = std::max(max_f, std::fabs(f));
    max_u = std::max(max_u, std::fabs(u));
  }
  out.max_f = max_f;
  out.max_u = max_u;
  return out;
}

struct Verdict {
  bool ok;
  std::string what;
};

// A solution of the manufactured problem against its closed form, within the library's
// agreement bound for two correct solvers (pde::poisson_agreement_bound); a NaN fails.
template <class Real>
Verdict check_manufactured(const PoissonGrid& g, const Manufactured& m,
                           const std::vector<Real>& u) {
  const double bound = pde::poisson_agreement_bound<Real>(g, m.max_f, m.max_u);
  double max_err = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double d = std::fabs(double(u[i]) - m.u[i]);
    if (!(d <= bound)) ++bad;  // NaN counts
    if (d > max_err) max_err = d;
  }
  return {bad == 0, fmt::format("{}: manufactured solution, max err {:.2g} (bound {:.2g}{})",
                                bad == 0 ? "ok" : "MISMATCH", max_err, bound,
                                bad ? fmt::format(", {} points beyond", bad) : std::string())};
}

template <class Real>
std::vector<Real> to_real(const std::vector<double>& x) {
  return std::vector<Real>(x.begin(), x.end());
}

std::string shape_name(const PoissonGrid& g) {
  std::string s;
  for (const std::int64_t n : g.shape) s += fmt::format("{}{}", s.empty() ? "" : "x", n);
  return s;
}

template <class Real>
Row skipped_row(const PoissonVariant& v, const std::string& why) {
  Row row;
  row.variant = std::string(v.info.name);
  row.description = std::string(v.info.description);
  row.seed_reference = std::string(v.info.seed_reference);
  row.ladder = false;
  row.skipped = why;
  return row;
}

// The bench's right-hand side and the manufactured problem's on the device, solved by the row's
// solver (made by the caller: plans and buffers are not timed). Each row is verified against the
// manufactured problem's closed form and, on the benchmark's own right-hand side, against the
// vendor's result (within twice the agreement bound, both being approximations); the vendor runs
// first and keeps its solution as that reference.
template <class Real>
class PoissonWorkload {
 public:
  PoissonWorkload(const PoissonGrid& grid, cuda::Stream& stream)
      : grid_(grid),
        n_(grid.size()),
        stream_(stream),
        host_f_(bench_rhs<Real>(n_)),
        problem_(manufactured(grid)),
        f_(size()),
        u_(size()),
        manufactured_f_(size()) {
    f_.copy_from_host(host_f_);
    manufactured_f_.copy_from_host(to_real<Real>(problem_.f));
    // The pageable copies have landed before the non-blocking stream reads f.
    cuda::synchronize_device();
  }

  std::unique_ptr<pde::DeviceSolver<Real>> solver;

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(n_), .value_bytes = sizeof(Real)};
  }
  void launch(const PoissonVariant& /*v*/) {
    solver->solve(f_.data(), u_.data(), stream_.handle());
  }
  Check check(const PoissonVariant& v) {
    std::vector<Real> result(size());
    // The manufactured problem first (poisoned output: 0xFF bytes are NaN), then the bench's own.
    cuda::fill_bytes_async(u_.data(), 0xFF, size() * sizeof(Real), stream_.handle());
    solver->solve(manufactured_f_.data(), u_.data(), stream_.handle());
    stream_.synchronize();
    u_.copy_to_host(result);
    const Verdict closed_form = check_manufactured<Real>(grid_, problem_, result);
    cuda::fill_bytes_async(u_.data(), 0xFF, size() * sizeof(Real), stream_.handle());
    launch(v);
    stream_.synchronize();
    u_.copy_to_host(result);
    if (v.info.vendor()) {
      expected_ = result;
      double max_f = 0, max_u = 0;
      for (const Real x : host_f_) max_f = std::max(max_f, double(std::fabs(x)));
      for (const Real x : expected_) max_u = std::max(max_u, double(std::fabs(x)));
      bound_ = 2 * pde::poisson_agreement_bound<Real>(grid_, max_f, max_u);
      bool finite = true;
      for (const Real x : expected_) finite = finite && std::isfinite(x);
      return {closed_form.ok && finite,
              closed_form.what + (finite ? "; the reference of the other rows"
                                         : "; its own solution is NOT FINITE")};
    }
    if (expected_.empty()) {
      return {closed_form.ok, closed_form.what + "; no vendor result to compare with"};
    }
    const ErrorMetrics m = compare<Real, Real>(expected_, result);
    const bool agrees = m.max_abs <= bound_;  // false for NaN
    return {closed_form.ok && agrees,
            fmt::format("{}; {} (max err {:.2g} vs cufft)", closed_form.what,
                        agrees ? "ok" : "MISMATCH", m.max_abs)};
  }

 private:
  std::size_t size() const { return static_cast<std::size_t>(n_); }

  const PoissonGrid& grid_;
  std::int64_t n_;
  cuda::Stream& stream_;
  std::vector<Real> host_f_;
  Manufactured problem_;
  cuda::DeviceBuffer<Real> f_, u_, manufactured_f_;
  std::vector<Real> expected_;  // the vendor's solution
  double bound_ = 0;
};

// One table: every selected variant (those with `only_best`: the default and the vendor) on one
// grid, device-resident data.
template <class Real>
void grid_table(const BenchConfig& config, Report& report, const PoissonGrid& grid,
                bool only_best) {
  const char* type = std::is_same_v<Real, float> ? "float" : "double";
  const pde::GridShape shape = pde::grid_shape(grid);
  const std::string best = pde::default_poisson_variant<Real>(grid);
  Table table = device_table(
      report, fmt::format("Poisson {} {} ({}D, periodic, spectral): device-resident f and u; "
                          "GB/s counts one read of f and one write of u",
                          shape_name(grid), type, grid.rank()));
  table.element_name = "points";
  cuda::Stream stream;
  PoissonWorkload<Real> workload(grid, stream);
  // The vendor first (it is the reference of the others), then the ladder in order.
  std::vector<const PoissonVariant*> order;
  for (const PoissonVariant& v : pde::poisson_variants())
    if (v.info.vendor()) order.push_back(&v);
  for (const PoissonVariant& v : pde::poisson_variants())
    if (!v.info.vendor()) order.push_back(&v);
  std::vector<Row> rows(order.size());
  for (std::size_t r = 0; r < order.size(); ++r) {
    const PoissonVariant& v = *order[r];
    if (!variant_selected(config, v.info.name) && !v.info.vendor()) continue;
    if (only_best && !v.info.vendor() && v.info.name != best && v.info.name != "r2c") continue;
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
    workload.solver = v.make<Real>(shape);
    // A spectral solve's flops per point grow with log2 N: the entry's traffic model for this grid.
    PoissonVariant sized = v;
    sized.info = v.info_for(shape);
    rows[r] = time_variant(config, sized, workload);
    if (v.info.name == best) rows[r].note += ", default";
    workload.solver.reset();
  }
  // Print in ladder order with the vendor last.
  for (std::size_t r = 1; r < rows.size(); ++r)
    if (!rows[r].variant.empty()) table.rows.push_back(std::move(rows[r]));
  if (!rows.empty() && !rows[0].variant.empty()) table.rows.push_back(std::move(rows[0]));
  report.tables.push_back(std::move(table));
}

// The CPU backend's rows, in the registry shape (harness.hpp, HostVariant): a solve on a CPU plan.
template <class Real>
using CpuSolve = void (*)(pde::PoissonPlan<Real>&, std::span<const Real>, std::span<Real>);

template <class Real>
void cpu_solve(pde::PoissonPlan<Real>& plan, std::span<const Real> f, std::span<Real> u) {
  plan.solve(f, u);
}

template <class Real>
constexpr HostVariant<CpuSolve<Real>> kCpuFftw = {
    .info = {.name = "cpu-fftw",
             .description = "FFTW_ESTIMATE plans, fftw3_omp",
             .seed_reference = "CPU backend",
             .traffic = {.reads_per_element = 1, .writes_per_element = 1}},
    .launch = cpu_solve<Real>,
};

// A CPU plan for the grid, timed on the bench's right-hand side; the check solves the
// manufactured problem into a NaN-poisoned u and compares it with its closed form.
template <class Real>
class CpuSolveWorkload {
 public:
  CpuSolveWorkload(const PoissonGrid& grid, const Context& cpu)
      : grid_(grid), f_(bench_rhs<Real>(grid.size())), u_(f_.size()), plan_(cpu, grid) {}

  WorkloadShape shape() const {
    return {.elements = static_cast<double>(grid_.size()), .value_bytes = sizeof(Real)};
  }
  void launch(const HostVariant<CpuSolve<Real>>& v) { v.launch(plan_, f_, u_); }
  Check check(const HostVariant<CpuSolve<Real>>& v) {
    const Manufactured problem = manufactured(grid_);
    const std::vector<Real> f = to_real<Real>(problem.f);
    std::vector<Real> solved(f.size(), std::numeric_limits<Real>::quiet_NaN());
    v.launch(plan_, f, solved);
    const Verdict verdict = check_manufactured<Real>(grid_, problem, solved);
    return {verdict.ok, verdict.what};
  }

 private:
  const PoissonGrid& grid_;
  std::vector<Real> f_, u_;
  pde::PoissonPlan<Real> plan_;
};

template <class Real>
Row cpu_row(const BenchConfig& config, const PoissonGrid& grid, const Context& cpu) {
  CpuSolveWorkload<Real> w(grid, cpu);
  HostVariant<CpuSolve<Real>> sized = kCpuFftw<Real>;
  sized.info.traffic.flops_per_element =
      pde::poisson_flops_per_element(pde::grid_shape(grid).size());
  return time_variant(
      config, sized, w,
      fmt::format("cpu-fftw {} {}", shape_name(grid), sizeof(Real) == 4 ? "float" : "double"));
}

void cpu_table(const BenchConfig& config, Report& report, const std::vector<PoissonGrid>& grids) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  Table table;
  table.title = fmt::format("Poisson on the CPU backend (FFTW r2c/c2r, {} threads), host data",
                            cpu.effective_cpu_threads());
  table.element_name = "points";
  for (const PoissonGrid& grid : grids) {
    if (config.precision != "double") table.rows.push_back(cpu_row<float>(config, grid, cpu));
    if (config.precision != "float") table.rows.push_back(cpu_row<double>(config, grid, cpu));
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
    run_poisson_walls_bench(config, report);
  }
  std::vector<PoissonGrid> small;
  for (const PoissonGrid& g : grids)
    if (g.size() <= (std::int64_t{1} << 22)) small.push_back(g);
  cpu_table(config, report, small);
}

}  // namespace gpukit::bench
