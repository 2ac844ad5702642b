// Poisson: argument checks (grids, gauges, the mean rule, non-finite input, the messages the CLI
// prints) and the plan's dispatch to the CPU (cpu/poisson_plan.cpp: FFTW) or a CUDA variant
// (cuda/poisson_plan.cpp).

#include "gpukit/pde/poisson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "pde/cuda/poisson_device_ops.hpp"
#include "pde/poisson_impl.hpp"

namespace gpukit::pde {

std::int64_t PoissonGrid::size() const {
  std::int64_t n = 1;
  for (const std::int64_t s : shape) n *= s;
  return n;
}

double PoissonGrid::length(int axis) const {
  return lengths.empty() ? 1.0 : lengths[static_cast<std::size_t>(axis)];
}

Boundary PoissonGrid::boundary(int axis) const {
  return boundaries.empty() ? Boundary::periodic : boundaries[static_cast<std::size_t>(axis)];
}

bool PoissonGrid::periodic() const {
  return std::ranges::all_of(boundaries, [](Boundary b) { return b == Boundary::periodic; });
}

std::string PoissonGrid::describe() const {
  std::string dims, lens, walls;
  for (int a = 0; a < rank(); ++a) {
    dims += fmt::format("{}{}", a ? "x" : "", shape[static_cast<std::size_t>(a)]);
    lens += fmt::format("{}{:g}", a ? "x" : "", length(a));
    if (a < static_cast<int>(boundaries.size()))
      walls += fmt::format("{}{}", a ? "," : "", boundary_name(boundary(a)));
  }
  // A periodic grid reads as it always has; walls are named.
  if (periodic()) return fmt::format("{} (lengths {})", dims, lens);
  return fmt::format("{} (lengths {}, boundaries {})", dims, lens, walls);
}

std::string_view boundary_name(Boundary boundary) {
  switch (boundary) {
    case Boundary::dirichlet:
      return "dirichlet";
    case Boundary::neumann:
      return "neumann";
    case Boundary::periodic:
      break;
  }
  return "periodic";
}

Boundary parse_boundary(std::string_view name) {
  for (const Boundary b : {Boundary::periodic, Boundary::dirichlet, Boundary::neumann}) {
    if (name == boundary_name(b)) return b;
  }
  throw InvalidInput(
      fmt::format("poisson: unknown boundary '{}' (known: periodic, dirichlet, neumann)", name));
}

std::vector<Boundary> axis_boundaries(std::string_view name, std::string_view text, int rank) {
  std::vector<Boundary> given;
  if (text.empty()) return std::vector<Boundary>(static_cast<std::size_t>(std::max(rank, 0)));
  for (std::size_t begin = 0;;) {
    const std::size_t comma = text.find(',', begin);
    const std::string_view item = text.substr(begin, comma - begin);
    try {
      given.push_back(parse_boundary(item));
    } catch (const InvalidInput&) {
      throw InvalidInput(fmt::format(
          "{}: unknown boundary '{}' (known: periodic, dirichlet, neumann)", name, item));
    }
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  if (rank <= 0) return given;
  const auto axes = static_cast<std::size_t>(rank);
  if (given.size() == 1) return std::vector<Boundary>(axes, given[0]);
  if (given.size() != axes) {
    throw InvalidInput(fmt::format(
        "{} gives {} values for a grid of {} axes: give one for every axis, or one per axis", name,
        given.size(), rank));
  }
  return given;
}

std::string_view operator_name(Operator op) { return op == Operator::fd2 ? "fd2" : "spectral"; }

Operator parse_operator(std::string_view text, std::string_view argument) {
  if (text == "spectral") return Operator::spectral;
  if (text == "fd2") return Operator::fd2;
  throw InvalidInput(
      fmt::format("{}: unknown operator '{}' (known: spectral, fd2)", argument, text));
}

double helmholtz_lambda(std::string_view name, double lambda) {
  if (!std::isfinite(lambda) || !(lambda >= 0))
    throw InvalidInput(fmt::format("{} must be finite and >= 0, got {}", name, lambda));
  return lambda;
}

bool poisson_is_singular(const PoissonGrid& grid, const PoissonOptions& options) {
  if (options.helmholtz != 0) return false;
  return std::ranges::none_of(grid.boundaries, [](Boundary b) { return b == Boundary::dirichlet; });
}

std::vector<double> axis_lengths(std::string_view name, std::span<const double> given, int rank) {
  const auto axes = static_cast<std::size_t>(std::max(rank, 0));
  if (given.empty()) return std::vector<double>(axes, 1.0);
  if (given.size() == 1) return std::vector<double>(axes, given[0]);
  if (given.size() != axes) {
    throw InvalidInput(fmt::format(
        "{} gives {} values for a grid of {} axes: give one for every axis, or one per axis", name,
        given.size(), rank));
  }
  return {given.begin(), given.end()};
}

void validate_grid(const PoissonGrid& grid) {
  if (grid.rank() != 2 && grid.rank() != 3) {
    throw InvalidInput(fmt::format(
        "poisson: the grid must have 2 or 3 axes, not {} (a 1D problem is a 2D grid of one row)",
        grid.rank()));
  }
  std::int64_t n = 1;
  for (int a = 0; a < grid.rank(); ++a) {
    const std::int64_t s = grid.shape[static_cast<std::size_t>(a)];
    if (s < 1) throw InvalidInput(fmt::format("poisson: axis {} has size {} (must be >= 1)", a, s));
    if (n > std::numeric_limits<std::int64_t>::max() / 16 / s)
      throw InvalidInput("poisson: the grid's element count overflows");
    n *= s;
  }
  if (!grid.boundaries.empty() && grid.boundaries.size() != grid.shape.size()) {
    throw InvalidInput(fmt::format(
        "poisson: {} boundar{} given for a grid of {} axes (one per axis; pde::axis_boundaries "
        "takes one for every axis)",
        grid.boundaries.size(), grid.boundaries.size() == 1 ? "y" : "ies", grid.shape.size()));
  }
  if (!grid.lengths.empty()) {
    if (grid.lengths.size() != grid.shape.size()) {
      throw InvalidInput(
          fmt::format("poisson: {} length{} given for a grid of {} axes (one per "
                      "axis; pde::axis_lengths takes one for every axis)",
                      grid.lengths.size(), grid.lengths.size() == 1 ? "" : "s", grid.shape.size()));
    }
    for (int a = 0; a < grid.rank(); ++a) {
      const double L = grid.lengths[static_cast<std::size_t>(a)];
      if (!std::isfinite(L) || !(L > 0))
        throw InvalidInput(
            fmt::format("poisson: length {} of axis {} must be finite and > 0", L, a));
    }
  }
}

std::string_view gauge_name(Gauge gauge) { return gauge == Gauge::mean ? "mean" : "corner"; }

Gauge parse_gauge(std::string_view name) {
  if (name == "mean") return Gauge::mean;
  if (name == "corner") return Gauge::corner;
  throw InvalidInput(fmt::format("poisson: unknown gauge '{}' (known: mean, corner)", name));
}

template <class Real>
PoissonResult classify_mean(double sum, double sum_abs, std::int64_t n) {
  PoissonResult r;
  r.mean = n > 0 ? sum / static_cast<double>(n) : 0;
  r.mean_abs = n > 0 ? sum_abs / static_cast<double>(n) : 0;
  r.mean_tolerance = kMeanTolerance * std::numeric_limits<Real>::epsilon() * r.mean_abs;
  r.mean_removed = !(std::fabs(r.mean) <= r.mean_tolerance);  // NaN counts as non-zero
  return r;
}

template <class Real>
double poisson_agreement_bound(const PoissonGrid& grid, double max_abs_f, double max_abs_u) {
  return poisson_agreement_bound<Real>(grid, PoissonOptions{}, max_abs_f, max_abs_u);
}

namespace {

// The magnitude of axis a's first eigenvalue that a solve divides by: k = 1 (dirichlet) or the
// first non-zero mode (m = 1 periodic, k = 1 neumann). An axis of one point has no non-zero mode
// of its own (fd2 periodic or neumann): its spectral value stands in, as the seed's bound takes
// (2 pi / L)^2 whatever the size.
double first_eigenvalue(const PoissonGrid& grid, const PoissonOptions& options, int axis) {
  const std::int64_t n = grid.shape[static_cast<std::size_t>(axis)];
  const Boundary b = grid.boundary(axis);
  const std::int64_t first = b == Boundary::dirichlet ? 0 : 1;
  if (first < n) {
    return detail::laplacian_eigenvalues(first + 1, n, grid.length(axis), b, options.op).back();
  }
  const double k = (b == Boundary::periodic ? 2 : 1) * std::numbers::pi / grid.length(axis);
  return k * k;
}

}  // namespace

template <class Real>
double poisson_agreement_bound(const PoissonGrid& grid, const PoissonOptions& options,
                               double max_abs_f, double max_abs_u) {
  const double eps = std::numeric_limits<Real>::epsilon();
  if (grid.periodic() && options.op == Operator::spectral && options.helmholtz == 0) {
    // The seed's problem: its bound, bit for bit as it always was.
    double longest = 0;
    for (int a = 0; a < grid.rank(); ++a) longest = std::max(longest, grid.length(a));
    const double inv_k_min = longest / (2 * std::numbers::pi);
    const double levels = std::max(1.0, std::log2(static_cast<double>(grid.size())));
    return 4 * levels * eps * (max_abs_u + max_abs_f * inv_k_min * inv_k_min);
  }
  // The length of the FFT each axis' transform is, and the smallest eigenvalue magnitude divided
  // by (poisson.hpp: mu_min).
  double fft_points = 1, mu_min = options.helmholtz, smallest_first = 0;
  for (int a = 0; a < grid.rank(); ++a) {
    const auto n = static_cast<double>(grid.shape[static_cast<std::size_t>(a)]);
    const Boundary b = grid.boundary(a);
    fft_points *= b == Boundary::periodic ? n : b == Boundary::neumann ? 2 * n : 2 * (n + 1);
    const double first = first_eigenvalue(grid, options, a);
    if (b == Boundary::dirichlet) mu_min += first;
    smallest_first = a == 0 ? first : std::min(smallest_first, first);
  }
  if (!(mu_min > 0)) mu_min = smallest_first;
  const double levels = std::max(1.0, std::log2(fft_points));
  return 4 * levels * eps * (max_abs_u + max_abs_f / mu_min);
}

std::vector<double> detail::laplacian_eigenvalues(std::int64_t count, std::int64_t n, double length,
                                                  Boundary boundary, Operator op) {
  if (boundary == Boundary::periodic && op == Operator::spectral)
    return squared_wave_numbers(count, n, length);
  std::vector<double> magnitudes(static_cast<std::size_t>(count));
  const double pi = std::numbers::pi;
  const auto points = static_cast<double>(n);
  for (std::int64_t j = 0; j < count; ++j) {
    double value = 0;
    const auto jd = static_cast<double>(j);
    if (op == Operator::spectral) {
      // -(pi k / L)^2 with k = j + 1 (dirichlet) or j (neumann).
      const double k = pi * (boundary == Boundary::dirichlet ? jd + 1 : jd) / length;
      value = k * k;
    } else if (boundary == Boundary::periodic) {
      // (4 / h^2) sin^2(pi m / n), h = L / n.
      const double m = static_cast<double>(std::min(j, n - j));
      const double s = 2 * points / length * std::sin(pi * m / points);
      value = s * s;
    } else if (boundary == Boundary::dirichlet) {
      // (4 / h^2) sin^2(pi k / (2 (n + 1))), k = j + 1, h = L / (n + 1).
      const double s = 2 * (points + 1) / length * std::sin(pi * (jd + 1) / (2 * (points + 1)));
      value = s * s;
    } else {
      // (4 / h^2) sin^2(pi k / (2 n)), k = j, h = L / n.
      const double s = 2 * points / length * std::sin(pi * jd / (2 * points));
      value = s * s;
    }
    magnitudes[static_cast<std::size_t>(j)] = value;
  }
  return magnitudes;
}

namespace {

// "has no periodic solution" (the seed's words) or "has no solution with boundaries
// neumann,periodic".
std::string no_solution_words(std::span<const Boundary> boundaries) {
  if (std::ranges::all_of(boundaries, [](Boundary b) { return b == Boundary::periodic; }))
    return "has no periodic solution";
  std::string names;
  for (const Boundary b : boundaries)
    names += fmt::format("{}{}", names.empty() ? "" : ",", boundary_name(b));
  return "has no solution with boundaries " + names;
}

}  // namespace

void detail::throw_nonzero_mean(const PoissonResult& r, std::span<const Boundary> boundaries) {
  throw InvalidInput(fmt::format(
      "poisson: the right-hand side's mean {:.6g} is not zero to rounding (|mean| > {:g} eps "
      "mean|f| = {:.3g}): lap(u) = f {} (--strict; without it f - mean is solved)",
      r.mean, kMeanTolerance, r.mean_tolerance, no_solution_words(boundaries)));
}

template <class Real>
PoissonResult detail::apply_mean_rule(double sum, double sum_abs, std::int64_t n,
                                      const PoissonGrid& grid, const PoissonOptions& options) {
  PoissonResult result = classify_mean<Real>(sum, sum_abs, n);
  if (!poisson_is_singular(grid, options)) {
    result.mean_removed = false;  // a nonsingular problem removes nothing
    return result;
  }
  if (result.mean_removed && options.strict) throw_nonzero_mean(result, grid.boundaries);
  return result;
}

void detail::refuse_beyond_periodic_spectral(const PoissonGrid& grid, const PoissonOptions& options,
                                             std::string_view engine, std::string_view instead) {
  if (grid.periodic() && options.op == Operator::spectral && options.helmholtz == 0) return;
  throw InvalidInput(fmt::format(
      "poisson: {} does not yet solve dirichlet/neumann/fd2/helmholtz; {}", engine, instead));
}

std::string describe_poisson_check(const PoissonCheck& check) {
  return fmt::format(
      "long double reference (FFTW), relative L1 {:.3g}, max abs error {:.3g} (bound {:.3g}): {}",
      check.metrics.relative_l1, check.metrics.max_abs, check.bound,
      check.passed ? "ok" : "FAILED");
}

void check_poisson_array_shape(std::span<const std::int64_t> shape, std::string_view source) {
  if (shape.size() != 2 && shape.size() != 3) {
    throw InvalidInput(
        fmt::format("{}: poisson takes 2D or 3D arrays, not {}D", source, shape.size()));
  }
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 0) throw InvalidInput(fmt::format("{}: axis {} has size 0", source, a));
  }
}

