// gpukit/distributed in one process: the splits of fixed blocks (against a direct count of each
// part's weight), device lists (syntax, the shares of a host's ranks, what a machine without a GPU
// says), the workers' threads (order, failures, progress) and a job of one process's collectives
// and failure agreement. The MPI job itself is tested by running gpukit under mpirun
// (mpi_cli_test.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/devices.hpp"
#include "gpukit/distributed/partition.hpp"
#include "gpukit/distributed/workers.hpp"
#include "test_seed.hpp"

namespace gpukit::distributed {
namespace {

// Ranges that tile [0, blocks) in order.
void expect_in_order(const std::vector<BlockRange>& ranges, std::int64_t blocks) {
  std::int64_t next = 0;
  for (const BlockRange& r : ranges) {
    EXPECT_EQ(r.first, next);
    EXPECT_GE(r.count, 0);
    next = r.end();
  }
  EXPECT_EQ(next, blocks);
}

TEST(Split, EvenlyDiffersByAtMostOneLargerFirst) {
  for (const std::int64_t blocks : {0, 1, 7, 8, 9, 1000, 1001}) {
    for (const int parts : {1, 2, 3, 8, 13}) {
      const std::vector<BlockRange> r = split_evenly(blocks, parts);
      ASSERT_EQ(r.size(), static_cast<std::size_t>(parts));
      expect_in_order(r, blocks);
      for (std::size_t k = 1; k < r.size(); ++k) {
        EXPECT_LE(r[k].count, r[k - 1].count) << blocks << " blocks, " << parts << " parts";
        EXPECT_LE(r[0].count - r[k].count, 1);
      }
    }
  }
  EXPECT_THROW(split_evenly(5, 0), InvalidInput);
  EXPECT_THROW(split_evenly(-1, 2), InvalidInput);
}

TEST(Split, ByWeightGivesEachPartItsShareWithinOneBlock) {
  const std::uint64_t seed = testing::test_seed();
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> weight(0.0, 10.0);
  for (const int blocks : {1, 5, 64, 1000}) {
    std::vector<double> w(static_cast<std::size_t>(blocks));
    for (double& x : w) x = weight(gen);
    w[0] = 1000;  // one heavy block
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    const double heaviest = *std::max_element(w.begin(), w.end());
    for (const int parts : {1, 2, 3, 7, 16}) {
      const std::vector<BlockRange> r = split_by_weight(w, parts);
      ASSERT_EQ(r.size(), static_cast<std::size_t>(parts));
      expect_in_order(r, blocks);
      // Each boundary lies within one block's weight of its ideal place.
      double before = 0;
      for (int k = 0; k + 1 < parts; ++k) {
        const BlockRange& part = r[static_cast<std::size_t>(k)];
        for (std::int64_t b = part.first; b < part.end(); ++b)
          before += w[static_cast<std::size_t>(b)];
        EXPECT_LE(std::abs(before - total * (k + 1) / parts), heaviest * (1 + 1e-12))
            << "seed " << seed << ", " << blocks << " blocks, part " << k << " of " << parts;
      }
    }
  }
}

TEST(Split, ByWeightOfEqualBlocksIsEven) {
  const std::vector<double> w(12, 3.0);
  EXPECT_EQ(split_by_weight(w, 4), split_evenly(12, 4));
  EXPECT_EQ(split_by_weight(std::vector<double>(5, 0.0), 2), split_evenly(5, 2));
  const std::vector<double> bad = {1.0, -1.0};
  EXPECT_THROW(split_by_weight(bad, 2), InvalidInput);
  const std::vector<double> nan = {1.0, std::nan("")};
  EXPECT_THROW(split_by_weight(nan, 2), InvalidInput);
  EXPECT_THROW(split_by_weight(w, 0), InvalidInput);
}

TEST(DeviceSpec, ParsesListsAndRefusesMalformedOnes) {
  EXPECT_EQ(parse_device_spec("auto").kind, DeviceSpec::Kind::automatic);
  EXPECT_EQ(parse_device_spec("cpu").kind, DeviceSpec::Kind::cpu);
  EXPECT_EQ(parse_device_spec("cuda").kind, DeviceSpec::Kind::cuda_one_per_rank);
  EXPECT_EQ(parse_device_spec("cuda:all").kind, DeviceSpec::Kind::cuda_all);
  EXPECT_TRUE(parse_device_spec("cuda:all").is_list());
  const DeviceSpec one = parse_device_spec("cuda:3");
  EXPECT_EQ(one.ordinals, std::vector<int>{3});
  EXPECT_FALSE(one.is_list());
  const DeviceSpec list = parse_device_spec("cuda:0,2,3,0");
  EXPECT_EQ(list.ordinals, (std::vector<int>{0, 2, 3, 0}));
  EXPECT_TRUE(list.is_list());
  for (const char* bad : {"gpu", "cuda:", "cuda:0,", "cuda:,1", "cuda:0,,1", "cuda:-1", "cuda:x",
                          "cuda:1x", "cuda:65536", "cuda:all,0", "CPU", "cuda: 0"}) {
    EXPECT_THROW(parse_device_spec(bad), InvalidInput) << bad;
  }
}

TEST(DeviceSpec, RanksOfAHostShareTheListedDevices) {
  const std::vector<int> four = {0, 1, 2, 3};
  EXPECT_EQ(local_share(four, 0, 1), four);
  EXPECT_EQ(local_share(four, 0, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(local_share(four, 1, 2), (std::vector<int>{2, 3}));
  EXPECT_EQ(local_share(four, 2, 4), std::vector<int>{2});
  // Three ranks, four GPUs: every GPU goes to some rank, none to two.
  std::vector<int> seen;
  for (int r = 0; r < 3; ++r) {
    for (const int d : local_share(four, r, 3)) seen.push_back(d);
  }
  EXPECT_EQ(seen, four);
  // More ranks than GPUs: they share, round robin.
  const std::vector<int> two = {5, 7};
  EXPECT_EQ(local_share(two, 0, 3), std::vector<int>{5});
  EXPECT_EQ(local_share(two, 1, 3), std::vector<int>{7});
  EXPECT_EQ(local_share(two, 2, 3), std::vector<int>{5});
  EXPECT_THROW(local_share(two, 3, 3), InvalidInput);
  EXPECT_THROW(local_share({}, 0, 1), InvalidInput);
}

TEST(SelectWorkers, CpuAndWhatAMachineWithoutAGpuSays) {
  const Workers cpu = select_workers("cpu", 3);
  ASSERT_EQ(cpu.contexts.size(), 1u);
  EXPECT_EQ(cpu.contexts[0].backend, Backend::cpu);
  EXPECT_EQ(cpu.contexts[0].cpu_threads, 3);
  EXPECT_TRUE(cpu.any_cpu());
  EXPECT_FALSE(cpu.any_cuda());
  EXPECT_THROW(select_workers("cpu", -1), InvalidInput);
  const int gpus = cuda_device_count();
  if (gpus > 0) {
    const Workers all = select_workers("cuda:all", 0);
    EXPECT_EQ(static_cast<int>(all.contexts.size()), gpus);
    const Workers twice = select_workers("cuda:0,0", 0);
    ASSERT_EQ(twice.contexts.size(), 2u);
    EXPECT_EQ(twice.contexts[1].cuda_device, 0);
    try {
      select_workers(fmt::format("cuda:0,{}", gpus), 0);
      ADD_FAILURE() << "a GPU past the last one was accepted";
    } catch (const DeviceUnavailable& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("cuda:{} does not exist", gpus)),
                std::string::npos)
          << e.what();
    }
    return;
  }
  // Without a GPU: auto falls back with a notice, any cuda spelling is unavailable.
  const Workers automatic = select_workers("auto", 0);
  ASSERT_EQ(automatic.contexts.size(), 1u);
  EXPECT_EQ(automatic.contexts[0].backend, Backend::cpu);
  EXPECT_NE(automatic.notice.find("using the CPU"), std::string::npos) << automatic.notice;
  // The ranks of a host without GPUs fall back alike.
  EXPECT_EQ(select_workers("auto", 0, 1, 2).contexts[0].backend, Backend::cpu);
  for (const char* spec : {"cuda", "cuda:0", "cuda:all", "cuda:0,1", "cuda:0,0"}) {
    EXPECT_THROW(select_workers(spec, 0), DeviceUnavailable) << spec;
  }
}

// --threads 0 on a host of several ranks: the cores are shared out among them, as for the GPUs
// of a list, so that the ranks of a host (FFTW's MPI engine, a CPU rank of mc) do not
// oversubscribe it; a rank alone keeps every core, a --threads N is each worker's.
TEST(SelectWorkers, TheRanksOfAHostShareItsCores) {
  const int cores = Context::cpu().effective_cpu_threads();
  EXPECT_EQ(select_workers("cpu", 0).contexts[0].cpu_threads, 0);
  for (const int ranks : {2, 3}) {
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(select_workers("cpu", 0, r, ranks).contexts[0].cpu_threads,
                std::max(1, cores / ranks))
          << "local rank " << r << " of " << ranks;
      EXPECT_EQ(select_workers("cpu", 5, r, ranks).contexts[0].cpu_threads, 5);
    }
  }
  if (cuda_device_count() > 0) {
    // Four entries over two ranks: two workers a rank, four on the host.
    const Workers two = select_workers("cuda:0,0,0,0", 0, 0, 2);
    ASSERT_EQ(two.contexts.size(), 2u);
    for (const Context& c : two.contexts) EXPECT_EQ(c.cpu_threads, std::max(1, cores / 4));
    // Two entries over two ranks: one worker a rank, two on the host.
    const Workers one = select_workers("cuda:0,0", 0, 1, 2);
    ASSERT_EQ(one.contexts.size(), 1u);
    EXPECT_EQ(one.contexts[0].cpu_threads, std::max(1, cores / 2));
  }
}

// run_workers(workers, ...) where worker 1 and worker `last` fail: worker 1's error comes back
// after every worker has ended. Returns how many workers ran to their end.
template <class Workers>
int first_failure_in_worker_order(const Workers& workers, int last) {
  std::atomic<int> finished = 0;
  try {
    run_workers(workers, [&](int w, const ReportProgress&) {
      if (w == last) throw IoError("the last worker");
      if (w == 1) throw OutOfMemory("worker 1", 42);
      ++finished;
    });
    ADD_FAILURE() << "no failure came back";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.bytes_requested(), 42u);
  }
  return finished.load();
}

