#pragma once
// Shared by the *_gpu tests. Without a usable CUDA device a GPU test is skipped (reported as
// skipped by ctest), except where GPUKIT_REQUIRE_GPU=1 (the GPU machine, scripts/gpu-check.sh):
// there a skip is a failure, so that a broken driver cannot read as "skipped".

#include <gtest/gtest.h>

#include <cstdlib>

#include "gpukit/core/device.hpp"

namespace gpukit::testing {

/// Whether the environment asks every GPU test to run: GPUKIT_REQUIRE_GPU set, non-empty and
/// not "0". `value` is the variable's value (nullptr when unset).
inline bool gpu_required(const char* value) {
  return value != nullptr && value[0] != '\0' && !(value[0] == '0' && value[1] == '\0');
}
inline bool gpu_required() { return gpu_required(std::getenv("GPUKIT_REQUIRE_GPU")); }

/// What a GPU test does when it cannot run (no device, or a device that lacks a feature).
enum class GpuTestSkip { skip, fail };
inline GpuTestSkip gpu_test_skip(bool required) {
  return required ? GpuTestSkip::fail : GpuTestSkip::skip;
}

/// Set (GPUKIT_QUICK_TESTS=1) for runs under compute-sanitizer, which slows memory accesses a
/// hundredfold: tests then leave out their largest sizes.
inline bool quick_tests() {
  const char* value = std::getenv("GPUKIT_QUICK_TESTS");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

}  // namespace gpukit::testing

/// Leaves the current GPU test without running the rest: skipped, or failed where
/// GPUKIT_REQUIRE_GPU=1. `message` is streamed (`"needs " << n << " GB"`). Every GPU test's skip
/// goes through here.
#define GPUKIT_GPU_SKIP(message)                                                               \
  do {                                                                                         \
    if (::gpukit::testing::gpu_test_skip(::gpukit::testing::gpu_required()) ==                 \
        ::gpukit::testing::GpuTestSkip::fail) {                                                \
      GTEST_FAIL() << "GPUKIT_REQUIRE_GPU is set, so this GPU test may not skip: " << message; \
    } else {                                                                                   \
      GTEST_SKIP() << message;                                                                 \
    }                                                                                          \
  } while (0)

/// The same decision for a given device count (tests of the rule pass a count; GPU tests use
/// GPUKIT_REQUIRE_GPU()).
#define GPUKIT_REQUIRE_GPU_COUNT(count)                                                           \
  do {                                                                                            \
    if ((count) == 0) GPUKIT_GPU_SKIP("no CUDA device: " << ::gpukit::cuda_unavailable_reason()); \
  } while (0)

/// First line of every GPU test: without a usable CUDA device, skip (or fail, see above).
#define GPUKIT_REQUIRE_GPU() GPUKIT_REQUIRE_GPU_COUNT(::gpukit::cuda_device_count())
