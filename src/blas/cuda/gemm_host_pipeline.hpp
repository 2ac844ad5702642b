#pragma once
// Internal: the host-data GEMM on a CUDA device (gemm() in gemm.hpp): A, B and (when it is read
// or has padding) C cross PCIe through the pinned staging buffers in chunks, the plan runs on
// device copies, and C comes back the same way.

#include <span>

#include "gpukit/blas/gemm.hpp"

namespace gpukit::blas::detail {

template <class T>
void gemm_through_device(const Context& context, GemmPlan& plan, T alpha, std::span<const T> a,
                         std::span<const T> b, T beta, std::span<T> c);

}  // namespace gpukit::blas::detail