std::string describe_removed_mean(const PoissonResult& r, std::span<const Boundary> boundaries) {
  return fmt::format(
      "the mean of f, {:.6g}, is not zero to rounding (|mean| > {:g} eps mean|f| = {:.3g}): "
      "lap(u) = f {}; solved lap(u) = f - mean (--strict refuses instead)",
      r.mean, kMeanTolerance, r.mean_tolerance, no_solution_words(boundaries));
}

template <class Real>
void detail::refuse_non_finite(const PoissonGrid& grid, std::span<const Real> f, int threads,
                               std::int64_t first_index) {
  const auto n = static_cast<std::int64_t>(f.size());
  std::int64_t first = n;
  // One read of f, in parallel (an element costs what one of the reduce tree does); the lowest bad
  // index wins, so the message does not depend on the thread count.
  const int team = cpu_threads_for({n, primitives::canonical::kCpuNsPerElement}, threads);
#pragma omp parallel for schedule(static) reduction(min : first) num_threads(team)
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[static_cast<std::size_t>(i)])) first = std::min(first, i);
  }
  if (first == n) return;
  std::vector<std::int64_t> index(grid.shape.size());
  std::int64_t rest = first_index + first;
  for (std::size_t a = grid.shape.size(); a-- > 0;) {
    index[a] = rest % grid.shape[a];
    rest /= grid.shape[a];
  }
  const Real bad = f[static_cast<std::size_t>(first)];
  throw InvalidInput(fmt::format(
      "poisson: f[{}] is {}: the right-hand side must be finite (lap(u) = f has no solution "
      "with NaN or Inf in f)",
      fmt::join(index, ", "),
      std::isnan(bad) ? "nan"
      : bad > 0       ? "inf"
                      : "-inf"));
}

