#include "primitives/cuda/scan_pipelined.cuh"

namespace gpukit::primitives::cuda_detail {
template ScanLaunch<std::uint32_t> launch_pipelined_lookback<std::uint32_t>;
}  // namespace gpukit::primitives::cuda_detail
