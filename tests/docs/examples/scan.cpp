// tests/docs/examples/scan.cpp: the example of docs/library.md, built and run by ctest.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/primitives/compact.hpp>
#include <gpukit/primitives/scan.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  std::vector<std::int32_t> x = {3, -1, 4, -1, 5, -9, 2, 6};
  std::vector<std::int32_t> y(x.size());
  // Exclusive sum: y[0] = 0, y[i] = x[0] + ... + x[i-1]. An int32 output that overflows throws.
  primitives::scan<std::int32_t>(context, x, y, primitives::ScanOp::sum,
                                 primitives::ScanKind::exclusive);
  // Stream compaction: the positive elements, in order; returns how many were kept.
  std::vector<std::int32_t> kept(x.size());
  const std::int64_t n =
      primitives::compact<std::int32_t>(context, x, kept, primitives::KeepPredicate::positive);
  std::printf("y[7] = %d, kept %lld, first %d\n", y[7], static_cast<long long>(n), kept[0]);
  return y[0] == 0 && y[7] == 3 && n == 5 && kept[4] == 6 ? 0 : 1;
}
