// The independent reference behind `poisson --check`, the Poisson demo and the tests: the same
// spectral solution in long double (FFTW's long-double transforms, wave numbers and scaling in
// long double), sharing no code with the float/double CPU solver or the CUDA variants.

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
  validate_grid(grid);
  const std::int64_t n = grid.size();
  if (static_cast<std::int64_t>(f.size()) != n) {
    throw InvalidInput(fmt::format("poisson reference: the grid {} has {} elements; f has {}",
                                   grid.describe(), n, f.size()));
  }
  const int rank = grid.rank();
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
  const std::int64_t nx = dims.back() / 2 + 1;
  const std::int64_t half = n / dims.back() * nx;
  LongDoubleBuffers b;
  b.real =
      static_cast<long double*>(fftwl_malloc(static_cast<std::size_t>(n) * sizeof(long double)));
  b.spectrum = static_cast<fftwl_complex*>(
      fftwl_malloc(static_cast<std::size_t>(half) * sizeof(fftwl_complex)));
  if (b.real == nullptr || b.spectrum == nullptr)
    throw OutOfMemory("poisson reference: fftwl_malloc of the long-double buffers", bytes);
  // A grid point of the long-double solve on one thread: 90 ns at 64^2 (gpukit_tune_cpu_threads
  // costs at idle: 67, 109). `threads` 0 is one thread here, as documented.
  constexpr double kNsPerGridPoint = 90;
  const int t = threads > 0 ? cpu_threads_for({n, kNsPerGridPoint}, threads) : 1;
  {
    std::lock_guard lock(long_double_planner_mutex());
    static const int initialized = fftwl_init_threads();
    (void)initialized;
    fftwl_plan_with_nthreads(t);
    b.forward = fftwl_plan_dft_r2c(rank, dims.data(), b.real, b.spectrum, FFTW_ESTIMATE);
    b.inverse = fftwl_plan_dft_c2r(rank, dims.data(), b.spectrum, b.real, FFTW_ESTIMATE);
  }
  if (b.forward == nullptr || b.inverse == nullptr)
    throw InvalidInput("poisson reference: FFTW could not plan the grid " + grid.describe());

  for (std::int64_t i = 0; i < n; ++i)
    b.real[i] = static_cast<long double>(f[static_cast<std::size_t>(i)]);
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
  const long double shift = gauge == Gauge::corner ? b.real[0] : 0.0L;
  std::vector<double> u(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    u[static_cast<std::size_t>(i)] = static_cast<double>(b.real[i] - shift);
  return u;
}

template <class Real>
PoissonCheck check_poisson_solution(const PoissonGrid& grid, std::span<const Real> f,
                                    std::span<const Real> u, Gauge gauge, int threads) {
  const std::vector<double> reference = poisson_reference_solution<Real>(grid, f, gauge, threads);
  double max_f = 0, max_u = 0;
  for (const Real x : f) max_f = std::max(max_f, static_cast<double>(std::fabs(x)));
  for (const double x : reference) max_u = std::max(max_u, std::fabs(x));
  PoissonCheck check;
  check.metrics = compare<double, Real>(reference, u);
  check.bound = poisson_agreement_bound<Real>(grid, max_f, max_u);
  check.passed = check.metrics.max_abs <= check.bound;  // false for a NaN
  return check;
}

#define GPUKIT_POISSON_REFERENCE_INSTANTIATE(Real)                                              \
  template std::vector<double> poisson_reference_solution<Real>(                                \
      const PoissonGrid&, std::span<const Real>, Gauge, int);                                   \
  template PoissonCheck check_poisson_solution<Real>(const PoissonGrid&, std::span<const Real>, \
                                                     std::span<const Real>, Gauge, int);
GPUKIT_POISSON_REFERENCE_INSTANTIATE(float)
GPUKIT_POISSON_REFERENCE_INSTANTIATE(double)
#undef GPUKIT_POISSON_REFERENCE_INSTANTIATE

}  // namespace gpukit::pde
