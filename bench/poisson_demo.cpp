#include "bench/poisson_demo.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/pde/poisson.hpp"

namespace gpukit::bench {

bool PoissonDemo::reproduces_the_seed() const {
  // The seed prints %10.6f and %10.6e: agreement to half a unit of the last printed digit.
  return n == 64 && double_precision && std::fabs(computed - 0.975879) <= 5e-7 &&
         std::fabs(reference - 0.975882) <= 5e-7 && std::fabs(linf - 2.404194e-05) <= 5e-12 &&
         std::fabs(l2 - 9.412790e-08) <= 5e-14;
}

bool PoissonDemo::passed() const {
  // Linf against the analytic solution measures the discretization (and the Gaussian's
  // periodic mismatch), not the solver, so it is no pass criterion except through the seed's
  // own numbers, which MATLAB printed in double at N = 64.
  if (n == 64 && double_precision && !reproduces_the_seed()) return false;
  return check.passed;
}

namespace {

template <class Real>
PoissonDemo run(const Context& context, int n) {
  if (n < 2) throw InvalidInput("poisson demo: N must be >= 2");
  constexpr double L = 1, sig = 0.1;
  const double h = L / n, sigsq = sig * sig;
  const auto N = static_cast<std::size_t>(n);
  std::vector<Real> f(N * N);
  std::vector<double> uex(N * N);
  // [X Y] = meshgrid(x, y): X varies along a row (second index), Y down a column.
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      const double X = double(j) * h, Y = double(i) * h;
      const double rsq = (X - 0.5 * L) * (X - 0.5 * L) + (Y - 0.5 * L) * (Y - 0.5 * L);
      f[i * N + j] =
          static_cast<Real>(std::exp(-rsq / (2 * sigsq)) * (rsq - 2 * sigsq) / (sigsq * sigsq));
      uex[i * N + j] = std::exp(-rsq / (2 * sigsq));
    }
  }
  pde::PoissonGrid grid{{n, n}, {L, L}};
  pde::PoissonOptions options;
  options.gauge = pde::Gauge::corner;  // the seed's u = u - u(1,1)
  PoissonDemo demo;
  demo.n = n;
  const auto t0 = std::chrono::steady_clock::now();
  pde::PoissonPlan<Real> plan(context, grid, options);
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());  // poisoned
  const pde::PoissonResult result = plan.solve(f, u);
  const auto t2 = std::chrono::steady_clock::now();
  demo.variant = std::string(plan.variant());
  demo.plan_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  demo.solve_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  demo.removed_mean = result.mean;
  demo.double_precision = sizeof(Real) == sizeof(double);
  demo.check =
      pde::check_poisson_solution<Real>(grid, f, u, options.gauge, context.effective_cpu_threads());
  double sq = 0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    const double d = double(u[k]) - uex[k];
    demo.linf = std::max(demo.linf, std::fabs(d));
    sq += d * d;
  }
  demo.l2 = std::sqrt(sq) / (double(n) * double(n));
  const std::size_t centre = (N / 2 - 1) * N + (N / 2 - 1);  // u(N/2, N/2), 1-based
  demo.computed = double(u[centre]);
  demo.reference = uex[centre];
  return demo;
}

}  // namespace

PoissonDemo run_poisson_demo(const Context& context, int n, bool single_precision) {
  return single_precision ? run<float>(context, n) : run<double>(context, n);
}

}  // namespace gpukit::bench
