// Sums and maximises host data through gpukit's public reduce on the CPU and checks both results
// against its own loop, and runs a DAXPY through gpukit::blas. Exit status 0 when all agree.
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "gpukit/blas/saxpy.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/primitives/reduce.hpp"

int main() {
  // Values in [-500, 499] in an irregular order; the length is no multiple of any tile size.
  std::vector<std::int32_t> data(1'000'003);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<std::int32_t>((i * 7919) % 1000) - 500;
  }
  std::int64_t expected_sum = 0;
  std::int32_t expected_max = data[0];
  for (const std::int32_t v : data) {
    expected_sum += v;
    expected_max = v > expected_max ? v : expected_max;
  }

  const gpukit::Context cpu = gpukit::Context::cpu();
  const std::span<const std::int32_t> view(data);
  const std::int64_t sum = gpukit::primitives::reduce(cpu, view, gpukit::primitives::ReduceOp::sum);
  const std::int64_t max = gpukit::primitives::reduce(cpu, view, gpukit::primitives::ReduceOp::max);
  std::printf("sum %lld (expected %lld), max %lld (expected %d)\n", static_cast<long long>(sum),
              static_cast<long long>(expected_sum), static_cast<long long>(max), expected_max);
  // y = 2 x + y: small integers, exact.
  const std::vector<double> x = {1, 2, 3};
  std::vector<double> y = {10, 20, 30};
  gpukit::blas::daxpy(cpu, 2.0, x, y);
  std::printf("daxpy %g %g %g (expected 12 24 36)\n", y[0], y[1], y[2]);
  return sum == expected_sum && max == expected_max && y == std::vector<double>{12, 24, 36} ? 0 : 1;
}
