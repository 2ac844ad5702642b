#pragma once
// The fast Poisson and Helmholtz solver (seed 000, slides 40-62, and beyond it): (lap - lambda) u
// = f, lambda >= 0, on a 2D rectangle or 3D box whose every axis has its own boundary (periodic,
// Dirichlet or Neumann), with the continuous Laplacian (`Operator::spectral`) or the standard
// second-order difference (`Operator::fd2`), solved exactly in the eigenbasis of the operator by
// fast Fourier, sine and cosine transforms, in float or double. The periodic, spectral, lambda = 0
// problem (every default) is the seed's: lap(u) = f by u_hat(k) = -f_hat(k) / |k|^2.
//
// Grid. `shape` lists the axes in .npy (C) order: the last axis is contiguous in memory. Axis a
// has length L = length[a], n = shape[a] samples and boundary[a]:
// - periodic (the default): nodes x_j = j h, h = L / n, j = 0..n-1; modes exp(2 pi i m x / L)
//   with m = j for 2j < n and j - n otherwise (the seed's ordering; the Nyquist mode of an even
//   axis, j = n/2, has |m| = n/2 either way);
// - dirichlet (u = 0 at x = 0 and x = L): the array holds the interior nodes x_j = (j + 1) h,
//   j = 0..n-1, h = L / (n + 1); modes sin(pi k x / L), k = 1..n (the DST-I, scipy's
//   dst(type=1));
// - neumann (du/dn = 0 at x = 0 and x = L): cell centres x_j = (j + 1/2) h, j = 0..n-1,
//   h = L / n; modes cos(pi k x / L), k = 0..n-1 (the DCT-II, scipy's dct(type=2)).
// Any axis of size 1 or more is accepted (an axis of size 1 has one mode).
//
// Operator. The eigenvalue of lap on a product of the axes' modes is the sum over the axes of
// - spectral (the continuous Laplacian): -(2 pi m / L)^2 periodic, -(pi k / L)^2 dirichlet and
//   neumann;
// - fd2 (3 points an axis, 5 in 2D, 7 in 3D: (u[j-1] - 2 u[j] + u[j+1]) / h^2 with u = 0 beyond a
//   dirichlet end and the mirrored u[-1] = u[0], u[n] = u[n-1] beyond a neumann end):
//   -(4 / h^2) sin^2(theta / 2), theta = 2 pi m / n periodic, pi k / (n + 1) dirichlet,
//   pi k / n neumann. The solve is the exact solution of the 5/7-point system (what a sparse
//   direct solve of that matrix gives), by its eigenvalues.
// u's coefficient is f's divided by (that sum - lambda).
//
// Singular problems, gauge and solvability. When no axis is dirichlet and lambda = 0 (every
// periodic problem of the seed, and neumann ones), the constant is in the null space: the problem
// has a solution only when f has mean zero, and then it is unique up to a constant. The solver
// then always solves for f - mean(f) (the constant mode set to 0). "Zero to rounding": with
// mean = sum(f) / n and scale = sum(|f|) / n, both accumulated in double with compensated
// (Neumaier) sums over the fixed tree of gpukit/primitives/reduce_canonical.hpp on every backend
// (so the CPU and a GPU compute the same bits and classify a mean alike), the mean counts as zero
// when
//     |mean| <= kMeanTolerance * eps(Real) * scale,     kMeanTolerance = 64,
// eps(Real) being 2^-23 (float) or 2^-52 (double). Why 64: f sampled from a zero-mean function
// and rounded once to Real has |mean| <= eps/2 * scale; a right-hand side computed in Real with
// a few dozen roundings per element stays below 64 eps; a genuinely non-zero mean (a source
// that does not integrate to zero) is far above it. A mean above the bound is reported in the
// result (`mean_removed`), or refused with InvalidInput when `strict` is set.
// `Gauge::mean` returns the solution of mean zero; `Gauge::corner` the one with u[0,...,0] = 0
// (the seed's `u = u - u(1,1)`). Any other problem (a dirichlet axis, or lambda > 0) is
// nonsingular: its one solution is returned whatever the gauge, nothing is removed from f
// (`mean_removed` is false; mean, mean_abs and mean_tolerance still describe f) and `strict`
// refuses nothing.
//
// NaN and Inf: f must be finite. solve() refuses a NaN or an Inf with InvalidInput naming the
// first one by its .npy multi-index ("poisson: f[3, 17] is nan"), on every backend, before
// anything is written; solve_on_device() refuses it from the sums it takes first (no index).
//
// Determinism: the CPU backend (FFTW, planned with FFTW_ESTIMATE) gives the same bits for the
// same thread count; CUDA variants give the same bits run after run on one GPU. CPU and GPU
// agree to rounding (poisson_agreement_bound).
//
// Backends: the CPU and the CUDA backend solve every problem above (CUDA: the periodic,
// spectral, lambda = 0 problem by the registry's variants, every other by the walls solver,
// variant "cufft-r2r", or its per-axis ladder step "cufft-r2r-axes"), and so do solves spread
// over the CPU ranks of an MPI job (gpukit/scale_out/poisson.hpp, FFTW's MPI interface); solves
// spread over several GPUs solve the periodic, spectral, lambda = 0 problem (others are refused
// with InvalidInput: use one GPU or mpirun on the CPU).
//
// Tested in tests/pde/poisson_test.cpp (each scenario on every backend: manufactured solutions,
// the gauges, the mean rule's sums bit for bit, the seed's numbers),
// tests/pde/poisson_boundaries_test.cpp (every boundary combination, both operators, Helmholtz:
// manufactured solutions, the fd2 residual against the 5/7-point stencil, the long-double check)
// and tests/pde/poisson_gpu_test.cpp (every CUDA variant against the CPU, the device path).

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

