#pragma once
// Shared by the *_gpu tests: skip (reported as skipped by ctest) when no CUDA device is usable.

#include <gtest/gtest.h>

#include "gpukit/core/device.hpp"

#define GPUKIT_REQUIRE_GPU()                                                     \
  do {                                                                           \
    if (::gpukit::cuda_device_count() == 0)                                      \
      GTEST_SKIP() << "no CUDA device: " << ::gpukit::cuda_unavailable_reason(); \
  } while (0)

#include <cstdlib>

namespace gpukit::testing {
/// Set (GPUKIT_QUICK_TESTS=1) for runs under compute-sanitizer, which slows memory accesses a
/// hundredfold: tests then leave out their largest sizes.
inline bool quick_tests() {
  const char* value = std::getenv("GPUKIT_QUICK_TESTS");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}
}  // namespace gpukit::testing
