#include "gpukit/bench/reduce_demo.hpp"

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "gpukit/primitives/reduce.hpp"

namespace gpukit::bench {

bool ReduceDemo::passed() const {
  return int_sum == int_reference && std::memcmp(&float_sum, &float_cpu, sizeof(float)) == 0;
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
  const auto t0 = std::chrono::steady_clock::now();
  demo.int_sum = primitives::reduce<std::int32_t>(context, ints, ReduceOp::sum);
  demo.device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  demo.int_reference = primitives::reduce_sequential<std::int32_t>(ints, ReduceOp::sum);
  demo.float_sum = primitives::reduce<float>(context, floats, ReduceOp::sum);
  demo.float_cpu =
      primitives::reduce<float>(Context::cpu(context.cpu_threads), floats, ReduceOp::sum);
  demo.float_reference = primitives::reduce_sequential<float>(floats, ReduceOp::sum);
  return demo;
}

}  // namespace gpukit::bench
