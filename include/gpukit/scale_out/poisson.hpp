#pragma once
// The Poisson and Helmholtz solver (gpukit/pde/poisson.hpp) on a grid split into slabs of axis 0
// (slabs.hpp: why slabs and all-to-all transposes are the style for grids) across the ranks of
// an MPI job (FFTW's MPI interface on CPUs, NCCL between GPUs) and the GPUs of a process: for
// grids larger than one device's memory, or solved on several GPUs at once. The same problem,
// the same gauges, the same mean rule and refusals with the same messages; results equal to the
// single-device solve to rounding.
//
// One call per use: solve_poisson (arrays in memory) and solve_poisson_file (a .npy file in, a
// .npy file out, each rank reading and writing its own rows), both on a Job (job.hpp: the ranks
// and devices of the call); DistributedPoissonPlan beneath them, for a caller that solves many
// right-hand sides or holds its slabs on the devices itself.
//
// Algorithm (both backends): each part transforms its slab along the trailing axes (real to
// complex), a global transpose (all-to-all) gives each part every row of axis 0 for a slab of
// the next axis (the half-spectrum axis in 2D), which it transforms along axis 0, scales by
// -1 / (n |k|^2) (zero mode 0) and transforms back; the inverse transpose and the trailing
// complex-to-real transforms end it. CPU ("fftw-mpi"): FFTW's MPI interface
// (fftw_mpi_plan_dft_r2c with FFTW_MPI_TRANSPOSED_OUT; the transposes are FFTW's MPI_Alltoall
// over the communicator's native handle); a grid with a dirichlet or neumann axis goes the same
// way through fftw_mpi_plan_r2r, each axis its boundary's sine, cosine or halfcomplex transform
// (the serial CPU plan's), and every problem divides by the serial plan's multipliers (the
// operator's eigenvalues minus lambda, pde/poisson.hpp). CUDA: cuFFT for the transforms (64-bit
// plans, chunked to bound cuFFT's work area) and gpukit/distributed/device_exchange.hpp for the
// transposes: NCCL's grouped send/receive ("cufft-nccl") or, within one process, peer copies
// ("cufft-copy", which also runs several parts on one GPU, so that a single-GPU machine tests the
// whole path).
//
// Agreement with the single-device solve (the bound the tests, `gpukit poisson --device cuda:all`
// and `mpirun gpukit poisson` are held to): |u_spread - u_single| <=
// pde::poisson_agreement_bound<Real>(grid, options, max|f|, max|u|) element by element. Why the
// same bound: both compute the same d-dimensional transform as one-dimensional transforms along
// each axis, only grouped differently, so each carries a rounding error of a few eps per level of
// log2(M) = sum over axes of log2(M_a) levels (M_a the length of the FFT axis a's transform is),
// relative to the largest |f_hat| and |u_hat|, and the division by the eigenvalues amplifies the
// error of f_hat by at most 1 / mu_min (the periodic spectral problem: (L_max / 2 pi)^2), exactly
// as for two single-device backends (CPU and GPU), which poisson_agreement_bound was derived for;
// the transposes only move values (exact), and the corner gauge (of a singular problem) subtracts
// one value on every part
// (one rounding, covered by the factor 4 of the bound). One part (P = 1) is the single-device
// plan itself: the same bits. For given parts (devices, ranks, threads) the result is the same
// bits run after run, and the NCCL and copy engines give the same bits on the same GPU model.
//
// Mean rule: the sums of f and |f| are the single-device solve's bits for any P (computed on the
// fixed tree of gpukit/primitives/reduce_canonical.hpp, each part reducing its whole tiles): the
// mean, the warning and `strict` do not depend on the part count. As in one process, the rule
// and the gauge apply to singular problems only (no dirichlet axis, lambda 0).
//
// Failures: every step that may fail on some ranks only (a NaN in one slab, memory on one GPU, a
// file error) is agreed (gpukit/distributed/communicator.hpp's rule): every rank throws the same
// error, the lowest failing rank's, and no rank is left waiting in a collective.
//
// Tested in tests/scale_out/poisson_test.cpp (the slab partition, the canonical sums, one part
// against the single-device plan, the collective .npy files), poisson_mpi_test.cpp (the FFTW MPI
// engine under mpirun -np 1, 2, 3 against the serial solver, every boundary combination, both
// operators and Helmholtz included, the failure rule, the collective files), poisson_gpu_test.cpp
// and poisson_multigpu_test.cpp (the CUDA engines), and by the CLI
// (tests/cli/poisson_mpi_cli_test.cpp, tests/cli/poisson_cli_gpu_test.cpp).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/scale_out/job.hpp"
#include "gpukit/scale_out/slabs.hpp"

