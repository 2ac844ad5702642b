#include "primitives/cuda/scan_pipelined.cuh"

namespace gpukit::primitives::cuda_detail {
template ScanLaunch<std::int64_t> launch_pipelined_lookback<std::int64_t>;
}  // namespace gpukit::primitives::cuda_detail
