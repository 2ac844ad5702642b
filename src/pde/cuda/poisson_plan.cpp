// The CUDA backend of PoissonPlan: a registry variant's solver (the periodic spectral Poisson
// problem) or the walls solver (every other: poisson_walls.hpp), plus the mean rule, the gauge
// and the host data path (copy in, solve in place on the device, copy out).

#include <functional>

#include <fmt/format.h>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "pde/cuda/poisson_device_ops.hpp"
#include "pde/cuda/poisson_walls.hpp"
#include "pde/poisson_impl.hpp"

namespace gpukit::pde {

namespace {

// The walls solver's view of a grid and its operator.
cuda_detail::WallsShape walls_shape(const PoissonGrid& grid, const PoissonOptions& options) {
  cuda_detail::WallsShape shape;
  shape.rank = grid.rank();
  for (int a = 0; a < shape.rank; ++a) {
    shape.n[a] = grid.shape[static_cast<std::size_t>(a)];
    shape.length[a] = grid.length(a);
    const Boundary b = grid.boundary(a);
    shape.kind[a] = b == Boundary::dirichlet ? walls::AxisKind::dirichlet
                    : b == Boundary::neumann ? walls::AxisKind::neumann
                                             : walls::AxisKind::periodic;
  }
  shape.fd2 = options.op == Operator::fd2;
  shape.helmholtz = options.helmholtz;
  return shape;
}

template <class Real>
class CudaPoisson final : public PoissonPlan<Real>::Impl {
 public:
  CudaPoisson(const Context& context, const PoissonGrid& plan_grid,
              const PoissonOptions& plan_options)
      : device_(context.cuda_device) {
    if (context.cuda_device >= cuda_device_count()) {
      throw DeviceUnavailable(
          fmt::format("poisson: cuda:{} is not usable ({})", device_, cuda_unavailable_reason()));
    }
    this->grid = plan_grid;
    this->options = plan_options;
    cuda::set_device(device_);
    n_ = plan_grid.size();
    singular_ = poisson_is_singular(plan_grid, plan_options);
    std::size_t solver_bytes = 0;
    const bool periodic_poisson = plan_grid.periodic() && plan_options.op == Operator::spectral &&
                                  plan_options.helmholtz == 0;
    std::function<std::unique_ptr<DeviceSolver<Real>>()> make;
    if (periodic_poisson) {
      const GridShape shape = grid_shape(plan_grid);
      const PoissonVariant& v = find_poisson_variant(plan_options.variant.empty()
                                                         ? default_poisson_variant<Real>(plan_grid)
                                                         : plan_options.variant);
      if (!v.supports(shape)) {
        throw InvalidInput(fmt::format("poisson: variant '{}' does not support the grid {}",
                                       v.info.name, plan_grid.describe()));
      }
      this->variant = std::string(v.info.name);
      solver_bytes = v.device_bytes<Real>(shape);
      make = [&v, shape] { return v.make<Real>(shape); };
    } else {
      // Walls, fd2 or Helmholtz: the walls solver, whole-grid pipeline unless the per-axis one
      // (its ladder's first step) is asked for.
      const cuda_detail::WallsShape shape = walls_shape(plan_grid, plan_options);
      using cuda_detail::WallsPipeline;
      const WallsPipeline pipeline =
          plan_options.variant == cuda_detail::walls_pipeline_name(WallsPipeline::per_axis)
              ? WallsPipeline::per_axis
              : WallsPipeline::whole_grid;
      if (!plan_options.variant.empty() &&
          plan_options.variant != cuda_detail::walls_pipeline_name(pipeline)) {
        throw InvalidInput(fmt::format(
            "poisson: variant '{}' solves the periodic spectral Poisson problem only; the grid {} "
            "takes '{}' or '{}'",
            plan_options.variant, plan_grid.describe(),
            cuda_detail::walls_pipeline_name(WallsPipeline::whole_grid),
            cuda_detail::walls_pipeline_name(WallsPipeline::per_axis)));
      }
      if (!cuda_detail::walls_supports(shape)) {
        throw InvalidInput(fmt::format("poisson: the CUDA backend does not take the grid {}",
                                       plan_grid.describe()));
      }
      this->variant = std::string(cuda_detail::walls_pipeline_name(pipeline));
      solver_bytes = cuda_detail::walls_device_bytes<Real>(shape, pipeline);
      make = [shape, pipeline] { return cuda_detail::make_walls_solver<Real>(shape, pipeline); };
    }
    // Everything the plan will hold: the solver's buffers and cuFFT's work areas, the array the
    // host path solves in place, the sums' workspace and result, the gauge's scratch.
    const std::size_t bytes = solver_bytes + static_cast<std::size_t>(n_) * sizeof(Real) +
                              cuda_detail::mean_sums_workspace_bytes(n_) + sizeof(Scratch) + 256;
    this->device_bytes = bytes;
    const std::size_t free_bytes = cuda_detail::device_free_bytes();
    if (bytes > free_bytes) {
      throw OutOfMemory(
          fmt::format("poisson: the grid {} needs {} bytes of device memory in "
                      "variant '{}' ({} free on cuda:{})",
                      plan_grid.describe(), bytes, this->variant, free_bytes, device_),
          bytes);
    }
    scratch_ = cuda::DeviceBuffer<Scratch>(1);
    solver_ = make();
  }

