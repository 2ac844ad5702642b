// tests/docs/examples/reduce.cpp: the example of docs/library.md, built and run by ctest.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/primitives/reduce.hpp>

int main() {
  using namespace gpukit;
  // "auto": the first usable GPU, else the CPU (where.notice says which, for stderr).
  const DeviceSelection where = select_device("auto");
  std::vector<std::int32_t> data(1 << 20, 3);
  // int32 sums come back as int64: exact, and the same on every backend.
  const std::int64_t sum =
      primitives::reduce<std::int32_t>(where.context, data, primitives::ReduceOp::sum);
  std::vector<float> x(1000, 0.1f);
  const float fsum = primitives::reduce<float>(where.context, x, primitives::ReduceOp::sum);
  std::printf("%lld %.9g on %s\n", static_cast<long long>(sum), fsum,
              where.context.describe().c_str());
  // 3 * 2^20 exactly; 1000 float 0.1f round to 100 on every backend (the same fixed tree).
  return sum == 3 * (1 << 20) && fsum == 100.0f ? 0 : 1;
}
