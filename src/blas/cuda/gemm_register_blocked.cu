// The next SIMT step after the seed's shared-memory tiles: 2D register blocking with vectorised
// shared-memory reads (the step of siboehm's SGEMM worklog that takes fp32 from the tile
// kernel's ~15% of cuBLAS to over half of it). Each thread computes an 8 x 8 block of C from
// registers, so one shared-memory value feeds 8 multiply-adds instead of 1, and reads its 8
// values of A and of B as two float4 each: per k step a thread issues 4 shared loads for 64 FMAs
// where MatrixMult2 issues 2 for 1.
//
// Tiles: a block of 256 threads computes a 128 x 128 tile of C, stepping through K 8 at a time;
// the tile of A is stored transposed in shared memory (k-major) so that a thread's 8 rows of A
// are contiguous, as its 8 columns of B are. Ragged sizes, leading dimensions and transposes: the
// global loads are scalar and bounds-checked, loading 0 outside A and B (a partial tile adds
// exactly nothing, as in MatrixMult2), and mapped to threads so that consecutive threads read
// consecutive addresses for either storage of each operand; only the stores inside C happen.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "blas/cuda/gemm_launchers.hpp"
#include "core/cuda/check.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

struct RegisterBlockedPolicy {
  static constexpr int block_m = 128;  // rows of C a block computes
  static constexpr int block_n = 128;  // columns of C a block computes
  static constexpr int block_k = 8;    // K per shared-memory tile
  static constexpr int thread_m = 8;   // rows of C a thread computes
  static constexpr int thread_n = 8;   // columns of C a thread computes
  static constexpr int threads = (block_m / thread_m) * (block_n / thread_n);
};
using Policy = RegisterBlockedPolicy;
static_assert(Policy::threads == 256);
static_assert(Policy::thread_m % 4 == 0 && Policy::thread_n % 4 == 0, "float4 reads");
static_assert(Policy::block_m * Policy::block_k % Policy::threads == 0, "whole A tile loads");
static_assert(Policy::block_k * Policy::block_n % Policy::threads == 0, "whole B tile loads");

constexpr std::int64_t kMaxGridY = 65535;

struct RegisterBlockedArguments {
  const float* a;
  const float* b;
  float* c;
  std::int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
};

