#include "gpukit/distributed/workers.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/worker_lanes.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::distributed {

namespace {

WorkPlan plan_from(Communicator& comm, int local_workers,
                   const std::function<std::vector<BlockRange>(int parts)>& split,
                   std::int64_t blocks) {
  if (local_workers < 1) throw InvalidInput("distributed: a rank needs at least one worker");
  const std::vector<std::int64_t> workers = comm.all_gather(local_workers);
  std::int64_t all = 0, before = 0;
  for (std::size_t r = 0; r < workers.size(); ++r) {
    if (static_cast<int>(r) < comm.rank()) before += workers[r];
    all += workers[r];
  }
  const std::vector<BlockRange> ranges = split(static_cast<int>(all));
  WorkPlan plan;
  plan.blocks = blocks;
  std::int64_t w = 0;
  for (std::size_t r = 0; r < workers.size(); ++r) {
    const BlockRange first = ranges[static_cast<std::size_t>(w)];
    const BlockRange last = ranges[static_cast<std::size_t>(w + workers[r] - 1)];
    plan.rank_ranges.push_back({first.first, last.end() - first.first});
    w += workers[r];
  }
  plan.local_ranges.assign(ranges.begin() + before, ranges.begin() + before + local_workers);
  return plan;
}

}  // namespace

WorkPlan plan_work(Communicator& comm, int local_workers, std::span<const double> weights) {
  return plan_from(
      comm, local_workers, [&](int parts) { return split_by_weight(weights, parts); },
      static_cast<std::int64_t>(weights.size()));
}

WorkPlan plan_work(Communicator& comm, int local_workers, std::int64_t blocks) {
  return plan_from(
      comm, local_workers, [&](int parts) { return split_evenly(blocks, parts); }, blocks);
}

namespace {

// What a call's workers and its caller share: it outlives the caller's wait (a worker still
// inside its last notify holds it), so every worker keeps a reference.
struct Shared {
  explicit Shared(int workers)
      : fractions(static_cast<std::size_t>(workers)),
        failures(static_cast<std::size_t>(workers)),
        running(workers) {
    for (std::atomic<double>& f : fractions) f = 0.0;
  }
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::atomic<double>> fractions;
  std::vector<std::exception_ptr> failures;
  int running = 0;
};

// Worker w has ended: the last thing it does. The caller may return (its `work` and `progress`
// gone) as soon as the lock is released; `s` lives on in the worker's own reference.
void end_worker(Shared& s, int w) {
  s.fractions[static_cast<std::size_t>(w)] = 1.0;
  const std::lock_guard<std::mutex> lock(s.mutex);
  --s.running;
  s.changed.notify_all();
}

// Runs work(w, report) for every worker, each started by start(w, body) (on a thread of its own
// or a lane), and waits for all of them as run_workers() says. start() may throw: that worker's
// failure is its error, and the workers already started are still waited for.
void run_each(int workers, const std::function<void(int worker, const ReportProgress&)>& work,
              const std::function<void(double fraction)>& progress,
              const std::function<void(int worker, std::function<void()> body)>& start) {
  auto shared = std::make_shared<Shared>(workers);
  for (int w = 0; w < workers; ++w) {
    try {
      start(w, [shared, &work, w] {
        const ReportProgress report = [s = shared.get(), w](double fraction) {
          s->fractions[static_cast<std::size_t>(w)] = fraction;
        };
        try {
          work(w, report);
        } catch (...) {
          shared->failures[static_cast<std::size_t>(w)] = std::current_exception();
        }
        end_worker(*shared, w);
      });
    } catch (...) {
      shared->failures[static_cast<std::size_t>(w)] = std::current_exception();
      end_worker(*shared, w);
    }
  }
  auto mean = [&] {
    double sum = 0;
    for (const std::atomic<double>& f : shared->fractions) sum += f;
    return sum / workers;
  };
  std::exception_ptr progress_failure;  // a report that failed (stderr closed): after the wait
  {
    std::unique_lock<std::mutex> lock(shared->mutex);
    while (shared->running > 0) {
      shared->changed.wait_for(lock, std::chrono::milliseconds(500));
      if (progress && shared->running > 0 && !progress_failure) {
        lock.unlock();
        try {
          progress(mean());
        } catch (...) {
          progress_failure = std::current_exception();
        }
        lock.lock();
      }
    }
  }
  for (const std::exception_ptr& f : shared->failures)
    if (f) std::rethrow_exception(f);
  if (progress_failure) std::rethrow_exception(progress_failure);
  if (progress) progress(1.0);
}

// One worker: no thread, the work (a device's CUDA calls included) stays on the caller's
// thread, as without the distributed module.
void run_one(const std::function<void(int worker, const ReportProgress&)>& work,
             const std::function<void(double fraction)>& progress) {
  const ReportProgress report = [&progress](double fraction) {
    if (progress) progress(fraction);
  };
  work(0, report);
}

}  // namespace

void run_workers(int workers, const std::function<void(int worker, const ReportProgress&)>& work,
                 const std::function<void(double fraction)>& progress) {
  if (workers < 1) throw InvalidInput("distributed: no worker to run");
  if (workers == 1) return run_one(work, progress);
  std::vector<std::thread> threads;
  try {
    run_each(workers, work, progress,
             [&](int, std::function<void()> body) { threads.emplace_back(std::move(body)); });
  } catch (...) {
    for (std::thread& t : threads) t.join();
    throw;
  }
  for (std::thread& t : threads) t.join();
}

void run_workers(std::span<const Context> workers,
                 const std::function<void(int worker, const ReportProgress&)>& work,
                 const std::function<void(double fraction)>& progress) {
  if (workers.empty()) throw InvalidInput("distributed: no worker to run");
  if (workers.size() == 1) return run_one(work, progress);
  // A worker that spreads work again would queue behind itself on its own lane.
  if (gpukit::detail::on_lane())
    return run_workers(static_cast<int>(workers.size()), work, progress);
  const std::vector<gpukit::detail::LaneKey> lanes = gpukit::detail::lane_keys(workers);
  run_each(static_cast<int>(workers.size()), work, progress,
           [&](int w, std::function<void()> body) {
             gpukit::detail::run_on_lane(lanes[static_cast<std::size_t>(w)], std::move(body));
           });
}

}  // namespace gpukit::distributed
