#pragma once
// Internal: the interface every CUDA variant of the spectral Poisson solver implements, callable
// from plain C++ (no CUDA headers). A variant is three functions named after it:
//   bool <variant>_supports(const GridShape&)              shapes it can solve (all others: false)
//   std::size_t <variant>_device_bytes<Real>(const GridShape&)
//                                                          device memory a solver allocates, known
//                                                          before allocating anything
//   std::unique_ptr<DeviceSolver<Real>> make_<variant>_solver<Real>(const GridShape&)
// so that the registry can refuse a grid that does not fit before any allocation, and a solver
// (its cuFFT plans, tables and buffers) is created once per shape and then solves many
// right-hand sides.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::pde::cuda_detail {

/// A periodic grid of `rank` (2 or 3) axes in .npy (C) order: axis rank-1 is contiguous in
/// memory; `length[a]` is the period of axis a (the box is length[0] x ... x length[rank-1]).
struct GridShape {
  int rank = 2;
  std::int64_t n[3] = {0, 0, 0};
  double length[3] = {1, 1, 1};

  std::int64_t size() const {
    std::int64_t s = 1;
    for (int a = 0; a < rank; ++a) s *= n[a];
    return s;
  }
};

template <class Real>  // float or double
class DeviceSolver {
 public:
  virtual ~DeviceSolver() = default;
  /// u = the mean-zero periodic solution of lap(u) = f - mean(f): the spectral method sets the
  /// zero mode to 0 and divides every other mode of f by -|k|^2. f and u are device arrays of
  /// the construction shape (C order) on the current device; u may be f (in place); f is not
  /// modified otherwise. Asynchronous on `stream`; the solver is not used by two streams at once.
  virtual void solve(const Real* f, Real* u, StreamHandle stream) = 0;
};

// The fused solver (poisson_fused.cu): cuFFT real-to-complex transforms along the contiguous
// axes, then one kernel that does the forward transform along axis 0, the Poisson scaling and
// the inverse transform along axis 0 in shared memory/registers (one read and one write of the
// half spectrum instead of three of each), then cuFFT complex-to-real along the contiguous axes.
bool fused_supports(const GridShape& shape);
template <class Real>
std::size_t fused_device_bytes(const GridShape& shape);
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_fused_solver(const GridShape& shape);

}  // namespace gpukit::pde::cuda_detail
