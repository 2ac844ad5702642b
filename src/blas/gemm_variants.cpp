#include "gpukit/blas/gemm_variants.hpp"

#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "blas/cuda/gemm_launchers.hpp"
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
    {.info = {.name = "register-blocked-2d",
              .description = "128x128 block tiles, 8x8 outputs a thread in registers, float4 "
                             "shared-memory reads",
              .seed_reference = "beyond the seeds: 2D register blocking (siboehm's SGEMM steps)",
              .role = VariantRole::step,
              .traffic = kPerOutputElementPerK,
              .deterministic = true},
     .float32 = true,
     .launch = &launch_register_blocked_2d},
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
     .bf16_copies = true,
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

std::size_t gemm_workspace_bytes(const GemmVariant& variant, const GemmProblem& problem) {
#if GPUKIT_HAVE_CUDA
  if (!variant.bf16_copies || problem.precision != GemmPrecision::bf16) return 0;
  // The canonical (row-major C) orientation the launcher sees: a column-major problem swaps M, N.
  const bool row_major = problem.layout == Layout::row_major;
  const std::int64_t m = row_major ? problem.m : problem.n;
  const std::int64_t n = row_major ? problem.n : problem.m;
  return bf16_workspace_b_offset(m, problem.k) + static_cast<std::size_t>(problem.k * n) * 2;
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
