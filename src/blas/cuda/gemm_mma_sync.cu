// The first tensor-core step of the GEMM ladder (`mma-sync`): Ampere's warp-level matrix
// multiply-accumulate, mma.sync.m16n8k16 (bf16) and m16n8k8 (tf32) with float accumulators, fed
// by a multi-stage cp.async pipeline and ldmatrix. This is how tensor cores were programmed
// before Hopper; on an H100 it runs, but each warp issues its own small products and waits for
// its own loads, which the wgmma steps (gemm_wgmma.cu) replace with warpgroup products straight
// from shared memory and a TMA producer.
//
// Tiles: a block of 8 warps computes 128 x 128 of C, each warp 64 x 32 (4 x 4 mma tiles of 16 x
// 8), stepping through K 128 bytes at a time (64 bf16 or 32 tf32 values) through kStages shared-
// memory stages. Shared rows are 128 bytes, their eight 16-byte chunks XOR-swizzled by the row
// (chunk ^ row % 8), so that ldmatrix's eight row addresses hit eight different bank groups.
// Operands: A' (M x K) and B' (N x K), K-major (gemm_tensor_operands.hpp); rows or K past the
// end are loaded as zeros (cp.async's source size), which add nothing.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "blas/cuda/gemm_epilogue.cuh"
#include "blas/cuda/gemm_launchers.hpp"
#include "blas/cuda/gemm_tensor_operands.hpp"
#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

template <class Element>
struct MmaSyncPolicy {
  using element_type = Element;
  static constexpr int block_m = 128;
  static constexpr int block_n = 128;
  static constexpr int row_bytes = 128;
  static constexpr int block_k = row_bytes / sizeof(Element);
  static constexpr int stages = 4;
  static constexpr int threads = 256;
  static constexpr int warp_m = 64, warp_n = 32;  // 2 x 4 warps
  static constexpr int m_tiles = warp_m / 16;
  static constexpr int n_tiles = warp_n / 8;
  static constexpr int k_steps = row_bytes / 32;  // an instruction takes 32 bytes of K
  static constexpr int stage_bytes = (block_m + block_n) * row_bytes;
  static constexpr int shared_bytes = stages * stage_bytes;
  // Tiles in a band of the raster: consecutive blocks share their rows of A in L2.
  static constexpr int group_rows = 8;
  static_assert(block_m * 8 % threads == 0 && block_n * 8 % threads == 0, "whole chunk loads");
};

struct MmaSyncArguments {
  const unsigned char* a;
  std::int64_t a_row_bytes;
  const unsigned char* b;
  std::int64_t b_row_bytes;
  std::int64_t k_bytes;  // K times the element size: the end of every row's valid data
  int k_blocks;
  std::int64_t tiles_m, tiles_n;
  GemmOutput out;
};

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, of which the first `valid` are read and the rest
// zero-filled. A partial chunk (the end of a row of a float operand read in place, K % 4 != 0)
// goes word by word, and a chunk past the matrix is stored as zeros: cp.async's 16-byte form with
// a smaller source size still touches all 16 bytes (compute-sanitizer reports the read past the
// allocation), the 4-byte form reads only the valid words.
__device__ __forceinline__ void copy_chunk(std::uint32_t destination, const void* source,
                                           int valid) {
  if (valid == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(destination), "l"(source)
                 : "memory");
    return;
  }
  if (valid == 0) {  // past the matrix: zeros, nothing read
    asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(destination), "r"(0u) : "memory");
    return;
  }
  for (int word = 0; word < 4; ++word) {
    const std::uint32_t to = destination + 4 * word;
    if (4 * word < valid) {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(to),
                   "l"(static_cast<const char*>(source) + 4 * word)
                   : "memory");
    } else {
      asm volatile("st.shared.u32 [%0], %1;" ::"r"(to), "r"(0u) : "memory");
    }
  }
}
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void load_matrices_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

template <class Element>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
  if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile of 128-byte rows.
