#pragma once
// Internal: the CPU backend of Black-Scholes (black_scholes_kernels.cpp), parallel to
// cuda/black_scholes_launchers.hpp: every option priced by price_option (black_scholes_math.hpp,
// the arithmetic the CUDA kernels share) on OpenMP threads.

#include "gpukit/finance/black_scholes.hpp"

namespace gpukit::finance::cpu_detail {

/// Prices `in` into `out` (host memory) on `threads` OpenMP threads. The CPU has no fast-math
/// variant: both Hull modes use the accurate functions.
template <class Real>
void price_on_cpu(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                  NormalCdf cdf, int threads);

}  // namespace gpukit::finance::cpu_detail
