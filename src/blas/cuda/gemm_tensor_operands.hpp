#pragma once
// Internal: the operands of our tensor-core kernels (mma.sync and wgmma): A' (M x K) and B'
// (N x K) of the canonical problem, both K-major with a leading dimension that is a multiple of
// 16 bytes and 16-byte aligned rows, in the precision's element type (bf16, or float read as
// tf32).
//   - bf16: always copies into the plan's workspace, rounded to nearest even (__float2bfloat16_rn,
//     round_to_bf16 on the CPU), transposed where op(X) is not K-major, rows padded with zeros to
//     a multiple of 8 elements;
//   - tf32: the float data itself where it is already K-major (A not transposed, B transposed)
//     with a leading dimension that is a multiple of 4; otherwise a transposed float copy in the
//     workspace. The tensor cores then read each float's top 19 bits (tf32), which
//     gemm_error_bound allows for (truncation, v = 2^-10).

#include <cstddef>
#include <cstdint>

#include "gpukit/blas/gemm_variants.hpp"

namespace gpukit::blas::cuda_detail {

struct KMajorOperands {
  const void* a = nullptr;  // M x K, row r at a + r * lda elements
  std::int64_t lda = 0;
  const void* b = nullptr;  // N x K, row r at b + r * ldb elements
  std::int64_t ldb = 0;
};

/// Workspace bytes prepare_k_major_operands needs for the canonical problem (m, n, k, transposes,
/// leading dimensions of the stored operands as GemmLaunch has them); 0 outside tf32 and bf16.
std::size_t k_major_workspace_bytes(GemmPrecision precision, std::int64_t m, std::int64_t n,
                                    std::int64_t k, bool transpose_a, bool transpose_b,
                                    std::int64_t lda, std::int64_t ldb);

/// Queues the copies the launch's operands need on launch.stream (into launch.workspace) and
/// returns where the kernels read them. InvalidInput when a float operand used in place is not
/// 16-byte aligned (device buffers from cudaMalloc always are).
KMajorOperands prepare_k_major_operands(const GemmLaunch& launch);

}  // namespace gpukit::blas::cuda_detail