template <bool kTransposeA, bool kTransposeB>
__global__ void __launch_bounds__(Policy::threads)
    register_blocked_2d_kernel(RegisterBlockedArguments args, std::int64_t row_block_offset) {
  constexpr int BM = Policy::block_m, BN = Policy::block_n, BK = Policy::block_k;
  constexpr int TM = Policy::thread_m, TN = Policy::thread_n;
  __shared__ __align__(16) float a_tile[BK][BM];  // (k, rows of C): A transposed
  __shared__ __align__(16) float b_tile[BK][BN];  // (k, columns of C)

  const int tid = threadIdx.x;
  const int thread_row = tid / (BN / TN);  // 0..15: which 8 rows of the block's tile
  const int thread_column = tid % (BN / TN);
  const std::int64_t row0 = (std::int64_t{blockIdx.y} + row_block_offset) * BM;
  const std::int64_t column0 = std::int64_t{blockIdx.x} * BN;

  float acc[TM][TN] = {};  // (thread_m, thread_n)
  float a_values[TM];
  float b_values[TN];

  for (std::int64_t k0 = 0; k0 < args.k; k0 += BK) {
    // A's tile, BM x BK values, (BM * BK) / threads each. op(A)(r, kk) is a[(row0 + r) * lda +
    // k0 + kk] (contiguous in kk: consecutive threads take consecutive kk), or, transposed,
    // a[(k0 + kk) * lda + row0 + r] (contiguous in r: consecutive threads take consecutive r).
#pragma unroll
    for (int e = tid; e < BM * BK; e += Policy::threads) {
      const int r = kTransposeA ? e % BM : e / BK;
      const int kk = kTransposeA ? e / BM : e % BK;
      const std::int64_t row = row0 + r, p = k0 + kk;
      float value = 0;
      if (row < args.m && p < args.k) {
        value = kTransposeA ? args.a[p * args.lda + row] : args.a[row * args.lda + p];
      }
      a_tile[kk][r] = value;
    }
    // B's tile, BK x BN values. op(B)(kk, c) is b[(k0 + kk) * ldb + column0 + c] (contiguous in
    // c), or, transposed, b[(column0 + c) * ldb + k0 + kk] (contiguous in kk).
#pragma unroll
    for (int e = tid; e < BK * BN; e += Policy::threads) {
      const int c = kTransposeB ? e / BK : e % BN;
      const int kk = kTransposeB ? e % BK : e / BN;
      const std::int64_t column = column0 + c, p = k0 + kk;
      float value = 0;
      if (column < args.n && p < args.k) {
        value = kTransposeB ? args.b[column * args.ldb + p] : args.b[p * args.ldb + column];
      }
      b_tile[kk][c] = value;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      // 16-byte shared-memory reads: the thread's TM values of A and TN of B at this k.
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&a_tile[kk][thread_row * TM + i]);
        a_values[i] = v.x, a_values[i + 1] = v.y, a_values[i + 2] = v.z, a_values[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&b_tile[kk][thread_column * TN + j]);
        b_values[j] = v.x, b_values[j + 1] = v.y, b_values[j + 2] = v.z, b_values[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_values[i] * b_values[j];
      }
    }
    // Keeps a fast thread from overwriting the tiles while others still read them.
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const std::int64_t row = row0 + thread_row * TM + i;
    if (row >= args.m) break;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const std::int64_t column = column0 + thread_column * TN + j;
      if (column < args.n) {
        float* c = args.c + row * args.ldc + column;
        // beta = 0 never reads C.
        *c = args.beta == 0.0f ? args.alpha * acc[i][j] : args.alpha * acc[i][j] + args.beta * *c;
      }
    }
  }
}

template <bool kTransposeA, bool kTransposeB>
void launch_typed(const GemmLaunch& launch) {
  const RegisterBlockedArguments args{static_cast<const float*>(launch.a),
                                      static_cast<const float*>(launch.b),
                                      static_cast<float*>(launch.c),
                                      launch.m,
                                      launch.n,
                                      launch.k,
                                      launch.lda,
                                      launch.ldb,
                                      launch.ldc,
                                      static_cast<float>(launch.alpha),
                                      static_cast<float>(launch.beta)};
  const std::int64_t column_blocks = (launch.n + Policy::block_n - 1) / Policy::block_n;
  const std::int64_t row_blocks = (launch.m + Policy::block_m - 1) / Policy::block_m;
  if (column_blocks > std::numeric_limits<int>::max()) {
    throw InvalidInput("gemm: register-blocked-2d takes N up to 2^31 - 1 blocks of columns");
  }
  for (std::int64_t offset = 0; offset < row_blocks; offset += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(column_blocks),
                    static_cast<unsigned>(std::min(kMaxGridY, row_blocks - offset)));
    register_blocked_2d_kernel<kTransposeA, kTransposeB>
        <<<grid, Policy::threads, 0, launch.stream>>>(args, offset);
    GPUKIT_CUDA_CHECK_LAUNCH("register_blocked_2d_kernel");
  }
}

}  // namespace

void launch_register_blocked_2d(const GemmLaunch& launch) {
  if (launch.precision != GemmPrecision::float32) {
    throw InvalidInput("gemm: register-blocked-2d computes float32 only");
  }
  if (launch.transpose_a) {
    if (launch.transpose_b) {
      launch_typed<true, true>(launch);
    } else {
      launch_typed<true, false>(launch);
    }
  } else if (launch.transpose_b) {
    launch_typed<false, true>(launch);
  } else {
    launch_typed<false, false>(launch);
  }
}

}  // namespace gpukit::blas::cuda_detail
