#pragma once
// Internal: the store every GEMM kernel of ours ends with, C = alpha * acc + beta * C for one
// thread's pair of adjacent columns, inside C only (beta = 0 never reads C, so NaN or garbage in
// an output buffer does not reach the result, as BLAS requires).

#include <cuda_runtime.h>

#include <cstdint>

namespace gpukit::blas::cuda_detail {

/// Where a kernel writes C (row-major M x N, leading dimension ldc) and how it scales.
struct GemmOutput {
  float* c;
  std::int64_t ldc;
  std::int64_t m, n;
  float alpha, beta;
  bool pairs_aligned;  // C's even columns start 8-byte aligned: a pair is one float2 store

  static GemmOutput make(void* c, std::int64_t ldc, std::int64_t m, std::int64_t n, double alpha,
                         double beta) {
    return {static_cast<float*>(c),
            ldc,
            m,
            n,
            static_cast<float>(alpha),
            static_cast<float>(beta),
            ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % 8 == 0};
  }
};

/// C(row, column) and C(row, column + 1) from the accumulators v0 and v1 (column even).
__device__ __forceinline__ void store_pair(const GemmOutput& out, std::int64_t row,
                                           std::int64_t column, float v0, float v1) {
  if (row >= out.m || column >= out.n) return;
  float* c = out.c + row * out.ldc + column;
  const bool both = column + 1 < out.n;
  if (out.beta == 0.0f) {
    v0 *= out.alpha, v1 *= out.alpha;
  } else {
    v0 = out.alpha * v0 + out.beta * c[0];
    if (both) v1 = out.alpha * v1 + out.beta * c[1];
  }
  if (both && out.pairs_aligned) {
    *reinterpret_cast<float2*>(c) = make_float2(v0, v1);
  } else {
    c[0] = v0;
    if (both) c[1] = v1;
  }
}

}  // namespace gpukit::blas::cuda_detail
