#pragma once
// Internal: the device work around a variant's solve (poisson_device_ops.cu): the sums of the
// mean rule, the corner gauge, the device's free memory. Plain C++.

#include <cstddef>
#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::pde::cuda_detail {

/// An upper bound of the device bytes device_mean_sums may reserve in its workspace for n
/// elements (for the plan's memory check before anything is allocated).
std::size_t mean_sums_workspace_bytes(std::int64_t n);

/// The mean rule's sums of n device elements: MeanSumsOp over the canonical tree on the
/// deterministic reduce engine, so the bits of the CPU's host_mean_sums. Writes the result to
/// `device_result` (device memory), then waits for `stream` to read it back. The workspace grows
/// on first use (an allocation, which synchronizes the device).
template <class Real>
detail::MeanSums device_mean_sums(const Real* f, std::int64_t n,
                                  primitives::ReduceWorkspace& workspace,
                                  detail::MeanSums* device_result, StreamHandle stream);

/// u -= u[0] over n elements (the corner gauge); `scratch` holds one Real.
template <class Real>
void subtract_corner(Real* u, std::int64_t n, Real* scratch, StreamHandle stream);

/// Free bytes of the current device (cudaMemGetInfo).
std::size_t device_free_bytes();

}  // namespace gpukit::pde::cuda_detail
