// The SIMT (float32, no tensor cores) steps of the GEMM ladder between the seed's shared-memory
// tiles and cuBLAS's cublasSgemm, after siboehm's SGEMM worklog:
//   register-blocked-1d  each thread computes a column of 8 outputs: one shared-memory value of
//                        B feeds 8 multiply-adds (64 x 64 block tiles, 512 threads);
//   (register-blocked-2d, gemm_register_blocked.cu: 8 x 8 outputs a thread, float4 reads)
//   warp-tiled           the 8 x 8 outputs of a thread split in four 4 x 4 blocks laid out so
//                        that a warp owns a compact 64 x 32 tile of C: its shared-memory reads
//                        of A and B are eight and four distinct float4s (broadcast to the rest),
//                        and global loads are float4 where the alignment allows;
//   double-buffered      the same with two shared-memory buffers (the next tile's global loads
//                        in flight in registers while the current tile is multiplied, one
//                        barrier a tile instead of two) and 8 x 16 outputs a thread in 128 x 256
//                        tiles, which pays only once the loads overlap the products; 128 x 64
//                        tiles where 128 x 256 would leave most of the last wave of SMs idle.
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
#include "core/cuda/launch_shape.hpp"
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

// A block of warps_m x warps_n warps; a warp's lanes 8 (M) x 4 (N); each thread thread_m x
// thread_n outputs in 4 x 4 blocks 32 rows and 16 columns apart, so that a warp's shared-memory
// reads of A at one k are eight consecutive float4s and of B four (broadcast to the rest).
template <int kBlockK, int kThreadM, int kThreadN, int kWarpsM, int kWarpsN, int kMinBlocks>
struct WarpTiledShape {
  static constexpr int block_k = kBlockK;
  static constexpr int thread_m = kThreadM, thread_n = kThreadN;
  static constexpr int warp_m = 8 * thread_m, warp_n = 4 * thread_n;
  static constexpr int block_m = kWarpsM * warp_m, block_n = kWarpsN * warp_n;
  static constexpr int threads = 32 * kWarpsM * kWarpsN;
  static constexpr int min_blocks = kMinBlocks;  // __launch_bounds__: caps registers to fit
  // +4 floats a row: the transposed stores of a loaded float4 spread over the banks.
  static constexpr int padded_m = block_m + 4, padded_n = block_n + 4;
  static constexpr int a_loads = block_m * block_k / 4 / threads;  // float4s a thread a tile
  static constexpr int b_loads = block_n * block_k / 4 / threads;
  static_assert(thread_m % 4 == 0 && thread_n % 4 == 0, "4 x 4 blocks");
  static_assert(a_loads >= 1 && b_loads >= 1 && a_loads * threads * 4 == block_m * block_k &&
                    b_loads * threads * 4 == block_n * block_k,
                "whole float4s of each tile a thread");
  static_assert(block_k % 4 == 0 && block_m % 4 == 0 && block_n % 4 == 0, "float4 rows");
};
// warp-tiled: 128 x 128 x 8 tiles, 8 x 8 outputs a thread, 8 warps (2 x 4), two blocks an SM (16
// warps) in 128 registers a thread, which the 64 accumulators, 16 operands and the loads in
// flight need without spilling. double-buffered: 128 x 256 x 8 tiles, 8 x 16 outputs a thread,
// one block an SM. gpukit_tune_sgemm on an H100 at 8192^3 (docs/journal/gemm-notebook.md): of
// seven shapes single-buffered, 128 x 128 x 8 was the fastest (0.71x cublasSgemm; 8 x 16 a
// thread 0.67x); double-buffered, 128 x 256 x 8 (0.82x; 128 x 128 x 8 0.76x): the larger thread
// tile pays once the next tile's loads overlap the products.
// double-buffered takes 128 x 64 x 16 tiles (8 x 8 a thread, 2 x 2 warps, three blocks an SM)
// where the large tiles would leave much of their last wave idle (see
// double_buffered_takes_large_tiles): at 4097^3 0.82x cuBLAS against 0.74x, at 1000 x 3000 x 700
// 0.86x against 0.69x (of the small shapes tried, 64 x 128 x 16 came next at 0.78x and 0.82x); at
// 4096^3 and 8192^3 the large tiles stay ahead (0.80x against 0.71x).
using WarpTiledPolicy = WarpTiledShape<8, 8, 8, 2, 4, 2>;
using DoubleBufferedPolicy = WarpTiledShape<8, 8, 16, 2, 4, 1>;
using DoubleBufferedSmallPolicy = WarpTiledShape<16, 8, 8, 2, 2, 3>;
static_assert(DoubleBufferedPolicy::block_m == kDoubleBufferedLargeTileM &&
                  DoubleBufferedPolicy::block_n == kDoubleBufferedLargeTileN,
              "the tile choice counts the large tiles");

template <class P, bool kTransposeA, bool kTransposeB>
struct WarpTiledLoader {
  float4 a[P::a_loads], b[P::b_loads];  // this thread's float4s of each tile, on their way

