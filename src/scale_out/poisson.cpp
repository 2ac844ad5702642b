// DistributedPoissonPlan: the choice of engine, the front of every host-data solve (argument and
// finite checks, the global sums of the mean rule, the corner gauge) and the one-part engine,
// which is the single-device plan.

#include "gpukit/scale_out/poisson.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "scale_out/poisson_engines.hpp"
#include "scale_out/tile_sums.hpp"

namespace gpukit::scale_out {

using pde::Gauge;
using pde::PoissonGrid;
using pde::PoissonOptions;
using pde::PoissonResult;

template <class Real>
void check_slab_arguments(std::span<const std::span<const Real>> f,
                          std::span<const std::span<Real>> u, int local_parts,
                          std::span<const std::int64_t> counts) {
  if (static_cast<int>(f.size()) != local_parts || static_cast<int>(u.size()) != local_parts) {
    throw InvalidInput(fmt::format("poisson: this process holds {} slabs; {} f and {} u were given",
                                   local_parts, f.size(), u.size()));
  }
  for (int i = 0; i < local_parts; ++i) {
    const auto n = static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]);
    const auto& fi = f[static_cast<std::size_t>(i)];
    const auto& ui = u[static_cast<std::size_t>(i)];
    if (fi.size() != n || ui.size() != n) {
      throw InvalidInput(fmt::format("poisson: slab {} has {} elements; f has {}, u has {}", i, n,
                                     fi.size(), ui.size()));
    }
    const auto fb = reinterpret_cast<std::uintptr_t>(fi.data());
    const auto ub = reinterpret_cast<std::uintptr_t>(ui.data());
    if (fb != ub && fb < ub + n * sizeof(Real) && ub < fb + n * sizeof(Real))
      throw InvalidInput(
          fmt::format("poisson: u overlaps f in slab {} without being the same array", i));
  }
}

template <class Real>
PoissonResult DistributedPoissonPlan<Real>::Impl::solve(std::span<const std::span<const Real>> f,
                                                        std::span<const std::span<Real>> u) {
  std::vector<std::int64_t> counts;
  for (int i = 0; i < local_parts; ++i) counts.push_back(slab(i).count * row_elements);
  distributed::agree(*comm, [&] { check_slab_arguments<Real>(f, u, local_parts, counts); });
  // The lowest rank's first bad element is the grid's first: slabs are in rank order.
  distributed::agree(*comm, [&] {
    for (int i = 0; i < local_parts; ++i) {
      pde::detail::refuse_non_finite<Real>(grid, f[static_cast<std::size_t>(i)], host_threads,
                                           slab(i).begin * row_elements);
    }
  });
  std::vector<detail::TileContribution> contributions;
  for (int i = 0; i < local_parts; ++i) {
    contributions.push_back(detail::host_tile_contribution<Real>(
        f[static_cast<std::size_t>(i)], slab(i).begin * row_elements, grid.size(), host_threads));
  }
  const pde::detail::MeanSums sums =
      detail::distributed_mean_sums(*comm, contributions, grid.size());
  // The same sums on every process: every one refuses alike, no settling needed.
  const PoissonResult result = pde::detail::apply_mean_rule<Real>(sums.total(), sums.abs_total(),
                                                                  grid.size(), grid, options);
  transform_host(f, u);
  // A nonsingular problem has one solution: no gauge to choose.
  if (pde::poisson_is_singular(grid, options) && options.gauge == Gauge::corner) {
    // u[0, ..., 0] is the first element of part 0, on rank 0.
    Real shift = first_part == 0 ? u[0][0] : Real(0);
    comm->broadcast_value(shift, 0);
    for (int i = 0; i < local_parts; ++i) {
      const std::span<Real> ui = u[static_cast<std::size_t>(i)];
      const auto n = static_cast<std::int64_t>(ui.size());
      const int team = cpu_threads_for({n, primitives::canonical::kCpuNsPerElement}, host_threads);
#pragma omp parallel for schedule(static) num_threads(team)
      for (std::int64_t j = 0; j < n; ++j) ui[static_cast<std::size_t>(j)] -= shift;
    }
  }
  return result;
}

template <class Real>
PoissonResult DistributedPoissonPlan<Real>::Impl::solve_on_device(std::span<const Real* const>,
                                                                  std::span<Real* const>) {
  throw InvalidInput("poisson: solve_on_device needs a CUDA plan (this one is on the CPU)");
}

namespace {

// One part: the single-device plan, so P = 1 gives the single-device bits, messages and checks.
template <class Real>
class SinglePartPoisson final : public DistributedPoissonPlan<Real>::Impl {
  using Base = typename DistributedPoissonPlan<Real>::Impl;

 public:
  SinglePartPoisson(const Context& context, const PoissonGrid& plan_grid,
                    const PoissonOptions& plan_options, distributed::Communicator& communicator)
      : Base(communicator), plan_(context, plan_grid, plan_options) {
    this->grid = plan_grid;
    this->options = plan_options;
    this->engine = std::string(plan_.variant());
    this->device_bytes = {plan_.device_bytes()};
  }

