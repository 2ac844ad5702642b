// The K-major operand copies of the tensor-core GEMM kernels (gemm_tensor_operands.hpp): one
// kernel over 32 x 32 tiles of the output, through shared memory where the source is stored
// transposed so that both the reads and the writes are coalesced.

#include "blas/cuda/gemm_tensor_operands.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

constexpr std::size_t kWorkspaceAlignment = 256;
constexpr int kTile = 32;     // output rows and K columns a block tile covers
constexpr int kTileRows = 8;  // threads along rows: a block is 32 x 8, four rows a thread
constexpr std::int64_t kMaxBlocks = 1 << 16;

struct Operand {
  bool copied = false;
  std::int64_t k_padded = 0;  // the copy's leading dimension
  std::size_t bytes = 0;
};

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

// One operand: rows x k of op(X) as the kernels read it; `k_major` when X stores it that way.
Operand plan_operand(GemmPrecision precision, std::int64_t rows, std::int64_t k, bool k_major,
                     std::int64_t ld) {
  Operand o;
  if (precision == GemmPrecision::bf16) {
    o.copied = true;
    o.k_padded = (k + 7) / 8 * 8;
    o.bytes = static_cast<std::size_t>(rows * o.k_padded) * 2;
  } else if (precision == GemmPrecision::tf32) {
    o.copied = !(k_major && ld % 4 == 0);
    o.k_padded = (k + 3) / 4 * 4;
    o.bytes = o.copied ? static_cast<std::size_t>(rows * o.k_padded) * 4 : 0;
  }
  return o;
}

__device__ __forceinline__ float convert(float x, float*) { return x; }
__device__ __forceinline__ __nv_bfloat16 convert(float x, __nv_bfloat16*) {
  return __float2bfloat16_rn(x);
}

// out[r * k_padded + q] = op(X)(r, q) converted for q < k, 0 for k <= q < k_padded, where
// op(X)(r, q) is x[r * ld + q], or x[q * ld + r] when kTransposed.
template <class Out, bool kTransposed>
__global__ void pack_k_major_kernel(const float* x, std::int64_t ld, std::int64_t rows,
                                    std::int64_t k, std::int64_t k_padded, Out* out) {
  __shared__ float tile[kTile][kTile + 1];  // (q, r): +1 keeps the column reads conflict-free
  const std::int64_t tiles_q = (k_padded + kTile - 1) / kTile;
  const std::int64_t tiles = (rows + kTile - 1) / kTile * tiles_q;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t r0 = t / tiles_q * kTile, q0 = t % tiles_q * kTile;
    if constexpr (kTransposed) {
      // Read rows q of X (contiguous in r), write rows r of the copy (contiguous in q).
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const std::int64_t q = q0 + i, r = r0 + threadIdx.x;
        tile[i][threadIdx.x] = q < k && r < rows ? x[q * ld + r] : 0.0f;
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const std::int64_t r = r0 + i, q = q0 + threadIdx.x;
        if (r < rows && q < k_padded) {
          out[r * k_padded + q] = convert(tile[threadIdx.x][i], static_cast<Out*>(nullptr));
        }
      }
      __syncthreads();
    } else {
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const std::int64_t r = r0 + i, q = q0 + threadIdx.x;
        if (r < rows && q < k_padded) {
          out[r * k_padded + q] = convert(q < k ? x[r * ld + q] : 0.0f, static_cast<Out*>(nullptr));
        }
      }
    }
  }
}

template <class Out>
void pack(const float* x, bool transposed, std::int64_t ld, std::int64_t rows, std::int64_t k,
          std::int64_t k_padded, void* out, cudaStream_t stream) {
  const std::int64_t tiles = (rows + kTile - 1) / kTile * ((k_padded + kTile - 1) / kTile);
  const dim3 grid(static_cast<unsigned>(std::clamp<std::int64_t>(tiles, 1, kMaxBlocks)));
  const dim3 block(kTile, kTileRows);
  if (transposed) {
    pack_k_major_kernel<Out, true>
        <<<grid, block, 0, stream>>>(x, ld, rows, k, k_padded, static_cast<Out*>(out));
  } else {
    pack_k_major_kernel<Out, false>
        <<<grid, block, 0, stream>>>(x, ld, rows, k, k_padded, static_cast<Out*>(out));
  }
  GPUKIT_CUDA_CHECK_LAUNCH("pack_k_major_kernel");
}

}  // namespace

std::size_t k_major_workspace_bytes(GemmPrecision precision, std::int64_t m, std::int64_t n,
                                    std::int64_t k, bool transpose_a, bool transpose_b,
                                    std::int64_t lda, std::int64_t ldb) {
  // op(A) is K-major when A is not transposed; op(B)^T (N x K) when B is.
  const Operand a = plan_operand(precision, m, k, !transpose_a, lda);
  const Operand b = plan_operand(precision, n, k, transpose_b, ldb);
  if (b.bytes == 0) return a.bytes;
  return round_up(a.bytes, kWorkspaceAlignment) + b.bytes;
}

KMajorOperands prepare_k_major_operands(const GemmLaunch& launch) {
  const Operand a =
      plan_operand(launch.precision, launch.m, launch.k, !launch.transpose_a, launch.lda);
  const Operand b =
      plan_operand(launch.precision, launch.n, launch.k, launch.transpose_b, launch.ldb);
  auto* workspace = static_cast<std::byte*>(launch.workspace);
  KMajorOperands operands{launch.a, launch.lda, launch.b, launch.ldb};
  const auto* a_data = static_cast<const float*>(launch.a);
  const auto* b_data = static_cast<const float*>(launch.b);
  std::byte* b_copy = workspace + (b.bytes == 0 ? 0 : round_up(a.bytes, kWorkspaceAlignment));
  const auto stream = static_cast<cudaStream_t>(launch.stream);
  if (launch.precision == GemmPrecision::bf16) {
    pack<__nv_bfloat16>(a_data, launch.transpose_a, launch.lda, launch.m, launch.k, a.k_padded,
                        workspace, stream);
    pack<__nv_bfloat16>(b_data, !launch.transpose_b, launch.ldb, launch.n, launch.k, b.k_padded,
                        b_copy, stream);
  } else {
    if (a.copied) {
      pack<float>(a_data, launch.transpose_a, launch.lda, launch.m, launch.k, a.k_padded, workspace,
                  stream);
    }
    if (b.copied) {
      pack<float>(b_data, !launch.transpose_b, launch.ldb, launch.n, launch.k, b.k_padded, b_copy,
                  stream);
    }
  }
  if (a.copied) operands.a = workspace, operands.lda = a.k_padded;
  if (b.copied) operands.b = b_copy, operands.ldb = b.k_padded;
  for (const auto& [name, pointer] : {std::pair{"A", operands.a}, std::pair{"B", operands.b}}) {
    if (reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) {
      throw InvalidInput(
          std::string("gemm: the tensor-core variants read a K-major float ") + name +
          " in place and need it 16-byte aligned (cudaMalloc's buffers are); this one starts " +
          std::to_string(reinterpret_cast<std::uintptr_t>(pointer) % 16) +
          " bytes past a 16-byte boundary");
    }
  }
  return operands;
}

}  // namespace gpukit::blas::cuda_detail