void detail::refuse_non_finite_sums(double sum, double sum_abs) {
  if (std::isfinite(sum) && std::isfinite(sum_abs)) return;
  throw InvalidInput(fmt::format(
      "poisson: f (in device memory) holds a NaN or an Inf (sum(f) = {}, sum(|f|) = {}): the "
      "right-hand side must be finite",
      sum, sum_abs));
}

template <class Real>
PoissonPlan<Real>::PoissonPlan(const Context& context, const PoissonGrid& grid,
                               const PoissonOptions& options) {
  validate_grid(grid);
  (void)helmholtz_lambda("poisson: helmholtz", options.helmholtz);
  if (context.backend == Backend::cpu) {
    if (!options.variant.empty() && options.variant != "cpu-fftw") {
      const std::vector<std::string> gpu = poisson_variant_names();
      if (std::find(gpu.begin(), gpu.end(), options.variant) != gpu.end()) {
        throw InvalidInput(
            fmt::format("poisson: variant '{}' runs on a GPU; on the CPU the solver is 'cpu-fftw'",
                        options.variant));
      }
      throw InvalidInput(fmt::format(
          "poisson: unknown variant '{}': on the CPU the solver is 'cpu-fftw'{}", options.variant,
          gpu.empty() ? std::string(" (this gpukit was built without GPU support)")
                      : fmt::format(" (GPU variants: {})", fmt::join(gpu, ", "))));
    }
    impl_ = make_cpu_poisson<Real>(context, grid, options);
  } else {
    impl_ = make_cuda_poisson<Real>(context, grid, options);
  }
  impl_->host_threads = context.effective_cpu_threads();
}