/// An axis' boundary (see "Grid" above for the nodes and modes of each).
enum class Boundary { periodic, dirichlet, neumann };
/// "periodic", "dirichlet" or "neumann"; parse_boundary throws InvalidInput for anything else:
/// "poisson: unknown boundary 'wall' (known: periodic, dirichlet, neumann)".
std::string_view boundary_name(Boundary boundary);
Boundary parse_boundary(std::string_view name);

/// A grid: 2 or 3 axes in .npy order, each with its length (all 1 when `lengths` is empty) and
/// its boundary (all periodic when `boundaries` is empty).
struct PoissonGrid {
  std::vector<std::int64_t> shape;
  std::vector<double> lengths;
  std::vector<Boundary> boundaries = {};

  int rank() const { return static_cast<int>(shape.size()); }
  /// Elements (the product of shape); the grid must be valid.
  std::int64_t size() const;
  /// The length of axis a (1 when `lengths` is empty).
  double length(int axis) const;
  /// The boundary of axis a (periodic when `boundaries` is empty).
  Boundary boundary(int axis) const;
  /// True when every axis is periodic (`boundaries` empty or all periodic).
  bool periodic() const;
  /// "64x48 (lengths 1x2)"; a grid with a non-periodic axis adds its boundaries:
  /// "64x48 (lengths 1x2, boundaries dirichlet,neumann)".
  std::string describe() const;
};

/// The periods of a grid of `rank` axes from the lengths a front door was given (`name`:
/// "--length", "lengths"), one rule for the CLI and Python: none gives 1 for every axis, one value
/// is the period of every axis, `rank` values are one per axis. InvalidInput otherwise: "--length
/// gives 2 values for a grid of 3 axes: give one for every axis, or one per axis". The values
/// themselves are validate_grid's to judge.
std::vector<double> axis_lengths(std::string_view name, std::span<const double> given, int rank);

/// The boundaries of a grid of `rank` axes from the text a front door was given (`name`:
/// "--boundary", "boundary"), one rule for the CLI and Python: empty gives periodic for every
/// axis; one name (periodic, dirichlet or neumann) is every axis' boundary; a comma list gives
/// one per axis in .npy order. InvalidInput otherwise, naming the front door's argument:
/// "--boundary gives 2 values for a grid of 3 axes: give one for every axis, or one per axis",
/// "boundary: unknown boundary 'wall' (known: periodic, dirichlet, neumann)". A rank of 0 (not
/// known yet) checks the names only and returns them as given.
std::vector<Boundary> axis_boundaries(std::string_view name, std::string_view text, int rank);

