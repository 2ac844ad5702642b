// The SIMT (float32, no tensor cores) steps of the GEMM ladder between the seed's shared-memory
// tiles and cuBLAS's cublasSgemm, after siboehm's SGEMM worklog:
//   register-blocked-1d  each thread computes a column of 8 outputs: one shared-memory value of
//                        B feeds 8 multiply-adds (64 x 64 block tiles, 512 threads);
//   (register-blocked-2d, gemm_register_blocked.cu: 8 x 8 outputs a thread, float4 reads)
//   warp-tiled           the 8 x 8 outputs of a thread split in four 4 x 4 blocks laid out so
//                        that a warp owns a compact 64 x 32 tile of C: its shared-memory reads
//                        of A and B are eight and four distinct float4s (broadcast to the rest),
//                        and global loads are float4 where the alignment allows;
//   double-buffered      the same, with two shared-memory buffers: the next tile's global loads
//                        are in flight in registers while the current tile is multiplied, and
//                        one barrier a tile instead of two.
// Ragged sizes and leading dimensions: loads outside op(A) or op(B) give 0 (a partial tile adds
// nothing), a vector load only where all four elements are inside and 16-byte aligned; stores
// only inside C.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "blas/cuda/gemm_epilogue.cuh"
#include "blas/cuda/gemm_launchers.hpp"
#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

struct SimtArguments {
  const float* a;
  const float* b;
  std::int64_t k, lda, ldb;
  bool a_vectors, b_vectors;  // 16-byte aligned base and a leading dimension multiple of 4
  std::int64_t tiles_n;       // tiles along N (the grid is 1-D, row-major over tiles)
  GemmOutput out;
};

// op(A)(row, p) and op(B)(p, column), 0 outside the matrices.
template <bool kTransposeA>
__device__ __forceinline__ float load_a(const SimtArguments& s, std::int64_t row, std::int64_t p) {
  if (row >= s.out.m || p >= s.k) return 0.0f;
  return kTransposeA ? s.a[p * s.lda + row] : s.a[row * s.lda + p];
}
template <bool kTransposeB>
__device__ __forceinline__ float load_b(const SimtArguments& s, std::int64_t p,
                                        std::int64_t column) {
  if (column >= s.out.n || p >= s.k) return 0.0f;
  return kTransposeB ? s.b[column * s.ldb + p] : s.b[p * s.ldb + column];
}

// Four consecutive elements of a stored row (x + row * ld + first .. + 3), zeros past `end` or
// past `rows`: one float4 load when they are all inside and `vectors` allows it.
__device__ __forceinline__ float4 load4(const float* x, std::int64_t ld, bool vectors,
                                        std::int64_t row, std::int64_t rows, std::int64_t first,
                                        std::int64_t end) {
  if (row >= rows) return make_float4(0, 0, 0, 0);
  const float* p = x + row * ld + first;
  if (vectors && first + 3 < end) return *reinterpret_cast<const float4*>(p);
  return make_float4(first < end ? p[0] : 0.0f, first + 1 < end ? p[1] : 0.0f,
                     first + 2 < end ? p[2] : 0.0f, first + 3 < end ? p[3] : 0.0f);
}

// --- register-blocked-1d ----------------------------------------------------------------------

struct Blocked1dPolicy {
  static constexpr int block_m = 64, block_n = 64, block_k = 8;
  static constexpr int thread_m = 8;  // a column of 8 outputs a thread
  static constexpr int threads = block_m * block_n / thread_m;
};