TEST(RunWorkers, EveryWorkerRunsOnceAndProgressEndsAtOne) {
  for (const int workers : {1, 2, 5}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(workers));
    std::vector<double> reported;
    run_workers(
        workers,
        [&](int w, const ReportProgress& report) {
          report(0.5);
          ++runs[static_cast<std::size_t>(w)];
          report(1.0);
        },
        [&](double f) { reported.push_back(f); });
    for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
    ASSERT_FALSE(reported.empty());
    EXPECT_EQ(reported.back(), 1.0);
    for (const double f : reported) {
      EXPECT_GE(f, 0.0);
      EXPECT_LE(f, 1.0);
    }
  }
  EXPECT_THROW(run_workers(0, [](int, const ReportProgress&) {}), InvalidInput);
}

TEST(RunWorkers, TheFirstFailureInWorkerOrderIsRethrownAfterAllEnd) {
  EXPECT_EQ(first_failure_in_worker_order(4, 3), 2);  // workers 0 and 2 ran to their end
}

// The workers of a job's devices run on lanes (core/worker_lanes.hpp): kept from one call to
// the next, side by side, failures and progress as run_workers(int) reports them.
class RunWorkersOnLanes : public ::testing::Test {
 protected:
  // Three workers of three lanes: two CPU workers and one of "GPU 0" (the work here makes no
  // CUDA call, so a machine without a GPU runs it too).
  const std::vector<Context> contexts = {Context::cpu(1), Context::cpu(1), Context::cuda(0, 1)};
};

