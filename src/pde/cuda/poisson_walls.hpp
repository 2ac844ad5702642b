#pragma once
// Internal: the CUDA solver of (lap - lambda) u = f with a boundary per axis (periodic,
// dirichlet, neumann) and the spectral or fd2 operator (poisson_walls.cu), callable from plain
// C++. The periodic spectral Poisson problem keeps the registry's variants (the fused ladder);
// every other problem is solved here, one axis at a time (see the .cu file).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "gpukit/pde/poisson_variants.hpp"
#include "pde/poisson_axis_transforms.hpp"

namespace gpukit::pde::cuda_detail {

struct WallsShape {
  int rank = 2;
  std::int64_t n[3] = {1, 1, 1};  // .npy order: axis rank - 1 is contiguous
  double length[3] = {1, 1, 1};
  walls::AxisKind kind[3] = {walls::AxisKind::periodic, walls::AxisKind::periodic,
                             walls::AxisKind::periodic};
  bool fd2 = false;
  double helmholtz = 0;  // lambda >= 0
};

/// The two pipelines (the ladder of the walls solver):
/// - per axis (poisson_walls.cu, "cufft-r2r-axes"): each axis' transform a batched 1D real FFT
///   between index kernels, about six passes an axis and direction: the first step;
/// - the whole grid (poisson_walls_grid.cu, "cufft-r2r", the default): every axis rearranged at
///   once, one R2C and one C2R of the whole grid, the pre- and post-processing of every axis and
///   the scaling fused in one kernel between them.
enum class WallsPipeline { per_axis, whole_grid };
std::string_view walls_pipeline_name(WallsPipeline pipeline);

/// Whether the solver takes the shape (every buffer's element count and every cuFFT plan's
/// length within its 64-bit plans, the extended dirichlet axes included).
bool walls_supports(const WallsShape& shape);

/// Device memory the solver allocates for `shape` (buffers, eigenvalue tables, cuFFT's work
/// areas), known before it allocates anything.
template <class Real>
std::size_t walls_axes_device_bytes(const WallsShape& shape);
template <class Real>
std::size_t walls_grid_device_bytes(const WallsShape& shape);
template <class Real>
std::size_t walls_device_bytes(const WallsShape& shape,
                               WallsPipeline pipeline = WallsPipeline::whole_grid) {
  return pipeline == WallsPipeline::per_axis ? walls_axes_device_bytes<Real>(shape)
                                             : walls_grid_device_bytes<Real>(shape);
}

/// u = the solution of (lap - lambda) u = f: each mode of f divided by its eigenvalue, sum of
/// the axes' minus lambda; a zero eigenvalue (the constant mode of a singular problem) gives 0.
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_walls_axes_solver(const WallsShape& shape);
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_walls_grid_solver(const WallsShape& shape);
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_walls_solver(
    const WallsShape& shape, WallsPipeline pipeline = WallsPipeline::whole_grid) {
  return pipeline == WallsPipeline::per_axis ? make_walls_axes_solver<Real>(shape)
                                             : make_walls_grid_solver<Real>(shape);
}

}  // namespace gpukit::pde::cuda_detail
