// The Hopper steps of the GEMM ladder: warpgroup matrix multiply-accumulate (wgmma) on tiles that
// the Tensor Memory Accelerator (TMA) loads into shared memory, in a warp-specialised pipeline:
// one producer warpgroup issues the TMA loads into a ring of shared-memory stages, two consumer
// warpgroups multiply them, and two mbarriers a stage hand each stage over (`full`: its bytes have
// landed; `empty`: every consumer is done reading it). Compiled for sm_90a only.
//
// The four registered variants are one kernel template under four policies, each one idea past
// the previous (gemm_variants.cpp):
//   wgmma-tma               128 x 128 tiles, a CTA per tile, tiles in row-major order;
//   wgmma-tma-128x256       128 x 256 tiles (each consumer m64n256: 256 FLOP per loaded byte of
//                           A and B in bf16, against 128 at 128 x 128);
//   wgmma-persistent-l2     one CTA per SM looping over tiles, grouped in bands of rows so the
//                           tiles in flight share their A and B panels in L2;
//   wgmma-cluster-multicast clusters of two CTAs on vertically adjacent tiles: each loads half of
//                           the shared B tile and the TMA multicasts it to both.
//
// Operands: A' (M x K) and B' (N x K), both K-major, made by prepare_k_major_operands (bf16 copies
// rounded to nearest even, or the float data itself for tf32 when it is already K-major). Tiles
// are BK = 128 bytes of K wide (64 bf16 or 32 tf32 values): TMA's 128-byte swizzle, which the
// wgmma descriptors read without bank conflicts. Ragged M, N and K need no special code: TMA fills
// out-of-bounds elements with zeros (which add nothing) and the epilogue stores only inside C.
//
// Epilogue: each consumer thread holds its part of a 64 x BN accumulator (wgmma's fragment layout:
// rows warp*16 + lane/4 (+8), columns 8j + 2(lane%4) (+1)) and writes alpha * acc + beta * C
// straight to global memory, two adjacent columns a store when C's alignment allows.

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "blas/cuda/gemm_epilogue.cuh"
#include "blas/cuda/gemm_launchers.hpp"
#include "blas/cuda/gemm_tensor_operands.hpp"
#include "blas/cuda/sm90_gemm_ptx.cuh"
#include "blas/cuda/tensor_map.hpp"
#include "blas/cuda/wgmma_instructions.cuh"
#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

template <class Element, int kBlockN, int kStages, int kClusterM, bool kMulticast = (kClusterM > 1)>
struct WgmmaPolicy {
  using element_type = Element;
  static constexpr int block_m = 128;                          // two consumers x 64 rows
  static constexpr int block_n = kBlockN;                      // 128 or 256
  static constexpr int row_bytes = 128;                        // one tile row: the swizzle span
  static constexpr int block_k = row_bytes / sizeof(Element);  // 64 bf16, 32 tf32
  static constexpr int instruction_k = 32 / sizeof(Element);   // wgmma's K: 16 bf16, 8 tf32
  static constexpr int stages = kStages;
  static constexpr int consumers = 2;
  static constexpr int threads = 128 * (consumers + 1);
  static constexpr int cluster_m = kClusterM;
  // Whether the cluster's CTAs share their B tile (the registered cluster step). Without it the
  // CTAs of a cluster only launch together (gpukit_tune_gemm's comparison of the two costs).
  static constexpr bool multicast = kMulticast;
  static constexpr int b_sources = multicast ? cluster_m : 1;  // CTAs loading into a B tile
  static constexpr int a_stage_bytes = block_m * row_bytes;
  static constexpr int b_stage_bytes = block_n * row_bytes;
  static constexpr int accumulators = block_n / 2;  // floats a consumer thread holds (64 x BN)
  // Shared memory: the stages, then full[] and empty[] barriers, and 1024 bytes to align the
  // start to the swizzle atom.
  static constexpr int shared_bytes =
      stages * (a_stage_bytes + b_stage_bytes) + 2 * stages * 8 + 1024;
  static_assert(block_n % (8 * b_sources) == 0, "each CTA multicasts whole 8-row groups of B");
  static_assert(shared_bytes <= 227 * 1024, "Hopper's shared memory per block");
};

// The output and the tile schedule (the counts fit int: can_implement keeps M, N and K below
// 2^31).
struct WgmmaArguments {
  GemmOutput out;
  int k_blocks;
  int tiles_m, tiles_n;
  int group_rows;  // tile rows (in cluster units) per band of the raster
};