template <class Real>
PoissonPlan<Real>::PoissonPlan(PoissonPlan&&) noexcept = default;
template <class Real>
PoissonPlan<Real>& PoissonPlan<Real>::operator=(PoissonPlan&&) noexcept = default;
template <class Real>
PoissonPlan<Real>::~PoissonPlan() = default;

template <class Real>
PoissonResult PoissonPlan<Real>::solve(std::span<const Real> f, std::span<Real> u) {
  const auto n = static_cast<std::size_t>(impl_->grid.size());
  if (f.size() != n || u.size() != n) {
    throw InvalidInput(fmt::format("poisson: the grid {} has {} elements; f has {}, u has {}",
                                   impl_->grid.describe(), n, f.size(), u.size()));
  }
  const auto fb = reinterpret_cast<std::uintptr_t>(f.data());
  const auto ub = reinterpret_cast<std::uintptr_t>(u.data());
  if (fb != ub && fb < ub + n * sizeof(Real) && ub < fb + n * sizeof(Real))
    throw InvalidInput("poisson: u overlaps f without being the same array");
  // Before dispatch, so that every backend refuses the same inputs with the same message.
  detail::refuse_non_finite<Real>(impl_->grid, f, impl_->host_threads);
  return impl_->solve(f, u);
}

template <class Real>
PoissonResult PoissonPlan<Real>::solve_on_device(const Real* f, Real* u, StreamHandle stream) {
  return impl_->solve_on_device(f, u, stream);
}