TEST_F(RunWorkersOnLanes, EachDeviceKeepsItsThreadAndTheWorkersRunSideBySide) {
  std::vector<std::thread::id> first(contexts.size()), second(contexts.size());
  for (std::vector<std::thread::id>* seen : {&first, &second}) {
    // Each worker waits until all have started: workers that took turns would wait forever,
    // which the timeout turns into a failure.
    std::atomic<int> started = 0;
    std::vector<double> reported;
    run_workers(
        contexts,
        [&](int w, const ReportProgress& report) {
          (*seen)[static_cast<std::size_t>(w)] = std::this_thread::get_id();
          ++started;
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (started.load() < static_cast<int>(contexts.size()) &&
                 std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
          }
          EXPECT_EQ(started.load(), static_cast<int>(contexts.size())) << "worker " << w;
          report(0.5);
        },
        [&](double f) { reported.push_back(f); });
    ASSERT_FALSE(reported.empty());
    EXPECT_EQ(reported.back(), 1.0);
  }
  // The same thread for each device, call after call; one each, none the caller's.
  EXPECT_EQ(first, second);
  for (std::size_t w = 0; w < first.size(); ++w) {
    EXPECT_NE(first[w], std::this_thread::get_id());
    for (std::size_t v = 0; v < w; ++v) EXPECT_NE(first[w], first[v]);
  }
  // One context: the caller's thread.
  std::thread::id one;
  run_workers(std::span<const Context>(contexts).first(1),
              [&](int, const ReportProgress&) { one = std::this_thread::get_id(); });
  EXPECT_EQ(one, std::this_thread::get_id());
  EXPECT_THROW(run_workers(std::span<const Context>{}, [](int, const ReportProgress&) {}),
               InvalidInput);
}

TEST_F(RunWorkersOnLanes, TheFirstFailureInWorkerOrderComesBackAndTheLanesGoOn) {
  EXPECT_EQ(first_failure_in_worker_order(contexts, 2), 1);  // worker 0 ran to its end
  // The next call runs every worker.
  std::atomic<int> ran = 0;
  run_workers(contexts, [&](int, const ReportProgress&) { ++ran; });
  EXPECT_EQ(ran.load(), 3);
}