template <bool kTransposeA, bool kTransposeB>
__global__ void __launch_bounds__(Blocked1dPolicy::threads)
    register_blocked_1d_kernel(SimtArguments s) {
  using P = Blocked1dPolicy;
  __shared__ float a_tile[P::block_m][P::block_k];  // (rows of C, k)
  __shared__ float b_tile[P::block_k][P::block_n];  // (k, columns of C)
  const std::int64_t row0 = std::int64_t{blockIdx.x} / s.tiles_n * P::block_m;
  const std::int64_t column0 = std::int64_t{blockIdx.x} % s.tiles_n * P::block_n;
  const int tid = threadIdx.x;
  const int thread_column = tid % P::block_n, thread_row = tid / P::block_n;  // 0..63, 0..7
  float acc[P::thread_m] = {};
  for (std::int64_t k0 = 0; k0 < s.k; k0 += P::block_k) {
    // One element of each tile a thread; consecutive threads along the stored contiguous axis.
    {
      const int r = kTransposeA ? tid % P::block_m : tid / P::block_k;
      const int kk = kTransposeA ? tid / P::block_m : tid % P::block_k;
      a_tile[r][kk] = load_a<kTransposeA>(s, row0 + r, k0 + kk);
      const int c = kTransposeB ? tid / P::block_k : tid % P::block_n;
      const int kb = kTransposeB ? tid % P::block_k : tid / P::block_n;
      b_tile[kb][c] = load_b<kTransposeB>(s, k0 + kb, column0 + c);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < P::block_k; ++kk) {
      const float b = b_tile[kk][thread_column];  // reused for thread_m products
#pragma unroll
      for (int i = 0; i < P::thread_m; ++i) acc[i] += a_tile[thread_row * P::thread_m + i][kk] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < P::thread_m; ++i) {
    const std::int64_t row = row0 + thread_row * P::thread_m + i, column = column0 + thread_column;
    if (row < s.out.m && column < s.out.n) {
      float* c = s.out.c + row * s.out.ldc + column;
      *c = s.out.beta == 0.0f ? s.out.alpha * acc[i] : s.out.alpha * acc[i] + s.out.beta * *c;
    }
  }
}

// --- warp-tiled and double-buffered -------------------------------------------------------------

struct WarpTiledPolicy {
  static constexpr int block_m = 128, block_n = 128, block_k = 8;
  static constexpr int threads = 256;             // 8 warps, 2 (M) x 4 (N)
  static constexpr int warp_m = 64, warp_n = 32;  // a warp's tile of C
  // Lanes 8 (M) x 4 (N); each thread 2 x 2 blocks of 4 x 4, the blocks 32 rows and 16 columns
  // apart: a warp's A reads are 8 consecutive float4s, its B reads 4 (broadcast to the rest).
  static constexpr int padded = block_m + 4;  // +4 floats: the transposed stores hit 32 banks
  static_assert(block_m == block_n, "one padded row length for both tiles");
  static_assert(block_m * block_k / 4 == threads && block_n * block_k / 4 == threads,
                "one float4 of each tile a thread");
};

template <bool kTransposeA, bool kTransposeB>
struct WarpTiledLoader {
  using P = WarpTiledPolicy;
  float4 a, b;  // this thread's float4 of each tile, on its way to shared memory

  // op(A)'s tile is block_m x block_k: stored row-major (K contiguous) a thread loads 4 k of one
  // row, stored transposed (M contiguous) 4 rows of one k; B's likewise.
  __device__ __forceinline__ void load(const SimtArguments& s, std::int64_t row0,
                                       std::int64_t column0, std::int64_t k0) {
    const int tid = threadIdx.x;
    if constexpr (kTransposeA) {
      a = load4(s.a, s.lda, s.a_vectors, k0 + tid / 32, s.k, row0 + tid % 32 * 4, s.out.m);
    } else {
      a = load4(s.a, s.lda, s.a_vectors, row0 + tid / 2, s.out.m, k0 + tid % 2 * 4, s.k);
    }
    if constexpr (kTransposeB) {
      b = load4(s.b, s.ldb, s.b_vectors, column0 + tid / 2, s.out.n, k0 + tid % 2 * 4, s.k);
    } else {
      b = load4(s.b, s.ldb, s.b_vectors, k0 + tid / 32, s.k, column0 + tid % 32 * 4, s.out.n);
    }
  }
  // Shared tiles are k-major: a_tile[k][row], b_tile[k][column].
  __device__ __forceinline__ void store(float (*a_tile)[P::padded],
                                        float (*b_tile)[P::padded]) const {
    const int tid = threadIdx.x;
    if constexpr (kTransposeA) {
      *reinterpret_cast<float4*>(&a_tile[tid / 32][tid % 32 * 4]) = a;
    } else {
      const int row = tid / 2, k = tid % 2 * 4;
      a_tile[k][row] = a.x, a_tile[k + 1][row] = a.y, a_tile[k + 2][row] = a.z,
      a_tile[k + 3][row] = a.w;
    }
    if constexpr (kTransposeB) {
      const int column = tid / 2, k = tid % 2 * 4;
      b_tile[k][column] = b.x, b_tile[k + 1][column] = b.y, b_tile[k + 2][column] = b.z,
      b_tile[k + 3][column] = b.w;
    } else {
      *reinterpret_cast<float4*>(&b_tile[tid / 32][tid % 32 * 4]) = b;
    }
  }
};

// Two blocks an SM (16 warps) fit in 128 registers a thread, which the 64 accumulators, 16
// operands and the loads in flight need without spilling.
template <bool kTransposeA, bool kTransposeB, bool kDoubleBuffer>
__global__ void __launch_bounds__(WarpTiledPolicy::threads, 2) warp_tiled_kernel(SimtArguments s) {
  using P = WarpTiledPolicy;
  constexpr int kBuffers = kDoubleBuffer ? 2 : 1;
  __shared__ __align__(16) float a_tiles[kBuffers][P::block_k][P::padded];
  __shared__ __align__(16) float b_tiles[kBuffers][P::block_k][P::padded];
  const std::int64_t row0 = std::int64_t{blockIdx.x} / s.tiles_n * P::block_m;
  const std::int64_t column0 = std::int64_t{blockIdx.x} % s.tiles_n * P::block_n;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int a_offset = warp / 4 * P::warp_m + lane / 4 * 4;  // + 0 and + 32
  const int b_offset = warp % 4 * P::warp_n + lane % 4 * 4;  // + 0 and + 16

  float acc[8][8] = {};  // (rows a_offset + {0..3, 32..35}, columns b_offset + {0..3, 16..19})
  WarpTiledLoader<kTransposeA, kTransposeB> loader;
  const std::int64_t tiles = (s.k + P::block_k - 1) / P::block_k;

  auto multiply = [&](int buffer) {
#pragma unroll
    for (int kk = 0; kk < P::block_k; ++kk) {
      float a[8], b[8];
      const float4 a0 = *reinterpret_cast<const float4*>(&a_tiles[buffer][kk][a_offset]);
      const float4 a1 = *reinterpret_cast<const float4*>(&a_tiles[buffer][kk][a_offset + 32]);
      const float4 b0 = *reinterpret_cast<const float4*>(&b_tiles[buffer][kk][b_offset]);
      const float4 b1 = *reinterpret_cast<const float4*>(&b_tiles[buffer][kk][b_offset + 16]);
      a[0] = a0.x, a[1] = a0.y, a[2] = a0.z, a[3] = a0.w;
      a[4] = a1.x, a[5] = a1.y, a[6] = a1.z, a[7] = a1.w;
      b[0] = b0.x, b[1] = b0.y, b[2] = b0.z, b[3] = b0.w;
      b[4] = b1.x, b[5] = b1.y, b[6] = b1.z, b[7] = b1.w;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
      }
    }
  };

  if constexpr (kDoubleBuffer) {
    loader.load(s, row0, column0, 0);
    loader.store(a_tiles[0], b_tiles[0]);
    __syncthreads();
    for (std::int64_t t = 0; t < tiles; ++t) {
      const int buffer = static_cast<int>(t & 1);
      const bool more = t + 1 < tiles;
      if (more) loader.load(s, row0, column0, (t + 1) * P::block_k);  // in flight meanwhile
      multiply(buffer);
      // The other buffer was last read before the previous barrier.
      if (more) loader.store(a_tiles[buffer ^ 1], b_tiles[buffer ^ 1]);
      __syncthreads();
    }
  } else {
    for (std::int64_t t = 0; t < tiles; ++t) {
      loader.load(s, row0, column0, t * P::block_k);
      loader.store(a_tiles[0], b_tiles[0]);
      __syncthreads();
      multiply(0);
      __syncthreads();  // a fast warp would overwrite the tile others still read
    }
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const std::int64_t row = row0 + a_offset + (i < 4 ? i : 32 + i - 4);
#pragma unroll
    for (int j = 0; j < 8; j += 2) {
      const std::int64_t column = column0 + b_offset + (j < 4 ? j : 16 + j - 4);
      store_pair(s.out, row, column, acc[i][j], acc[i][j + 1]);
    }
  }
}

