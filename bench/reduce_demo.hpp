#pragma once
// The reduction demo of `gpukit demo`: the seed's 2^22-int sum on the chosen device against the
// sequential reference, and a float sum against a long double sequential sum within the fixed
// tree's derived error bound (on a GPU, also bitwise against the CPU backend).

#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"

namespace gpukit::bench {

/// The most additions a term passes through in the fixed reduction tree for `count` elements
/// (26 a level: 16 sequential rows and 10 pairwise levels over 1024 lanes).
double canonical_sum_depth(std::int64_t count);

/// A float sum checked against an independent reference: a sequential loop in long double,
/// within summation_error_bound<float>(canonical_sum_depth(n), sum|x|) plus the loop's own.
struct FloatSumCheck {
  double reference = 0;   // the long double sum, rounded to double
  double difference = 0;  // |sum - reference|
  double bound = 0;
  bool passed = false;
};
FloatSumCheck check_float_sum(std::span<const float> data, float sum);

struct ReduceDemo {
  std::int64_t count = 0;
  bool on_gpu = false;
  std::int64_t int_sum = 0, int_reference = 0;
  float float_sum = 0;
  FloatSumCheck float_check;
  bool float_bits_equal_cpu = false;  // GPU only: the CPU backend gives the same bits
  double device_ms = 0;               // the int32 sum, host data included (copies and all)
  bool passed() const;
};

/// Runs the demo on `context` with `count` random elements (seeded by `seed`).
ReduceDemo run_reduce_demo(const Context& context, std::int64_t count, std::uint64_t seed);

}  // namespace gpukit::bench
