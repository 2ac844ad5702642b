#pragma once
// Internal: the CPU backend of reduce (reduce_kernels.cpp), parallel to cuda/reduce_launchers.hpp:
// the canonical tiles (gpukit/primitives/reduce_canonical.hpp) on OpenMP threads.

#include <span>

#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives::cpu_detail {

/// Reduces `data` (host memory) on `threads` OpenMP threads; InvalidInput where an integer sum
/// overflows. The arguments are checked by the caller.
template <class T>
reduce_result_t<T> reduce_on_cpu(int threads, std::span<const T> data, ReduceOp op,
                                 const ReduceOptions& options);

}  // namespace gpukit::primitives::cpu_detail
