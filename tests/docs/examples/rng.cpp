// tests/docs/examples/rng.cpp: the example of docs/library.md, built and run by ctest.
#include <cstdio>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/rng/generate.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  // Element offset + j of the Philox stream of seed 42: produce it in pieces, on any backend.
  std::vector<float> first(1000), second(1000);
  rng::generate_normal<float>(context, first, /*seed=*/42, /*offset=*/0);
  rng::generate_normal<float>(context, second, 42, 1000);  // continues the same stream
  std::vector<double> u(4);
  rng::generate_uniform<double>(context, u, 42);
  std::printf("%f %f %f\n", first[0], second[0], u[0]);
  // The two pieces are the stream generated in one call, bit for bit.
  std::vector<float> whole(2000);
  rng::generate_normal<float>(context, whole, 42);
  for (int j = 0; j < 1000; ++j)
    if (whole[j] != first[j] || whole[1000 + j] != second[j]) return 1;
  return u[0] > 0 && u[0] < 1 ? 0 : 1;
}