/// InvalidInput naming the problem unless: rank 2 or 3; every axis >= 1; the element count
/// and its byte size fit std::int64_t; `lengths` empty or one per axis, each finite and > 0;
/// `boundaries` empty or one per axis.
void validate_grid(const PoissonGrid& grid);

enum class Gauge { mean, corner };
/// "mean" or "corner"; parse_gauge throws InvalidInput for anything else.
std::string_view gauge_name(Gauge gauge);
Gauge parse_gauge(std::string_view name);

/// The discrete Laplacian (see "Operator" above).
enum class Operator { spectral, fd2 };
/// "spectral" or "fd2"; parse_operator throws InvalidInput for any other `text`, naming the
/// front door's `argument` ("--operator", "operator"): "--operator: unknown operator 'fd4' (known:
/// spectral, fd2)".
std::string_view operator_name(Operator op);
Operator parse_operator(std::string_view text, std::string_view argument = "poisson");

/// The Helmholtz lambda a front door was given (`name`: "--helmholtz", "helmholtz"), one rule for
/// the CLI, Python and the plan: returned when finite and >= 0, else InvalidInput "helmholtz must
/// be finite and >= 0, got -1".
double helmholtz_lambda(std::string_view name, double lambda);

/// The bound of "zero to rounding" (see above), in units of eps(Real) * mean(|f|).
inline constexpr double kMeanTolerance = 64;

struct PoissonOptions {
  Gauge gauge = Gauge::mean;  // singular problems only (see above)
  bool strict = false;  // refuse (InvalidInput) an f whose mean is not zero to rounding (singular)
  std::string variant;  // CUDA variant by name; empty: the best one that supports the grid
  Operator op = Operator::spectral;  // the Laplacian (the CLI's --operator)
  double helmholtz = 0;              // lambda of (lap - lambda) u = f: finite, >= 0
};

/// True when the constant is in the problem's null space: no axis dirichlet and helmholtz 0 (see
/// "Singular problems" above); the mean rule, the gauge and `strict` apply only then.
bool poisson_is_singular(const PoissonGrid& grid, const PoissonOptions& options);

/// What a solve found out about f.
struct PoissonResult {
  double mean = 0;            // sum(f) / n (removed from f when the problem is singular)
  double mean_abs = 0;        // sum(|f|) / n
  double mean_tolerance = 0;  // kMeanTolerance * eps(Real) * mean_abs
  bool mean_removed = false;  // singular and |mean| > mean_tolerance: lap(u) = f had no
                              // solution, u solves lap(u) = f - mean
};

/// A solver for one grid, precision and device, created once and used for many right-hand sides
/// (FFTW or cuFFT plans, wave-number tables and buffers are made at construction).
///
/// Construction throws InvalidInput for a bad grid, a helmholtz lambda that is not finite and
/// >= 0, an unknown variant or one that does not support the grid, and on CUDA a problem other
/// than the periodic, spectral, lambda = 0 one; OutOfMemory (with the bytes asked) when the grid
/// does not fit the host's physical memory (CPU) or the device's free memory (CUDA), checked before
/// anything is allocated; DeviceUnavailable for a CUDA context without a usable device. A plan is
/// not used by two threads at once.
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
/// 4 log2(M) eps(Real) (max|u| + max|f| / mu_min): the transforms' rounding, a few eps per level
/// of the FFT, amplified at most by 1 / mu_min on the way from f to u. M is the product over the
/// axes of the length of the FFT each axis' transform is (n periodic, 2n neumann, 2(n + 1)
/// dirichlet: FFTW's normalisation of the transform; M = n for a periodic grid). mu_min is the
/// smallest magnitude of an eigenvalue of (lap - lambda) that the solve divides by: lambda plus,
/// for every dirichlet axis, the magnitude of its k = 1 eigenvalue; when that is 0 (a singular
/// problem: the constant mode is not divided by), the smallest first non-zero eigenvalue
/// magnitude of an axis ((2 pi / L)^2 periodic spectral, (pi / L)^2 neumann spectral, the fd2
/// ones of m = 1 or k = 1). For the periodic, spectral, lambda = 0 problem that is the seed's
/// 4 log2(n) eps(Real) (max|u| + max|f| (L_max / 2 pi)^2). The first form is that problem's
/// (default options) on the grid's boundaries.
template <class Real>
double poisson_agreement_bound(const PoissonGrid& grid, double max_abs_f, double max_abs_u);
template <class Real>
double poisson_agreement_bound(const PoissonGrid& grid, const PoissonOptions& options,
                               double max_abs_f, double max_abs_u);