// Work unit -> (cluster row of tiles, tile column): bands of `group_rows` cluster rows, each band
// walked column by column, so that the units in flight at once reuse a few panels of A and B.
__device__ __forceinline__ void raster(std::int64_t unit, int cluster_rows, int tiles_n,
                                       int group_rows, int& cluster_row, int& tile_column) {
  const std::int64_t per_band = std::int64_t{group_rows} * tiles_n;
  const int band = static_cast<int>(unit / per_band);
  const int first_row = band * group_rows;
  const int rows = min(group_rows, cluster_rows - first_row);
  const int in_band = static_cast<int>(unit - band * per_band);
  cluster_row = first_row + in_band % rows;
  tile_column = in_band / rows;
}

template <class P>
__device__ __forceinline__ void wgmma_step(float (&acc)[P::accumulators], std::uint64_t desc_a,
                                           std::uint64_t desc_b, int accumulate) {
  if constexpr (std::is_same_v<typename P::element_type, __nv_bfloat16>) {
    if constexpr (P::block_n == 256) {
      wgmma_m64n256k16_bf16(acc, desc_a, desc_b, accumulate);
    } else {
      wgmma_m64n128k16_bf16(acc, desc_a, desc_b, accumulate);
    }
  } else {
    if constexpr (P::block_n == 256) {
      wgmma_m64n256k8_tf32(acc, desc_a, desc_b, accumulate);
    } else {
      wgmma_m64n128k8_tf32(acc, desc_a, desc_b, accumulate);
    }
  }
}

