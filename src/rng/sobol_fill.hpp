#pragma once
// Internal: the element rule of generate_sobol, shared by the CPU loop (sobol.cpp) and the CUDA
// kernel (cuda/sobol_kernels.cu), and the kernel's launcher.

#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/rng/sobol.hpp"

namespace gpukit::rng::detail {

struct SobolFill {
  std::int64_t dimensions = 1;
  std::uint32_t first_point = 0;
  bool scrambled = true;
  std::uint64_t replicate_key = 0;  // sobol_replicate_key of the spec
};

/// Element `element` of the output: coordinate element % dimensions of point first_point +
/// element / dimensions; `directions` holds 32 words a dimension (sobol_direction_numbers).
GPUKIT_HD_INLINE std::uint32_t sobol_fill_element(const std::uint32_t* directions,
                                                  const SobolFill& fill, std::int64_t element) {
  const auto dimension = static_cast<std::uint32_t>(element % fill.dimensions);
  const auto point = fill.first_point + static_cast<std::uint32_t>(element / fill.dimensions);
  const std::uint32_t x = sobol_coordinate(directions + 32 * std::int64_t{dimension}, point);
  return fill.scrambled ? owen_scramble(x, sobol_dimension_seed(fill.replicate_key, dimension)) : x;
}

/// Writes `count` elements at device_out (device memory), the directions at device_directions.
void launch_sobol_fill(const std::uint32_t* device_directions, const SobolFill& fill,
                       std::uint32_t* device_out, std::int64_t count, StreamHandle stream,
                       int grid_blocks = 0);

}  // namespace gpukit::rng::detail
