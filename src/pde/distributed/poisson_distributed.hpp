#pragma once
// The spectral Poisson solver (gpukit/pde/poisson.hpp) on a grid split into slabs of axis 0
// across processes (MPI) and GPUs (NCCL), for grids larger than one device's memory: the same
// problem, the same gauges, the same mean rule and refusals, results equal to the single-device
// solve to rounding.
//
// Slabs. Part p of P holds rows slab_range(shape[0], P, p) of axis 0: FFTW's block distribution
// (the block is ceil(shape[0] / P) rows; the last parts may hold fewer, or none when P does not
// divide the axis closely), which FFTW's MPI interface imposes on the CPU and the CUDA engine
// follows, so both backends split a grid alike. Parts are numbered across processes in rank
// order, and within a process in the order of its devices.
//
// Algorithm (both backends): each part transforms its slab along the trailing axes (real to
// complex), a global transpose (all-to-all) gives each part every row of axis 0 for a slab of
// the next axis (the half-spectrum axis in 2D), which it transforms along axis 0, scales by
// -1 / (n |k|^2) (zero mode 0) and transforms back; the inverse transpose and the trailing
// complex-to-real transforms end it. CPU: FFTW's MPI interface (fftw_mpi_plan_dft_r2c_*d with
// FFTW_MPI_TRANSPOSED_OUT, so the transposes are FFTW's MPI_Alltoall). CUDA: cuFFT for the
// transforms (64-bit plans, chunked to bound cuFFT's work area) and NCCL grouped ncclSend /
// ncclRecv for the transposes (or, within one process, cudaMemcpyPeerAsync: the "cufft-copy"
// engine, which also runs several parts on one GPU, so that the whole path can be tested on a
// single-GPU machine).
//
// Agreement with the single-device solve (the bound the tests and `gpukit poisson` under mpirun
// are held to): |u_distributed - u_single| <= poisson_agreement_bound<Real>(grid, max|f|,
// max|u|) element by element. Why the same bound: both compute the same d-dimensional DFT as
// one-dimensional transforms along each axis, only grouped differently, so each carries a
// rounding error of a few eps per level of log2(n) = sum over axes of log2(n_a) levels, relative
// to the largest |f_hat| and |u_hat|, and the scaling by 1/|k|^2 amplifies the error of f_hat by
// at most 1/|k_min|^2 = (L_max / 2 pi)^2, exactly as for two single-device backends (CPU and
// GPU), which poisson_agreement_bound was derived for; the transposes only move values (exact),
// and the corner gauge subtracts one value on every part (one rounding, covered by the factor 4
// of the bound). One part (P = 1) is the single-device plan itself: the same bits.
//
// Mean rule: the sums of f and |f| are the single-device solve's bits for any P (tile_sums.hpp):
// the mean, the warning and `strict` do not depend on the rank count.
//
// Failures: every step that may fail on some processes only (a NaN in one slab, memory on one
// GPU, a file error) is settled (ProcessGroup::settle): every process throws the same error, the
// lowest failing rank's, and no process is left waiting in a collective.
//
// Tested in tests/pde/poisson_distributed_test.cpp (the slab partition, the canonical sums, the
// FFTW MPI engine under mpirun with 2 and 3 ranks against the serial solver, the CUDA engine with
// several parts) and tests/cli/poisson_mpi_cli_test.cpp (`mpirun -np 1/2/3 gpukit poisson`).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/pde/poisson.hpp"
#include "pde/distributed/process_group.hpp"

namespace gpukit::pde {

/// Rows [begin, begin + count) of an axis.
struct SlabRange {
  std::int64_t begin = 0;
  std::int64_t count = 0;
  friend bool operator==(const SlabRange&, const SlabRange&) = default;
};

/// FFTW's block for `rows` split into `parts`: ceil(rows / parts) (parts >= 1).
std::int64_t slab_block(std::int64_t rows, int parts);
/// Part `part`'s rows of `rows` split into `parts` blocks of slab_block rows (the last ones
/// shorter or empty). The ranges are contiguous, in part order, and cover [0, rows) once.
SlabRange slab_range(std::int64_t rows, int parts, int part);

/// The engines: "fftw-mpi" (CPU), "cufft-nccl" and "cufft-copy" (CUDA); with one part, the
/// single-device plan's variant.
inline constexpr std::string_view kFftwMpiEngine = "fftw-mpi";
inline constexpr std::string_view kCufftNcclEngine = "cufft-nccl";
inline constexpr std::string_view kCufftCopyEngine = "cufft-copy";

/// A distributed solver for one grid and precision, made once by every process of `group`
/// together (a collective) and used for many right-hand sides.
///
/// CPU context: one part per process (`devices` must be empty), the FFTW MPI engine (threads:
/// context.cpu_threads per process). CUDA context: one part per entry of `devices` on this
/// process (empty: {context.cuda_device}); a device may repeat only in the "cufft-copy" engine.
/// options.variant picks the engine ("" is "cufft-nccl" where NCCL was built and the devices are
/// distinct, else "cufft-copy", which needs a single process); with P = 1 it is the single-device
/// plan's variant instead. Every axis must be >= 2 on CUDA when P > 1.
///
/// Throws, on every process alike (settled): InvalidInput for a bad grid or options; OutOfMemory
/// (with the bytes) when a part's buffers do not fit its host or device, checked before anything
/// is allocated; DeviceUnavailable for a device that is not usable. A plan is not used by two
/// threads at once.
template <class Real>
class DistributedPoissonPlan {
 public:
  DistributedPoissonPlan(const Context& context, const PoissonGrid& grid,
                         const PoissonOptions& options, const distributed::ProcessGroup& group,
                         std::vector<int> devices = {});
  DistributedPoissonPlan(DistributedPoissonPlan&&) noexcept;
  DistributedPoissonPlan& operator=(DistributedPoissonPlan&&) noexcept;
  ~DistributedPoissonPlan();

  /// Parts over all processes (P), this process's parts, and the global index of its first.
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
  /// Every process returns the same result (the mean rule's sums are global). Refuses, as the
  /// single-device solve does and with its messages: a size mismatch, a NaN or an Inf (naming
  /// the first by its index in the whole grid), a non-zero mean when `strict` (u untouched).
  PoissonResult solve(std::span<const std::span<const Real>> f, std::span<const std::span<Real>> u);
  /// solve() for a process with one part.
  PoissonResult solve(std::span<const Real> f, std::span<Real> u);

  /// Collective solve with f[i] and u[i] in device memory on local part i's device (u[i] may be
  /// f[i]). Returns once u is written (it synchronizes the parts' streams). The finite check is
  /// made from the sums, as PoissonPlan::solve_on_device does. InvalidInput on a CPU plan.
  PoissonResult solve_on_device(std::span<const Real* const> f, std::span<Real* const> u);

  const PoissonGrid& grid() const;
  const PoissonOptions& options() const;
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

}  // namespace gpukit::pde
