#include "primitives/cuda/scan_pipelined.cuh"

namespace gpukit::primitives::cuda_detail {
template ScanLaunch<float> launch_pipelined_lookback<float>;
}  // namespace gpukit::primitives::cuda_detail
