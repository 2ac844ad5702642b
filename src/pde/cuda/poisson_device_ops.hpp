#pragma once
// Internal: the device work around a variant's solve (poisson_device_ops.cu): the sums of the
// mean rule, the corner gauge, the device's free memory. Plain C++.

#include <cstddef>
#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::pde::cuda_detail {

/// Doubles of device scratch device_sums needs.
inline constexpr std::size_t kSumScratchDoubles = 2 * 512 + 2;

/// sum(f) and sum(|f|) in double over n device elements, deterministic (a fixed grid of 512
/// blocks, compensated per thread, fixed trees); waits for `stream` to read them.
template <class Real>
void device_sums(const Real* f, std::int64_t n, double* scratch, StreamHandle stream, double& sum,
                 double& sum_abs);

/// u -= u[0] over n elements (the corner gauge); `scratch` holds one Real.
template <class Real>
void subtract_corner(Real* u, std::int64_t n, Real* scratch, StreamHandle stream);

/// Free bytes of the current device (cudaMemGetInfo).
std::size_t device_free_bytes();

}  // namespace gpukit::pde::cuda_detail