  PoissonResult solve(std::span<const std::span<const Real>> f,
                      std::span<const std::span<Real>> u) override {
    const std::int64_t count = this->grid.size();
    check_slab_arguments<Real>(f, u, 1, std::span(&count, 1));
    return plan_.solve(f[0], u[0]);
  }

  PoissonResult solve_on_device(std::span<const Real* const> f, std::span<Real* const> u) override {
    if (plan_.device_bytes() == 0 && plan_.variant() == "cpu-fftw")
      throw InvalidInput("poisson: solve_on_device needs a CUDA plan (this one is on the CPU)");
    if (f.size() != 1 || u.size() != 1)
      throw InvalidInput("poisson: this process holds 1 slab; give one f and one u");
    if (!stream_) stream_ = std::make_unique<cuda::Stream>();
    const PoissonResult result = plan_.solve_on_device(f[0], u[0], stream_->handle());
    stream_->synchronize();
    return result;
  }

 protected:
  void transform_host(std::span<const std::span<const Real>>,
                      std::span<const std::span<Real>>) override {}

 private:
  pde::PoissonPlan<Real> plan_;
  std::unique_ptr<cuda::Stream> stream_;
};

}  // namespace

template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_single_part_poisson(
    const Context& context, const PoissonGrid& grid, const PoissonOptions& options,
    distributed::Communicator& comm) {
  return std::make_unique<SinglePartPoisson<Real>>(context, grid, options, comm);
}

template <class Real>
DistributedPoissonPlan<Real>::DistributedPoissonPlan(const Context& context,
                                                     const PoissonGrid& grid,
                                                     const PoissonOptions& options,
                                                     distributed::Communicator& comm,
                                                     std::vector<int> devices) {
  distributed::agree(comm, [&] {
    pde::validate_grid(grid);
    if (context.backend == Backend::cpu && !devices.empty())
      throw InvalidInput("poisson: a CPU plan takes no device list");
  });
  if (context.backend == Backend::cuda && devices.empty()) devices = {context.cuda_device};
  const int local = context.backend == Backend::cpu ? 1 : static_cast<int>(devices.size());
  const std::vector<std::int64_t> counts = comm.all_gather(local);
  std::int64_t parts = 0, first = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (static_cast<int>(r) == comm.rank()) first = parts;
    parts += counts[r];
  }
  if (parts > 1 && context.backend == Backend::cuda) {
    // The CUDA slabs (cuda/poisson_slab_cuda.cpp) transform with cuFFT's complex FFTs only.
    distributed::agree(comm, [&] {
      pde::detail::refuse_beyond_periodic_spectral(
          grid, options, "a solve spread over several GPUs", "use one GPU or mpirun on the CPU");
    });
  }
  if (parts == 1) {
    Context single = context;
    if (context.backend == Backend::cuda) single.cuda_device = devices[0];
    std::unique_ptr<Impl> impl;
    distributed::agree(comm,
                       [&] { impl = make_single_part_poisson<Real>(single, grid, options, comm); });
    impl_ = std::move(impl);
  } else if (context.backend == Backend::cpu) {
    distributed::agree(comm, [&] {
      if (!options.variant.empty() && options.variant != kFftwMpiEngine) {
        throw InvalidInput(
            fmt::format("poisson: variant '{}' is not a distributed CPU engine (the CPU's is '{}')",
                        options.variant, kFftwMpiEngine));
      }
    });
    impl_ = make_fftw_mpi_poisson<Real>(context, grid, options, comm);
  } else {
    std::string_view engine = options.variant;
    distributed::agree(comm, [&] {
      if (engine.empty()) {
        // Within one process, peer copies: 1024^3 float on two H200s took 19.6 ms with them
        // against 22.7 through NCCL (2026-11-28, docs/scale-out.md).
        engine =
            distributed::built_with_nccl() && comm.size() > 1 ? kCufftNcclEngine : kCufftCopyEngine;
      }
      if (engine != kCufftNcclEngine && engine != kCufftCopyEngine) {
        throw InvalidInput(fmt::format(
            "poisson: variant '{}' is not a distributed CUDA engine (they are '{}' and '{}')",
            engine, kCufftNcclEngine, kCufftCopyEngine));
      }
    });
    // Every process picks the same engine: NCCL across processes unless the devices repeat
    // somewhere.
    const std::vector<std::int64_t> nccl = comm.all_gather(engine == kCufftNcclEngine ? 1 : 0);
    if (std::ranges::count(nccl, 1) != static_cast<std::ptrdiff_t>(nccl.size()))
      engine = kCufftCopyEngine;
    impl_ = make_cuda_slab_poisson<Real>(context, grid, options, comm, devices,
                                         static_cast<int>(parts), static_cast<int>(first), engine);
  }
  impl_->parts = static_cast<int>(parts);
  impl_->local_parts = local;
  impl_->first_part = static_cast<int>(first);
  impl_->row_elements = grid.size() / grid.shape[0];
  impl_->host_threads = context.effective_cpu_threads();
}

