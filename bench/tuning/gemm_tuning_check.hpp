#pragma once
// The GEMM tuning drivers' correctness gate: a configuration is timed only after its C has been
// checked.

#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <vector>

#include "gpukit/blas/gemm.hpp"
#include "tuning_common.hpp"

namespace gpukit::tuning {

/// Runs `run` once on `stream` over a device C (`d_c`, the problem's m x n floats) poisoned with
/// 0xFF bytes, then checks sampled elements against a long-double product of the host `a` and
/// `b` (alpha 1, beta 0): the worst error over its bound (gemm_error_bound), or infinity when an
/// element fails (a NaN or an unwritten element has no finite error).
template <class Run>
double worst_sampled_error(const blas::GemmProblem& problem, const std::vector<float>& a,
                           const std::vector<float>& b, float* d_c, cudaStream_t stream,
                           Run&& run) {
  std::vector<float> c(static_cast<std::size_t>(problem.m * problem.n));
  GPUKIT_TUNING_CHECK(cudaMemsetAsync(d_c, 0xFF, c.size() * sizeof(float), stream));
  run();
  GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
  GPUKIT_TUNING_CHECK(cudaMemcpy(c.data(), d_c, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const blas::GemmCheck check =
      blas::check_gemm_sampled<float>(problem, 1.0f, a, b, 0.0f, {}, c, 64);
  return check.passed() ? check.worst_error_over_bound : std::numeric_limits<double>::infinity();
}

}  // namespace gpukit::tuning
