#pragma once
// Internal, for `gpukit bench monte_carlo` and its test: the vendor reference the Monte Carlo
// kernels are measured against. A plain kernel on cuRAND's device API (curandStatePhilox4_32_10_t,
// one curand_init per thread with subsequence = thread index, curand_normal4 compiled with fast
// math), per-thread sums of the payoff and its square, a block reduction and one double atomic per
// block. It prices one option, European or down-and-out, with none of gpukit's contract (its
// numbers depend on the launch shape, and its sums of squares are differenced): a speed reference
// only. Plain C++: the launcher hides the CUDA types.

#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::finance::mc {

struct CurandReferenceProblem {
  std::int64_t paths = 0;  // rounded down to a multiple of 4 (curand_normal4)
  std::uint64_t seed = 0;
  float drift_dt = 0, vol_sqrt_dt = 0;  // of ln(S / S0) per step
  float strike_over_spot = 1;           // a call, in units of the spot
  std::uint32_t steps = 1;
  bool down_and_out = false;  // monitored on the `steps` dates
  float log_barrier = 0;      // ln(B / S0)
};

/// Adds the sum and the sum of squares of the undiscounted payoffs (units of the spot) of
/// problem.paths paths to sums[0] and sums[1] (device memory, zeroed by the caller).
void launch_curand_reference(const CurandReferenceProblem& problem, double* sums,
                             StreamHandle stream);

/// Bytes of the two device sums.
inline constexpr std::size_t kCurandReferenceSumsBytes = 2 * sizeof(double);

}  // namespace gpukit::finance::mc
