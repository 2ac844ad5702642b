#include "core/staging_area.hpp"

#include <optional>

namespace gpukit::detail {

std::unique_lock<std::mutex> lock_staging_area() {
  static std::mutex mutex;
  return std::unique_lock<std::mutex>(mutex);
}

StagingArea& staging_area(int device, std::size_t in_bytes, std::size_t out_bytes) {
  // A function static first built after the CUDA runtime is initialized, so it is destroyed (and
  // its memory freed) at exit before the runtime tears itself down.
  static std::optional<StagingArea> area;
  if (!area || area->device != device) {
    area.reset();
    area.emplace();
    area->device = device;
  }
  for (StagingSlot& s : area->slots) {
    s.stream.synchronize();
    if (s.pinned_in.size() < in_bytes) {
      s.pinned_in = {};  // release before allocating the larger one
      s.device_in = {};
      s.pinned_in = cuda::PinnedBuffer<unsigned char>(in_bytes);
      s.device_in = cuda::DeviceBuffer<unsigned char>(in_bytes);
    }
    if (s.pinned_out.size() < out_bytes) {
      s.pinned_out = {};
      s.device_out = {};
      s.pinned_out = cuda::PinnedBuffer<unsigned char>(out_bytes);
      s.device_out = cuda::DeviceBuffer<unsigned char>(out_bytes);
    }
  }
  return *area;
}

}  // namespace gpukit::detail
