#pragma once
// Internal: the launcher of the CUDA implied volatility kernel (implied_volatility_kernels.cu), in
// plain C++ so the dispatch compiles without nvcc.

#include "gpukit/finance/implied_volatility.hpp"

namespace gpukit::finance::cuda_detail {

/// Enqueues the kernel on `stream` for `in` / `out` in device memory (count > 0), one thread a
/// row, under `model`.
template <class Real>
void launch_implied_volatility(const ImpliedVolatilityInputs<Real>& in,
                               const ImpliedVolatilityOutputs<Real>& out, VolatilityModel model,
                               StreamHandle stream);

}  // namespace gpukit::finance::cuda_detail
