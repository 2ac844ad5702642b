// The seed's three matrix-multiplication kernels (seed 003, "Matrix Multiplication Performance
// Engineering"; 16384^2 on an RTX 2080 Ti: 521, 1728 and 2229 GFLOP/s), kept as they are written
// on the slides: one thread per element of C, MatrixMult0 accumulating with `c +=` in global
// memory, MatrixMult1 in a register, MatrixMult2 through BLOCK_WIDTH x BLOCK_WIDTH shared-memory
// tiles. What changed, only so that they compute every problem gemm.hpp admits correctly:
// - M, N and K apart (the seed has one N), leading dimensions, and op(A), op(B) as template
//   flags: the flag-free instantiation indexes exactly as the seed does, a[Row*lda + k] and
//   b[k*ldb + Col];
// - ragged sizes: the grid is rounded up (the seed's N/BW drops the last partial block), and
//   MatrixMult2 loops over ceil(K/BW) tiles, loading zero outside A and B so that a partial tile
//   adds nothing (the seed's loop needs N % BLOCK_WIDTH == 0), and stores only inside C (its
//   threads outside C still load and reach every __syncthreads);
// - the __syncthreads() after loading a tile and after using it, which the tile kernel needs
//   (the second one keeps a fast thread from overwriting a tile others still read);
// - C = alpha * sum + beta * C (beta = 0 never reads C), applied once at the end: MatrixMult0
//   still accumulates in C, from 0, and scales what it summed there;
// - 64-bit indices, and rows beyond gridDim.y's limit of 65535 blocks in further launches
//   (row_block_offset), so that any M works.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "blas/cuda/gemm_launchers.hpp"
#include "core/cuda/check.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

// Threads per block edge of MatrixMult0 and MatrixMult1 (the seed's BW, at most 32; it names no
// value for its timings): 16 x 16 = 256 threads.
constexpr int kSeedBlockWidth = 16;
// gridDim.y's limit.
constexpr std::int64_t kMaxGridY = 65535;

// op(A)(row, p) and op(B)(p, column) of the canonical row-major problem.
template <bool kTransposeA, class T>
__device__ __forceinline__ T op_a(const T* a, std::int64_t lda, std::int64_t row, std::int64_t p) {
  return kTransposeA ? a[p * lda + row] : a[row * lda + p];
}
template <bool kTransposeB, class T>
__device__ __forceinline__ T op_b(const T* b, std::int64_t ldb, std::int64_t p,
                                  std::int64_t column) {
  return kTransposeB ? b[column * ldb + p] : b[p * ldb + column];
}

template <class T>
struct SeedArguments {
  const T* a;
  const T* b;
  T* c;
  std::int64_t m, n, k, lda, ldb, ldc;
  T alpha, beta;
};

// MatrixMult0: `c +=` in global memory. c may alias a or b as far as the compiler knows, so
// every partial sum is stored to global memory before the next loads of A and B (the PTX for
// sm_90 has one st.global per k; it forwards the stored value instead of loading it again).
template <class T, bool kTransposeA, bool kTransposeB>
__global__ void matrix_mult0_naive_kernel(SeedArguments<T> args, std::int64_t row_block_offset) {
  const std::int64_t row = (std::int64_t{blockIdx.y} + row_block_offset) * blockDim.y + threadIdx.y;
  const std::int64_t column = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (row < args.m && column < args.n) {
    T* c = args.c + row * args.ldc + column;
    const T c_before = args.beta == T(0) ? T(0) : *c;  // beta = 0 never reads C
    *c = T(0);
    for (std::int64_t p = 0; p < args.k; ++p) {
      *c += op_a<kTransposeA>(args.a, args.lda, row, p) *
            op_b<kTransposeB>(args.b, args.ldb, p, column);
    }
    *c = args.alpha * *c + args.beta * c_before;
  }
}

// MatrixMult1: the same loop with the sum in a register ("local variable for reuse").
template <class T, bool kTransposeA, bool kTransposeB>
__global__ void matrix_mult1_register_kernel(SeedArguments<T> args, std::int64_t row_block_offset) {
  const std::int64_t row = (std::int64_t{blockIdx.y} + row_block_offset) * blockDim.y + threadIdx.y;
  const std::int64_t column = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (row < args.m && column < args.n) {
    T p_value = 0;
    for (std::int64_t p = 0; p < args.k; ++p) {
      p_value += op_a<kTransposeA>(args.a, args.lda, row, p) *
                 op_b<kTransposeB>(args.b, args.ldb, p, column);
    }
    T* c = args.c + row * args.ldc + column;
    *c = args.beta == T(0) ? args.alpha * p_value : args.alpha * p_value + args.beta * *c;
  }
}