__device__ __forceinline__ std::uint32_t swizzled(int row, int chunk) {
  return static_cast<std::uint32_t>(row * 128 + ((chunk ^ (row & 7)) << 4));
}

// One stage: block_m rows of A' and block_n rows of B', 128 bytes of K each from k_block.
template <class P>
__device__ __forceinline__ void load_stage(const MmaSyncArguments& args, std::uint32_t stage,
                                           std::int64_t row0, std::int64_t column0, int k_block) {
  const std::int64_t k_byte0 = std::int64_t{k_block} * P::row_bytes;
#pragma unroll
  for (int i = 0; i < (P::block_m + P::block_n) * 8 / P::threads; ++i) {
    const int e = threadIdx.x + i * P::threads;
    const bool is_a = e < P::block_m * 8;
    const int row = (is_a ? e : e - P::block_m * 8) / 8;
    const int chunk = e % 8;
    const std::int64_t global_row = (is_a ? row0 : column0) + row;
    const std::int64_t rows = is_a ? args.out.m : args.out.n;
    const std::int64_t byte = k_byte0 + chunk * 16;
    const unsigned char* base = is_a ? args.a : args.b;
    const std::int64_t pitch = is_a ? args.a_row_bytes : args.b_row_bytes;
    int valid = 0;
    const unsigned char* source = base;  // any mapped address when nothing is read
    if (global_row < rows && byte < args.k_bytes) {
      const std::int64_t left = args.k_bytes - byte;
      valid = left < 16 ? static_cast<int>(left) : 16;
      source = base + global_row * pitch + byte;
    }
    const std::uint32_t tile = stage + (is_a ? 0 : P::block_m * P::row_bytes);
    copy_chunk(tile + swizzled(row, chunk), source, valid);
  }
}

template <class P>
__global__ void __launch_bounds__(P::threads, 1) mma_sync_gemm_kernel(const MmaSyncArguments args) {
  extern __shared__ __align__(128) unsigned char shared[];
  const std::uint32_t shared_base = shared_address(shared);

  // Grouped raster: bands of group_rows tile rows, each walked column by column.
  const std::int64_t tile = blockIdx.x;
  const std::int64_t per_band = P::group_rows * args.tiles_n;
  const std::int64_t band = tile / per_band;
  const std::int64_t first_row = band * P::group_rows;
  const std::int64_t rows_left = args.tiles_m - first_row;
  const std::int64_t band_rows = rows_left < P::group_rows ? rows_left : P::group_rows;
  const std::int64_t in_band = tile - band * per_band;
  const std::int64_t row0 = (first_row + in_band % band_rows) * P::block_m;
  const std::int64_t column0 = in_band / band_rows * P::block_n;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_row = warp / 4 * P::warp_m, warp_column = warp % 4 * P::warp_n;
  float acc[P::m_tiles][P::n_tiles][4] = {};  // (m16 tile, n8 tile, fragment)

  auto stage_address = [&](int k_block) {
    return shared_base + static_cast<std::uint32_t>(k_block % P::stages * P::stage_bytes);
  };
#pragma unroll
  for (int s = 0; s < P::stages - 1; ++s) {
    if (s < args.k_blocks) load_stage<P>(args, stage_address(s), row0, column0, s);
    commit_copies();
  }
  for (int kb = 0; kb < args.k_blocks; ++kb) {
    wait_copies<P::stages - 2>();
    // Every thread's copies for k-block kb have landed, and every warp is done with the stage
    // the next load overwrites (it held k-block kb - 1).
    __syncthreads();
    const int next = kb + P::stages - 1;
    if (next < args.k_blocks) load_stage<P>(args, stage_address(next), row0, column0, next);
    commit_copies();

    const std::uint32_t a_tile = stage_address(kb);
    const std::uint32_t b_tile = a_tile + P::block_m * P::row_bytes;
#pragma unroll
    for (int ks = 0; ks < P::k_steps; ++ks) {
      std::uint32_t a[P::m_tiles][4];
      std::uint32_t b[P::n_tiles / 2][4];  // two n8 tiles an ldmatrix.x4
#pragma unroll
      for (int mt = 0; mt < P::m_tiles; ++mt) {
        // Matrices (rows 0-7, K low), (8-15, low), (0-7, high), (8-15, high): lane l gives row
        // l % 16 of chunk 2 ks + l / 16.
        load_matrices_x4(a[mt],
                         a_tile + swizzled(warp_row + mt * 16 + lane % 16, 2 * ks + lane / 16));
      }
#pragma unroll
      for (int np = 0; np < P::n_tiles / 2; ++np) {
        // Matrices (columns 0-7, K low), (0-7, high), (8-15, low), (8-15, high).
        load_matrices_x4(b[np], b_tile + swizzled(warp_column + np * 16 + lane / 16 * 8 + lane % 8,
                                                  2 * ks + lane / 8 % 2));
      }
#pragma unroll
      for (int mt = 0; mt < P::m_tiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < P::n_tiles; ++nt) {
          mma<typename P::element_type>(acc[mt][nt], a[mt], b[nt / 2][nt % 2 * 2],
                                        b[nt / 2][nt % 2 * 2 + 1]);
        }
      }
    }
  }
  wait_copies<0>();

  // The m16n8 fragment: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1), g = lane / 4,
  // t = lane % 4.
