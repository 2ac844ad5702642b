#pragma once
// Internal: what a launch sized from the SM count needs, asked of the runtime once per device
// (and kernel), so that launch paths stay free of queries.

namespace gpukit::cuda::detail {

/// SMs of the calling thread's current device.
int current_sm_count();

/// How many blocks of `threads` threads of `kernel` (a __global__ function's address) fit on one
/// SM of the current device at once (at least 1).
int resident_blocks_per_sm(const void* kernel, int threads);

}  // namespace gpukit::cuda::detail