// --- launchers -----------------------------------------------------------------------------------

SimtArguments make_arguments(const GemmLaunch& launch, int block_m, int block_n) {
  auto aligned = [](const void* p, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 4 == 0;
  };
  SimtArguments s{};
  s.a = static_cast<const float*>(launch.a);
  s.b = static_cast<const float*>(launch.b);
  s.k = launch.k;
  s.lda = launch.lda;
  s.ldb = launch.ldb;
  s.a_vectors = aligned(launch.a, launch.lda);
  s.b_vectors = aligned(launch.b, launch.ldb);
  s.tiles_n = (launch.n + block_n - 1) / block_n;
  s.out = GemmOutput::make(launch.c, launch.ldc, launch.m, launch.n, launch.alpha, launch.beta);
  const std::int64_t tiles = (launch.m + block_m - 1) / block_m * s.tiles_n;
  if (tiles > std::numeric_limits<int>::max()) {
    throw InvalidInput("gemm: the SIMT variants take fewer than 2^31 tiles of C");
  }
  return s;
}

unsigned grid_of(const GemmLaunch& launch, const SimtArguments& s, int block_m) {
  return static_cast<unsigned>((launch.m + block_m - 1) / block_m * s.tiles_n);
}

void require_float32(const GemmLaunch& launch, const char* variant) {
  if (launch.precision != GemmPrecision::float32) {
    throw InvalidInput(std::string("gemm: ") + variant + " computes float32 only");
  }
}

