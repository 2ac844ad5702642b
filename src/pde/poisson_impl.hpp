#pragma once
// Internal: the backends behind PoissonPlan (CPU: FFTW; CUDA: a registry variant) and the sums
// the mean rule needs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "gpukit/pde/poisson.hpp"
#include "pde/poisson_mean_sums.hpp"

namespace gpukit::pde {

template <class Real>
struct PoissonPlan<Real>::Impl {
  PoissonGrid grid;
  PoissonOptions options;
  std::string variant;
  std::size_t device_bytes = 0;
  int host_threads = 1;  // for the host-side passes over f (the finite check)

  virtual ~Impl() = default;
  virtual PoissonResult solve(std::span<const Real> f, std::span<Real> u) = 0;
  virtual PoissonResult solve_on_device(const Real* f, Real* u, StreamHandle stream) = 0;
};

template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cpu_poisson(const Context& context,
                                                                   const PoissonGrid& grid,
                                                                   const PoissonOptions& options);
template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cuda_poisson(const Context& context,
                                                                    const PoissonGrid& grid,
                                                                    const PoissonOptions& options);

/// The mean rule's sums of f (host memory): MeanSumsOp over the canonical tree on `threads`
/// OpenMP threads (<= 0: the OpenMP default), the same bits for every thread count and the bits
/// of the CUDA backend's device_mean_sums.
template <class Real>
detail::MeanSums host_mean_sums(std::span<const Real> f, int threads);

/// InvalidInput naming the first NaN or Inf of f (host memory) by its .npy multi-index on
/// `grid`, "poisson: f[3, 17] is nan ..."; nothing when every element is finite. f is the part of
/// the grid's elements that starts at flat index `first_index` (a slab of a distributed solve;
/// 0: the whole grid).
template <class Real>
void refuse_non_finite(const PoissonGrid& grid, std::span<const Real> f, int threads,
                       std::int64_t first_index = 0);

/// InvalidInput for a right-hand side in device memory whose sums show a NaN or an Inf.
void refuse_non_finite_sums(double sum, double sum_abs);

/// A grid point of the CPU solve (FFTW in double: the copies, both transforms, the scaling) on one
/// thread: 16 ns at 256^2 (gpukit_tune_cpu_threads costs at idle: 14.5, 17.2; 15 and 26 at 64^2
/// with the planning). The thread rule's figure (core/cpu_threads.hpp) for the CPU plans' threads,
/// FFTW's included.
inline constexpr double kCpuNsPerGridPoint = 16;

/// FFTW's planner is not thread-safe: every FFTW planner call and plan destruction of gpukit (the
/// serial and the MPI CPU backends) holds this mutex.
/// The squared wave numbers (2 pi m / length)^2 of the first `count` indices j of an axis of n
/// points, m the signed frequency of j (j below n/2, else j - n): the spectral multipliers every
/// engine (the CPU and CUDA plans, the distributed slabs) divides by, one expression for all.
inline std::vector<double> squared_wave_numbers(std::int64_t count, std::int64_t n, double length) {
  std::vector<double> k2(static_cast<std::size_t>(count));
  const double step = 2 * std::numbers::pi / length;
  for (std::size_t j = 0; j < k2.size(); ++j) {
    const double m = 2 * static_cast<std::int64_t>(j) < n ? double(j) : double(j) - n;
    k2[j] = (step * m) * (step * m);
  }
  return k2;
}

std::mutex& fftw_planner_mutex();
/// fftw_init_threads() and fftwf_init_threads(), once per process.
void init_fftw_threads_once();

/// The InvalidInput `strict` throws for a non-zero mean.
[[noreturn]] void throw_nonzero_mean(const PoissonResult& result);

}  // namespace gpukit::pde
