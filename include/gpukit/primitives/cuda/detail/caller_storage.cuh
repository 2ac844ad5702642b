#pragma once
// Internal: a caller's temporary storage behind the two-phase facades (CUB's contract: ask for
// the bytes, then pass a buffer of at least that many), in the shape the agents reserve from
// (ScanWorkspace's and ReduceWorkspace's). Nothing is known of what such a buffer held, so each
// launch zeroes what the engines need zero (one memset on the stream); the owning workspaces
// skip that memset when their last launch left the memory clean (docs/design-notes.md,
// "Workspaces").

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/cuda/detail/check.cuh"

namespace gpukit::primitives::device::detail {

/// Temporary storage starts on this boundary (cudaMalloc gives 256).
inline constexpr std::size_t kStorageAlignment = 16;

inline std::size_t align_storage(std::size_t bytes) {
  return (bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
}

/// Throws InvalidInput unless `storage` holds `needed` bytes on a kStorageAlignment boundary.
inline void check_storage(const char* engine, const void* storage, std::size_t bytes,
                          std::size_t needed) {
  if (storage == nullptr || reinterpret_cast<std::uintptr_t>(storage) % kStorageAlignment != 0) {
    throw InvalidInput(std::string(engine) +
                       ": the temporary storage must be device memory on a 16-byte boundary");
  }
  if (bytes < needed) {
    throw InvalidInput(std::string(engine) + ": the temporary storage holds " +
                       std::to_string(bytes) + " bytes, the call needs " + std::to_string(needed));
  }
}

/// The scan and compaction engines' view of a caller's buffer.
class CallerScanStorage {
 public:
  CallerScanStorage(const char* engine, void* storage, std::size_t bytes)
      : engine_(engine), storage_(storage), bytes_(bytes) {}

  void* reserve(std::size_t bytes) const {
    check_storage(engine_, storage_, bytes_, bytes);
    return storage_;
  }
  /// The first `clean_bytes` zeroed on `stream`, every time.
  void* reserve_clean(std::size_t bytes, std::size_t clean_bytes, cudaStream_t stream) const {
    void* area = reserve(bytes);
    check_cuda(cudaMemsetAsync(area, 0, clean_bytes, stream), "cudaMemsetAsync(temporary storage)");
    return area;
  }
  void leave_clean() const noexcept {}
  void* data() const noexcept { return storage_; }

 private:
  const char* engine_;
  void* storage_;
  std::size_t bytes_;
};

/// Where the deterministic reduction keeps its state in a caller's buffer: the counters, the
/// flagged slots when a launch may hand its tile sums on flagged (sized for that launch), then
/// the scratch values. The counters and the slots are zeroed before every launch.
struct ReduceStorageLayout {
  static constexpr std::size_t kCounterBytes = 16;
  std::size_t flagged_bytes = 0;
  std::size_t scratch_bytes = 0;

  std::size_t zeroed_bytes() const { return kCounterBytes + flagged_bytes; }
  std::size_t total_bytes() const { return zeroed_bytes() + scratch_bytes; }
};

/// The deterministic reduction's view of a caller's buffer laid out as `layout` says.
class CallerReduceStorage {
 public:
  CallerReduceStorage(void* storage, std::size_t bytes, ReduceStorageLayout layout)
      : storage_(static_cast<unsigned char*>(storage)), bytes_(bytes), layout_(layout) {}

  void reserve(std::size_t scratch_bytes) const {
    check_storage("deterministic_reduce", storage_, bytes_,
                  layout_.zeroed_bytes() + align_storage(scratch_bytes));
  }
  void* scratch() const noexcept { return storage_ + layout_.zeroed_bytes(); }
  unsigned* counters() const noexcept { return reinterpret_cast<unsigned*>(storage_); }
  void* flagged_slots(std::size_t bytes) const {
    if (bytes > layout_.flagged_bytes) {
      throw InvalidInput("deterministic_reduce: the temporary storage was sized for another count");
    }
    return storage_ + ReduceStorageLayout::kCounterBytes;
  }
  std::size_t flagged_slot_bytes() const noexcept { return layout_.flagged_bytes; }

 private:
  unsigned char* storage_;
  std::size_t bytes_;
  ReduceStorageLayout layout_;
};

}  // namespace gpukit::primitives::device::detail