template <class P>
__global__ void __launch_bounds__(P::threads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, const WgmmaArguments args) {
#if defined(GPUKIT_SM90A)
  extern __shared__ unsigned char shared_raw[];
  // The 128-byte swizzle repeats every 1024 bytes; the descriptors assume tiles aligned to it.
  unsigned char* shared = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(shared_raw) + 1023) & ~std::uintptr_t{1023});
  unsigned char* a_tiles = shared;                                 // [stages][block_m][128 B]
  unsigned char* b_tiles = shared + P::stages * P::a_stage_bytes;  // [stages][block_n][128 B]
  auto* full = reinterpret_cast<std::uint64_t*>(b_tiles + P::stages * P::b_stage_bytes);
  std::uint64_t* empty = full + P::stages;

  const int warpgroup = threadIdx.x / 128;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < P::stages; ++s) {
      sm90::barrier_init(&full[s], 1);  // the producer's arrive_expect_bytes, then the bytes
      // Every consumer warp of every CTA whose producer multicasts into this stage.
      sm90::barrier_init(&empty[s], P::consumers * 4 * P::b_sources);
    }
    sm90::fence_barrier_init();
  }
  if constexpr (P::cluster_m > 1) {
    sm90::cluster_sync();  // the peers' barriers exist before anyone multicasts into them
  } else {
    __syncthreads();
  }

  const int cluster_rank = P::cluster_m > 1 ? static_cast<int>(sm90::cluster_cta_rank()) : 0;
  const int cluster_id = blockIdx.x / P::cluster_m;
  const int clusters = gridDim.x / P::cluster_m;
  const int cluster_rows = (args.tiles_m + P::cluster_m - 1) / P::cluster_m;
  const std::int64_t units = std::int64_t{cluster_rows} * args.tiles_n;

  if (warpgroup == 0) {
    // Producer: one thread issues every load; the warpgroup gives its registers to the consumers.
    sm90::release_registers<40>();
    if (threadIdx.x == 0) {
      sm90::prefetch_tensor_map(&map_a);
      sm90::prefetch_tensor_map(&map_b);
      int stage = 0;
      std::uint32_t phase = 0;
      for (std::int64_t unit = cluster_id; unit < units; unit += clusters) {
        int cluster_row = 0, tile_n = 0;
        raster(unit, cluster_rows, args.tiles_n, args.group_rows, cluster_row, tile_n);
        const int tile_m = cluster_row * P::cluster_m + cluster_rank;
        for (int kb = 0; kb < args.k_blocks; ++kb) {
          // A fresh barrier has completed no phase: waiting on parity 1 passes at once, so the
          // first pass over the ring does not wait for consumers.
          sm90::barrier_wait(&empty[stage], phase ^ 1);
          sm90::barrier_arrive_expect_bytes(&full[stage], P::a_stage_bytes + P::b_stage_bytes);
          sm90::tma_load_2d(a_tiles + stage * P::a_stage_bytes, &map_a, kb * P::block_k,
                            tile_m * P::block_m, &full[stage]);
          if constexpr (!P::multicast) {
            sm90::tma_load_2d(b_tiles + stage * P::b_stage_bytes, &map_b, kb * P::block_k,
                              tile_n * P::block_n, &full[stage]);
          } else {
            // This CTA's slice of the B tile, into every CTA of the cluster (same offsets).
            constexpr int slice_rows = P::block_n / P::cluster_m;
            sm90::tma_load_2d_multicast(
                b_tiles + stage * P::b_stage_bytes + cluster_rank * slice_rows * P::row_bytes,
                &map_b, kb * P::block_k, tile_n * P::block_n + cluster_rank * slice_rows,
                &full[stage], static_cast<std::uint16_t>((1u << P::cluster_m) - 1));
          }
          if (++stage == P::stages) stage = 0, phase ^= 1;
        }
      }
    }
    __syncwarp();
  } else {
    sm90::claim_registers<232>();
    const int consumer = warpgroup - 1;
    const int warp_in_group = (threadIdx.x % 128) / 32;
    float acc[P::accumulators];
    int stage = 0;
    std::uint32_t phase = 0;
    // Releases a stage: each consumer warp arrives on the stage's `empty` barrier in every CTA
    // that multicasts into it (its own included).
    auto release = [&](int s) {
      if (lane == 0) {
        if constexpr (!P::multicast) {
          sm90::barrier_arrive(&empty[s]);
        } else {
#pragma unroll
          for (int r = 0; r < P::cluster_m; ++r) {
            sm90::barrier_arrive_cluster(&empty[s], static_cast<std::uint32_t>(r));
          }
        }
      }
    };
    for (std::int64_t unit = cluster_id; unit < units; unit += clusters) {
      int cluster_row = 0, tile_n = 0;
      raster(unit, cluster_rows, args.tiles_n, args.group_rows, cluster_row, tile_n);
      const int tile_m = cluster_row * P::cluster_m + cluster_rank;
      int previous_stage = -1;
      for (int kb = 0; kb < args.k_blocks; ++kb) {
        sm90::barrier_wait(&full[stage], phase);
        sm90::wgmma_fence();
        const unsigned char* a_tile =
            a_tiles + stage * P::a_stage_bytes + consumer * 64 * P::row_bytes;
        const unsigned char* b_tile = b_tiles + stage * P::b_stage_bytes;
#pragma unroll
        for (int kk = 0; kk < P::block_k / P::instruction_k; ++kk) {
          // 32 bytes of K an instruction: the descriptors' start address moves inside the
          // swizzled 128-byte rows.
          wgmma_step<P>(acc, sm90::smem_descriptor_k_major_128b(a_tile + kk * 32),
                        sm90::smem_descriptor_k_major_128b(b_tile + kk * 32),
                        (kb > 0 || kk > 0) ? 1 : 0);
        }
        sm90::wgmma_commit_group();
        // One group stays in flight: once the previous k-block's group has finished, its stage
        // goes back to the producer while this one runs.
        sm90::wgmma_wait_group<1>();
        if (previous_stage >= 0) release(previous_stage);
        previous_stage = stage;
        if (++stage == P::stages) stage = 0, phase ^= 1;
      }
      sm90::wgmma_wait_group<0>();
      sm90::fence_registers(acc);
      if (previous_stage >= 0) release(previous_stage);

      const std::int64_t row0 =
          std::int64_t{tile_m} * P::block_m + consumer * 64 + warp_in_group * 16 + lane / 4;
      const std::int64_t column0 = std::int64_t{tile_n} * P::block_n + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < P::block_n / 8; ++j) {
        store_pair(args.out, row0, column0 + 8 * j, acc[4 * j], acc[4 * j + 1]);
        store_pair(args.out, row0 + 8, column0 + 8 * j, acc[4 * j + 2], acc[4 * j + 3]);
      }
    }
  }
  if constexpr (P::cluster_m > 1) {
    // No CTA leaves while a peer may still multicast into its shared memory or arrive on its
    // barriers.
    sm90::cluster_sync();
  }
#endif
}