#pragma unroll
  for (int mt = 0; mt < P::m_tiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < P::n_tiles; ++nt) {
      const std::int64_t row = row0 + warp_row + mt * 16 + lane / 4;
      const std::int64_t column = column0 + warp_column + nt * 8 + 2 * (lane % 4);
      store_pair(args.out, row, column, acc[mt][nt][0], acc[mt][nt][1]);
      store_pair(args.out, row + 8, column, acc[mt][nt][2], acc[mt][nt][3]);
    }
  }
}

template <class Element>
void launch_typed(const GemmLaunch& launch) {
  using P = MmaSyncPolicy<Element>;
  const KMajorOperands operands = prepare_k_major_operands(launch);
  MmaSyncArguments args{};
  args.a = static_cast<const unsigned char*>(operands.a);
  args.a_row_bytes = operands.lda * static_cast<std::int64_t>(sizeof(Element));
  args.b = static_cast<const unsigned char*>(operands.b);
  args.b_row_bytes = operands.ldb * static_cast<std::int64_t>(sizeof(Element));
  args.k_bytes = launch.k * static_cast<std::int64_t>(sizeof(Element));
  const std::int64_t k_blocks = (launch.k + P::block_k - 1) / P::block_k;
  args.tiles_m = (launch.m + P::block_m - 1) / P::block_m;
  args.tiles_n = (launch.n + P::block_n - 1) / P::block_n;
  args.out = GemmOutput::make(launch.c, launch.ldc, launch.m, launch.n, launch.alpha, launch.beta);
  const std::int64_t tiles = args.tiles_m * args.tiles_n;
  if (k_blocks > std::numeric_limits<int>::max() || tiles > std::numeric_limits<int>::max()) {
    throw InvalidInput("gemm: mma-sync takes K below 2^37 and fewer than 2^31 tiles of C");
  }
  args.k_blocks = static_cast<int>(k_blocks);
  const auto kernel = mma_sync_gemm_kernel<P>;
  GPUKIT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, P::shared_bytes));
  kernel<<<static_cast<unsigned>(tiles), P::threads, P::shared_bytes, launch.stream>>>(args);
  GPUKIT_CUDA_CHECK_LAUNCH("mma_sync_gemm_kernel");
}

}  // namespace

void launch_mma_sync(const GemmLaunch& launch) {
  if (launch.precision == GemmPrecision::bf16) {
    launch_typed<__nv_bfloat16>(launch);
  } else if (launch.precision == GemmPrecision::tf32) {
    launch_typed<float>(launch);
  } else {
    throw InvalidInput("gemm: mma-sync computes tf32 and bf16, not " +
                       std::string(gemm_precision_name(launch.precision)));
  }
}

}  // namespace gpukit::blas::cuda_detail