// Calls launch_one.template operator()<kTransposeA, kTransposeB>() for the launch's flags.
template <class F>
void dispatch_transposes(const GemmLaunch& launch, F&& launch_one) {
  if (launch.transpose_a) {
    if (launch.transpose_b) {
      launch_one.template operator()<true, true>();
    } else {
      launch_one.template operator()<true, false>();
    }
  } else if (launch.transpose_b) {
    launch_one.template operator()<false, true>();
  } else {
    launch_one.template operator()<false, false>();
  }
}

template <bool kDoubleBuffer>
void launch_warp_tiled_kernel(const GemmLaunch& launch, const char* name) {
  require_float32(launch, name);
  using P = WarpTiledPolicy;
  const SimtArguments s = make_arguments(launch, P::block_m, P::block_n);
  dispatch_transposes(launch, [&]<bool kTa, bool kTb>() {
    warp_tiled_kernel<kTa, kTb, kDoubleBuffer>
        <<<grid_of(launch, s, P::block_m), P::threads, 0, launch.stream>>>(s);
    GPUKIT_CUDA_CHECK_LAUNCH("warp_tiled_kernel");
  });
}

}  // namespace

void launch_register_blocked_1d(const GemmLaunch& launch) {
  require_float32(launch, "register-blocked-1d");
  using P = Blocked1dPolicy;
  const SimtArguments s = make_arguments(launch, P::block_m, P::block_n);
  dispatch_transposes(launch, [&]<bool kTa, bool kTb>() {
    register_blocked_1d_kernel<kTa, kTb>
        <<<grid_of(launch, s, P::block_m), P::threads, 0, launch.stream>>>(s);
    GPUKIT_CUDA_CHECK_LAUNCH("register_blocked_1d_kernel");
  });
}

void launch_warp_tiled(const GemmLaunch& launch) {
  launch_warp_tiled_kernel<false>(launch, "warp-tiled");
}

void launch_double_buffered(const GemmLaunch& launch) {
  launch_warp_tiled_kernel<true>(launch, "double-buffered");
}

}  // namespace gpukit::blas::cuda_detail
