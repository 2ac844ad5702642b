#include "bench/poisson_walls_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "pde/cuda/poisson_device_ops.hpp"
#include "pde/cuda/poisson_walls.hpp"

namespace gpukit::bench {

#if GPUKIT_HAVE_CUDA
namespace {

using pde::walls::AxisKind;

// A manufactured problem in the boundary's own modes (periodic: sines of frequency m; dirichlet:
// sin(pi m x / L); neumann: cos(pi m x / L)), m = 1 and 7 on every axis, spectral operator:
// f = -sum_a (w_a)^2 u term by term, exact on the grid. The bound: 4 log2(n) eps (max|u| +
// max|f| / the smallest nonzero |eigenvalue|).
struct WallsProblem {
  std::vector<double> f, u;
  double bound_units = 0;  // the bound divided by eps(Real)
};

WallsProblem walls_problem(const pde::cuda_detail::WallsShape& s) {
  constexpr double pi = std::numbers::pi;
  std::int64_t n = 1;
  for (int a = 0; a < s.rank; ++a) n *= s.n[a];
  WallsProblem p{std::vector<double>(static_cast<std::size_t>(n)),
                 std::vector<double>(static_cast<std::size_t>(n))};
  constexpr int kModes[2] = {1, 7};
  std::vector<double> table[2][3];
  double w2[2] = {0, 0};
  double smallest = std::numeric_limits<double>::infinity();
  for (int t = 0; t < 2; ++t) {
    for (int a = 0; a < s.rank; ++a) {
      const double L = s.length[a];
      const AxisKind kind = s.kind[a];
      const double w = (kind == AxisKind::periodic ? 2 * pi : pi) * kModes[t] / L;
      w2[t] += w * w;
      smallest = std::min(
          smallest, kind == AxisKind::periodic ? (2 * pi / L) * (2 * pi / L) : (pi / L) * (pi / L));
      table[t][a].resize(static_cast<std::size_t>(s.n[a]));
      for (std::int64_t j = 0; j < s.n[a]; ++j) {
        const double x = kind == AxisKind::dirichlet ? (j + 1) * L / double(s.n[a] + 1)
                         : kind == AxisKind::neumann ? (j + 0.5) * L / double(s.n[a])
                                                     : j * L / double(s.n[a]);
        table[t][a][static_cast<std::size_t>(j)] =
            kind == AxisKind::neumann ? std::cos(w * x) : std::sin(w * x);
      }
    }
  }
  double max_u = 0, max_f = 0;
#pragma omp parallel for schedule(static) reduction(max : max_u, max_f)
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i, idx[3] = {0, 0, 0};
    for (int a = s.rank - 1; a >= 0; --a) idx[a] = rest % s.n[a], rest /= s.n[a];
    double u = 0, f = 0;
    for (int t = 0; t < 2; ++t) {
      double product = 1;
      for (int a = 0; a < s.rank; ++a) product *= table[t][a][static_cast<std::size_t>(idx[a])];
      u += product, f -= w2[t] * product;
    }
    p.u[static_cast<std::size_t>(i)] = u, p.f[static_cast<std::size_t>(i)] = f;
    max_u = std::max(max_u, std::fabs(u)), max_f = std::max(max_f, std::fabs(f));
  }
  p.bound_units = 4 * std::log2(double(2 * n + 2)) * (max_u + max_f / smallest);
  return p;
}

// A solver (the periodic default variant's, or the walls solver) timed on device-resident f and
// u, checked against its manufactured solution.
template <class Real>
class WallsWorkload {
 public:
  WallsWorkload(const pde::cuda_detail::WallsShape& shape, cuda::Stream& stream)
      : problem_(walls_problem(shape)), stream_(stream), f_(size()), u_(size()) {
    f_.copy_from_host(std::vector<Real>(problem_.f.begin(), problem_.f.end()));
  }
  std::unique_ptr<pde::DeviceSolver<Real>> solver;
  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(size()), .value_bytes = sizeof(Real)};
  }
  template <class Entry>
  void launch(const Entry&) {
    solver->solve(f_.data(), u_.data(), stream_.handle());
  }
  template <class Entry>
  Check check(const Entry&) {
    cuda::fill_bytes_async(u_.data(), 0xFF, size() * sizeof(Real), stream_.handle());
    solver->solve(f_.data(), u_.data(), stream_.handle());
    stream_.synchronize();
    std::vector<Real> u(size());
    u_.copy_to_host(u);
    const double bound = problem_.bound_units * std::numeric_limits<Real>::epsilon();
    double worst = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < u.size(); ++i) {
      const double d = std::fabs(double(u[i]) - problem_.u[i]);
      if (!(d <= bound)) ++bad;
      worst = std::max(worst, d);
    }
    return {bad == 0, fmt::format("{}: manufactured solution, max err {:.2g} (bound {:.2g})",
                                  bad == 0 ? "ok" : "MISMATCH", worst, bound)};
  }

 private:
  std::size_t size() const { return problem_.u.size(); }
  WallsProblem problem_;
  cuda::Stream& stream_;
  cuda::DeviceBuffer<Real> f_, u_;
};

