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

/// Held by a caller for as long as it uses the staging area: concurrent callers take turns.
std::unique_lock<std::mutex> lock_staging_area();

/// The process's staging area on `device` (reallocated when the device changes), every slot with
/// at least `in_bytes` / `out_bytes` of pinned and device memory per direction. Call with the
/// lock held. Work left in flight by a call that failed part-way is waited for first.
StagingArea& staging_area(int device, std::size_t in_bytes, std::size_t out_bytes);

}  // namespace gpukit::detail
