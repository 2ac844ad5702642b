// The independent reference behind `poisson --check`, the Poisson demo and the tests: the same
// solution in long double (FFTW's long-double transforms, eigenvalues and scaling in long
// double), sharing no code with the float/double CPU solver or the CUDA variants. The seed's
// problem (periodic, spectral, lambda = 0) by the real-to-complex transform; every other one by
// real-to-real transforms on every axis (a periodic axis by R2HC / HC2R, so that a periodic fd2 or
// Helmholtz problem is computed otherwise than the solver's real-to-complex path computes it).

#include <fftw3.h>
#include <unistd.h>

#include <cmath>
#include <mutex>
#include <numbers>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde {

namespace {

// The long-double planner is a separate FFTW library with its own (thread-unsafe) planner.
std::mutex& long_double_planner_mutex() {
  static std::mutex m;
  return m;
}

struct LongDoubleBuffers {
  long double* real = nullptr;
  fftwl_complex* spectrum = nullptr;
  fftwl_plan forward = nullptr, inverse = nullptr;
  ~LongDoubleBuffers() {
    {
      std::lock_guard lock(long_double_planner_mutex());
      if (forward != nullptr) fftwl_destroy_plan(forward);
      if (inverse != nullptr) fftwl_destroy_plan(inverse);
    }
    if (real != nullptr) fftwl_free(real);
    if (spectrum != nullptr) fftwl_free(spectrum);
  }
};

// The magnitude of the eigenvalue of the 1D operator on output index j of the axis' long-double
// transform (RODFT00: k = j + 1; REDFT10: k = j; R2HC: |m| = min(j, n - j)), in long double.
long double eigenvalue_magnitude(Boundary boundary, Operator op, std::int64_t n, long double length,
                                 std::int64_t j) {
  const long double pi = std::numbers::pi_v<long double>;
  const auto points = static_cast<long double>(n);
  long double mode = 0, theta = 0, h = 0;  // the mode number, fd2's angle and step
  switch (boundary) {
    case Boundary::periodic:
      mode = static_cast<long double>(std::min(j, n - j));
      h = length / points;
      theta = 2 * pi * mode / points;
      mode *= 2;  // exp(2 pi i m x / L) = the (2m)-th of the sines' pi k x / L
      break;
    case Boundary::dirichlet:
      mode = static_cast<long double>(j + 1);
      h = length / (points + 1);
      theta = pi * mode / (points + 1);
      break;
    case Boundary::neumann:
      mode = static_cast<long double>(j);
      h = length / points;
      theta = pi * mode / points;
      break;
  }
  if (op == Operator::spectral) {
    const long double k = pi * mode / length;
    return k * k;
  }
  const long double s = std::sin(theta / 2);
  return 4 / (h * h) * s * s;
}

// Every problem other than the seed's: real-to-real transforms on every axis, in place on b.real
// (which holds f; FFTW_ESTIMATE planning leaves the array alone).
void solve_real_to_real(const PoissonGrid& grid, const PoissonOptions& options,
                        const std::vector<int>& dims, int threads, LongDoubleBuffers& b) {
  const int rank = grid.rank();
  std::vector<fftwl_r2r_kind> forward, inverse;
  std::vector<std::vector<long double>> magnitudes(static_cast<std::size_t>(rank));
  long double norm = 1;  // FFTW's r2r transforms are unnormalised: the round trip's factor
  for (int a = 0; a < rank; ++a) {
    const Boundary boundary = grid.boundary(a);
    const std::int64_t n = dims[static_cast<std::size_t>(a)];
    switch (boundary) {
      case Boundary::periodic:
        forward.push_back(FFTW_R2HC), inverse.push_back(FFTW_HC2R);
        norm *= static_cast<long double>(n);
        break;
      case Boundary::dirichlet:
        forward.push_back(FFTW_RODFT00), inverse.push_back(FFTW_RODFT00);
        norm *= 2 * static_cast<long double>(n + 1);
        break;
      case Boundary::neumann:
        forward.push_back(FFTW_REDFT10), inverse.push_back(FFTW_REDFT01);
        norm *= 2 * static_cast<long double>(n);
        break;
    }
    for (std::int64_t j = 0; j < n; ++j) {
      magnitudes[static_cast<std::size_t>(a)].push_back(eigenvalue_magnitude(
          boundary, options.op, n, static_cast<long double>(grid.length(a)), j));
    }
  }
  {
    std::lock_guard lock(long_double_planner_mutex());
    fftwl_plan_with_nthreads(threads);
    b.forward = fftwl_plan_r2r(rank, dims.data(), b.real, b.real, forward.data(), FFTW_ESTIMATE);
    b.inverse = fftwl_plan_r2r(rank, dims.data(), b.real, b.real, inverse.data(), FFTW_ESTIMATE);
  }
  if (b.forward == nullptr || b.inverse == nullptr)
    throw InvalidInput("poisson reference: FFTW could not plan the grid " + grid.describe());
  fftwl_execute(b.forward);
  // c = -c / ((sum of the magnitudes + lambda) norm); the constant mode of a singular problem
  // (the sum 0) set to 0.
  const auto lambda = static_cast<long double>(options.helmholtz);
  const std::int64_t n = grid.size();
  for (std::int64_t i = 0; i < n; ++i) {
    long double sum = lambda;
    std::int64_t rest = i;
    for (int a = rank - 1; a >= 0; --a) {
      const std::int64_t len = dims[static_cast<std::size_t>(a)];
      sum += magnitudes[static_cast<std::size_t>(a)][static_cast<std::size_t>(rest % len)];
      rest /= len;
    }
    b.real[i] = sum > 0 ? -b.real[i] / (sum * norm) : 0.0L;
  }
  fftwl_execute(b.inverse);
}

// The seed's problem: real-to-complex on the half spectrum, in b.real (f) and b.spectrum.
void solve_real_to_complex(const PoissonGrid& grid, const std::vector<int>& dims, int threads,
                           LongDoubleBuffers& b) {
  const int rank = grid.rank();
  const std::int64_t n = grid.size();
  const std::int64_t nx = dims.back() / 2 + 1;
  const std::int64_t half = n / dims.back() * nx;
  {
    std::lock_guard lock(long_double_planner_mutex());
    fftwl_plan_with_nthreads(threads);
    b.forward = fftwl_plan_dft_r2c(rank, dims.data(), b.real, b.spectrum, FFTW_ESTIMATE);
    b.inverse = fftwl_plan_dft_c2r(rank, dims.data(), b.spectrum, b.real, FFTW_ESTIMATE);
  }
  if (b.forward == nullptr || b.inverse == nullptr)
    throw InvalidInput("poisson reference: FFTW could not plan the grid " + grid.describe());
  fftwl_execute(b.forward);
  // u_hat = -f_hat / |k|^2 / n, the zero mode (the mean) set to 0; k = 2 pi m / L with m the
  // signed frequency (the Nyquist index of an even axis: |m| = n/2).
  auto k2_of = [&](int axis, std::int64_t j) {
    const std::int64_t len = grid.shape[static_cast<std::size_t>(axis)];
    const long double m =
        2 * j < len ? static_cast<long double>(j) : static_cast<long double>(j - len);
    const long double k =
        2 * std::numbers::pi_v<long double> * m / static_cast<long double>(grid.length(axis));
    return k * k;
  };
  const std::int64_t ny = rank == 3 ? grid.shape[1] : 1;
  const long double inv_n = 1.0L / static_cast<long double>(n);
  for (std::int64_t row = 0; row < half / nx; ++row) {
    const long double kyz2 = rank == 3 ? k2_of(1, row % ny) + k2_of(0, row / ny) : k2_of(0, row);
    for (std::int64_t x = 0; x < nx; ++x) {
      const long double k2 = kyz2 + k2_of(rank - 1, x);
      const long double scale = k2 > 0 ? -inv_n / k2 : 0.0L;
      b.spectrum[row * nx + x][0] *= scale;
      b.spectrum[row * nx + x][1] *= scale;
    }
  }
  fftwl_execute(b.inverse);
}

}  // namespace

