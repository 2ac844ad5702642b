#pragma once
// Internal: the launchers of the CUDA Black-Scholes ladder (black_scholes_kernels.cu), in plain
// C++ so the registry and dispatch compile without nvcc.

#include "gpukit/finance/black_scholes.hpp"

namespace gpukit::finance::cuda_detail {

#define GPUKIT_DECLARE_BS_LAUNCHER(name)                                              \
  template <class Real>                                                               \
  void name(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out, \
            NormalCdf cdf, StreamHandle stream);

GPUKIT_DECLARE_BS_LAUNCHER(launch_seed)
GPUKIT_DECLARE_BS_LAUNCHER(launch_sm_count_grid)
GPUKIT_DECLARE_BS_LAUNCHER(launch_vector_io)
GPUKIT_DECLARE_BS_LAUNCHER(launch_vector_io_ilp)
GPUKIT_DECLARE_BS_LAUNCHER(launch_streaming)
GPUKIT_DECLARE_BS_LAUNCHER(launch_exact_grid)
GPUKIT_DECLARE_BS_LAUNCHER(launch_lean_math)
GPUKIT_DECLARE_BS_LAUNCHER(launch_lean_exact_grid)
GPUKIT_DECLARE_BS_LAUNCHER(launch_lean_occupancy)

#undef GPUKIT_DECLARE_BS_LAUNCHER

}  // namespace gpukit::finance::cuda_detail
