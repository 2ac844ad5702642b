#include "bench/reduce_demo.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpukit/core/verify.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"

namespace gpukit::bench {

double canonical_sum_depth(std::int64_t count) {
  // Each level of the fixed tree (reduce_canonical.hpp) puts a term through kRows sequential
  // additions in its lane and log2(kLanes) = 10 in the pairwise tree over the lanes.
  int levels = 1;
  for (std::int64_t n = primitives::canonical::kTile; n < count; n *= primitives::canonical::kTile)
    ++levels;
  return levels * (primitives::canonical::kRows + 10.0);
}

FloatSumCheck check_float_sum(std::span<const float> data, float sum) {
  FloatSumCheck c;
  // The reference: one sequential loop in long double, a different order and precision from
  // the tree under test.
  long double exact = 0, abs_sum = 0;
  for (const float x : data) {
    exact += x;
    abs_sum += std::fabs(x);
  }
  c.reference = static_cast<double>(exact);
  c.difference = std::fabs(static_cast<double>(sum) - c.reference);
  // The float tree's bound, plus the long double loop's own (n roundings in long double).
  c.bound = summation_error_bound<float>(canonical_sum_depth(std::ssize(data)),
                                         static_cast<double>(abs_sum)) +
            summation_error_bound<long double>(static_cast<double>(data.size()),
                                               static_cast<double>(abs_sum));
  c.passed = c.difference <= c.bound;  // false for a NaN
  return c;
}

bool ReduceDemo::passed() const {
  return int_sum == int_reference && float_check.passed && (!on_gpu || float_bits_equal_cpu);
}

ReduceDemo run_reduce_demo(const Context& context, std::int64_t count, std::uint64_t seed) {
  using primitives::ReduceOp;
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> ints(static_cast<std::size_t>(count));
  std::vector<float> floats(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < ints.size(); ++i) {
    const std::uint64_t r = rng();
    ints[i] = static_cast<std::int32_t>(r);
    floats[i] = static_cast<float>(static_cast<double>(r >> 11) * 0x1p-53 * 2.0 - 1.0);
  }
  ReduceDemo demo;
  demo.count = count;
  demo.on_gpu = context.backend != Backend::cpu;
  const auto t0 = std::chrono::steady_clock::now();
  demo.int_sum = primitives::reduce<std::int32_t>(context, ints, ReduceOp::sum);
  demo.device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  demo.int_reference = primitives::reduce_sequential<std::int32_t>(ints, ReduceOp::sum);
  demo.float_sum = primitives::reduce<float>(context, floats, ReduceOp::sum);
  demo.float_check = check_float_sum(floats, demo.float_sum);
  if (demo.on_gpu) {
    // The GPU must also give the CPU backend's bits (the same fixed tree): a property of its
    // own, checked on top of the reference above.
    const float on_cpu =
        primitives::reduce<float>(Context::cpu(context.cpu_threads), floats, ReduceOp::sum);
    demo.float_bits_equal_cpu = std::memcmp(&demo.float_sum, &on_cpu, sizeof(float)) == 0;
  }
  return demo;
}

}  // namespace gpukit::bench
