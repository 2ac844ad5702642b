// The thread rule (core/cpu_threads.hpp): work too small to pay for a parallel region gets one
// thread, large work the caller's count, work in between one thread per minimum share.

#include "gpukit/core/cpu_threads.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>

namespace gpukit {
namespace {

constexpr double kShare = kMinimumNanosecondsPerThread;

TEST(CpuThreadsFor, WorkTooSmallForARegionGetsOneThread) {
  EXPECT_EQ(cpu_threads_for({0, 30}, 8), 1);
  EXPECT_EQ(cpu_threads_for({1, 30}, 8), 1);  // one option
  EXPECT_EQ(cpu_threads_for({1, kShare}, 8), 1);
  // Just under two shares: a second thread would get less than its share.
  EXPECT_EQ(cpu_threads_for({1000, 2 * kShare / 1000 * 0.999}, 8), 1);
  EXPECT_EQ(cpu_threads_for({1000, 1}, 0), 1);
}

TEST(CpuThreadsFor, LargeWorkGetsTheCallersThreads) {
  EXPECT_EQ(cpu_threads_for({std::int64_t{1} << 24, 1}, 2), 2);
  EXPECT_EQ(cpu_threads_for({std::int64_t{1} << 40, 100}, 7), 7);
  EXPECT_EQ(cpu_threads_for({8, kShare}, 8), 8);  // exactly a share a thread
  // 0 (and a negative count) mean the OpenMP default, as Context::cpu_threads does.
  EXPECT_EQ(cpu_threads_for({std::int64_t{1} << 40, 1}, 0), omp_get_max_threads());
  EXPECT_EQ(cpu_threads_for({std::int64_t{1} << 40, 1}, -1), omp_get_max_threads());
}

TEST(CpuThreadsFor, WorkBetweenGetsOneThreadPerShare) {
  EXPECT_EQ(cpu_threads_for({2, kShare}, 8), 2);
  EXPECT_EQ(cpu_threads_for({7, kShare / 2}, 8), 3);  // 3.5 shares
  EXPECT_EQ(cpu_threads_for({5, kShare}, 4), 4);      // never more than asked
}

TEST(CpuThreadsFor, NeverMoreThreadsThanPieces) {
  // 4 tiles of a lot of work each: 4 threads of 8, not 8 with 4 idle.
  EXPECT_EQ(cpu_threads_for({1 << 20, kShare, 4}, 8), 4);
  EXPECT_EQ(cpu_threads_for({1 << 20, kShare, 1}, 8), 1);  // one block: no team
  EXPECT_EQ(cpu_threads_for({3, 10 * kShare}, 8), 3);      // items are the pieces by default
  EXPECT_EQ(cpu_threads_for({1 << 20, kShare, 0}, 8), 8);
}

TEST(CpuThreadsFor, MeaninglessWorkGetsOneThread) {
  EXPECT_EQ(cpu_threads_for({-5, kShare}, 8), 1);
  EXPECT_EQ(cpu_threads_for({10, std::numeric_limits<double>::quiet_NaN()}, 8), 1);
  EXPECT_EQ(cpu_threads_for({10, std::numeric_limits<double>::infinity()}, 8), 8);
}

}  // namespace
}  // namespace gpukit
