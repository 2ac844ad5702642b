#pragma once
// Internal: the CPU backend of implied volatility (implied_volatility_kernels.cpp), parallel to
// cuda/implied_volatility_launchers.hpp: every row inverted by implied_volatility_of
// (implied_volatility_math.hpp, the arithmetic the CUDA kernel shares) on OpenMP threads.

#include "gpukit/finance/implied_volatility.hpp"

namespace gpukit::finance::cpu_detail {

/// Inverts `in` into `out` (host memory) under `model` on `threads` OpenMP threads.
template <class Real>
void implied_volatility_on_cpu(const ImpliedVolatilityInputs<Real>& in,
                               const ImpliedVolatilityOutputs<Real>& out, VolatilityModel model,
                               int threads);

}  // namespace gpukit::finance::cpu_detail
