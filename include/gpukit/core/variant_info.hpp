#pragma once
// What every case study's registry says about each of its variants, in one shape: what the variant
// is (name, description, the seed slide it reproduces, its role in the ladder), the memory traffic
// and arithmetic it does per element (from which `gpukit bench` derives GB/s, % of the copy limit
// and TFLOP/s, as nvbench's add_global_memory_reads/writes do), and the contracts a caller relies
// on (determinism, aliasing). A registry entry is a VariantInfo plus the variant's typed launchers,
// written with designated initializers.

#include <string_view>

namespace gpukit {

/// Where a variant stands in a case study's table.
enum class VariantRole {
  /// A rung of the ladder: one of the seeds' steps, or a step beyond them.
  step,
  /// The variant the library's API uses by default (the top of the ladder).
  best,
  /// The vendor library's implementation (CUB, cuRAND, cuFFT), the baseline row.
  vendor,
};

/// The global-memory traffic and arithmetic of one run, per element, counted in values of the
/// element type the variant is launched for: each input read once and each output written once
/// (the design's GB/s rule), so that bytes = count x values x sizeof(value), plus the bytes of any
/// column whose type is its own.
struct TrafficModel {
  /// Values read per input element.
  double reads_per_element = 1;
  /// Values written per output element (a scan: one per input; a compaction: one per kept
  /// element; a reduction: none counted, its one result is negligible).
  double writes_per_element = 0;
  /// Floating-point operations per input element; 0 where the variant is memory-bound and no
  /// TFLOP/s figure is meaningful.
  double flops_per_element = 0;
  /// Bytes read per input element besides the values above, the same for every element type (a
  /// Black-Scholes option's side: one byte).
  double extra_read_bytes_per_element = 0;
};

struct VariantInfo {
  std::string_view name = {};
  std::string_view description = {};
  /// The seed slide or method it reproduces, "beyond the seeds", or "vendor".
  std::string_view seed_reference = {};
  VariantRole role = VariantRole::step;
  TrafficModel traffic;
  /// Bitwise the same result at every launch shape and run, equal to the CPU backend's.
  bool deterministic = false;
  /// The output may be the input (an in-place run).
  bool in_place = false;

  constexpr bool vendor() const { return role == VariantRole::vendor; }
};

}  // namespace gpukit
