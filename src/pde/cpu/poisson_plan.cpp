// The CPU backend of the Poisson solver, the reference the tests trust: the plan (the mean rule,
// the copies in and out, the gauge) around one of two transform solves, planned once per plan
// (FFTW_ESTIMATE: planning costs no trial transforms, and the same plan gives the same bits every
// run), threaded with fftw3_omp. A periodic grid: FFTW real-to-complex on the half spectrum
// (here); a grid with a dirichlet or neumann axis: real-to-real transforms (poisson_r2r.cpp).

#include <fftw3.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/detail/fftw_traits.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "pde/cpu/poisson_cpu_transforms.hpp"
#include "pde/poisson_impl.hpp"

namespace gpukit::pde {

std::mutex& detail::fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

void detail::init_fftw_threads_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftw_init_threads();
    fftwf_init_threads();
  });
}

void cpu_detail::refuse_beyond_host_memory(std::size_t bytes, const std::string& what) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 &&
      bytes > static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)) {
    throw OutOfMemory(what + " (more than the host's physical memory)", bytes);
  }
}

std::vector<int> cpu_detail::fftw_dims(const PoissonGrid& grid) {
  std::vector<int> dims;
  for (const std::int64_t s : grid.shape) {
    if (s > std::numeric_limits<int>::max())
      throw InvalidInput("poisson: the CPU backend (FFTW) takes axes of at most 2^31 - 1");
    dims.push_back(static_cast<int>(s));
  }
  return dims;
}

namespace {

// Planning for one process; the rest is FftwCommon.
template <class Real>
struct Fftw;
template <>
struct Fftw<double> : detail::FftwCommon<double> {
  static Plan r2c(int rank, const int* n, double* in, Complex* out) {
    return fftw_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE);
  }
  static Plan c2r(int rank, const int* n, Complex* in, double* out) {
    return fftw_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE);
  }
};
template <>
struct Fftw<float> : detail::FftwCommon<float> {
  static Plan r2c(int rank, const int* n, float* in, Complex* out) {
    return fftwf_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE);
  }
  static Plan c2r(int rank, const int* n, Complex* in, float* out) {
    return fftwf_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE);
  }
};

// A periodic grid: R2C, the half spectrum divided by the eigenvalues, C2R.
template <class Real>
class FourierSolve final : public cpu_detail::TransformSolve<Real> {
  using F = Fftw<Real>;

 public:
  FourierSolve(const PoissonGrid& grid, const PoissonOptions& options, int threads)
      : threads_(threads), helmholtz_(options.helmholtz) {
    const int rank = grid.rank();
    n_ = grid.size();
    dims_ = cpu_detail::fftw_dims(grid);
    half_ = n_ / dims_.back() * (dims_.back() / 2 + 1);
    const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(Real) +
                              static_cast<std::size_t>(half_) * 2 * sizeof(Real);
    cpu_detail::refuse_beyond_host_memory(
        bytes, fmt::format("poisson: the CPU solver's buffers for {}", grid.describe()));
    real_ = static_cast<Real*>(F::malloc(static_cast<std::size_t>(n_) * sizeof(Real)));
    spectrum_ = static_cast<typename F::Complex*>(
        F::malloc(static_cast<std::size_t>(half_) * sizeof(typename F::Complex)));
    if (real_ == nullptr || spectrum_ == nullptr) {
      release();
      throw OutOfMemory("poisson: fftw_malloc of the CPU solver's buffers", bytes);
    }
    detail::init_fftw_threads_once();
    {
      std::lock_guard lock(detail::fftw_planner_mutex());
      F::threads(threads_);
      forward_ = F::r2c(rank, dims_.data(), real_, spectrum_);
      inverse_ = F::c2r(rank, dims_.data(), spectrum_, real_);
    }
    if (forward_ == nullptr || inverse_ == nullptr) {
      release();
      throw InvalidInput("poisson: FFTW could not plan the grid " + grid.describe());
    }
    // Per-axis eigenvalue magnitudes (the last axis: its half spectrum).
    for (int a = 0; a < rank; ++a) {
      const int n = dims_[static_cast<std::size_t>(a)];
      k2_.push_back(detail::laplacian_eigenvalues(a == rank - 1 ? n / 2 + 1 : n, n, grid.length(a),
                                                  Boundary::periodic, options.op));
    }
  }
  ~FourierSolve() override { release(); }
  FourierSolve(const FourierSolve&) = delete;
  FourierSolve& operator=(const FourierSolve&) = delete;

  Real* buffer() override { return real_; }
  void run() override {
    F::execute(forward_);
    scale_spectrum();
    F::execute(inverse_);
  }