template <class P>
void launch_policy(const GemmLaunch& launch, const KMajorOperands& operands,
                   const WgmmaKnobs& knobs, bool persistent) {
  using Element = typename P::element_type;
  const auto kernel = wgmma_gemm_kernel<P>;
  // Per device and cheap: set on every launch rather than remembered per process.
  GPUKIT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, P::shared_bytes));
  constexpr TensorMapElement kElement = std::is_same_v<Element, __nv_bfloat16>
                                            ? TensorMapElement::bfloat16
                                            : TensorMapElement::float32;
  const CUtensorMap map_a = make_k_major_tensor_map(kElement, operands.a, launch.m, launch.k,
                                                    operands.lda, P::block_m, P::block_k);
  const CUtensorMap map_b =
      make_k_major_tensor_map(kElement, operands.b, launch.n, launch.k, operands.ldb,
                              P::block_n / P::b_sources, P::block_k);
  WgmmaArguments args{};
  args.out = GemmOutput::make(launch.c, launch.ldc, launch.m, launch.n, launch.alpha, launch.beta);
  args.k_blocks = static_cast<int>((launch.k + P::block_k - 1) / P::block_k);
  args.tiles_m = static_cast<int>((launch.m + P::block_m - 1) / P::block_m);
  args.tiles_n = static_cast<int>((launch.n + P::block_n - 1) / P::block_n);
  args.group_rows = std::max(1, knobs.group_rows);

  // Work units: clusters of tiles (a single tile without clusters). C's size keeps them far below
  // 2^31 (M N floats of device memory), and the kernel loops when the grid holds fewer.
  const std::int64_t cluster_rows = (args.tiles_m + P::cluster_m - 1) / P::cluster_m;
  const std::int64_t units = cluster_rows * args.tiles_n;
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(P::threads);
  config.dynamicSmemBytes = P::shared_bytes;
  config.stream = launch.stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = P::cluster_m;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = P::cluster_m > 1 ? 1 : 0;
  std::int64_t clusters = std::min<std::int64_t>(units, (std::int64_t{1} << 31) / P::cluster_m - 1);
  if (persistent) {
    // As many clusters as can be resident at once: one CTA an SM (their shared memory says so),
    // fewer clusters of two where the GPCs' SM counts are odd.
    int device = 0, sms = 0;
    GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
    GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    int resident = sms / P::cluster_m;
    if constexpr (P::cluster_m > 1) {
      config.gridDim = dim3(static_cast<unsigned>(resident * P::cluster_m));
      GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&resident, kernel, &config));
    }
    clusters = std::min<std::int64_t>(clusters, std::max(resident, 1));
    if (knobs.max_clusters > 0) clusters = std::min<std::int64_t>(clusters, knobs.max_clusters);
  }
  if (knobs.launched_clusters != nullptr) *knobs.launched_clusters = static_cast<int>(clusters);
  config.gridDim = dim3(static_cast<unsigned>(clusters * P::cluster_m));
  GPUKIT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, map_a, map_b, args));
  GPUKIT_CUDA_CHECK_LAUNCH("wgmma_gemm_kernel");
}

template <int kBlockN, int kStages, int kClusterM, bool kMulticast = (kClusterM > 1)>
void launch_for_precision(const GemmLaunch& launch, const WgmmaKnobs& knobs, bool persistent) {
  const KMajorOperands operands = prepare_k_major_operands(launch);
  if (launch.precision == GemmPrecision::bf16) {
    launch_policy<WgmmaPolicy<__nv_bfloat16, kBlockN, kStages, kClusterM, kMulticast>>(
        launch, operands, knobs, persistent);
  } else if (launch.precision == GemmPrecision::tf32) {
    launch_policy<WgmmaPolicy<float, kBlockN, kStages, kClusterM, kMulticast>>(launch, operands,
                                                                               knobs, persistent);
  } else {
    throw InvalidInput("gemm: the wgmma variants compute tf32 and bf16, not " +
                       std::string(gemm_precision_name(launch.precision)));
  }
}

// Tile rows of a band of the persistent raster (gpukit_tune_gemm on an H100 at 8192^3, bands of
// 4, 8, 16 and 32 rows: bf16 was fastest at 16, tf32, whose K-blocks hold half the K, at 4; the
// spread between them was 1-4%).
int default_group_rows(GemmPrecision precision) {
  return precision == GemmPrecision::tf32 ? 4 : 16;
}

}  // namespace

void launch_wgmma_tma(const GemmLaunch& launch) {
  // Row-major order: bands of one row walk each row of tiles in turn.
  launch_for_precision<128, 6, 1>(launch, WgmmaKnobs{.group_rows = 1}, false);
}
void launch_wgmma_tma_128x256(const GemmLaunch& launch) {
  launch_for_precision<256, 4, 1>(launch, WgmmaKnobs{.group_rows = 1}, false);
}
void launch_wgmma_persistent_l2(const GemmLaunch& launch, const WgmmaKnobs& knobs) {
  WgmmaKnobs k = knobs;
  if (k.group_rows <= 0) k.group_rows = default_group_rows(launch.precision);
  launch_for_precision<256, 4, 1>(launch, k, true);
}
void launch_wgmma_cluster_multicast(const GemmLaunch& launch, const WgmmaKnobs& knobs) {
  WgmmaKnobs k = knobs;
  // In cluster units: two tile rows each.
  if (k.group_rows <= 0) k.group_rows = std::max(1, default_group_rows(launch.precision) / 2);
  launch_for_precision<256, 4, 2>(launch, k, true);
}
void launch_wgmma_cluster_without_multicast(const GemmLaunch& launch, const WgmmaKnobs& knobs) {
  WgmmaKnobs k = knobs;
  if (k.group_rows <= 0) k.group_rows = std::max(1, default_group_rows(launch.precision) / 2);
  launch_for_precision<256, 4, 2, false>(launch, k, true);
}

}  // namespace gpukit::blas::cuda_detail
