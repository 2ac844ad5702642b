#pragma once
// The seed's MATLAB test of the spectral Poisson solver (000, slide 43, pois_FFT.m): on the unit
// square with N x N points, f = exp(-r^2 / (2 s^2)) (r^2 - 2 s^2) / s^4 with s = 0.1 and r the
// distance to the centre, whose periodic-to-rounding solution is exp(-r^2 / (2 s^2)); solved
// with the seed's corner gauge u(1,1) = 0. The seed's numbers at N = 64 (MATLAB, double):
// computed 0.975879, reference 0.975882, Linf 2.404194e-05, L2 9.412790e-08.

#include <string>

#include "gpukit/core/context.hpp"
#include "gpukit/pde/poisson.hpp"

namespace gpukit::bench {

struct PoissonDemo {
  int n = 0;
  std::string variant;   // "cpu-fftw" or the CUDA variant
  double computed = 0;   // u(N/2, N/2), MATLAB's 1-based indexing
  double reference = 0;  // exp(-r^2 / (2 s^2)) there
  double linf = 0;       // max |u - uex|
  double l2 = 0;         // norm(u - uex, 2) / (N * N), the seed's definition
  double removed_mean =
      0;                // f's mean (the discretized Gaussian's Laplacian is not quite mean-zero)
  double plan_ms = 0;   // creating the plan (FFT plans, buffers)
  double solve_ms = 0;  // one solve from host memory, copies included
  bool double_precision = true;
  /// u against pde::poisson_reference_solution (long double) within pde::poisson_agreement_bound.
  pde::PoissonCheck check;
  /// N = 64 in double: the seed's four printed values to their printed digits.
  bool reproduces_the_seed() const;
  /// The check above, and at N = 64 in double the seed's numbers too.
  bool passed() const;
};

/// Runs the seed's test on `context` in double (or float with `single_precision`); N >= 2.
PoissonDemo run_poisson_demo(const Context& context, int n, bool single_precision = false);

}  // namespace gpukit::bench
