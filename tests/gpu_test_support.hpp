#pragma once
// Shared by the *_gpu tests: skip (reported as skipped by ctest) when no CUDA device is usable.

#include <gtest/gtest.h>

#include "gpukit/core/device.hpp"

#define GPUKIT_REQUIRE_GPU()                                                     \
  do {                                                                           \
    if (::gpukit::cuda_device_count() == 0)                                      \
      GTEST_SKIP() << "no CUDA device: " << ::gpukit::cuda_unavailable_reason(); \
  } while (0)
