#pragma once
// The scan demo of `gpukit demo`: the seed's eight-element example, then the seed's homework size
// (16,777,216 floats) scanned on the chosen device, checked against a long double running sum
// within the fixed bracketing's derived error bound (on a GPU, also bitwise against the CPU
// backend), and a stream compaction checked against the sequential reference.

#include <cstdint>
#include <span>
#include <vector>

#include "gpukit/core/context.hpp"

namespace gpukit::bench {

/// The most additions a term of inclusive output `index` passes through in the canonical scan.
double canonical_scan_depth(std::int64_t index);

/// An inclusive float sum scan checked against an independent reference: a sequential running
/// sum in long double, each output within summation_error_bound<float>(canonical_scan_depth(i),
/// sum of |x| up to i) plus the running sum's own.
struct FloatScanCheck {
  double max_abs = 0;             // max |y_i - reference_i|
  double worst_ratio = 0;         // max |y_i - reference_i| / bound_i (NaN if a NaN)
  std::int64_t worst_index = -1;  // where
  bool passed = false;
};
FloatScanCheck check_float_scan(std::span<const float> x, std::span<const float> inclusive);

struct ScanDemo {
  bool on_gpu = false;
  std::vector<std::int32_t> example, example_scan;  // seed 004's [3 1 7 0 4 1 6 3]
  std::int64_t count = 0;
  double device_ms = 0;  // the float scan, host data included (copies and all)
  FloatScanCheck float_check;
  bool float_bits_equal_cpu = false;  // GPU only: the CPU backend gives the same bits
  std::int64_t kept = 0, kept_reference = 0;
  bool kept_equal = false;
  bool passed() const;
};

/// Runs the demo on `context` with `count` random floats (seeded by `seed`).
ScanDemo run_scan_demo(const Context& context, std::int64_t count, std::uint64_t seed);

}  // namespace gpukit::bench
