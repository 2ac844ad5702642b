// The K-major operand copies of the tensor-core GEMM kernels (gemm_tensor_operands.hpp): a plain
// converting copy where the source is K-major already, and a transpose through shared memory
// where it is stored the other way, so that both the reads and the writes are coalesced.

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

// Four converted values to out + offset (16-byte aligned for float, 8 for bf16).
__device__ __forceinline__ void store4(float* out, std::int64_t offset, float4 v) {
  *reinterpret_cast<float4*>(out + offset) = v;
}
__device__ __forceinline__ void store4(__nv_bfloat16* out, std::int64_t offset, float4 v) {
  const __nv_bfloat162 low = __floats2bfloat162_rn(v.x, v.y),
                       high = __floats2bfloat162_rn(v.z, v.w);
  uint2 bits;
  bits.x = *reinterpret_cast<const unsigned*>(&low);
  bits.y = *reinterpret_cast<const unsigned*>(&high);
  *reinterpret_cast<uint2*>(out + offset) = bits;
}

// op(X) stored K-major already (x[r * ld + q]): out[r * k_padded + q] = convert(x[r * ld + q]) for
// q < k, 0 for k <= q < k_padded; a 32 x 8 block a 32 x 32 tile, consecutive threads along q.
template <class Out>
__global__ void copy_k_major_kernel(const float* x, std::int64_t ld, std::int64_t rows,
                                    std::int64_t k, std::int64_t k_padded, Out* out) {
  constexpr int kTile = 32, kTileRows = 8;
  const std::int64_t tiles_q = (k_padded + kTile - 1) / kTile;
  const std::int64_t tiles = (rows + kTile - 1) / kTile * tiles_q;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t r0 = t / tiles_q * kTile, q0 = t % tiles_q * kTile;
    for (int i = threadIdx.y; i < kTile; i += kTileRows) {
      const std::int64_t r = r0 + i, q = q0 + threadIdx.x;
      if (r < rows && q < k_padded) {
        out[r * k_padded + q] = convert(q < k ? x[r * ld + q] : 0.0f, static_cast<Out*>(nullptr));
      }
    }
  }
}

// op(X) stored transposed (x[q * ld + r], rows contiguous): out[r * k_padded + q] as above,
// through a 32 (q) x 64 (r) tile in shared memory so that both sides move 16-byte vectors:
// 256 threads read two float4s of rows of X each (16 a row of the tile), then write two float4s
// of rows of the copy (8 a row). The tile's rows are 65 floats: a warp's column reads
// tile[4 i + e][r] (i = lane % 8, r = lane / 8) then fall in 32 distinct banks.
template <class Out>
__global__ void __launch_bounds__(256)
    transpose_k_major_kernel(const float* x, std::int64_t ld, bool vectors, std::int64_t rows,
                             std::int64_t k, std::int64_t k_padded, Out* out) {
  constexpr int kTileQ = 32, kTileR = 64;
  __shared__ float tile[kTileQ][kTileR + 1];
  const std::int64_t tiles_q = (k_padded + kTileQ - 1) / kTileQ;
  const std::int64_t tiles = (rows + kTileR - 1) / kTileR * tiles_q;
  const int read_r = threadIdx.x % 16 * 4, read_q = threadIdx.x / 16;  // + 16 j
  const int write_q = threadIdx.x % 8 * 4, write_r = threadIdx.x / 8;  // + 32 j
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t r0 = t / tiles_q * kTileR, q0 = t % tiles_q * kTileQ;
    float4 v[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const std::int64_t q = q0 + read_q + 16 * j, r = r0 + read_r;
      const float* p = x + q * ld + r;
      if (q >= k) {
        v[j] = make_float4(0, 0, 0, 0);
      } else if (vectors && r + 3 < rows) {
        v[j] = *reinterpret_cast<const float4*>(p);
      } else {
        v[j] = make_float4(r < rows ? p[0] : 0.0f, r + 1 < rows ? p[1] : 0.0f,
                           r + 2 < rows ? p[2] : 0.0f, r + 3 < rows ? p[3] : 0.0f);
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      float* row = &tile[read_q + 16 * j][read_r];
      row[0] = v[j].x, row[1] = v[j].y, row[2] = v[j].z, row[3] = v[j].w;
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int tile_r = write_r + 32 * j;
      const std::int64_t r = r0 + tile_r, q = q0 + write_q;
      // k_padded is a multiple of 4: a group of four is wholly inside or wholly past it.
      if (r < rows && q < k_padded) {
        store4(out, r * k_padded + q,
               make_float4(tile[write_q][tile_r], tile[write_q + 1][tile_r],
                           tile[write_q + 2][tile_r], tile[write_q + 3][tile_r]));
      }
    }
    __syncthreads();  // the next tile overwrites what slower warps still read
  }
}

template <class Out>
void pack(const float* x, bool transposed, std::int64_t ld, std::int64_t rows, std::int64_t k,
          std::int64_t k_padded, void* out, cudaStream_t stream) {
  auto grid_of = [](std::int64_t tiles) {
    return dim3(static_cast<unsigned>(std::clamp<std::int64_t>(tiles, 1, kMaxBlocks)));
  };
  if (transposed) {
    const std::int64_t tiles = (rows + 63) / 64 * ((k_padded + 31) / 32);
    const bool vectors = reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && ld % 4 == 0;
    transpose_k_major_kernel<Out><<<grid_of(tiles), 256, 0, stream>>>(
        x, ld, vectors, rows, k, k_padded, static_cast<Out*>(out));
    GPUKIT_CUDA_CHECK_LAUNCH("transpose_k_major_kernel");
  } else {
    const std::int64_t tiles = (rows + 31) / 32 * ((k_padded + 31) / 32);
    copy_k_major_kernel<Out><<<grid_of(tiles), dim3(32, 8), 0, stream>>>(x, ld, rows, k, k_padded,
                                                                         static_cast<Out*>(out));
    GPUKIT_CUDA_CHECK_LAUNCH("copy_k_major_kernel");
  }
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
