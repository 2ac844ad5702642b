#pragma once
// Internal: the launchers of the CUDA Black-Scholes ladder (black_scholes_kernels.cu), in plain
// C++ so the registry and dispatch compile without nvcc.

#include "gpukit/finance/black_scholes_variants.hpp"

namespace gpukit::finance::cuda_detail {

template <class Real>
BlackScholesLaunch<Real> launch_seed;
template <class Real>
BlackScholesLaunch<Real> launch_sm_count_grid;
template <class Real>
BlackScholesLaunch<Real> launch_vector_io;
template <class Real>
BlackScholesLaunch<Real> launch_vector_io_ilp;
template <class Real>
BlackScholesLaunch<Real> launch_streaming;
template <class Real>
BlackScholesLaunch<Real> launch_exact_grid;
template <class Real>
BlackScholesLaunch<Real> launch_lean_math;
template <class Real>
BlackScholesLaunch<Real> launch_lean_exact_grid;
template <class Real>
BlackScholesLaunch<Real> launch_lean_occupancy;

}  // namespace gpukit::finance::cuda_detail
