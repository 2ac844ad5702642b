#pragma once
// Internal: prices a host-memory book on a CUDA device through pinned double buffers.

#include "gpukit/finance/black_scholes.hpp"

namespace gpukit::finance {

template <class Real>
void price_black_scholes_through_device(const Context& context,
                                        const BlackScholesInputs<Real>& host_inputs,
                                        const BlackScholesOutputs<Real>& host_outputs,
                                        const BlackScholesOptions& options);

}  // namespace gpukit::finance