template <class Real>
const PoissonGrid& PoissonPlan<Real>::grid() const {
  return impl_->grid;
}
template <class Real>
const PoissonOptions& PoissonPlan<Real>::options() const {
  return impl_->options;
}
template <class Real>
std::string_view PoissonPlan<Real>::variant() const {
  return impl_->variant;
}
template <class Real>
std::size_t PoissonPlan<Real>::device_bytes() const {
  return impl_->device_bytes;
}

template <class Real>
PoissonResult solve_poisson(const Context& context, const PoissonGrid& grid,
                            std::span<const Real> f, std::span<Real> u,
                            const PoissonOptions& options) {
  PoissonPlan<Real> plan(context, grid, options);
  return plan.solve(f, u);
}

std::vector<std::string> poisson_variant_names() {
  std::vector<std::string> names;
  for (const PoissonVariant& v : poisson_variants()) names.emplace_back(v.info.name);
  return names;
}

template <class Real>
std::string default_poisson_variant(const PoissonGrid& grid) {
  validate_grid(grid);
  if (poisson_variants().empty())
    throw DeviceUnavailable("poisson CUDA variants: this gpukit was built without CUDA");
  const GridShape shape = grid_shape(grid);
  for (const std::string_view name : best_poisson_variants()) {
    if (find_poisson_variant(name).supports(shape)) return std::string(name);
  }
  const std::int64_t elements = shape.size();
  if (elements >= std::int64_t{std::numeric_limits<int>::max()}) {
    throw InvalidInput("poisson: the grid " + grid.describe() + " has " + std::to_string(elements) +
                       " elements; one device solves grids of fewer than 2^31 (mpirun -np N "
                       "gpukit poisson splits a larger one over N GPUs)");
  }
  throw InvalidInput("poisson: no CUDA variant supports the grid " + grid.describe());
}