namespace gpukit::scale_out {

/// The engines: "fftw-mpi" (CPU), "cufft-nccl" and "cufft-copy" (CUDA); with one part, the
/// single-device plan's variant.
inline constexpr std::string_view kFftwMpiEngine = "fftw-mpi";
inline constexpr std::string_view kCufftNcclEngine = "cufft-nccl";
inline constexpr std::string_view kCufftCopyEngine = "cufft-copy";

/// A distributed solver for one grid and precision, made once by every rank of `comm` together
/// (a collective) and used for many right-hand sides.
///
/// CPU context: one part per rank (`devices` must be empty), the FFTW MPI engine (threads:
/// context.cpu_threads per rank). CUDA context: one part per entry of `devices` on this rank
/// (empty: {context.cuda_device}); a device may repeat only in the "cufft-copy" engine.
/// options.variant picks the engine ("" is "cufft-nccl" where NCCL was built and the devices are
/// distinct, else "cufft-copy", which needs a single process); with P = 1 it is the single-device
/// plan's variant instead. Every axis must be >= 2 on CUDA when P > 1.
///
/// On the CPU every problem the single-device plan solves (walls per axis, fd2, helmholtz), for
/// any P. On CUDA with P > 1 only the periodic, spectral, lambda = 0 problem: a grid with a
/// dirichlet or neumann axis, fd2 or helmholtz is refused with InvalidInput ("poisson: a solve
/// spread over several GPUs does not yet solve dirichlet/neumann/fd2/helmholtz; use one GPU or
/// mpirun on the CPU"); with P = 1, every problem the single-device plan solves.
///
/// Throws, on every rank alike (agreed): InvalidInput for a bad grid or options; OutOfMemory
/// (with the bytes) when a part's buffers do not fit its host or device, checked before anything
/// large is allocated; DeviceUnavailable for a device that is not usable. A plan is not used by
/// two threads at once.
template <class Real>
class DistributedPoissonPlan {
 public:
  DistributedPoissonPlan(const Context& context, const pde::PoissonGrid& grid,
                         const pde::PoissonOptions& options, distributed::Communicator& comm,
                         std::vector<int> devices = {});
  DistributedPoissonPlan(DistributedPoissonPlan&&) noexcept;
  DistributedPoissonPlan& operator=(DistributedPoissonPlan&&) noexcept;
  ~DistributedPoissonPlan();

  /// Parts over all ranks (P), this rank's parts, and the global index of its first.
  int parts() const;
  int local_parts() const;
  int first_part() const;
  /// Rows of axis 0 that local part `local` holds: slab_range(shape[0], parts(), first_part() +
  /// local).
  SlabRange slab(int local) const;
  /// Elements of one row of axis 0 (the product of the other axes).
  std::int64_t row_elements() const;

  /// Collective solve with f and u in host memory: f[i] and u[i] are local part i's slab,
  /// slab(i).count * row_elements() elements each (u[i] may be f[i]; other overlaps are refused).
  /// Every rank returns the same result (the mean rule's sums are global). Refuses, as the
  /// single-device solve does and with its messages: a size mismatch, a NaN or an Inf (naming
  /// the first by its index in the whole grid), a non-zero mean when `strict` (u untouched).
  pde::PoissonResult solve(std::span<const std::span<const Real>> f,
                           std::span<const std::span<Real>> u);
  /// solve() for a rank with one part.
  pde::PoissonResult solve(std::span<const Real> f, std::span<Real> u);