 private:
  // u_hat = -f_hat / (|k|^2 + lambda) / n (FFTW's transforms are unnormalized), the zero mode 0
  // when that is 0. The multiplier is computed in double and rounded once (with lambda = 0,
  // |k|^2 + 0 is |k|^2: the seed's problem keeps its bits).
  void scale_spectrum() {
    const int rank = static_cast<int>(dims_.size());
    const std::int64_t nx = dims_.back() / 2 + 1;
    const std::int64_t rows = half_ / nx;
    const std::int64_t ny = rank == 3 ? dims_[1] : 1;
    const double inv_n = 1.0 / static_cast<double>(n_);
    const double lambda = helmholtz_;
    const std::vector<double>& kx2 = k2_.back();
    const std::vector<double>& ky2 = k2_[static_cast<std::size_t>(rank - 2)];
    const std::vector<double>* kz2 = rank == 3 ? &k2_[0] : nullptr;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t y = row % ny, z = row / ny;  // 2D: y = 0, z = row (axis 0)
      const double kyz2 =
          rank == 3 ? ky2[static_cast<std::size_t>(y)] + (*kz2)[static_cast<std::size_t>(z)]
                    : ky2[static_cast<std::size_t>(z)];
      typename F::Complex* c = spectrum_ + row * nx;
      for (std::int64_t x = 0; x < nx; ++x) {
        const double denominator = kx2[static_cast<std::size_t>(x)] + kyz2 + lambda;
        const Real scale = denominator > 0 ? static_cast<Real>(-inv_n / denominator) : Real(0);
        c[x][0] *= scale;
        c[x][1] *= scale;
      }
    }
  }

  void release() { detail::release_fftw<F>(forward_, inverse_, real_, spectrum_); }

  int threads_ = 1;
  double helmholtz_ = 0;
  std::int64_t n_ = 0, half_ = 0;
  std::vector<int> dims_;
  std::vector<std::vector<double>> k2_;  // per axis; the last axis over its half spectrum
  Real* real_ = nullptr;
  typename F::Complex* spectrum_ = nullptr;
  typename F::Plan forward_ = nullptr, inverse_ = nullptr;
};

template <class Real>
class CpuPoisson final : public PoissonPlan<Real>::Impl {
 public:
  CpuPoisson(const Context& context, const PoissonGrid& plan_grid,
             const PoissonOptions& plan_options) {
    this->grid = plan_grid;
    this->options = plan_options;
    this->variant = "cpu-fftw";
    n_ = plan_grid.size();
    singular_ = poisson_is_singular(plan_grid, plan_options);
    // One thread count for every pass of a solve and for FFTW's plans (a plan's bits depend on
    // its threads: the rule gives the same count for the same grid and context every time).
    threads_ = cpu_threads_for({n_, detail::kCpuNsPerGridPoint}, context.effective_cpu_threads());
    transforms_ = plan_grid.periodic()
                      ? cpu_detail::make_fourier_solve<Real>(plan_grid, plan_options, threads_)
                      : cpu_detail::make_r2r_solve<Real>(plan_grid, plan_options, threads_);
  }

  PoissonResult solve(std::span<const Real> f, std::span<Real> u) override {
    const detail::MeanSums sums = detail::host_mean_sums<Real>(f, threads_);
    const PoissonResult result = detail::apply_mean_rule<Real>(sums.total(), sums.abs_total(), n_,
                                                               this->grid, this->options);
    Real* data = transforms_->buffer();
    // FFTW's plans are tied to the aligned buffers they were made for; copying f in keeps user
    // arrays of any alignment (and u == f) simple, at the cost of one pass over memory.
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t i = 0; i < n_; ++i) data[i] = f[static_cast<std::size_t>(i)];
    transforms_->run();
    // A nonsingular problem has one solution: no gauge to choose.
    const Real shift = singular_ && this->options.gauge == Gauge::corner ? data[0] : Real(0);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t i = 0; i < n_; ++i) u[static_cast<std::size_t>(i)] = data[i] - shift;
    return result;
  }

  PoissonResult solve_on_device(const Real*, Real*, StreamHandle) override {
    throw InvalidInput("poisson: solve_on_device needs a CUDA plan (this one is on the CPU)");
  }

 private:
  int threads_ = 1;
  std::int64_t n_ = 0;
  bool singular_ = true;
  std::unique_ptr<cpu_detail::TransformSolve<Real>> transforms_;
};

}  // namespace

template <class Real>
std::unique_ptr<cpu_detail::TransformSolve<Real>> cpu_detail::make_fourier_solve(
    const PoissonGrid& grid, const PoissonOptions& options, int threads) {
  return std::make_unique<FourierSolve<Real>>(grid, options, threads);
}

template <class Real>
detail::MeanSums detail::host_mean_sums(std::span<const Real> f, int threads) {
  return primitives::canonical::reduce_canonical(
      f.data(), static_cast<std::int64_t>(f.size()), detail::MeanSumsOp<Real>{},
      [](Real x) { return detail::MeanSumsOp<Real>::load(x); }, threads);
}

template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cpu_poisson(const Context& context,
                                                                   const PoissonGrid& grid,
                                                                   const PoissonOptions& options) {
  return std::make_unique<CpuPoisson<Real>>(context, grid, options);
}
template std::unique_ptr<PoissonPlan<float>::Impl> make_cpu_poisson<float>(const Context&,
                                                                           const PoissonGrid&,
                                                                           const PoissonOptions&);
template std::unique_ptr<PoissonPlan<double>::Impl> make_cpu_poisson<double>(const Context&,
                                                                             const PoissonGrid&,
                                                                             const PoissonOptions&);
template std::unique_ptr<cpu_detail::TransformSolve<float>> cpu_detail::make_fourier_solve<float>(
    const PoissonGrid&, const PoissonOptions&, int);
template std::unique_ptr<cpu_detail::TransformSolve<double>> cpu_detail::make_fourier_solve<double>(
    const PoissonGrid&, const PoissonOptions&, int);
template detail::MeanSums detail::host_mean_sums<float>(std::span<const float>, int);
template detail::MeanSums detail::host_mean_sums<double>(std::span<const double>, int);

}  // namespace gpukit::pde
