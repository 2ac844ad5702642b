#include "primitives/cuda/scan_pipelined.cuh"

namespace gpukit::primitives::cuda_detail {
template ScanLaunch<double> launch_pipelined_lookback<double>;
}  // namespace gpukit::primitives::cuda_detail
