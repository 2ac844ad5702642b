// The CPU solve of a grid with a dirichlet or neumann axis: FFTW's real-to-real transforms on
// every axis of one multi-dimensional plan, in place: RODFT00 (the DST-I, its own inverse) on a
// dirichlet axis, REDFT10 (the DCT-II) forward and REDFT01 (the DCT-III) back on a neumann axis,
// and R2HC forward and HC2R back on a periodic one. Each transform's output index j is one mode of
// the axis (poisson.hpp, "Grid"), so the operator is diagonal there: every coefficient is divided
// by its eigenvalue sum minus lambda, and by FFTW's normalisation (the transforms are unnormalised:
// a round trip multiplies by 2(n + 1) on a dirichlet axis, 2n on a neumann one, n on a periodic
// one).
//
// Why R2HC for the periodic axes of a mixed grid, rather than the real-to-complex transform: the
// halfcomplex output keeps the cosine and the sine coefficient of frequency m at indices m and
// n - m of the same real array, both multiplied by the eigenvalue of |m| = min(j, n - j), so one
// real-to-real plan covers every combination of axes in place on one buffer of n reals (no
// complex half spectrum to lay out around the sine and cosine axes, half the memory). FFTW's
// R2HC is slower than its r2c, so a grid whose every axis is periodic keeps the r2c solve
// (poisson_plan.cpp).

#include <fftw3.h>

#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/pde/detail/fftw_traits.hpp"
#include "pde/cpu/poisson_cpu_transforms.hpp"
#include "pde/poisson_impl.hpp"

namespace gpukit::pde {

namespace {

// Real-to-real planning per precision (one r2r_kind enum serves both libraries).
template <class Real>
struct FftwR2r;
template <>
struct FftwR2r<double> : detail::FftwCommon<double> {
  static Plan r2r(int rank, const int* n, double* data, const fftw_r2r_kind* kinds) {
    return fftw_plan_r2r(rank, n, data, data, kinds, FFTW_ESTIMATE);
  }
};
template <>
struct FftwR2r<float> : detail::FftwCommon<float> {
  static Plan r2r(int rank, const int* n, float* data, const fftwf_r2r_kind* kinds) {
    return fftwf_plan_r2r(rank, n, data, data, kinds, FFTW_ESTIMATE);
  }
};

template <class Real>
class RealToRealSolve final : public cpu_detail::TransformSolve<Real> {
  using F = FftwR2r<Real>;

 public:
  RealToRealSolve(const PoissonGrid& grid, const PoissonOptions& options, int threads)
      : threads_(threads), helmholtz_(options.helmholtz) {
    const int rank = grid.rank();
    n_ = grid.size();
    dims_ = cpu_detail::fftw_dims(grid);
    const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(Real);
    cpu_detail::refuse_beyond_host_memory(
        bytes, fmt::format("poisson: the CPU solver's buffer for {}", grid.describe()));
    data_ = static_cast<Real*>(F::malloc(bytes));
    if (data_ == nullptr)
      throw OutOfMemory("poisson: fftw_malloc of the CPU solver's buffer", bytes);
    std::vector<fftw_r2r_kind> forward_kinds, inverse_kinds;
    double norm = 1;
    for (int a = 0; a < rank; ++a) {
      const Boundary b = grid.boundary(a);
      const std::int64_t n = grid.shape[static_cast<std::size_t>(a)];
      forward_kinds.push_back(detail::r2r_forward_kind(b));
      inverse_kinds.push_back(detail::r2r_inverse_kind(b));
      norm *= detail::r2r_round_trip_factor(b, n);
      eigenvalues_.push_back(detail::laplacian_eigenvalues(n, n, grid.length(a), b, options.op));
    }
    inv_norm_ = 1 / norm;
    detail::init_fftw_threads_once();
    {
      std::lock_guard lock(detail::fftw_planner_mutex());
      F::threads(threads_);
      forward_ = F::r2r(rank, dims_.data(), data_, forward_kinds.data());
      inverse_ = F::r2r(rank, dims_.data(), data_, inverse_kinds.data());
    }
    if (forward_ == nullptr || inverse_ == nullptr) {
      release();
      throw InvalidInput("poisson: FFTW could not plan the grid " + grid.describe());
    }
  }
  ~RealToRealSolve() override { release(); }
  RealToRealSolve(const RealToRealSolve&) = delete;
  RealToRealSolve& operator=(const RealToRealSolve&) = delete;

  Real* buffer() override { return data_; }
  void run() override {
    F::execute(forward_);
    scale_coefficients();
    F::execute(inverse_);
  }

 private:
  // c = -c / (sum of the axes' eigenvalue magnitudes + lambda) / norm, 0 where that sum is 0 (the
  // constant mode of a singular problem). The multiplier is computed in double and rounded once.
  void scale_coefficients() {
    const int rank = static_cast<int>(dims_.size());
    const std::int64_t nx = dims_.back();
    const std::int64_t rows = n_ / nx;
    const std::int64_t ny = rank == 3 ? dims_[1] : 1;
    const double inv_norm = inv_norm_, lambda = helmholtz_;
    const std::vector<double>& ex = eigenvalues_.back();
    const std::vector<double>& ey = eigenvalues_[static_cast<std::size_t>(rank - 2)];
    const std::vector<double>* ez = rank == 3 ? &eigenvalues_[0] : nullptr;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t y = row % ny, z = row / ny;  // 2D: y = 0, z = row (axis 0)
      const double eyz = rank == 3
                             ? ey[static_cast<std::size_t>(y)] + (*ez)[static_cast<std::size_t>(z)]
                             : ey[static_cast<std::size_t>(z)];
      Real* c = data_ + row * nx;
      for (std::int64_t x = 0; x < nx; ++x) {
        const double denominator = ex[static_cast<std::size_t>(x)] + eyz + lambda;
        c[x] *= denominator > 0 ? static_cast<Real>(-inv_norm / denominator) : Real(0);
      }
    }
  }

  void release() {
    typename F::Complex* no_spectrum = nullptr;  // in place: one real buffer
    detail::release_fftw<F>(forward_, inverse_, data_, no_spectrum);
  }

  int threads_ = 1;
  double helmholtz_ = 0, inv_norm_ = 1;
  std::int64_t n_ = 0;
  std::vector<int> dims_;
  std::vector<std::vector<double>> eigenvalues_;  // per axis, in its transform's index order
  Real* data_ = nullptr;
  typename F::Plan forward_ = nullptr, inverse_ = nullptr;
};

}  // namespace

template <class Real>
std::unique_ptr<cpu_detail::TransformSolve<Real>> cpu_detail::make_r2r_solve(
    const PoissonGrid& grid, const PoissonOptions& options, int threads) {
  return std::make_unique<RealToRealSolve<Real>>(grid, options, threads);
}
template std::unique_ptr<cpu_detail::TransformSolve<float>> cpu_detail::make_r2r_solve<float>(
    const PoissonGrid&, const PoissonOptions&, int);
template std::unique_ptr<cpu_detail::TransformSolve<double>> cpu_detail::make_r2r_solve<double>(
    const PoissonGrid&, const PoissonOptions&, int);

}  // namespace gpukit::pde