struct WallsEntry {
  VariantInfo info;
};

template <class Real>
void walls_table(const BenchConfig& config, Report& report, std::vector<std::int64_t> n) {
  const char* type = std::is_same_v<Real, float> ? "float" : "double";
  std::string shape_text;
  for (const std::int64_t k : n)
    shape_text += fmt::format("{}{}", shape_text.empty() ? "" : "x", k);
  Table table = device_table(
      report, fmt::format("Poisson with walls {} {} ({}D, spectral): every axis dirichlet or "
                          "neumann against the periodic fused solve of the same grid (the "
                          "reference row; bar: at most 1.3x its time); device-resident f and u",
                          shape_text, type, n.size()));
  table.element_name = "points";
  cuda::Stream stream;
  pde::cuda_detail::WallsShape shape;
  shape.rank = static_cast<int>(n.size());
  for (int a = 0; a < shape.rank; ++a) shape.n[a] = n[static_cast<std::size_t>(a)];
  const TrafficModel traffic{.reads_per_element = 1, .writes_per_element = 1};
  // The periodic reference: the registry's default variant for the grid.
  {
    pde::PoissonGrid grid{n, {}};
    const std::string best = pde::default_poisson_variant<Real>(grid);
    const pde::PoissonVariant& v = pde::find_poisson_variant(best);
    WallsWorkload<Real> workload(shape, stream);
    workload.solver = v.make<Real>(pde::grid_shape(grid));
    const WallsEntry entry{{.name = "periodic",
                            .description = "the periodic solve (the default variant)",
                            .seed_reference = "reference row",
                            .role = VariantRole::vendor,
                            .traffic = traffic}};
    Row row = time_variant(config, entry, workload);
    row.note += fmt::format("; variant {}", best);
    table.rows.push_back(std::move(row));
  }
  using pde::cuda_detail::WallsPipeline;
  for (const AxisKind kind : {AxisKind::dirichlet, AxisKind::neumann}) {
    for (int a = 0; a < shape.rank; ++a) shape.kind[a] = kind;
    for (const WallsPipeline pipeline : {WallsPipeline::per_axis, WallsPipeline::whole_grid}) {
      const bool whole = pipeline == WallsPipeline::whole_grid;
      const std::string name = fmt::format(
          "{}-{}", kind == AxisKind::dirichlet ? "dirichlet" : "neumann", whole ? "grid" : "axes");
      const std::string description =
          fmt::format("{}: {}", pde::cuda_detail::walls_pipeline_name(pipeline),
                      whole ? "one R2C and one C2R of the rearranged grid, one fused kernel"
                            : "an R2C (and C2R) an axis between index kernels");
      const WallsEntry entry{{.name = name,
                              .description = description,
                              .seed_reference = "beyond the seeds",
                              .role = whole ? VariantRole::best : VariantRole::step,
                              .traffic = traffic}};
      if (pde::cuda_detail::walls_device_bytes<Real>(shape, pipeline) >
          pde::cuda_detail::device_free_bytes()) {
        continue;
      }
      WallsWorkload<Real> workload(shape, stream);
      workload.solver = pde::cuda_detail::make_walls_solver<Real>(shape, pipeline);
      Row row = time_variant(config, entry, workload);
      row.ladder = false;  // two boundaries side by side, not one ladder: the ratio is vs vendor
      table.rows.push_back(std::move(row));
    }
  }
  report.tables.push_back(std::move(table));
}

}  // namespace
#endif

void run_poisson_walls_bench([[maybe_unused]] const BenchConfig& config,
                             [[maybe_unused]] Report& report) {
#if GPUKIT_HAVE_CUDA
  std::vector<std::vector<std::int64_t>> grids;
  if (config.size > 0) {
    grids.push_back({config.size, config.size});
  } else {
    // 4095^2 beside 4096^2: a dirichlet axis' FFT is 2(n + 1) long, 8194 = 2 17 241 at n =
    // 4096 (a prime cuFFT takes slowly) and 8192 at n = 4095.
    grids = {{4096, 4096}, {4095, 4095}, {512, 512, 512}};
  }
  for (const std::vector<std::int64_t>& n : grids) {
    if (config.precision != "double") walls_table<float>(config, report, n);
    if (config.precision != "float") walls_table<double>(config, report, n);
  }
#endif
}

}  // namespace gpukit::bench
