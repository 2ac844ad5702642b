#pragma once
// Internal: the engines behind DistributedPoissonPlan (the single-device plan for one part,
// cpu/poisson_fftw_mpi.cpp, cuda/poisson_slab_cuda.cpp) and the front every host-data solve goes
// through (poisson.cpp: the checks, the global sums, the gauge). What they take from pde (the
// single-device solver's checks, mean rule, wave numbers and FFT traits) is pde's installed
// building blocks (gpukit/pde/detail/), never its private headers: pde knows nothing of ranks or
// slabs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/distributed/communicator.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"
#include "gpukit/scale_out/poisson.hpp"

namespace gpukit::scale_out {

template <class Real>
struct DistributedPoissonPlan<Real>::Impl {
  explicit Impl(distributed::Communicator& communicator) : comm(&communicator) {}
  virtual ~Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  pde::PoissonGrid grid;
  pde::PoissonOptions options;
  std::string engine;
  distributed::Communicator* comm;
  int parts = 1, local_parts = 1, first_part = 0;
  std::int64_t row_elements = 1;
  int host_threads = 1;
  std::vector<std::size_t> device_bytes;  // per local part

  SlabRange slab(int local) const { return slab_range(grid.shape[0], parts, first_part + local); }

  /// The collective host-data solve: the size, overlap and finite checks (agreed), the global
  /// sums and the mean rule, transform_host, then a singular problem's corner gauge (part 0's
  /// u[0], broadcast).
  virtual pde::PoissonResult solve(std::span<const std::span<const Real>> f,
                                   std::span<const std::span<Real>> u);
  virtual pde::PoissonResult solve_on_device(std::span<const Real* const> f,
                                             std::span<Real* const> u);

 protected:
  /// u[i] := the solution for local slab f[i] (a singular problem's of mean zero: its constant
  /// mode 0); collective; every failure agreed before it returns.
  virtual void transform_host(std::span<const std::span<const Real>> f,
                              std::span<const std::span<Real>> u) = 0;
};

/// The one-part engine: the single-device PoissonPlan (the same bits, messages and checks).
template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_single_part_poisson(
    const Context& context, const pde::PoissonGrid& grid, const pde::PoissonOptions& options,
    distributed::Communicator& comm);

/// The FFTW MPI engine (one part per rank; InvalidInput when built without FFTW's MPI interface).
template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_fftw_mpi_poisson(
    const Context& context, const pde::PoissonGrid& grid, const pde::PoissonOptions& options,
    distributed::Communicator& comm);

/// The CUDA engine: local parts on `devices`, global parts [first_part, first_part +
/// devices.size()) of `parts`, engine kCufftNcclEngine or kCufftCopyEngine.
template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_cuda_slab_poisson(
    const Context& context, const pde::PoissonGrid& grid, const pde::PoissonOptions& options,
    distributed::Communicator& comm, const std::vector<int>& devices, int parts, int first_part,
    std::string_view engine);

/// The check of a solve's arguments: one slab per local part, each of its slab's size, u[i]
/// equal to f[i] or apart from it (InvalidInput naming the part).
template <class Real>
void check_slab_arguments(std::span<const std::span<const Real>> f,
                          std::span<const std::span<Real>> u, int local_parts,
                          std::span<const std::int64_t> counts);

}  // namespace gpukit::scale_out