// MatrixMult2: BLOCK_WIDTH x BLOCK_WIDTH tiles of A and B in shared memory, each element loaded
// by one thread and read by BLOCK_WIDTH (16 FLOP per load at 16, 32 at 32: the seed's
// arithmetic).
template <class T, int kBlockWidth, bool kTransposeA, bool kTransposeB>
__global__ void matrix_mult2_shared_tiles_kernel(SeedArguments<T> args,
                                                 std::int64_t row_block_offset) {
  __shared__ T ds_a[kBlockWidth][kBlockWidth];  // (rows of C, k)
  __shared__ T ds_b[kBlockWidth][kBlockWidth];  // (k, columns of C)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t row = (std::int64_t{blockIdx.y} + row_block_offset) * kBlockWidth + ty;
  const std::int64_t column = std::int64_t{blockIdx.x} * kBlockWidth + tx;
  T p_value = 0;
  const std::int64_t tiles = (args.k + kBlockWidth - 1) / kBlockWidth;
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t a_column = t * kBlockWidth + tx;
    const std::int64_t b_row = t * kBlockWidth + ty;
    // Outside A or B a tile holds 0: for an element of C, a zero of ds_a[ty][i] (p >= K) meets a
    // zero of ds_b[i][tx] (the same p), so the partial tile adds exactly nothing.
    ds_a[ty][tx] = row < args.m && a_column < args.k
                       ? op_a<kTransposeA>(args.a, args.lda, row, a_column)
                       : T(0);
    ds_b[ty][tx] = b_row < args.k && column < args.n
                       ? op_b<kTransposeB>(args.b, args.ldb, b_row, column)
                       : T(0);
    __syncthreads();
    for (int i = 0; i < kBlockWidth; ++i) p_value += ds_a[ty][i] * ds_b[i][tx];
    __syncthreads();
  }
  if (row < args.m && column < args.n) {
    T* c = args.c + row * args.ldc + column;
    *c = args.beta == T(0) ? args.alpha * p_value : args.alpha * p_value + args.beta * *c;
  }
}

enum class SeedKernel { naive, register_accumulator, shared_tiles };

template <class T, SeedKernel kKernel, int kBlockWidth, bool kTransposeA, bool kTransposeB>
void launch_typed(const GemmLaunch& launch) {
  const SeedArguments<T> args{static_cast<const T*>(launch.a),
                              static_cast<const T*>(launch.b),
                              static_cast<T*>(launch.c),
                              launch.m,
                              launch.n,
                              launch.k,
                              launch.lda,
                              launch.ldb,
                              launch.ldc,
                              static_cast<T>(launch.alpha),
                              static_cast<T>(launch.beta)};
  const std::int64_t column_blocks = (launch.n + kBlockWidth - 1) / kBlockWidth;
  const std::int64_t row_blocks = (launch.m + kBlockWidth - 1) / kBlockWidth;
  if (column_blocks > std::numeric_limits<int>::max()) {
    throw InvalidInput("gemm: the seed's kernels take N up to 2^31 - 1 blocks of columns");
  }
  const dim3 block(kBlockWidth, kBlockWidth);
  for (std::int64_t offset = 0; offset < row_blocks; offset += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(column_blocks),
                    static_cast<unsigned>(std::min(kMaxGridY, row_blocks - offset)));
    if constexpr (kKernel == SeedKernel::naive) {
      matrix_mult0_naive_kernel<T, kTransposeA, kTransposeB>
          <<<grid, block, 0, launch.stream>>>(args, offset);
      GPUKIT_CUDA_CHECK_LAUNCH("matrix_mult0_naive_kernel");
    } else if constexpr (kKernel == SeedKernel::register_accumulator) {
      matrix_mult1_register_kernel<T, kTransposeA, kTransposeB>
          <<<grid, block, 0, launch.stream>>>(args, offset);
      GPUKIT_CUDA_CHECK_LAUNCH("matrix_mult1_register_kernel");
    } else {
      matrix_mult2_shared_tiles_kernel<T, kBlockWidth, kTransposeA, kTransposeB>
          <<<grid, block, 0, launch.stream>>>(args, offset);
      GPUKIT_CUDA_CHECK_LAUNCH("matrix_mult2_shared_tiles_kernel");
    }
  }
}

template <SeedKernel kKernel, int kBlockWidth>
void launch_seed(const GemmLaunch& launch) {
  const auto with_type = [&]<class T>() {
    if (launch.transpose_a) {
      if (launch.transpose_b) {
        launch_typed<T, kKernel, kBlockWidth, true, true>(launch);
      } else {
        launch_typed<T, kKernel, kBlockWidth, true, false>(launch);
      }
    } else if (launch.transpose_b) {
      launch_typed<T, kKernel, kBlockWidth, false, true>(launch);
    } else {
      launch_typed<T, kKernel, kBlockWidth, false, false>(launch);
    }
  };
  switch (launch.precision) {
    case GemmPrecision::float32:
      with_type.template operator()<float>();
      return;
    case GemmPrecision::float64:
      with_type.template operator()<double>();
      return;
    case GemmPrecision::tf32:
    case GemmPrecision::bf16:
      break;
  }
  throw InvalidInput("gemm: the seed's kernels compute float32 and float64 only");
}

}  // namespace

void launch_seed_naive(const GemmLaunch& launch) {
  launch_seed<SeedKernel::naive, kSeedBlockWidth>(launch);
}
void launch_seed_register_accumulator(const GemmLaunch& launch) {
  launch_seed<SeedKernel::register_accumulator, kSeedBlockWidth>(launch);
}
void launch_seed_shared_tiles_16(const GemmLaunch& launch) {
  launch_seed<SeedKernel::shared_tiles, 16>(launch);
}
void launch_seed_shared_tiles_32(const GemmLaunch& launch) {
  launch_seed<SeedKernel::shared_tiles, 32>(launch);
}

}  // namespace gpukit::blas::cuda_detail
