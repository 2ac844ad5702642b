// The deterministic engine (reduce_deterministic.cuh) for std::uint32_t input; one file per element
// type, so that the engine's many kernels compile in parallel.

#include "primitives/cuda/reduce_deterministic.cuh"

namespace gpukit::primitives::cuda_detail {

GPUKIT_INSTANTIATE_DETERMINISTIC(std::uint32_t)

}  // namespace gpukit::primitives::cuda_detail
