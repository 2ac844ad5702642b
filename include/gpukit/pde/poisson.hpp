#pragma once
// The spectral Poisson solver (seed 000, slides 40-62): lap(u) = f on a periodic 2D rectangle or
// 3D box, by the Fourier-spectral method u_hat(k) = -f_hat(k) / |k|^2, in float or double.
//
// Grid. `shape` lists the axes in .npy (C) order: the last axis is contiguous in memory. Sample
// j of axis a sits at x_a = j * length[a] / shape[a]; the wave numbers of axis a are
// k = 2 pi m / length[a] with m = j for 2j < n and j - n otherwise (the seed's ordering; the
// Nyquist mode of an even axis, j = n/2, has |m| = n/2 either way). Any axis of size 1 or more
// is accepted: an axis of size 1 carries only its zero mode (the problem is lower-dimensional).
//
// Gauge and solvability. A periodic problem has a solution only when f has mean zero, and then
// it is unique up to a constant. The solver always solves for f - mean(f) (it sets the zero mode
// to 0). "Zero to rounding": with mean = sum(f) / n and scale = sum(|f|) / n, both accumulated
// in double with compensated (Neumaier) sums over the fixed tree of
// gpukit/primitives/reduce_canonical.hpp on every backend (so the CPU and a GPU compute the same
// bits and classify a mean alike), the mean counts as zero when
//     |mean| <= kMeanTolerance * eps(Real) * scale,     kMeanTolerance = 64,
// eps(Real) being 2^-23 (float) or 2^-52 (double). Why 64: f sampled from a zero-mean function
// and rounded once to Real has |mean| <= eps/2 * scale; a right-hand side computed in Real with
// a few dozen roundings per element stays below 64 eps; a genuinely non-zero mean (a source
// that does not integrate to zero) is far above it. A mean above the bound is reported in the
// result (`mean_removed`), or refused with InvalidInput when `strict` is set.
// `Gauge::mean` returns the solution of mean zero; `Gauge::corner` the one with u[0,...,0] = 0
// (the seed's `u = u - u(1,1)`).
//
// NaN and Inf: f must be finite. solve() refuses a NaN or an Inf with InvalidInput naming the
// first one by its .npy multi-index ("poisson: f[3, 17] is nan"), on every backend, before
// anything is written; solve_on_device() refuses it from the sums it takes first (no index).
//
// Determinism: the CPU backend (FFTW, planned with FFTW_ESTIMATE) gives the same bits for the
// same thread count; CUDA variants give the same bits run after run on one GPU. CPU and GPU
// agree to rounding (the tests' bound: 4 log2(n) eps (max|u| + max|f| (L/2pi)^2)).
//
// Tested in tests/pde/poisson_test.cpp (each scenario on every backend: manufactured solutions,
// the gauges, the mean rule's sums bit for bit, the seed's numbers) and
// tests/pde/poisson_gpu_test.cpp (every CUDA variant against the CPU, the device path).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/verify.hpp"

namespace gpukit::pde {

/// A periodic grid: 2 or 3 axes in .npy order, each with its period (length; all 1 when empty).
struct PoissonGrid {
  std::vector<std::int64_t> shape;
  std::vector<double> lengths;

  int rank() const { return static_cast<int>(shape.size()); }
  /// Elements (the product of shape); the grid must be valid.
  std::int64_t size() const;
  /// The period of axis a (1 when `lengths` is empty).
  double length(int axis) const;
  /// "64x48 (lengths 1x2)".
  std::string describe() const;
};

/// The periods of a grid of `rank` axes from the lengths a front door was given (`name`:
/// "--length", "lengths"), one rule for the CLI and Python: none gives 1 for every axis, one value
/// is the period of every axis, `rank` values are one per axis. InvalidInput otherwise: "--length
/// gives 2 values for a grid of 3 axes: give one for every axis, or one per axis". The values
/// themselves are validate_grid's to judge.
std::vector<double> axis_lengths(std::string_view name, std::span<const double> given, int rank);

/// InvalidInput naming the problem unless: rank 2 or 3; every axis >= 1; the element count
/// and its byte size fit std::int64_t; `lengths` empty or one per axis, each finite and > 0.
void validate_grid(const PoissonGrid& grid);

enum class Gauge { mean, corner };
/// "mean" or "corner"; parse_gauge throws InvalidInput for anything else.
std::string_view gauge_name(Gauge gauge);
Gauge parse_gauge(std::string_view name);

/// The bound of "zero to rounding" (see above), in units of eps(Real) * mean(|f|).
inline constexpr double kMeanTolerance = 64;

struct PoissonOptions {
  Gauge gauge = Gauge::mean;
  bool strict = false;  // refuse (InvalidInput) an f whose mean is not zero to rounding
  std::string variant;  // CUDA variant by name; empty: the best one that supports the grid
};

/// What a solve found out about f.
struct PoissonResult {
  double mean = 0;            // sum(f) / n (removed from f in every case)
  double mean_abs = 0;        // sum(|f|) / n
  double mean_tolerance = 0;  // kMeanTolerance * eps(Real) * mean_abs
  bool mean_removed = false;  // |mean| > mean_tolerance: lap(u) = f had no periodic solution,
                              // u solves lap(u) = f - mean
};

/// A solver for one grid, precision and device, created once and used for many right-hand sides
/// (FFTW or cuFFT plans, wave-number tables and buffers are made at construction).
///
/// Construction throws InvalidInput for a bad grid, an unknown variant or one that does not
/// support the grid; OutOfMemory (with the bytes asked) when the grid does not fit the host's
/// physical memory (CPU) or the device's free memory (CUDA), checked before anything is
/// allocated; DeviceUnavailable for a CUDA context without a usable device.
/// A plan is not used by two threads at once.
template <class Real>  // float or double
class PoissonPlan {
 public:
  PoissonPlan(const Context& context, const PoissonGrid& grid, const PoissonOptions& options = {});
  PoissonPlan(PoissonPlan&&) noexcept;
  PoissonPlan& operator=(PoissonPlan&&) noexcept;
  ~PoissonPlan();

