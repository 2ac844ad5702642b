// Sums and maximises host data through gpukit's public reduce on the CPU and checks both results
// against its own loop, runs a DAXPY through gpukit::blas, and solves a Poisson problem through
// gpukit::scale_out on a job of this process alone (which links gpukit::distributed, MPI where
// the package was built with it, and FFTW). Exit status 0 when all agree.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <span>
#include <vector>

#include "gpukit/blas/saxpy.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/scale_out/job.hpp"
#include "gpukit/scale_out/poisson.hpp"

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
  // lap(u) = f on the unit square, 16 x 8 points: u = sin(2 pi x0), f = -(2 pi)^2 u; the spectral
  // solve is exact to rounding.
  const double k = 2 * std::numbers::pi;
  gpukit::pde::PoissonGrid grid;
  grid.shape = {16, 8};
  grid.lengths = {1.0, 1.0};
  std::vector<double> f(16 * 8), u(16 * 8);
  for (std::size_t i = 0; i < f.size(); ++i) {
    f[i] = -k * k * std::sin(k * static_cast<double>(i / 8) / 16);
  }
  const gpukit::scale_out::Job job = gpukit::scale_out::join_job("cpu", 1);
  gpukit::scale_out::solve_poisson<double>(job, grid, {}, f, u);
  double error = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    error = std::fmax(error, std::fabs(u[i] - std::sin(k * static_cast<double>(i / 8) / 16)));
  }
  std::printf("poisson on a job of %d rank: max error %.1e (expected below 1e-12)\n", job.ranks(),
              error);
  return sum == expected_sum && max == expected_max && y == std::vector<double>{12, 24, 36} &&
                 error < 1e-12
             ? 0
             : 1;
}
