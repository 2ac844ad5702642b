#pragma once
// Internal to the Poisson CUDA variants: the grid as the kernels see it, cuFFT checks and plans,
// complex types per precision.

#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>

#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/cuda/detail/cufft_traits.cuh"
#include "pde/cuda/poisson_device_solver.hpp"

namespace gpukit::pde::cuda_detail {

/// The grid with its axes of size 1 dropped (they carry only the zero mode, and cuFFT need not
/// see them), as up to three axes z, y, x (x contiguous); missing axes have size 1.
/// rank 0 (every axis 1): the solution is u = 0.
struct Box {
  int rank = 0;              // axes of size > 1
  int fft_n[3] = {1, 1, 1};  // their sizes in C order, for cuFFT
  std::int64_t nz = 1, ny = 1, nx = 1;
  double lz = 1, ly = 1, lx = 1;
  std::int64_t size() const { return nz * ny * nx; }
  std::int64_t half_x() const { return nx / 2 + 1; }
  std::int64_t half_size() const { return nz * ny * half_x(); }
};

inline Box make_box(const GridShape& shape) {
  Box b;
  std::int64_t n[3];
  double L[3];
  for (int a = 0; a < shape.rank; ++a) {
    if (shape.n[a] > 1) {
      n[b.rank] = shape.n[a];
      L[b.rank] = shape.length[a];
      ++b.rank;
    }
  }
  for (int a = 0; a < b.rank; ++a) b.fft_n[a] = static_cast<int>(n[a]);
  std::int64_t* sizes[3] = {&b.nx, &b.ny, &b.nz};
  double* lengths[3] = {&b.lx, &b.ly, &b.lz};
  for (int a = 0; a < b.rank; ++a) {  // the last kept axis is x
    *sizes[a] = n[b.rank - 1 - a];
    *lengths[a] = L[b.rank - 1 - a];
  }
  return b;
}

/// The grids every variant accepts: fewer than 2^31 elements (cuFFT's 32-bit plans), the
/// kernels' y and z grid dimensions within 65535 blocks for `block_y` rows per block.
inline bool box_fits_launch(const Box& b, int block_y) {
  return b.size() < std::numeric_limits<int>::max() && (b.ny + block_y - 1) / block_y <= 65535 &&
         b.nz <= 65535;
}

/// The work area a cuFFT plan of `type` over the box would need, asked without making the plan
/// (so that a variant's device_bytes is known before anything is allocated).
std::size_t cufft_work_estimate(const Box& box, cufftType type);

/// A cuFFT plan without its own work area (the solver hands it one); destroyed with the object.
class CufftPlan {
 public:
  CufftPlan() = default;
  CufftPlan(const Box& box, cufftType type);
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  ~CufftPlan();
  cufftHandle handle() const { return handle_; }
  std::size_t work_bytes() const { return work_bytes_; }
  bool valid() const { return valid_; }
  void bind(void* work_area, cudaStream_t stream) const;

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
  std::size_t work_bytes_ = 0;
};

/// 2 pi m / L with m the signed frequency of index j on an axis of n points.
__host__ __device__ inline double wave_number(std::int64_t j, std::int64_t n, double length) {
  const double m = 2 * j < n ? double(j) : double(j - n);
  return 2 * std::numbers::pi * m / length;
}

/// u = 0 for a grid of one point (f - mean(f) = 0).
template <class Real>
void zero_solution(Real* u, std::int64_t n, cudaStream_t stream) {
  GPUKIT_CUDA_CHECK(cudaMemsetAsync(u, 0, static_cast<std::size_t>(n) * sizeof(Real), stream));
}

}  // namespace gpukit::pde::cuda_detail
