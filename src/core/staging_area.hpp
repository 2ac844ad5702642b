#pragma once
// Internal: the pinned staging buffers the chunked host pipeline (chunked_host_pipeline.hpp:
// scan, compaction, reduction, Black-Scholes) streams through. Pinning memory costs tens of
// milliseconds per 100 MB, as much as moving a 2^26-option book, so the buffers outlive a call and
// grow on demand.

#include <array>
#include <cstddef>
#include <mutex>

#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::detail {

struct StagingSlot {
  cuda::Stream stream;
  cuda::PinnedBuffer<unsigned char> pinned_in, pinned_out;
  cuda::DeviceBuffer<unsigned char> device_in, device_out;
};

struct StagingArea {
  int device = -1;
  std::array<StagingSlot, 2> slots;
};

/// Held by a caller for as long as it uses `device`'s staging area: concurrent callers on one
/// device take turns; callers on different devices (the threads of a multi-GPU run,
/// gpukit/distributed) run side by side, each through its own device's buffers and PCIe link.
std::unique_lock<std::mutex> lock_staging_area(int device);

/// The process's staging area on `device` (one per device, made on first use while `device` is
/// the current device), every slot with at least `in_bytes` / `out_bytes` of pinned and device
/// memory per direction. Call with that device's lock held. Work left in flight by a call that
/// failed part-way is waited for first.
StagingArea& staging_area(int device, std::size_t in_bytes, std::size_t out_bytes);

}  // namespace gpukit::detail