std::size_t poisson_reference_bytes(const PoissonGrid& grid) {
  validate_grid(grid);
  const auto n = static_cast<std::size_t>(grid.size());
  const auto last = static_cast<std::size_t>(grid.shape.back());
  return n * sizeof(long double) + n / last * (last / 2 + 1) * sizeof(fftwl_complex);
}

template <class Real>
std::vector<double> poisson_reference_solution(const PoissonGrid& grid, std::span<const Real> f,
                                               Gauge gauge, int threads) {
  PoissonOptions options;
  options.gauge = gauge;
  return poisson_reference_solution<Real>(grid, f, options, threads);
}

template <class Real>
std::vector<double> poisson_reference_solution(const PoissonGrid& grid, std::span<const Real> f,
                                               const PoissonOptions& options, int threads) {
  validate_grid(grid);
  (void)helmholtz_lambda("poisson reference: helmholtz", options.helmholtz);
  const std::int64_t n = grid.size();
  if (static_cast<std::int64_t>(f.size()) != n) {
    throw InvalidInput(fmt::format("poisson reference: the grid {} has {} elements; f has {}",
                                   grid.describe(), n, f.size()));
  }
  std::vector<int> dims;
  for (const std::int64_t s : grid.shape) {
    if (s > std::numeric_limits<int>::max())
      throw InvalidInput("poisson reference: FFTW takes axes of at most 2^31 - 1");
    dims.push_back(static_cast<int>(s));
  }
  const std::size_t bytes = poisson_reference_bytes(grid);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 &&
      bytes > static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)) {
    throw OutOfMemory(fmt::format("poisson reference: the long-double buffers for {} (more than "
                                  "the host's physical memory)",
                                  grid.describe()),
                      bytes);
  }
  const bool seeds_problem =
      grid.periodic() && options.op == Operator::spectral && options.helmholtz == 0;
  LongDoubleBuffers b;
  b.real =
      static_cast<long double*>(fftwl_malloc(static_cast<std::size_t>(n) * sizeof(long double)));
  if (seeds_problem) {
    const std::int64_t half = n / dims.back() * (dims.back() / 2 + 1);
    b.spectrum = static_cast<fftwl_complex*>(
        fftwl_malloc(static_cast<std::size_t>(half) * sizeof(fftwl_complex)));
  }
  if (b.real == nullptr || (seeds_problem && b.spectrum == nullptr))
    throw OutOfMemory("poisson reference: fftwl_malloc of the long-double buffers", bytes);
  // A grid point of the long-double solve on one thread: 90 ns at 64^2 (gpukit_tune_cpu_threads
  // costs at idle: 67, 109). `threads` 0 is one thread here, as documented.
  constexpr double kNsPerGridPoint = 90;
  const int t = threads > 0 ? cpu_threads_for({n, kNsPerGridPoint}, threads) : 1;
  {
    std::lock_guard lock(long_double_planner_mutex());
    static const int initialized = fftwl_init_threads();
    (void)initialized;
  }
  for (std::int64_t i = 0; i < n; ++i)
    b.real[i] = static_cast<long double>(f[static_cast<std::size_t>(i)]);
  if (seeds_problem) {
    solve_real_to_complex(grid, dims, t, b);
  } else {
    solve_real_to_real(grid, options, dims, t, b);
  }
  // A nonsingular problem has one solution: no gauge to choose.
  const bool corner = poisson_is_singular(grid, options) && options.gauge == Gauge::corner;
  const long double shift = corner ? b.real[0] : 0.0L;
  std::vector<double> u(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    u[static_cast<std::size_t>(i)] = static_cast<double>(b.real[i] - shift);
  return u;
}

