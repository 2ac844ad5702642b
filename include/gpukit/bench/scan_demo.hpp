#pragma once
// The scan demo of `gpukit demo`: the seed's eight-element example, then the seed's homework size
// (16,777,216 floats) scanned on the chosen device, checked bitwise against the CPU backend, and
// a stream compaction checked against the sequential reference.

#include <cstdint>
#include <vector>

#include "gpukit/core/context.hpp"

namespace gpukit::bench {

struct ScanDemo {
  std::vector<std::int32_t> example, example_scan;  // seed 004's [3 1 7 0 4 1 6 3]
  std::int64_t count = 0;
  double device_ms = 0;           // the float scan, host data included (copies and all)
  bool float_bits_equal = false;  // device == CPU backend, every element
  double max_abs_vs_sequential = 0;
  std::int64_t kept = 0, kept_reference = 0;
  bool kept_equal = false;
  bool passed() const;
};

/// Runs the demo on `context` with `count` random floats (seeded by `seed`).
ScanDemo run_scan_demo(const Context& context, std::int64_t count, std::uint64_t seed);

}  // namespace gpukit::bench
