#pragma once
// pde's building blocks, internal but installed (detail/: not the public API; it may change with
// any version): the pieces of the Poisson solver that every engine of the problem shares, pde's
// own plans (CPU and CUDA) and gpukit_scale_out's distributed slabs (FFTW's MPI interface, cuFFT
// slabs), so that each is written once and every engine divides by the same multipliers and
// refuses the same input with the same words. With poisson_mean_sums.hpp (the mean rule's sums),
// fftw_traits.hpp (FFTW per precision) and cuda/detail/cufft_traits.cuh (cuFFT per precision).
// Plain C++. Tested through the engines: tests/pde/poisson_test.cpp and tests/scale_out/.

#include <cstddef>
#include <cstdint>
#include <numbers>
#include <span>
#include <string_view>
#include <vector>

#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde::detail {

/// The squared wave numbers (2 pi m / length)^2 of the first `count` indices j of an axis of n
/// points, m the signed frequency of j (j below n/2, else j - n): the spectral multipliers the
/// host-built tables divide by, one expression for all (pde's CPU plan, and the slabs of a
/// distributed solve on FFTW's MPI interface and on cuFFT divide by the same bits). count <= n;
/// the last axis of a real-to-complex transform takes count = n / 2 + 1.
inline std::vector<double> squared_wave_numbers(std::int64_t count, std::int64_t n, double length) {
  std::vector<double> k2(static_cast<std::size_t>(count));
  const double step = 2 * std::numbers::pi / length;
  for (std::size_t j = 0; j < k2.size(); ++j) {
    const double m = 2 * static_cast<std::int64_t>(j) < n ? double(j) : double(j) - n;
    k2[j] = (step * m) * (step * m);
  }
  return k2;
}

/// The magnitudes -e_j >= 0 of the eigenvalues e_j of the 1D Laplacian `op` on an axis of n
/// points, length `length` and boundary `boundary` (poisson.hpp, "Operator"), for the first
/// `count` indices j of the axis' transform, in the transform's order: periodic j is the
/// frequency m with |m| = min(j, n - j) (real-to-complex and R2HC orders alike; count = n / 2 + 1
/// for the half spectrum's axis), dirichlet j is the mode k = j + 1 (RODFT00), neumann j is k = j
/// (REDFT10). In double, each rounded once from its closed form; the periodic spectral ones are
/// squared_wave_numbers' bits. count <= n. What every engine's host-built tables divide by.
std::vector<double> laplacian_eigenvalues(std::int64_t count, std::int64_t n, double length,
                                          Boundary boundary, Operator op);

/// The mean rule as a solve applies it to the sums of f (poisson.hpp, "Singular problems"):
/// classify_mean's result, with mean_removed false when the problem is not singular; the
/// InvalidInput of throw_nonzero_mean when the problem is singular, the mean not zero to
/// rounding and options.strict set.
template <class Real>
PoissonResult apply_mean_rule(double sum, double sum_abs, std::int64_t n, const PoissonGrid& grid,
                              const PoissonOptions& options);

/// InvalidInput "poisson: {engine} does not yet solve dirichlet/neumann/fd2/helmholtz; {instead}"
/// unless the problem is the periodic, spectral, lambda = 0 one (the engines that solve only it
/// call this before they plan; `instead` says what solves the others, in words every front door
/// can print: "use one GPU or mpirun on the CPU").
void refuse_beyond_periodic_spectral(const PoissonGrid& grid, const PoissonOptions& options,
                                     std::string_view engine, std::string_view instead);

/// InvalidInput naming the first NaN or Inf of f (host memory) by its .npy multi-index on
/// `grid`, "poisson: f[3, 17] is nan ..."; nothing when every element is finite. f is the part of
/// the grid's elements that starts at flat index `first_index` (a slab of a distributed solve;
/// 0: the whole grid). One parallel read of f on `threads` OpenMP threads; the lowest bad index
/// wins, so the message does not depend on the thread count. Float and double.
template <class Real>
void refuse_non_finite(const PoissonGrid& grid, std::span<const Real> f, int threads,
                       std::int64_t first_index = 0);

/// InvalidInput for a right-hand side in device memory whose sums (sum(f), sum(|f|): the mean
/// rule's, poisson_mean_sums.hpp) show a NaN or an Inf; nothing when both are finite.
void refuse_non_finite_sums(double sum, double sum_abs);

/// The InvalidInput PoissonOptions::strict throws for a non-zero mean (`result` from
/// classify_mean, its mean_removed set; `boundaries` the grid's, for the words).
[[noreturn]] void throw_nonzero_mean(const PoissonResult& result,
                                     std::span<const Boundary> boundaries = {});

/// A grid point of the CPU solve (FFTW in double: the copies, both transforms, the scaling) on one
/// thread: 16 ns at 256^2 (gpukit_tune_cpu_threads costs at idle: 14.5, 17.2; 15 and 26 at 64^2
/// with the planning). The thread rule's figure (core/cpu_threads.hpp) for the threads of every
/// CPU engine, FFTW's included.
inline constexpr double kCpuNsPerGridPoint = 16;

}  // namespace gpukit::pde::detail
