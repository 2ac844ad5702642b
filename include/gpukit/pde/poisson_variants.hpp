#pragma once
// The registry of CUDA Poisson solvers, in ladder order (the seed's pipeline, its optimization
// steps, the half-spectrum r2c, the fused solver, the vendor row cuFFT). Tests and
// `gpukit bench poisson` iterate over it, so a new entry is tested and measured with no new test
// or bench code. Plain C++ (no CUDA headers); empty in a CPU-only build.
//
// Flop model (the same for every variant, so that TFLOP/s is a rate of one problem, as the
// "mflops" of FFTW's benchFFT and cuFFT's benchmarks: the nominal count of the algorithm, not the
// operations a variant happens to execute): a complex transform of N points counts 5 N log2 N
// flops, a real one (R2C or C2R) half of that, 2.5 N log2 N; a solve is one R2C and one C2R of the
// N-point grid, 5 N log2 N, plus the scaling of the half spectrum's ~N/2 complex values by a real
// factor, 2 flops each, N flops. Per grid point: 5 log2(N) + 1 (N = every axis's points
// together: a multi-dimensional transform's 5 N sum_a log2 n_a is 5 N log2 N). The seed variants
// run complex transforms of the full grid, twice the nominal work; they are still counted at the
// nominal rate, as the traffic model counts one read of f and one write of u for every variant.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"
#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde {

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

/// What a registry entry makes: a solver for one grid shape, created once (cuFFT plans, tables,
/// buffers) and used for many right-hand sides.
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

/// The flop model above: 5 log2(N) + 1 flops per point of an N-point grid (0 for N <= 1).
inline double poisson_flops_per_element(std::int64_t points) {
  return points > 1 ? 5 * std::log2(static_cast<double>(points)) + 1 : 0;
}

/// Device memory a variant's solver for `shape` allocates, known before it allocates anything.
template <class Real>
using PoissonDeviceBytes = std::size_t(const GridShape& shape);
/// A variant's solver for `shape`.
template <class Real>
using MakePoissonSolver = std::unique_ptr<DeviceSolver<Real>>(const GridShape& shape);

struct PoissonVariant {
  /// Traffic: one read of f and one write of u per grid point (what the bench's GB/s counts).
  /// Its flops_per_element is 0: a spectral solve's flops per point grow with log2 of the grid's
  /// size, which a per-element constant cannot hold; info_for(shape) fills it in for a grid.
  VariantInfo info;
  /// Bytes of device memory traffic per grid element in float (the FFTs' passes included), an
  /// estimate for the napkin math, beyond the traffic model's one read and one write.
  double bytes_per_element = 0;
  bool (*supports)(const GridShape&) = nullptr;
  PerType<PoissonDeviceBytes, RealTypes> device_bytes_of;
  PerType<MakePoissonSolver, RealTypes> make_solver;

  /// `info` with its traffic model's flops_per_element for `shape` (the flop model above).
  VariantInfo info_for(const GridShape& shape) const {
    VariantInfo sized = info;
    sized.traffic.flops_per_element = poisson_flops_per_element(shape.size());
    return sized;
  }

  template <class Real>
  std::size_t device_bytes(const GridShape& shape) const {
    return device_bytes_of.get<Real>()(shape);
  }
  template <class Real>
  std::unique_ptr<DeviceSolver<Real>> make(const GridShape& shape) const {
    return make_solver.get<Real>()(shape);
  }
};

/// Every variant in ladder order; empty without CUDA.
std::span<const PoissonVariant> poisson_variants();
/// Looks a variant up by name; InvalidInput listing the names when there is none.
const PoissonVariant& find_poisson_variant(std::string_view name);
/// The variants a plan prefers, best first (fused, then r2c, then cufft).
std::span<const std::string_view> best_poisson_variants();

/// The internal shape of a valid grid.
GridShape grid_shape(const PoissonGrid& grid);

}  // namespace gpukit::pde
