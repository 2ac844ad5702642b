// The thread rule (core/cpu_threads.hpp): work too small to pay for a parallel region gets one
// thread, large work the caller's count, work in between one thread per minimum share.

#include "gpukit/core/cpu_threads.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

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

// Saves an environment variable and puts it back when the test ends.
class SavedVariable {
 public:
  explicit SavedVariable(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) value_ = v;
  }
  ~SavedVariable() {
    if (value_) {
      ::setenv(name_, value_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  SavedVariable(const SavedVariable&) = delete;
  SavedVariable& operator=(const SavedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> value_;
};

std::optional<std::string> as_read(const char* name) {
  const char* v = environment_value_with_gpukit_defaults(name);
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

TEST(EnvironmentWithGpukitDefaults, OpenmpWaitsPassivelyWhenTheUserChoseNothing) {
  const SavedVariable policy("OMP_WAIT_POLICY"), spin("GOMP_SPINCOUNT");
  ::unsetenv("OMP_WAIT_POLICY");
  ::unsetenv("GOMP_SPINCOUNT");
  EXPECT_EQ(as_read("OMP_WAIT_POLICY"), "passive");
  EXPECT_EQ(as_read("GOMP_SPINCOUNT"), std::nullopt);
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);  // the environment itself is not changed
}

TEST(EnvironmentWithGpukitDefaults, TheUsersChoiceStands) {
  const SavedVariable policy("OMP_WAIT_POLICY"), spin("GOMP_SPINCOUNT");
  ::unsetenv("GOMP_SPINCOUNT");
  ::setenv("OMP_WAIT_POLICY", "active", 1);
  EXPECT_EQ(as_read("OMP_WAIT_POLICY"), "active");
  ::setenv("OMP_WAIT_POLICY", "", 1);  // set, if to nothing libgomp takes: still the user's
  EXPECT_EQ(as_read("OMP_WAIT_POLICY"), "");
  // A spin count alone: no policy, so that libgomp keeps the user's count.
  ::unsetenv("OMP_WAIT_POLICY");
  ::setenv("GOMP_SPINCOUNT", "1000", 1);
  EXPECT_EQ(as_read("OMP_WAIT_POLICY"), std::nullopt);
  EXPECT_EQ(as_read("GOMP_SPINCOUNT"), "1000");
}

TEST(EnvironmentWithGpukitDefaults, OtherVariablesReadAsGetenvReadsThem) {
  const SavedVariable a("GPUKIT_TEST_VARIABLE"), b("GPUKIT_TEST_VARIABLE_LONGER");
  ::unsetenv("GPUKIT_TEST_VARIABLE");
  ::setenv("GPUKIT_TEST_VARIABLE_LONGER", "x", 1);  // a longer name is not a match
  EXPECT_EQ(as_read("GPUKIT_TEST_VARIABLE"), std::nullopt);
  ::setenv("GPUKIT_TEST_VARIABLE", "a=b", 1);
  EXPECT_EQ(as_read("GPUKIT_TEST_VARIABLE"), "a=b");
  EXPECT_EQ(as_read("GPUKIT_TEST_VARIABLE"), std::string(std::getenv("GPUKIT_TEST_VARIABLE")));
}

}  // namespace
}  // namespace gpukit
