#pragma once
// Internal: the CPU backend of GemmPlan, on OpenBLAS's cblas_sgemm / cblas_dgemm.

#include "gpukit/blas/gemm.hpp"

namespace gpukit::blas::cpu_detail {

/// Whether OpenBLAS takes the problem: its sizes and leading dimensions are `blasint` (32-bit in
/// the Debian build), so each must fit that type.
GemmSupport openblas_can_implement(const GemmProblem& problem);

/// C = alpha op(A) op(B) + beta C for M, N, K >= 1 and alpha != 0 on `threads` OpenBLAS threads.
/// beta = 0: C is zeroed first, so that its old values are never read. tf32 and bf16: A and B
/// are rounded (round_to_tf32 / round_to_bf16) into packed copies first.
template <class T>
void gemm_openblas(const GemmProblem& problem, T alpha, const T* a, const T* b, T beta, T* c,
                   int threads);

}  // namespace gpukit::blas::cpu_detail
