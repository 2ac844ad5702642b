#pragma once
// The measured ceilings every benchmark row is compared with.

#include <cstddef>

namespace gpukit {

/// Device-to-device copy bandwidth of `device` in GB/s (1e9 bytes/s), counting the bytes read plus
/// the bytes written, as the median of `repeat` cudaMemcpy copies of `bytes` bytes after a warm-up.
/// The default 1 GiB is well above the L2 cache, so this is the HBM limit.
double measure_device_copy_bandwidth_gbps(int device, std::size_t bytes = std::size_t{1} << 30,
                                          int repeat = 20);

/// Host<->device transfer bandwidth in GB/s (median of `repeat` copies of `bytes` bytes).
struct TransferBandwidth {
  double host_to_device_pinned_gbps = 0;
  double device_to_host_pinned_gbps = 0;
  double host_to_device_pageable_gbps = 0;
  double device_to_host_pageable_gbps = 0;
};
TransferBandwidth measure_transfer_bandwidth(int device, std::size_t bytes = std::size_t{256} << 20,
                                             int repeat = 5);

}  // namespace gpukit