/// The independent reference of `poisson --check`, the demo and the tests: the solution of the
/// same problem (the grid's boundaries, the options' operator, lambda and gauge; f with its mean
/// removed when the problem is singular) computed in long double with FFTW's long-double
/// transforms (real-to-complex for the periodic, spectral, lambda = 0 problem; otherwise
/// real-to-real on every axis: RODFT00, REDFT10 / REDFT01, R2HC / HC2R), eigenvalues and scaling
/// in long double, rounded to double at the end. It shares no code with the solvers it checks.
/// Host memory: at most poisson_reference_bytes(grid) (about 32 bytes a grid point, plus the 8 of
/// the result); OutOfMemory when that exceeds the host's physical memory, InvalidInput for a bad
/// grid or options, or a size mismatch. The Gauge form is the default options with that gauge.
template <class Real>
std::vector<double> poisson_reference_solution(const PoissonGrid& grid, std::span<const Real> f,
                                               Gauge gauge, int threads = 1);
template <class Real>
std::vector<double> poisson_reference_solution(const PoissonGrid& grid, std::span<const Real> f,
                                               const PoissonOptions& options, int threads = 1);
std::size_t poisson_reference_bytes(const PoissonGrid& grid);

struct PoissonCheck {
  ErrorMetrics metrics;  // u against the reference (the seeds' L1 norm and max abs error)
  double bound = 0;      // poisson_agreement_bound<Real>(grid, max|f|, max|reference|)
  bool passed = false;   // metrics.max_abs <= bound (a NaN never passes)
};

/// Checks a solution u of (lap - lambda) u = f (solved with `options`, or the default options in
/// `gauge`) against poisson_reference_solution, every element within
/// poisson_agreement_bound<Real>(grid, options, ...).
template <class Real>
PoissonCheck check_poisson_solution(const PoissonGrid& grid, std::span<const Real> f,
                                    std::span<const Real> u, Gauge gauge, int threads = 1);
template <class Real>
PoissonCheck check_poisson_solution(const PoissonGrid& grid, std::span<const Real> f,
                                    std::span<const Real> u, const PoissonOptions& options,
                                    int threads = 1);

/// One line on a check, for the CLI and reports: "long double reference (FFTW), relative L1
/// 1.2e-16, max abs error 3.4e-17 (bound 5.6e-14): ok" ("FAILED" when it did not pass).
std::string describe_poisson_check(const PoissonCheck& check);

/// InvalidInput unless `shape` (an array's, read from `source`, a file name) is a grid the solver
/// takes: "{source}: poisson takes 2D or 3D arrays, not 4D", "{source}: axis 0 has size 0".
void check_poisson_array_shape(std::span<const std::int64_t> shape, std::string_view source);

/// The warning for a solve that removed a non-zero mean (result.mean_removed): "the mean of f,
/// 1.01562, is not zero to rounding (|mean| > 64 eps mean|f| = 1.5e-14): lap(u) = f has no
/// periodic solution; solved lap(u) = f - mean (--strict refuses instead)". `boundaries` are the
/// grid's (empty: periodic); with a neumann axis the words are "has no solution with boundaries
/// neumann,periodic".
std::string describe_removed_mean(const PoissonResult& result,
                                  std::span<const Boundary> boundaries = {});

/// The mean rule above, as the solver applies it (exposed for tests and the CLI): fills
/// mean, mean_abs, mean_tolerance and mean_removed from the sums of f and |f| over n elements.
template <class Real>
PoissonResult classify_mean(double sum, double sum_abs, std::int64_t n);

}  // namespace gpukit::pde
