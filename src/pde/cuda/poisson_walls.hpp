#pragma once
// Internal: the CUDA solver of (lap - lambda) u = f with a boundary per axis (periodic,
// dirichlet, neumann) and the spectral or fd2 operator (poisson_walls.cu), callable from plain
// C++. The periodic spectral Poisson problem keeps the registry's variants (the fused ladder);
// every other problem is solved here, one axis at a time (see the .cu file).

#include <cstddef>
#include <cstdint>
#include <memory>

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

/// The variant name the plan reports for this solver.
inline constexpr const char* kWallsVariantName = "cufft-r2r";

/// Whether the solver takes the shape (every buffer's element count and every cuFFT plan's
/// length within its 64-bit plans, the extended dirichlet axes included).
bool walls_supports(const WallsShape& shape);

/// Device memory the solver allocates for `shape` (buffers, eigenvalue tables, cuFFT's work
/// areas), known before it allocates anything.
template <class Real>
std::size_t walls_device_bytes(const WallsShape& shape);

/// u = the solution of (lap - lambda) u = f: each mode of f divided by its eigenvalue, sum of
/// the axes' minus lambda; a zero eigenvalue (the constant mode of a singular problem) gives 0.
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_walls_solver(const WallsShape& shape);

}  // namespace gpukit::pde::cuda_detail
