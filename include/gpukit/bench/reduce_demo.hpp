#pragma once
// The reduction demo of `gpukit demo`: the seed's 2^22-int sum on the chosen device against the
// sequential reference, and a float sum whose bits the CPU backend must reproduce.

#include <cstdint>

#include "gpukit/core/context.hpp"

namespace gpukit::bench {

struct ReduceDemo {
  std::int64_t count = 0;
  std::int64_t int_sum = 0, int_reference = 0;
  float float_sum = 0, float_cpu = 0;
  double float_reference = 0;  // sequential, long double accumulation, rounded to double
  double device_ms = 0;        // the int32 sum, host data included (copies and all)
  bool passed() const;
};

/// Runs the demo on `context` with `count` random elements (seeded by `seed`).
ReduceDemo run_reduce_demo(const Context& context, std::int64_t count, std::uint64_t seed);

}  // namespace gpukit::bench