  /// Collective solve with f[i] and u[i] in device memory on local part i's device (u[i] may be
  /// f[i]). Returns once u is written (it synchronizes the parts' streams). The finite check is
  /// made from the sums, as PoissonPlan::solve_on_device does. InvalidInput on a CPU plan.
  pde::PoissonResult solve_on_device(std::span<const Real* const> f, std::span<Real* const> u);

  const pde::PoissonGrid& grid() const;
  const pde::PoissonOptions& options() const;
  /// kFftwMpiEngine, kCufftNcclEngine, kCufftCopyEngine, or the single-device variant (P = 1).
  std::string_view engine() const;
  /// Device bytes local part `local` holds for data already on the devices (0 on the CPU); the
  /// host data path adds a copy of the slab, allocated on the first solve() (rows x
  /// row_elements() x sizeof(Real)).
  std::size_t device_bytes(int local) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class DistributedPoissonPlan<float>;
extern template class DistributedPoissonPlan<double>;

/// How a scale-out Poisson call spread its grid: for its front door's report.
struct PoissonSpread {
  pde::PoissonGrid grid;
  bool single_precision = false;   // the solve's precision: float (else double)
  std::string engine;              // kFftwMpiEngine, ..., or the single-device variant
  int ranks = 1;                   // MPI ranks
  std::vector<std::int64_t> rows;  // rows of axis 0 per part, in part order
};

/// Solves lap(u) = f for the whole grid `f` (host memory, C order) over the job's workers: one
/// part per worker of every rank (Job: one CPU rank each, or each rank's GPUs). Every rank
/// passes the whole f (each uses its parts' rows) and receives the whole u (the other ranks'
/// rows gathered on rank 0 and broadcast: a grid that fits each process's memory; a larger one
/// goes through solve_poisson_file or DistributedPoissonPlan). u may be f; other overlaps are
/// refused. Within pde::poisson_agreement_bound of the single-device solve (the bits of it for a
/// job of one worker). `planned`, when set, is told on every rank how the grid is spread, once it
/// is planned and before the solve (a front door's report). Collective; every failure agreed.
/// InvalidInput also for a job that mixes CPU and GPU workers (one engine runs every part).
template <class Real>
pde::PoissonResult solve_poisson(const Job& job, const pde::PoissonGrid& grid,
                                 const pde::PoissonOptions& options, std::span<const Real> f,
                                 std::span<Real> u,
                                 const std::function<void(const PoissonSpread&)>& planned = {});

/// True when this build has FFTW's MPI interface, the engine that solves across the ranks of a
/// job whose workers are CPUs; without it such a solve is refused (InvalidInput) and only GPU
/// ranks and one-process jobs solve.
bool solves_across_cpu_ranks();

/// What solve_poisson_file reads, solves and writes.
struct PoissonFileRequest {
  std::filesystem::path input, output;  // .npy files every rank sees at the same path
  /// The periods of the axes of a grid of `axes` axes (the caller's --length rule, which may
  /// refuse in its own words); called on every rank with the same value, outside any agreement,
  /// so it must throw alike on every rank.
  std::function<std::vector<double>(int axes)> lengths;
  /// The boundaries of the axes of a grid of `axes` axes (the caller's --boundary rule, as
  /// `lengths`); unset: periodic.
  std::function<std::vector<pde::Boundary>(int axes)> boundaries;
  pde::PoissonOptions options;
  /// The solve's precision (float32 or float64); empty: the input's dtype.
  std::optional<io::NpyDtype> precision;
  /// Told on every rank once the grid is planned, before the solve (a front door's report).
  std::function<void(const PoissonSpread&)> planned;
};

/// The file case of the spread solve: the .npy grid `request.input` (float32 or float64, 2D or
/// 3D, C order) solved over the job's workers and written to `request.output` in the input's
/// dtype and shape, each rank reading and writing only its own rows (npy_rows.hpp: rank 0
/// creates the output and renames it once every rank wrote; nothing is written on any failure,
/// an existing output is kept; "-" is refused). The problem and its checks are the single-device
/// solve's (pde::check_poisson_array_shape on the header, the same refusals and messages).
/// Returns the result of the mean rule (every rank the same). Collective; every failure agreed.
pde::PoissonResult solve_poisson_file(const Job& job, const PoissonFileRequest& request);

}  // namespace gpukit::scale_out