  PoissonResult solve(std::span<const Real> f, std::span<Real> u) override {
    cuda::set_device(device_);
    if (array_.size() == 0) array_ = cuda::DeviceBuffer<Real>(static_cast<std::size_t>(n_));
    if (!stream_) stream_ = std::make_unique<cuda::Stream>();
    const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(Real);
    cuda::copy_to_device_async(array_.data(), f.data(), bytes, stream_->handle());
    const PoissonResult result = solve_on_device(array_.data(), array_.data(), stream_->handle());
    cuda::copy_to_host_async(u.data(), array_.data(), bytes, stream_->handle());
    stream_->synchronize();
    return result;
  }

  PoissonResult solve_on_device(const Real* f, Real* u, StreamHandle stream) override {
    cuda::set_device(device_);
    const detail::MeanSums sums =
        cuda_detail::device_mean_sums<Real>(f, n_, workspace_, &scratch_.data()->sums, stream);
    // Device data has no host-side finite check: its sums tell whether a NaN or Inf is there.
    detail::refuse_non_finite_sums(sums.total(), sums.abs_total());
    const PoissonResult result = detail::apply_mean_rule<Real>(sums.total(), sums.abs_total(), n_,
                                                               this->grid, this->options);
    solver_->solve(f, u, stream);
    if (singular_ && this->options.gauge == Gauge::corner) {
      cuda_detail::subtract_corner<Real>(u, n_, &scratch_.data()->corner, stream);
    }
    return result;
  }

 private:
  int device_ = 0;
  std::int64_t n_ = 0;
  bool singular_ = true;  // the constant is in the null space: the gauge applies
  // Device memory of the small results: the sums of f, u[0] for the corner gauge.
  struct Scratch {
    detail::MeanSums sums;
    Real corner;
  };
  std::unique_ptr<DeviceSolver<Real>> solver_;
  primitives::ReduceWorkspace workspace_;  // the mean sums' engine state, grown on first use
  cuda::DeviceBuffer<Scratch> scratch_;
  cuda::DeviceBuffer<Real> array_;  // the host path's device copy, made on first use
  std::unique_ptr<cuda::Stream> stream_;
};

}  // namespace

template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cuda_poisson(const Context& context,
                                                                    const PoissonGrid& grid,
                                                                    const PoissonOptions& options) {
  return std::make_unique<CudaPoisson<Real>>(context, grid, options);
}
template std::unique_ptr<PoissonPlan<float>::Impl> make_cuda_poisson<float>(const Context&,
                                                                            const PoissonGrid&,
                                                                            const PoissonOptions&);
template std::unique_ptr<PoissonPlan<double>::Impl> make_cuda_poisson<double>(
    const Context&, const PoissonGrid&, const PoissonOptions&);

}  // namespace gpukit::pde
