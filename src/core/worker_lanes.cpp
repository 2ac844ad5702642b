#include "core/worker_lanes.hpp"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "gpukit/core/device.hpp"

namespace gpukit::detail {

namespace {

thread_local LaneCache* this_lane_cache = nullptr;
std::atomic<std::size_t> lanes_made_here{0};

struct Lane {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> tasks;
  bool stop = false;
  LaneCache cache;
  std::thread thread;
};

void run_lane(Lane& lane) {
  this_lane_cache = &lane.cache;
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(lane.mutex);
      lane.changed.wait(lock, [&] { return lane.stop || !lane.tasks.empty(); });
      // Stopping: the tasks already given still run (their callers wait for them).
      if (lane.tasks.empty()) break;
      task = std::move(lane.tasks.front());
      lane.tasks.pop_front();
    }
    try {
      task();
    } catch (...) {  // the task's contract: it reports its own outcome
    }
  }
  // Its device memory and streams are freed on the thread that used them.
  lane.cache.clear();
  this_lane_cache = nullptr;
}

// Every lane of one backend in this process.
class LanePool {
 public:
  LanePool() = default;
  LanePool(const LanePool&) = delete;
  LanePool& operator=(const LanePool&) = delete;
  ~LanePool() {
    for (auto& [key, lane] : lanes_) {
      const std::lock_guard<std::mutex> lock(lane->mutex);
      lane->stop = true;
      lane->changed.notify_all();
    }
    for (auto& [key, lane] : lanes_) {
      // A lane's own thread ending the process (exit() inside a task) cannot join itself.
      if (lane->thread.get_id() == std::this_thread::get_id()) {
        lane->thread.detach();
        (void)lane.release();  // its thread still runs on it
      } else if (lane->thread.joinable()) {
        lane->thread.join();
      }
    }
  }

  void run(const LaneKey& key, std::function<void()> task) {
    Lane* lane = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      std::unique_ptr<Lane>& slot = lanes_[key];
      if (!slot) {
        auto made = std::make_unique<Lane>();
        made->thread = std::thread(run_lane, std::ref(*made));  // throws: no lane is kept
        slot = std::move(made);
        ++lanes_made_here;
      }
      lane = slot.get();
    }
    const std::lock_guard<std::mutex> lock(lane->mutex);
    lane->tasks.push_back(std::move(task));
    lane->changed.notify_one();
  }

 private:
  std::mutex mutex_;
  std::map<LaneKey, std::unique_ptr<Lane>> lanes_;
};

// One backend's pool of this process: a child made by fork() has none of its parent's lane
// threads, so it leaves the parent's pool alone (never destroyed: its threads are not there to
// join) and makes its own.
class PoolOfThisProcess {
 public:
  LanePool& get() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_ || pid_ != ::getpid()) {
      (void)pool_.release();
      pool_ = std::make_unique<LanePool>();
      pid_ = ::getpid();
    }
    return *pool_;
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<LanePool> pool_;
  pid_t pid_ = 0;
};

PoolOfThisProcess& cpu_pools() {
  static PoolOfThisProcess pools;
  return pools;
}

PoolOfThisProcess& cuda_pools() {
  // Started before the pool is built, so that the pool is destroyed first at exit (the runtime
  // does nothing for a process without CUDA or without a GPU).
  static const int runtime_started = (static_cast<void>(cuda_device_count()), 0);
  static_cast<void>(runtime_started);
  static PoolOfThisProcess pools;
  return pools;
}

}  // namespace

LaneCache* current_lane_cache() noexcept { return this_lane_cache; }

bool on_lane() noexcept { return this_lane_cache != nullptr; }

std::vector<LaneKey> lane_keys(std::span<const Context> workers) {
  std::vector<LaneKey> keys;
  std::map<std::pair<Backend, int>, int> taken;
  for (const Context& c : workers) {
    const int device = c.backend == Backend::cuda ? c.cuda_device : 0;
    keys.push_back({c.backend, device, taken[{c.backend, device}]++});
  }
  return keys;
}

void run_on_lane(const LaneKey& key, std::function<void()> task) {
  (key.backend == Backend::cuda ? cuda_pools() : cpu_pools()).get().run(key, std::move(task));
}

std::size_t lanes_made() noexcept { return lanes_made_here; }

}  // namespace gpukit::detail
