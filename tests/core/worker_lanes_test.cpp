// The lanes of core/worker_lanes.hpp on CPU lanes: a lane is made once and kept, runs its tasks
// one at a time in order on one thread, keeps its cache between tasks, survives a task that
// throws, and serves concurrent callers without losing or overlapping a task.

#include "core/worker_lanes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpukit::detail {
namespace {

// A key no other test of this binary uses, so that lanes_made() counts only this test's lanes.
LaneKey cpu_lane(int ordinal) { return {Backend::cpu, 0, 1000 + ordinal}; }

// Runs `task` on `key` and waits for it.
template <class F>
void run_and_wait(const LaneKey& key, F&& task) {
  std::promise<void> done;
  run_on_lane(key, [&] {
    task();
    done.set_value();
  });
  done.get_future().wait();
}

TEST(LaneKeys, WorkersOfOneDeviceTakeConsecutiveLanesOfIt) {
  const std::vector<Context> workers = {Context::cuda(1), Context::cpu(4), Context::cuda(0),
                                        Context::cuda(1), Context::cpu(2), Context::cuda(1, 3)};
  const std::vector<LaneKey> keys = lane_keys(workers);
  const std::vector<LaneKey> expected = {{Backend::cuda, 1, 0}, {Backend::cpu, 0, 0},
                                         {Backend::cuda, 0, 0}, {Backend::cuda, 1, 1},
                                         {Backend::cpu, 0, 1},  {Backend::cuda, 1, 2}};
  EXPECT_EQ(keys, expected);
  EXPECT_TRUE(lane_keys({}).empty());
}

TEST(WorkerLanes, ALaneIsKeptWithItsThreadAndItsCache) {
  EXPECT_FALSE(on_lane());
  EXPECT_EQ(current_lane_cache(), nullptr);
  const std::size_t before = lanes_made();
  std::thread::id first_thread, second_thread;
  int* first_value = nullptr;
  run_and_wait(cpu_lane(0), [&] {
    EXPECT_TRUE(on_lane());
    ASSERT_NE(current_lane_cache(), nullptr);
    first_thread = std::this_thread::get_id();
    int& value = current_lane_cache()->get<int>();
    EXPECT_EQ(value, 0);  // value-initialized on first use
    value = 42;
    first_value = &value;
  });
  run_and_wait(cpu_lane(0), [&] {
    second_thread = std::this_thread::get_id();
    int& value = current_lane_cache()->get<int>();
    EXPECT_EQ(&value, first_value);
    EXPECT_EQ(value, 42);
    EXPECT_EQ(current_lane_cache()->get<double>(), 0.0);  // one object a type
  });
  EXPECT_EQ(first_thread, second_thread);
  EXPECT_NE(first_thread, std::this_thread::get_id());
  EXPECT_EQ(lanes_made(), before + 1);
  // Another lane: another thread and another cache.
  run_and_wait(cpu_lane(1), [&] {
    EXPECT_NE(std::this_thread::get_id(), first_thread);
    EXPECT_EQ(current_lane_cache()->get<int>(), 0);
  });
  EXPECT_EQ(lanes_made(), before + 2);
}

TEST(WorkerLanes, ATaskThatThrowsLeavesTheLaneWorking) {
  std::promise<void> thrown;
  run_on_lane(cpu_lane(2), [&] {
    thrown.set_value();
    throw std::runtime_error("a task's own failure");
  });
  thrown.get_future().wait();
  bool ran = false;
  run_and_wait(cpu_lane(2), [&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(WorkerLanes, TasksRunInOrderOneAtATimeWhateverTheCallers) {
  // Four callers queue tasks on the same two lanes at once: every task runs once, the tasks of
  // one lane never overlap, and each caller's tasks on a lane run in the order it gave them.
  constexpr int kCallers = 4, kTasks = 50;
  struct PerLane {
    std::atomic<bool> busy{false};
    std::atomic<int> overlaps{0};
    std::mutex mutex;
    std::vector<std::vector<int>> order = std::vector<std::vector<int>>(kCallers);
  };
  std::vector<std::unique_ptr<PerLane>> lanes;
  for (int l = 0; l < 2; ++l) lanes.push_back(std::make_unique<PerLane>());
  std::atomic<int> ran{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      std::vector<std::future<void>> done;
      for (int t = 0; t < kTasks; ++t) {
        const int l = (c + t) % 2;
        auto promise = std::make_shared<std::promise<void>>();
        done.push_back(promise->get_future());
        run_on_lane(cpu_lane(10 + l), [&, promise, c, t, l] {
          PerLane& lane = *lanes[static_cast<std::size_t>(l)];
          if (lane.busy.exchange(true)) ++lane.overlaps;
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          {
            const std::lock_guard<std::mutex> lock(lane.mutex);
            lane.order[static_cast<std::size_t>(c)].push_back(t);
          }
          ++ran;
          lane.busy = false;
          promise->set_value();
        });
      }
      for (std::future<void>& f : done) f.wait();
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(ran.load(), kCallers * kTasks);
  for (const auto& lane : lanes) {
    EXPECT_EQ(lane->overlaps.load(), 0);
    for (const std::vector<int>& tasks : lane->order) {
      EXPECT_FALSE(tasks.empty());
      EXPECT_TRUE(std::is_sorted(tasks.begin(), tasks.end()));
    }
  }
}

TEST(LaneCacheTest, ObjectsAreDestroyedLastMadeFirst) {
  static std::vector<int> destroyed;
  destroyed.clear();
  struct First {
    ~First() { destroyed.push_back(1); }
  };
  struct Second {
    ~Second() { destroyed.push_back(2); }
  };
  {
    LaneCache cache;
    cache.get<First>();
    cache.get<Second>();
    cache.get<First>();  // not made again
  }
  EXPECT_EQ(destroyed, (std::vector<int>{2, 1}));
}

}  // namespace
}  // namespace gpukit::detail
