#pragma once
// Internal: long-lived worker threads ("lanes") for the workers of a call spread over several
// devices (gpukit/distributed's run_workers, which the scale-out calls use). A two-GPU Monte
// Carlo call of 0.05 s used to make, each time, a thread a GPU, its stream, its device buffers
// and its OpenMP team, and to free them at the end (cudaFree waits for the device); a lane keeps
// its thread, its OpenMP team and what its work caches in it (LaneCache: a device's stream and
// scratch buffers) from one call to the next, until the process ends.
//
// A lane is keyed by its backend, its device and an ordinal: the k-th worker of a call on that
// device runs on lane k of it (`cuda:0,0` runs on two lanes of GPU 0), so that a call's workers
// never share a lane. A lane runs its tasks one at a time, in the order they came: concurrent
// callers with the same devices take turns on each lane, and cannot deadlock, since a task never
// waits for another task. A caller on a lane's own thread (a worker that spreads work again)
// must not queue behind itself: on_lane() tells it to use threads of its own. (A thread that a
// task starts, an OpenMP team's, is not the lane's: it must not queue work on its task's lane,
// and no gpukit code does.)
//
// Teardown: at exit each lane finishes the tasks it was given, destroys its cache on its own
// thread and ends; the pool joins it. The CUDA lanes' pool is first built after the CUDA runtime
// has started, so that it ends (and its lanes' device memory is freed) before the runtime tears
// itself down (core/staging_area.cpp does the same). A child made by fork() (whose lanes' threads
// did not survive the fork) gets lanes of its own on first use.
//
// No CUDA header: lanes are tested on the CPU (tests/core/worker_lanes_test.cpp).

#include <compare>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "gpukit/core/context.hpp"

namespace gpukit::detail {

/// What a lane keeps between the tasks it runs: one object of each type T, value-initialized on
/// first use (on the lane's thread) and destroyed on the lane's thread when the lane ends, in the
/// reverse order of their making. Used by one thread at a time (its lane's).
class LaneCache {
 public:
  LaneCache() = default;
  LaneCache(const LaneCache&) = delete;
  LaneCache& operator=(const LaneCache&) = delete;
  ~LaneCache() { clear(); }

  template <class T>
  T& get() {
    for (Entry& e : entries_) {
      if (e.type == std::type_index(typeid(T))) return *static_cast<T*>(e.object.get());
    }
    std::unique_ptr<void, void (*)(void*)> object(new T(),
                                                  [](void* p) { delete static_cast<T*>(p); });
    entries_.push_back({std::type_index(typeid(T)), std::move(object)});
    return *static_cast<T*>(entries_.back().object.get());
  }

  /// Destroys every object, the last made first.
  void clear() noexcept {
    while (!entries_.empty()) entries_.pop_back();
  }

 private:
  struct Entry {
    std::type_index type;
    std::unique_ptr<void, void (*)(void*)> object;
  };
  std::vector<Entry> entries_;
};

/// The cache of the lane whose thread calls; nullptr on any other thread (a caller's own, a
/// thread of an OpenMP team).
LaneCache* current_lane_cache() noexcept;

/// Whether the calling thread is a lane's.
bool on_lane() noexcept;

/// Which lane a worker runs on.
struct LaneKey {
  Backend backend = Backend::cpu;
  int device = 0;   // the CUDA ordinal; 0 for the CPU
  int ordinal = 0;  // the worker's rank among the call's workers of the same backend and device
  auto operator<=>(const LaneKey&) const = default;
};

/// The lane of each of a call's workers, in order: its backend, its device, and how many earlier
/// workers of the call share both.
std::vector<LaneKey> lane_keys(std::span<const Context> workers);

/// Queues `task` on lane `key`, made on first use (a thread of its own). The lane runs its tasks
/// one at a time in the order they came; `task` reports its own outcome (an exception escaping
/// it is dropped: catch what the caller must see). Returns at once. Throws what making the lane's
/// thread throws (std::system_error), in which case `task` does not run.
void run_on_lane(const LaneKey& key, std::function<void()> task);

/// How many lanes this process has made (for the tests: lanes are kept, not remade).
std::size_t lanes_made() noexcept;

}  // namespace gpukit::detail