template <class Real>
PoissonCheck check_poisson_solution(const PoissonGrid& grid, std::span<const Real> f,
                                    std::span<const Real> u, Gauge gauge, int threads) {
  PoissonOptions options;
  options.gauge = gauge;
  return check_poisson_solution<Real>(grid, f, u, options, threads);
}

template <class Real>
PoissonCheck check_poisson_solution(const PoissonGrid& grid, std::span<const Real> f,
                                    std::span<const Real> u, const PoissonOptions& options,
                                    int threads) {
  const std::vector<double> reference = poisson_reference_solution<Real>(grid, f, options, threads);
  double max_f = 0, max_u = 0;
  for (const Real x : f) max_f = std::max(max_f, static_cast<double>(std::fabs(x)));
  for (const double x : reference) max_u = std::max(max_u, std::fabs(x));
  PoissonCheck check;
  check.metrics = compare<double, Real>(reference, u);
  check.bound = poisson_agreement_bound<Real>(grid, options, max_f, max_u);
  check.passed = check.metrics.max_abs <= check.bound;  // false for a NaN
  return check;
}

#define GPUKIT_POISSON_REFERENCE_INSTANTIATE(Real)                                                 \
  template std::vector<double> poisson_reference_solution<Real>(                                   \
      const PoissonGrid&, std::span<const Real>, Gauge, int);                                      \
  template std::vector<double> poisson_reference_solution<Real>(                                   \
      const PoissonGrid&, std::span<const Real>, const PoissonOptions&, int);                      \
  template PoissonCheck check_poisson_solution<Real>(const PoissonGrid&, std::span<const Real>,    \
                                                     std::span<const Real>, Gauge, int);           \
  template PoissonCheck check_poisson_solution<Real>(const PoissonGrid&, std::span<const Real>,    \
                                                     std::span<const Real>, const PoissonOptions&, \
                                                     int);
GPUKIT_POISSON_REFERENCE_INSTANTIATE(float)
GPUKIT_POISSON_REFERENCE_INSTANTIATE(double)
#undef GPUKIT_POISSON_REFERENCE_INSTANTIATE

}  // namespace gpukit::pde
