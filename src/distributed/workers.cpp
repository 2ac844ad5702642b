#include "gpukit/distributed/workers.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

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

void run_workers(int workers, const std::function<void(int worker, const ReportProgress&)>& work,
                 const std::function<void(double fraction)>& progress) {
  if (workers < 1) throw InvalidInput("distributed: no worker to run");
  if (workers == 1) {
    // No thread: the work (a device's CUDA calls included) stays on the caller's thread, as
    // without the distributed module.
    const ReportProgress report = [&progress](double fraction) {
      if (progress) progress(fraction);
    };
    work(0, report);
    return;
  }
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    int running = 0;
  };
  auto shared = std::make_shared<Shared>();
  std::vector<std::atomic<double>> fractions(static_cast<std::size_t>(workers));
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(workers));
  std::vector<std::thread> threads;
  shared->running = workers;
  for (int w = 0; w < workers; ++w) {
    fractions[static_cast<std::size_t>(w)] = 0.0;
    threads.emplace_back([&, w] {
      const ReportProgress report = [&fractions, w](double fraction) {
        fractions[static_cast<std::size_t>(w)] = fraction;
      };
      try {
        work(w, report);
      } catch (...) {
        failures[static_cast<std::size_t>(w)] = std::current_exception();
      }
      fractions[static_cast<std::size_t>(w)] = 1.0;
      const std::lock_guard<std::mutex> lock(shared->mutex);
      --shared->running;
      shared->changed.notify_all();
    });
  }
  auto mean = [&] {
    double sum = 0;
    for (const std::atomic<double>& f : fractions) sum += f;
    return sum / workers;
  };
  std::exception_ptr progress_failure;  // a report that failed (stderr closed): after the join
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
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& f : failures)
    if (f) std::rethrow_exception(f);
  if (progress_failure) std::rethrow_exception(progress_failure);
  if (progress) progress(1.0);
}

}  // namespace gpukit::distributed