  // op(A)'s tile is block_m x block_k: stored row-major (K contiguous) a float4 is 4 k of one
  // row, stored transposed (M contiguous) 4 rows of one k; consecutive threads take consecutive
  // float4s along the stored rows. B's likewise.
  __device__ __forceinline__ void load(const SimtArguments& s, std::int64_t row0,
                                       std::int64_t column0, std::int64_t k0) {
#pragma unroll
    for (int i = 0; i < P::a_loads; ++i) {
      const int e = threadIdx.x + i * P::threads;
      if constexpr (kTransposeA) {
        a[i] = load4(s.a, s.lda, s.a_vectors, k0 + e / (P::block_m / 4), s.k,
                     row0 + e % (P::block_m / 4) * 4, s.out.m);
      } else {
        a[i] = load4(s.a, s.lda, s.a_vectors, row0 + e / (P::block_k / 4), s.out.m,
                     k0 + e % (P::block_k / 4) * 4, s.k);
      }
    }
#pragma unroll
    for (int i = 0; i < P::b_loads; ++i) {
      const int e = threadIdx.x + i * P::threads;
      if constexpr (kTransposeB) {
        b[i] = load4(s.b, s.ldb, s.b_vectors, column0 + e / (P::block_k / 4), s.out.n,
                     k0 + e % (P::block_k / 4) * 4, s.k);
      } else {
        b[i] = load4(s.b, s.ldb, s.b_vectors, k0 + e / (P::block_n / 4), s.k,
                     column0 + e % (P::block_n / 4) * 4, s.out.n);
      }
    }
  }
  // Shared tiles are k-major: a_tile[k][row], b_tile[k][column].
  __device__ __forceinline__ void store(float (*a_tile)[P::padded_m],
                                        float (*b_tile)[P::padded_n]) const {
#pragma unroll
    for (int i = 0; i < P::a_loads; ++i) {
      const int e = threadIdx.x + i * P::threads;
      if constexpr (kTransposeA) {
        *reinterpret_cast<float4*>(&a_tile[e / (P::block_m / 4)][e % (P::block_m / 4) * 4]) = a[i];
      } else {
        const int row = e / (P::block_k / 4), k = e % (P::block_k / 4) * 4;
        a_tile[k][row] = a[i].x, a_tile[k + 1][row] = a[i].y, a_tile[k + 2][row] = a[i].z,
        a_tile[k + 3][row] = a[i].w;
      }
    }
#pragma unroll
    for (int i = 0; i < P::b_loads; ++i) {
      const int e = threadIdx.x + i * P::threads;
      if constexpr (kTransposeB) {
        const int column = e / (P::block_k / 4), k = e % (P::block_k / 4) * 4;
        b_tile[k][column] = b[i].x, b_tile[k + 1][column] = b[i].y, b_tile[k + 2][column] = b[i].z,
        b_tile[k + 3][column] = b[i].w;
      } else {
        *reinterpret_cast<float4*>(&b_tile[e / (P::block_n / 4)][e % (P::block_n / 4) * 4]) = b[i];
      }
    }
  }
};

template <class P, bool kTransposeA, bool kTransposeB, bool kDoubleBuffer>
__global__ void __launch_bounds__(P::threads, P::min_blocks) warp_tiled_kernel(SimtArguments s) {
  constexpr int kBuffers = kDoubleBuffer ? 2 : 1;
  constexpr int TM = P::thread_m, TN = P::thread_n;
  __shared__ __align__(16) float a_tiles[kBuffers][P::block_k][P::padded_m];
  __shared__ __align__(16) float b_tiles[kBuffers][P::block_k][P::padded_n];
  const std::int64_t row0 = std::int64_t{blockIdx.x} / s.tiles_n * P::block_m;
  const std::int64_t column0 = std::int64_t{blockIdx.x} % s.tiles_n * P::block_n;
  constexpr int kWarpsN = P::block_n / P::warp_n;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int a_offset = warp / kWarpsN * P::warp_m + lane / 4 * 4;  // + 32 i
  const int b_offset = warp % kWarpsN * P::warp_n + lane % 4 * 4;  // + 16 j

  float acc[TM][TN] = {};  // (rows a_offset + 32 (i / 4) + i % 4, columns b_offset + 16 (j / 4)
                           //  + j % 4)
  WarpTiledLoader<P, kTransposeA, kTransposeB> loader;
  const std::int64_t tiles = (s.k + P::block_k - 1) / P::block_k;

  auto multiply = [&](int buffer) {
#pragma unroll
    for (int kk = 0; kk < P::block_k; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&a_tiles[buffer][kk][a_offset + 8 * i]);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&b_tiles[buffer][kk][b_offset + 4 * j]);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
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
  for (int i = 0; i < TM; ++i) {
    const std::int64_t row = row0 + a_offset + 32 * (i / 4) + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 2) {
      const std::int64_t column = column0 + b_offset + 16 * (j / 4) + j % 4;
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

template <class P, bool kDoubleBuffer>
void launch_warp_tiled_kernel(const GemmLaunch& launch, const char* name) {
  require_float32(launch, name);
  const SimtArguments s = make_arguments(launch, P::block_m, P::block_n);
  dispatch_transposes(launch, [&]<bool kTa, bool kTb>() {
    warp_tiled_kernel<P, kTa, kTb, kDoubleBuffer>
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
  launch_warp_tiled_kernel<WarpTiledPolicy, false>(launch, "warp-tiled");
}

void launch_double_buffered(const GemmLaunch& launch) {
  if (double_buffered_takes_large_tiles(launch.m, launch.n, cuda::detail::current_sm_count())) {
    launch_warp_tiled_kernel<DoubleBufferedPolicy, true>(launch, "double-buffered");
  } else {
    launch_warp_tiled_kernel<DoubleBufferedSmallPolicy, true>(launch, "double-buffered");
  }
}

}  // namespace gpukit::blas::cuda_detail
