#pragma once
// The SAXPY demo of `gpukit demo`: the seed's end-to-end program (seed 003, "End-to-End Example:
// SAXPY"): x and y in ordinary host memory, copied to the device, the seed's kernel run in place,
// y copied back, each phase timed, and the share of the time the copies take printed; every
// element then checked against the exact reference. On the CPU, the same arithmetic through
// OpenBLAS, with no copies.

#include <cstdint>

#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/core/context.hpp"

namespace gpukit::bench {

struct SaxpyDemo {
  std::int64_t count = 0;
  float alpha = 0;
  bool on_gpu = false;
  double to_device_ms = 0;    // x and y, host to device (GPU only)
  double kernel_ms = 0;       // the seed's kernel (GPU), OpenBLAS (CPU)
  double from_device_ms = 0;  // y, device to host (GPU only)
  blas::AxpyCheck check;
  double total_ms() const { return to_device_ms + kernel_ms + from_device_ms; }
  /// The copies' share of the total time (0 on the CPU).
  double transfer_share() const {
    return total_ms() > 0 ? (to_device_ms + from_device_ms) / total_ms() : 0;
  }
  bool passed() const { return check.passed(); }
};

/// Runs the demo on `context` with `count` random floats (seeded by `seed`).
SaxpyDemo run_saxpy_demo(const Context& context, std::int64_t count, std::uint64_t seed);

}  // namespace gpukit::bench
