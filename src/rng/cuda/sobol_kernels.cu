// generate_sobol's kernel: one output element per thread of a grid-stride loop, by the element
// rule the CPU loop uses (sobol_fill.hpp), so any grid gives the CPU's integers.

#include <algorithm>

#include "core/cuda/check.hpp"
#include "rng/sobol_fill.hpp"

namespace gpukit::rng::detail {

namespace {

__global__ void sobol_fill_kernel(const std::uint32_t* __restrict__ directions,
                                  const SobolFill fill, std::uint32_t* __restrict__ out,
                                  std::int64_t count) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t element = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; element < count;
       element += stride) {
    out[element] = sobol_fill_element(directions, fill, element);
  }
}

}  // namespace

void launch_sobol_fill(const std::uint32_t* device_directions, const SobolFill& fill,
                       std::uint32_t* device_out, std::int64_t count, StreamHandle stream,
                       int grid_blocks) {
  if (count <= 0) return;
  constexpr int kThreads = 256;
  const std::int64_t needed = (count + kThreads - 1) / kThreads;
  const int blocks =
      grid_blocks > 0 ? grid_blocks : static_cast<int>(std::min<std::int64_t>(needed, 65536));
  sobol_fill_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(device_directions, fill,
                                                                            device_out, count);
  GPUKIT_CUDA_CHECK_LAUNCH("sobol_fill_kernel");
}

}  // namespace gpukit::rng::detail
