#pragma once
// Internal: the registry of CUDA Poisson solvers, in ladder order (the seed's pipeline, its
// optimization steps, the half-spectrum r2c, the fused solver when built, the vendor row cuFFT).
// Tests and `gpukit bench poisson` iterate over it. Plain C++ (no CUDA headers).

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "gpukit/core/variant_info.hpp"
#include "gpukit/pde/poisson.hpp"
#include "pde/cuda/poisson_device_solver.hpp"

namespace gpukit::pde {

using cuda_detail::DeviceSolver;
using cuda_detail::GridShape;

struct PoissonVariant {
  template <class Real>
  using DeviceBytes = std::size_t (*)(const GridShape&);
  template <class Real>
  using Factory = std::unique_ptr<DeviceSolver<Real>> (*)(const GridShape&);

  /// Traffic: one read of f and one write of u per grid point (what the bench's GB/s counts).
  VariantInfo info;
  /// Bytes of device memory traffic per grid element in float (the FFTs' passes included), an
  /// estimate for the napkin math, beyond the traffic model's one read and one write.
  double bytes_per_element = 0;
  bool (*supports)(const GridShape&) = nullptr;
  DeviceBytes<float> device_bytes_float = nullptr;
  DeviceBytes<double> device_bytes_double = nullptr;
  Factory<float> make_float = nullptr;
  Factory<double> make_double = nullptr;

  template <class Real>
  std::size_t device_bytes(const GridShape& shape) const {
    if constexpr (std::is_same_v<Real, float>)
      return device_bytes_float(shape);
    else
      return device_bytes_double(shape);
  }
  template <class Real>
  std::unique_ptr<DeviceSolver<Real>> make(const GridShape& shape) const {
    if constexpr (std::is_same_v<Real, float>)
      return make_float(shape);
    else
      return make_double(shape);
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
