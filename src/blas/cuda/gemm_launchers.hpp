#pragma once
// Internal: the CUDA GEMM launchers (defined in the .cu files of this folder), callable from plain
// C++. Each takes the canonical row-major problem of gemm_variants.hpp's GemmLaunch, queues its
// work on launch.stream and does not wait for it.

#include <cstddef>
#include <cstdint>

#include "gpukit/blas/gemm_variants.hpp"

namespace gpukit::blas::cuda_detail {

// The seed's kernels (gemm_seed_kernels.cu): float32 and float64.
void launch_seed_naive(const GemmLaunch& launch);
void launch_seed_register_accumulator(const GemmLaunch& launch);
void launch_seed_shared_tiles_16(const GemmLaunch& launch);
void launch_seed_shared_tiles_32(const GemmLaunch& launch);

// Beyond the seeds, SIMT float32: gemm_simt.cu and gemm_register_blocked.cu.
void launch_register_blocked_1d(const GemmLaunch& launch);
void launch_register_blocked_2d(const GemmLaunch& launch);
void launch_warp_tiled(const GemmLaunch& launch);
void launch_double_buffered(const GemmLaunch& launch);

// double-buffered's tile choice: its 128 x 256 tiles (one block an SM) when their waves over
// `sm_count` SMs are at least 90% busy, else 128 x 64 (three blocks an SM), whose finer grain
// fills the last wave. Measured on an H100 (docs/journal/gemm-notebook.md, runs 4 and 6): 4096^3
// and 8192^3 fill 97% and stay on the large tiles; 4097^3 (561 tiles, 85%) and 1000 x 3000 x 700
// (96 tiles, 73%) run faster on the small ones.
inline constexpr std::int64_t kDoubleBufferedLargeTileM = 128, kDoubleBufferedLargeTileN = 256;
constexpr bool double_buffered_takes_large_tiles(std::int64_t m, std::int64_t n, int sm_count) {
  const std::int64_t tiles = (m + kDoubleBufferedLargeTileM - 1) / kDoubleBufferedLargeTileM *
                             ((n + kDoubleBufferedLargeTileN - 1) / kDoubleBufferedLargeTileN);
  const std::int64_t slots = (tiles + sm_count - 1) / sm_count * sm_count;
  return tiles * 10 >= slots * 9;
}

// Tensor cores, tf32 and bf16 on the K-major operands of gemm_tensor_operands.hpp: Ampere's
// mma.sync (gemm_mma_sync.cu), then Hopper's wgmma with TMA (gemm_wgmma.cu, built for sm_90a
// only: GPUKIT_HAVE_SM90A).
void launch_mma_sync(const GemmLaunch& launch);
#if GPUKIT_HAVE_SM90A
/// The persistent kernels' knobs, for gpukit_tune_gemm: the band height of the tile raster in
/// tile rows (cluster units) and a cap on the clusters launched (0: the tuned default, and as
/// many as can be resident); `launched_clusters`, when set, receives the grid's cluster count.
struct WgmmaKnobs {
  int group_rows = 0;
  int max_clusters = 0;
  int* launched_clusters = nullptr;
};
void launch_wgmma_tma(const GemmLaunch& launch);
void launch_wgmma_tma_128x256(const GemmLaunch& launch);
void launch_wgmma_persistent_l2(const GemmLaunch& launch, const WgmmaKnobs& knobs = {});
void launch_wgmma_cluster_multicast(const GemmLaunch& launch, const WgmmaKnobs& knobs = {});
/// The cluster step's launch without its multicast (each CTA loads its own B tile; the clusters
/// only launch together): gpukit_tune_gemm's measure of what the multicast itself costs.
void launch_wgmma_cluster_without_multicast(const GemmLaunch& launch, const WgmmaKnobs& knobs = {});
#endif

// cuBLAS (gemm_cublas.cu): cublasSgemm, cublasDgemm, cublasGemmEx in TF32 and BF16.
void launch_cublas(const GemmLaunch& launch);
void* create_cublas_handle();
void destroy_cublas_handle(void* handle) noexcept;
/// Where the bf16 copy of B starts in the bf16 workspace, after that of the canonical M x K A.
std::size_t bf16_workspace_b_offset(std::int64_t m, std::int64_t k);

/// The K = 0 / alpha = 0 case of every variant (gemm_device_ops.cu): C = beta * C over the
/// M x N matrix, zeros without reading C when beta = 0.
void launch_scale_c(const GemmLaunch& launch);

/// Rounds a stored row-major matrix (rows x columns, leading dimension ld) of float to a packed
/// bf16 copy (leading dimension columns) at `packed` (gemm_device_ops.cu), to nearest even.
void launch_round_to_bf16(const float* matrix, std::int64_t rows, std::int64_t columns,
                          std::int64_t ld, void* packed, StreamHandle stream);

}  // namespace gpukit::blas::cuda_detail
