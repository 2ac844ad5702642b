#include "gpukit/blas/gemm_variants.hpp"

#include "gpukit/core/variant_registry.hpp"

#include <fmt/format.h>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "blas/cuda/gemm_launchers.hpp"
#include "blas/cuda/gemm_tensor_operands.hpp"
#endif

namespace gpukit::blas {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;

// Per output element and per unit of K: a multiply and an add (2 K flops an element); bytes come
// from gemm_bytes() (gemm_variants.hpp).
constexpr TrafficModel kPerOutputElementPerK{
    .reads_per_element = 0, .writes_per_element = 1, .flops_per_element = 2};

// Ladder order: each row is the previous one plus one idea.
constexpr GemmVariant kVariants[] = {
    {.info = {.name = "seed-naive",
              .description = "MatrixMult0: a thread per element of C, `c +=` in global memory",
              .seed_reference = "003 Matrix Multiplication: MatrixMult0 (naive, 521 GFLOP/s)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .float64 = true,
     .launch = &launch_seed_naive},
    {.info = {.name = "seed-register-accumulator",
              .description = "MatrixMult1: the same loop, the sum kept in a register",
              .seed_reference =
                  "003 Matrix Multiplication: MatrixMult1 (local reuse, 1728 GFLOP/s)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .float64 = true,
     .launch = &launch_seed_register_accumulator},
    {.info = {.name = "seed-shared-tiles-16",
              .description = "MatrixMult2: 16x16 tiles of A and B in shared memory (16 FLOP/load)",
              .seed_reference =
                  "003 Matrix Multiplication: MatrixMult2 (shared memory, 2229 GFLOP/s)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .float64 = true,
     .launch = &launch_seed_shared_tiles_16},
    {.info = {.name = "seed-shared-tiles-32",
              .description = "MatrixMult2 with 32x32 tiles (1024 threads, 32 FLOP per load)",
              .seed_reference = "003 Matrix Multiplication: block size considerations (32x32)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .float64 = true,
     .launch = &launch_seed_shared_tiles_32},
    {.info = {.name = "register-blocked-1d",
              .description = "64x64 block tiles, a column of 8 outputs a thread: each shared "
                             "value of B feeds 8 multiply-adds",
              .seed_reference = "beyond the seeds: 1D register blocking (siboehm's SGEMM steps)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .launch = &launch_register_blocked_1d},
    {.info = {.name = "register-blocked-2d",
              .description = "128x128 block tiles, 8x8 outputs a thread in registers, float4 "
                             "shared-memory reads",
              .seed_reference = "beyond the seeds: 2D register blocking (siboehm's SGEMM steps)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .launch = &launch_register_blocked_2d},
    {.info = {.name = "warp-tiled",
              .description = "a warp owns a 64x32 tile of C (each thread 4x4 blocks 32 rows and "
                             "16 columns apart), float4 global loads, padded transposed A",
              .seed_reference = "beyond the seeds: warp tiling (siboehm's SGEMM steps)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .launch = &launch_warp_tiled},
    {.info = {.name = "double-buffered",
              .description = "two shared-memory buffers (the next tile's loads in flight "
                             "during the products) and 8x16 outputs a thread in 128x256 tiles "
                             "(128x64 where those would leave the last wave mostly idle)",
              .seed_reference = "beyond the seeds: double buffering (siboehm's SGEMM steps)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .launch = &launch_double_buffered},
    {.info = {.name = "mma-sync",
              .description = "tensor cores, Ampere style: mma.sync m16n8 from ldmatrix, a "
                             "4-stage cp.async pipeline, 128x128 tiles",
              .seed_reference = "beyond the seeds: warp-level tensor-core products",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .tf32 = true,
     .bf16 = true,
     .workspace = GemmWorkspace::k_major_operands,
     .launch = &launch_mma_sync},
#if GPUKIT_HAVE_SM90A
    {.info = {.name = "wgmma-tma",
              .description = "Hopper: wgmma on TMA-loaded 128x128 tiles, a producer warpgroup "
                             "and two consumers on an mbarrier ring of 6 stages",
              .seed_reference = "beyond the seeds: warpgroup products, TMA, warp specialisation",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .tf32 = true,
     .bf16 = true,
     .workspace = GemmWorkspace::k_major_operands,
     .needs_sm90a = true,
     .launch = &launch_wgmma_tma},
    {.info = {.name = "wgmma-tma-128x256",
              .description = "128x256 tiles (m64n256 a consumer): twice the products per byte "
                             "loaded, 4 stages",
              .seed_reference = "beyond the seeds: larger tensor-core tiles",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .tf32 = true,
     .bf16 = true,
     .workspace = GemmWorkspace::k_major_operands,
     .needs_sm90a = true,
     .launch = &launch_wgmma_tma_128x256},
    {.info = {.name = "wgmma-persistent-l2",
              .description = "one CTA an SM looping over tiles in bands of rows, so the tiles in "
                             "flight share their panels of A and B in L2",
              .seed_reference = "beyond the seeds: persistent kernel, L2-aware tile order",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .tf32 = true,
     .bf16 = true,
     .workspace = GemmWorkspace::k_major_operands,
     .needs_sm90a = true,
     .launch = [](const GemmLaunch& launch) { launch_wgmma_persistent_l2(launch); }},
    {.info = {.name = "wgmma-cluster-multicast",
              .description = "clusters of two CTAs on adjacent tile rows: each loads half of "
                             "their shared B tile, TMA multicasts it to both",
              .seed_reference = "beyond the seeds: thread block clusters, TMA multicast",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .tf32 = true,
     .bf16 = true,
     .workspace = GemmWorkspace::k_major_operands,
     .needs_sm90a = true,
     .launch = [](const GemmLaunch& launch) { launch_wgmma_cluster_multicast(launch); }},
#endif
    {.info = {.name = "cublas",
              .description = "cuBLAS: cublasSgemm, cublasDgemm, cublasGemmEx in TF32 and BF16",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kPerOutputElementPerK,
              // cuBLAS may pick its algorithm (and so its summation order) per run and device.
              .deterministic = false},
     .float32 = true,
     .float64 = true,
     .tf32 = true,
     .bf16 = true,
     .needs_cublas = true,
     .workspace = GemmWorkspace::bf16_copies,
     .launch = &launch_cublas},
};
#endif

}  // namespace

std::span<const GemmVariant> gemm_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const GemmVariant& find_gemm_variant(std::string_view name) {
  return find_variant(gemm_variants(), name, "gemm");
}

std::string gemm_variant_device_support(const GemmVariant& variant, int device) {
  if (!variant.needs_sm90a) return {};
  DeviceInfo info;
  try {
    info = query_device(device);
  } catch (const Error& e) {
    return e.what();
  }
  if (info.compute_major == 9 && info.compute_minor == 0) return {};
  return fmt::format(
      "variant '{}' is sm_90a code (Hopper: H100, H200) and device {} ({}) has "
      "compute capability {}.{}",
      variant.info.name, device, info.name, info.compute_major, info.compute_minor);
}

std::size_t gemm_workspace_bytes(const GemmVariant& variant, const GemmProblem& problem) {
#if GPUKIT_HAVE_CUDA
  // The canonical (row-major C) orientation the launcher sees: a column-major problem swaps A and
  // B, M and N (GemmPlan::run).
  const bool row_major = problem.layout == Layout::row_major;
  const std::int64_t m = row_major ? problem.m : problem.n;
  const std::int64_t n = row_major ? problem.n : problem.m;
  switch (variant.workspace) {
    case GemmWorkspace::none:
      return 0;
    case GemmWorkspace::bf16_copies:
      if (problem.precision != GemmPrecision::bf16) return 0;
      return bf16_workspace_b_offset(m, problem.k) + static_cast<std::size_t>(problem.k * n) * 2;
    case GemmWorkspace::k_major_operands:
      return k_major_workspace_bytes(problem.precision, m, n, problem.k,
                                     row_major ? problem.transpose_a : problem.transpose_b,
                                     row_major ? problem.transpose_b : problem.transpose_a,
                                     row_major ? problem.effective_lda() : problem.effective_ldb(),
                                     row_major ? problem.effective_ldb() : problem.effective_lda());
  }
  return 0;
#else
  (void)variant;
  (void)problem;
  return 0;
#endif
}

double gemm_flops(const GemmProblem& p) {
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
}

double gemm_bytes(const GemmProblem& p, bool reads_c) {
  const double value_bytes = p.precision == GemmPrecision::float64 ? 8 : 4;
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
               k = static_cast<double>(p.k);
  return value_bytes * (m * k + k * n + m * n * (reads_c ? 2 : 1));
}

}  // namespace gpukit::blas
