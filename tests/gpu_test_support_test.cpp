// The rule every GPU test follows when it cannot run (tests/gpu_test_support.hpp): skipped on a
// machine without a GPU, failed where GPUKIT_REQUIRE_GPU=1 (the GPU machine), so that a broken
// driver there cannot pass as "skipped". Runs on the CPU machine, where no device is usable.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu_test_support.hpp"

namespace {

using gpukit::testing::gpu_required;
using gpukit::testing::gpu_test_skip;
using gpukit::testing::GpuTestSkip;

// Sets GPUKIT_REQUIRE_GPU for one scope and restores what was there.
class ScopedRequireGpu {
 public:
  explicit ScopedRequireGpu(const char* value) {
    if (const char* old = std::getenv("GPUKIT_REQUIRE_GPU")) saved_ = old, had_ = true;
    if (value) {
      setenv("GPUKIT_REQUIRE_GPU", value, 1);
    } else {
      unsetenv("GPUKIT_REQUIRE_GPU");
    }
  }
  ~ScopedRequireGpu() {
    if (had_) {
      setenv("GPUKIT_REQUIRE_GPU", saved_.c_str(), 1);
    } else {
      unsetenv("GPUKIT_REQUIRE_GPU");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(GpuTestSupport, TheVariableTurnsASkipIntoAFailure) {
  EXPECT_FALSE(gpu_required(nullptr));
  EXPECT_FALSE(gpu_required(""));
  EXPECT_FALSE(gpu_required("0"));
  EXPECT_TRUE(gpu_required("1"));
  EXPECT_TRUE(gpu_required("yes"));
  EXPECT_TRUE(gpu_required("01"));
  EXPECT_EQ(gpu_test_skip(false), GpuTestSkip::skip);
  EXPECT_EQ(gpu_test_skip(true), GpuTestSkip::fail);
}

// The macro the GPU tests start with, with no device and GPUKIT_REQUIRE_GPU=1: a fatal failure
// naming the variable, not a skip.
void no_device_while_required() {
  ScopedRequireGpu require("1");
  GPUKIT_REQUIRE_GPU_COUNT(0);
  ADD_FAILURE() << "the test went on without a device";
}

TEST(GpuTestSupport, NoDeviceFailsWhereAGpuIsRequired) {
  EXPECT_FATAL_FAILURE(no_device_while_required(), "GPUKIT_REQUIRE_GPU is set");
}

// A feature skip inside a GPU test (e.g. "needs sm_90") fails the same way.
void feature_missing_while_required() {
  ScopedRequireGpu require("1");
  GPUKIT_GPU_SKIP("the pipelined engine needs sm_" << 90);
}

TEST(GpuTestSupport, AFeatureSkipFailsWhereAGpuIsRequired) {
  EXPECT_FATAL_FAILURE(feature_missing_while_required(), "needs sm_90");
}

// With a device the macro lets the test go on, required or not.
TEST(GpuTestSupport, ADeviceLetsTheTestRun) {
  ScopedRequireGpu require("1");
  bool ran = false;
  [&] {
    GPUKIT_REQUIRE_GPU_COUNT(1);
    ran = true;
  }();
  EXPECT_TRUE(ran);
}

}  // namespace