template <class Real>
DistributedPoissonPlan<Real>::DistributedPoissonPlan(DistributedPoissonPlan&&) noexcept = default;
template <class Real>
DistributedPoissonPlan<Real>& DistributedPoissonPlan<Real>::operator=(
    DistributedPoissonPlan&&) noexcept = default;
template <class Real>
DistributedPoissonPlan<Real>::~DistributedPoissonPlan() = default;

template <class Real>
int DistributedPoissonPlan<Real>::parts() const {
  return impl_->parts;
}
template <class Real>
int DistributedPoissonPlan<Real>::local_parts() const {
  return impl_->local_parts;
}
template <class Real>
int DistributedPoissonPlan<Real>::first_part() const {
  return impl_->first_part;
}
template <class Real>
SlabRange DistributedPoissonPlan<Real>::slab(int local) const {
  return impl_->slab(local);
}
template <class Real>
std::int64_t DistributedPoissonPlan<Real>::row_elements() const {
  return impl_->row_elements;
}
template <class Real>
PoissonResult DistributedPoissonPlan<Real>::solve(std::span<const std::span<const Real>> f,
                                                  std::span<const std::span<Real>> u) {
  return impl_->solve(f, u);
}
template <class Real>
PoissonResult DistributedPoissonPlan<Real>::solve(std::span<const Real> f, std::span<Real> u) {
  const std::span<const Real> fs[1] = {f};
  const std::span<Real> us[1] = {u};
  return impl_->solve(fs, us);
}
template <class Real>
PoissonResult DistributedPoissonPlan<Real>::solve_on_device(std::span<const Real* const> f,
                                                            std::span<Real* const> u) {
  return impl_->solve_on_device(f, u);
}
template <class Real>
const PoissonGrid& DistributedPoissonPlan<Real>::grid() const {
  return impl_->grid;
}
template <class Real>
const PoissonOptions& DistributedPoissonPlan<Real>::options() const {
  return impl_->options;
}
template <class Real>
std::string_view DistributedPoissonPlan<Real>::engine() const {
  return impl_->engine;
}
template <class Real>
std::size_t DistributedPoissonPlan<Real>::device_bytes(int local) const {
  return impl_->device_bytes.empty() ? 0 : impl_->device_bytes[static_cast<std::size_t>(local)];
}

template class DistributedPoissonPlan<float>;
template class DistributedPoissonPlan<double>;
template void check_slab_arguments<float>(std::span<const std::span<const float>>,
                                          std::span<const std::span<float>>, int,
                                          std::span<const std::int64_t>);
template void check_slab_arguments<double>(std::span<const std::span<const double>>,
                                           std::span<const std::span<double>>, int,
                                           std::span<const std::int64_t>);

bool solves_across_cpu_ranks() { return GPUKIT_HAVE_FFTW_MPI != 0; }

#if !GPUKIT_HAVE_FFTW_MPI
template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_fftw_mpi_poisson(
    const Context&, const PoissonGrid&, const PoissonOptions&, distributed::Communicator& comm) {
  distributed::agree(comm, [] {
    throw InvalidInput(
        "poisson: this gpukit was built without FFTW's MPI interface: no distributed CPU solver");
  });
  return nullptr;
}
template std::unique_ptr<DistributedPoissonPlan<float>::Impl> make_fftw_mpi_poisson<float>(
    const Context&, const PoissonGrid&, const PoissonOptions&, distributed::Communicator&);
template std::unique_ptr<DistributedPoissonPlan<double>::Impl> make_fftw_mpi_poisson<double>(
    const Context&, const PoissonGrid&, const PoissonOptions&, distributed::Communicator&);
#endif

#if !GPUKIT_HAVE_CUDA
template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_cuda_slab_poisson(
    const Context&, const PoissonGrid&, const PoissonOptions&, distributed::Communicator& comm,
    const std::vector<int>&, int, int, std::string_view) {
  distributed::agree(
      comm, [] { throw DeviceUnavailable("poisson: this gpukit was built without CUDA"); });
  return nullptr;
}
template std::unique_ptr<DistributedPoissonPlan<float>::Impl> make_cuda_slab_poisson<float>(
    const Context&, const PoissonGrid&, const PoissonOptions&, distributed::Communicator&,
    const std::vector<int>&, int, int, std::string_view);
template std::unique_ptr<DistributedPoissonPlan<double>::Impl> make_cuda_slab_poisson<double>(
    const Context&, const PoissonGrid&, const PoissonOptions&, distributed::Communicator&,
    const std::vector<int>&, int, int, std::string_view);
#endif

}  // namespace gpukit::scale_out