  /// Solves for f in host memory into u (host memory, grid.size() elements each; u may be f,
  /// any other overlap is refused). On a CUDA plan the data is copied to the device and back.
  /// InvalidInput for a size mismatch, or a non-zero mean when `strict` (u is then untouched).
  PoissonResult solve(std::span<const Real> f, std::span<Real> u);

  /// Solves for f in device memory into u (device memory on the plan's device; u may be f) on
  /// `stream`. Waits half-way, as the `*_on_device` convention allows for a value returned to the
  /// host (docs/design-notes.md): the sums of f are computed first and the stream synchronized to
  /// read them (so that `strict` can refuse, and a NaN be reported, before u is written); the
  /// solve is then queued and NOT waited for: on return, u is written only once `stream` has run
  /// it, and f, u and the plan must stay alive until then. InvalidInput on a CPU plan.
  PoissonResult solve_on_device(const Real* f, Real* u, StreamHandle stream);

  const PoissonGrid& grid() const;
  const PoissonOptions& options() const;
  /// "cpu-fftw" or the CUDA variant's name.
  std::string_view variant() const;
  /// Device memory the plan holds or will hold (0 on the CPU).
  std::size_t device_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class PoissonPlan<float>;
extern template class PoissonPlan<double>;

/// One-shot convenience: a plan for the grid, one solve.
template <class Real>
PoissonResult solve_poisson(const Context& context, const PoissonGrid& grid,
                            std::span<const Real> f, std::span<Real> u,
                            const PoissonOptions& options = {});

/// The CUDA variants in ladder order (seed first, the vendor row `cufft` last); empty without
/// CUDA. The plan's default is the first of best_poisson_variants() that supports the grid.
std::vector<std::string> poisson_variant_names();

/// The name of the variant a CUDA plan uses by default for `grid` in precision Real.
/// InvalidInput when no variant supports the grid, DeviceUnavailable without CUDA.
template <class Real>
std::string default_poisson_variant(const PoissonGrid& grid);

/// How far two correct solvers may differ (CPU against GPU, float or double):
/// 4 log2(n) eps(Real) (max|u| + max|f| (L_max / 2 pi)^2): the transforms' rounding, a few eps
/// per level of the FFT, amplified at most by 1 / |k_min|^2 on the way from f to u.
template <class Real>
double poisson_agreement_bound(const PoissonGrid& grid, double max_abs_f, double max_abs_u);

/// The independent reference of `poisson --check`, the demo and the tests: the spectral solution
/// of the same problem (f with its mean removed, `gauge`) computed in long double with FFTW's
/// long-double transforms, wave numbers and scaling in long double, rounded to double at the
/// end. It shares no code with the solvers it checks. Host memory: poisson_reference_bytes(grid)
/// (about 32 bytes a grid point, plus the 8 of the result); OutOfMemory when that exceeds the
/// host's physical memory, InvalidInput for a bad grid or a size mismatch.
template <class Real>
std::vector<double> poisson_reference_solution(const PoissonGrid& grid, std::span<const Real> f,
                                               Gauge gauge, int threads = 1);
std::size_t poisson_reference_bytes(const PoissonGrid& grid);

struct PoissonCheck {
  ErrorMetrics metrics;  // u against the reference (the seeds' L1 norm and max abs error)
  double bound = 0;      // poisson_agreement_bound<Real>(grid, max|f|, max|reference|)
  bool passed = false;   // metrics.max_abs <= bound (a NaN never passes)
};

/// Checks a solution u of lap(u) = f (solved in `gauge`) against poisson_reference_solution,
/// every element within poisson_agreement_bound<Real>.
template <class Real>
PoissonCheck check_poisson_solution(const PoissonGrid& grid, std::span<const Real> f,
                                    std::span<const Real> u, Gauge gauge, int threads = 1);

/// One line on a check, for the CLI and reports: "long double reference (FFTW), relative L1
/// 1.2e-16, max abs error 3.4e-17 (bound 5.6e-14): ok" ("FAILED" when it did not pass).
std::string describe_poisson_check(const PoissonCheck& check);

/// InvalidInput unless `shape` (an array's, read from `source`, a file name) is a grid the solver
/// takes: "{source}: poisson takes 2D or 3D arrays, not 4D", "{source}: axis 0 has size 0".
void check_poisson_array_shape(std::span<const std::int64_t> shape, std::string_view source);

/// The warning for a solve that removed a non-zero mean (result.mean_removed): "the mean of f,
/// 1.01562, is not zero to rounding (|mean| > 64 eps mean|f| = 1.5e-14): lap(u) = f has no
/// periodic solution; solved lap(u) = f - mean (--strict refuses instead)".
std::string describe_removed_mean(const PoissonResult& result);

/// The mean rule above, as the solver applies it (exposed for tests and the CLI): fills
/// mean, mean_abs, mean_tolerance and mean_removed from the sums of f and |f| over n elements.
template <class Real>
PoissonResult classify_mean(double sum, double sum_abs, std::int64_t n);

}  // namespace gpukit::pde
