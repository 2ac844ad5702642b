#include "primitives/cuda/scan_pipelined.cuh"

namespace gpukit::primitives::cuda_detail {
GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(launch_pipelined_lookback, std::int64_t)
}  // namespace gpukit::primitives::cuda_detail
