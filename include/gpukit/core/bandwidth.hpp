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

/// Host memory copy bandwidth in GB/s, counting the bytes read plus the bytes written (as the
/// device copy above): the median of `repeat` copies of `bytes` bytes between two host buffers,
/// split over `threads` OpenMP threads (0: all), after one warm-up copy that also places the pages
/// (first touch, each thread its own part). The default 512 MiB is well above any CPU cache.
double measure_host_copy_bandwidth_gbps(std::size_t bytes = std::size_t{512} << 20, int repeat = 5,
                                        int threads = 0);

}  // namespace gpukit