#define GPUKIT_POISSON_INSTANTIATE(Real)                                                           \
  template class PoissonPlan<Real>;                                                                \
  template PoissonResult solve_poisson<Real>(const Context&, const PoissonGrid&,                   \
                                             std::span<const Real>, std::span<Real>,               \
                                             const PoissonOptions&);                               \
  template std::string default_poisson_variant<Real>(const PoissonGrid&);                          \
  template PoissonResult classify_mean<Real>(double, double, std::int64_t);                        \
  template double poisson_agreement_bound<Real>(const PoissonGrid&, double, double);               \
  template double poisson_agreement_bound<Real>(const PoissonGrid&, const PoissonOptions&, double, \
                                                double);                                           \
  template PoissonResult detail::apply_mean_rule<Real>(double, double, std::int64_t,               \
                                                       const PoissonGrid&, const PoissonOptions&); \
  template void detail::refuse_non_finite<Real>(const PoissonGrid&, std::span<const Real>, int,    \
                                                std::int64_t);
GPUKIT_POISSON_INSTANTIATE(float)
GPUKIT_POISSON_INSTANTIATE(double)
#undef GPUKIT_POISSON_INSTANTIATE

#if !GPUKIT_HAVE_CUDA
template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cuda_poisson(const Context&,
                                                                    const PoissonGrid&,
                                                                    const PoissonOptions&) {
  throw DeviceUnavailable("poisson: this gpukit was built without CUDA");
}
template std::unique_ptr<PoissonPlan<float>::Impl> make_cuda_poisson<float>(const Context&,
                                                                            const PoissonGrid&,
                                                                            const PoissonOptions&);
template std::unique_ptr<PoissonPlan<double>::Impl> make_cuda_poisson<double>(
    const Context&, const PoissonGrid&, const PoissonOptions&);

namespace cuda_detail {
std::size_t device_free_bytes() { return 0; }  // no device in a CPU-only build
}  // namespace cuda_detail
#endif

}  // namespace gpukit::pde
