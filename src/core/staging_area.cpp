#include "core/staging_area.hpp"

#include <map>
#include <memory>

namespace gpukit::detail {

namespace {
// Guards the two tables below (not the areas: each has its device's lock).
std::mutex& tables_mutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

std::unique_lock<std::mutex> lock_staging_area(int device) {
  static std::map<int, std::mutex> locks;  // nodes never move: the references stay valid
  std::mutex* lock = nullptr;
  {
    const std::lock_guard<std::mutex> guard(tables_mutex());
    lock = &locks[device];
  }
  return std::unique_lock<std::mutex>(*lock);
}

StagingArea& staging_area(int device, std::size_t in_bytes, std::size_t out_bytes) {
  // A function static first built after the CUDA runtime is initialized, so it is destroyed (and
  // its memory freed) at exit before the runtime tears itself down.
  static std::map<int, std::unique_ptr<StagingArea>> areas;
  StagingArea* area = nullptr;
  {
    const std::lock_guard<std::mutex> guard(tables_mutex());
    std::unique_ptr<StagingArea>& slot = areas[device];
    if (!slot) {
      slot = std::make_unique<StagingArea>();
      slot->device = device;
    }
    area = slot.get();
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
