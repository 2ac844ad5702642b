// tests/docs/examples/poisson.cpp: the example of docs/library.md, built and run by ctest.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include <gpukit/core/context.hpp>
#include <gpukit/pde/poisson.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  // lap(u) = f on the periodic unit square, 256 x 256 points, .npy (row-major) order.
  const pde::PoissonGrid grid{{256, 256}, {1.0, 1.0}};
  std::vector<double> f(grid.size()), u(grid.size());
  const double k = 2 * std::numbers::pi;
  for (std::int64_t i = 0; i < 256; ++i)
    for (std::int64_t j = 0; j < 256; ++j)  // f = lap(sin(kx) cos(ky))
      f[i * 256 + j] = -2 * k * k * std::sin(k * i / 256.0) * std::cos(k * j / 256.0);
  // A plan holds the FFT plans and buffers: make it once, solve many right-hand sides.
  pde::PoissonPlan<double> plan(context, grid);
  const pde::PoissonResult result = plan.solve(f, u);
  std::printf("variant %s, mean removed: %d, u[64*256] = %.12f (exact 1)\n",
              std::string(plan.variant()).c_str(), result.mean_removed, u[64 * 256]);
  double max_error = 0;  // against the exact solution u = sin(kx) cos(ky)
  for (std::int64_t i = 0; i < 256; ++i)
    for (std::int64_t j = 0; j < 256; ++j)
      max_error = std::max(
          max_error, std::abs(u[i * 256 + j] - std::sin(k * i / 256.0) * std::cos(k * j / 256.0)));
  return !result.mean_removed && max_error < 1e-9 ? 0 : 1;
}