TEST_F(RunWorkersOnLanes, ConcurrentCallersEachGetTheirOwnResults) {
  constexpr int kCalls = 25;
  std::atomic<int> wrong = 0;
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int> out(contexts.size(), -1);
        run_workers(contexts, [&](int w, const ReportProgress&) {
          out[static_cast<std::size_t>(w)] = 1000 * c + 10 * call + w;
        });
        for (std::size_t w = 0; w < out.size(); ++w) {
          if (out[w] != 1000 * c + 10 * call + static_cast<int>(w)) ++wrong;
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(RunWorkersOnLanes, AWorkerThatSpreadsWorkAgainDoesNotWaitForItself) {
  std::atomic<int> inner = 0;
  run_workers(contexts, [&](int, const ReportProgress&) {
    run_workers(contexts, [&](int, const ReportProgress&) { ++inner; });
  });
  EXPECT_EQ(inner.load(), 9);
}

TEST(JobOfOne, CollectivesAreCopiesAndFailuresPassUnchanged) {
  Communicator one;
  EXPECT_EQ(one.rank(), 0);
  EXPECT_EQ(one.size(), 1);
  EXPECT_FALSE(one.distributed());
  const std::vector<std::byte> bytes = {std::byte{1}, std::byte{2}, std::byte{3}};
  EXPECT_EQ(one.gather(bytes), bytes);
  std::vector<std::byte> copy = bytes;
  one.broadcast(copy);
  EXPECT_EQ(copy, bytes);
  const std::vector<std::int64_t> sizes = {3};
  EXPECT_EQ(one.scatter(bytes, sizes), bytes);
  const std::vector<std::int64_t> wrong = {2};
  EXPECT_THROW(one.scatter(bytes, wrong), InvalidInput);
  EXPECT_EQ(one.all_gather(7), std::vector<std::int64_t>{7});
  EXPECT_EQ(agree(one, [] { return 5; }), 5);
  // In a job of one, an error keeps its own type and message.
  EXPECT_THROW(agree(one, [] { throw OutOfMemory("here", 8); }), OutOfMemory);
  EXPECT_THROW(agree(one, [] { throw std::logic_error("x"); }), std::logic_error);
}

TEST(Plan, WorkersOfOneProcessTakeConsecutiveRangesInOrder) {
  Communicator one;
  const std::vector<double> w = {1, 1, 1, 1, 4, 1, 1, 1, 1};
  const WorkPlan plan = plan_work(one, 3, w);
  EXPECT_EQ(plan.blocks, 9);
  ASSERT_EQ(plan.rank_ranges.size(), 1u);
  EXPECT_EQ(plan.rank_ranges[0], (BlockRange{0, 9}));
  EXPECT_EQ(plan.local_ranges, split_by_weight(w, 3));
  EXPECT_EQ(plan_work(one, 2, std::int64_t{5}).local_ranges, split_evenly(5, 2));
  EXPECT_THROW(plan_work(one, 0, std::int64_t{5}), InvalidInput);
}

TEST(ComputeBlocks, OutputsComeBackInBlockOrderWhateverTheWorkers) {
  Communicator one;
  for (const int workers : {1, 2, 3, 7}) {
    const std::vector<Context> contexts(static_cast<std::size_t>(workers), Context::cpu(1));
    const WorkPlan plan = plan_work(one, workers, std::int64_t{20});
    // Two values a block: 10 b and 10 b + 1.
    const std::vector<std::int64_t> out = compute_blocks<std::int64_t>(
        one, contexts, plan, 2, [](const Context&, BlockRange range, const ReportProgress&) {
          std::vector<std::int64_t> v;
          for (std::int64_t b = range.first; b < range.end(); ++b) {
            v.push_back(10 * b);
            v.push_back(10 * b + 1);
          }
          return v;
        });
    ASSERT_EQ(out.size(), 40u);
    for (std::int64_t b = 0; b < 20; ++b) {
      EXPECT_EQ(out[static_cast<std::size_t>(2 * b)], 10 * b);
      EXPECT_EQ(out[static_cast<std::size_t>(2 * b + 1)], 10 * b + 1);
    }
    // A worker that returns the wrong count is caught.
    EXPECT_THROW(
        compute_blocks<std::int64_t>(one, contexts, plan, 2,
                                     [](const Context&, BlockRange, const ReportProgress&) {
                                       return std::vector<std::int64_t>(1);
                                     }),
        InvalidInput);
  }
}

TEST(Bytes, RoundTripAndRefuseAPartialValue) {
  const std::vector<double> v = {1.5, -0.0, 3e300};
  const std::span<const std::byte> b = as_bytes(v);
  EXPECT_EQ(from_bytes<double>(b), v);
  EXPECT_THROW(from_bytes<double>(b.first(5)), InvalidInput);
}

}  // namespace
}  // namespace gpukit::distributed
