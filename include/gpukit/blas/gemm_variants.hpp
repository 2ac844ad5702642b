#pragma once
// The registry of CUDA matrix multiplications: the seed's three kernels (seed 003, "Matrix
// Multiplication Performance Engineering": MatrixMult0, MatrixMult1, MatrixMult2 at 16 and 32),
// the SIMT steps beyond them (1D and 2D register blocking, warp tiling, double buffering), the
// tensor-core steps (mma.sync, then Hopper's wgmma with TMA, larger tiles, a persistent L2-aware
// schedule, clusters with multicast), then cuBLAS as the vendor row. Tests and `gpukit
// bench gemm` iterate over it, so a new entry is tested and measured with no new test or bench
// code. Run a variant through GemmPlan (gemm.hpp), which checks the problem, handles the special
// values (K = 0, alpha = 0) and the column-major layout, and holds the variant's workspace.
//
// Traffic model (info.traffic), per OUTPUT element: flops_per_element = 2 per unit of K, so a
// run does 2 K flops per output element, 2 M N K in all (a multiply and an add per term); the
// bench multiplies by K. Global-memory bytes are not per-element here (A and B scale with M K and
// K N, not with the M N outputs): gemm_bytes() gives them under the design's rule, each input
// read once and each output written once.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/variant_info.hpp"

namespace gpukit::blas {

/// What a launcher gets: a problem already brought to the canonical form, C row-major (a
/// column-major C = op(A) op(B) is the row-major C^T = op(B)^T op(A)^T: the plan swaps A and B,
/// M and N, and their transposes), M, N, K >= 1 and alpha != 0 (the plan handles the rest).
/// Pointers are device pointers; alpha and beta are the run's values, exact in double.
struct GemmLaunch {
  std::int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
  double alpha = 1, beta = 0;
  GemmPrecision precision = GemmPrecision::float32;
  /// The plan's device workspace (workspace_bytes of the variant) and cuBLAS handle
  /// (a cublasHandle_t; null for variants that need none).
  void* workspace = nullptr;
  void* cublas_handle = nullptr;
  StreamHandle stream = nullptr;
};

/// What a variant's plan holds in device memory besides the caller's matrices.
enum class GemmWorkspace {
  none,
  /// cuBLAS in bf16: A and B rounded to bf16 copies in their stored layout.
  bf16_copies,
  /// Our tensor-core kernels: K-major copies of the operands that are not already K-major
  /// float (tf32) or that need rounding (bf16, always both).
  k_major_operands,
};

struct GemmVariant {
  using Launcher = void (*)(const GemmLaunch& launch);
  VariantInfo info;
  /// The precisions the variant computes (the seed's kernels: float32 and float64 on the SIMT
  /// cores; the tensor-core kernels tf32 and bf16; cuBLAS all four).
  bool float32 = false, float64 = false, tf32 = false, bf16 = false;
  /// Whether the plan makes a cuBLAS handle for it.
  bool needs_cublas = false;
  GemmWorkspace workspace = GemmWorkspace::none;
  /// Built as sm_90a machine code (wgmma, setmaxnreg): runs on compute capability 9.0 only.
  bool needs_sm90a = false;
  Launcher launch = nullptr;

  bool computes(GemmPrecision precision) const {
    switch (precision) {
      case GemmPrecision::float32:
        return float32;
      case GemmPrecision::float64:
        return float64;
      case GemmPrecision::tf32:
        return tf32;
      case GemmPrecision::bf16:
        return bf16;
    }
    return false;
  }
};

/// Every variant in ladder order (the seed's naive kernel first, cuBLAS last); empty without
/// CUDA.
std::span<const GemmVariant> gemm_variants();

/// Looks a variant up by name; InvalidInput listing the names when there is none,
/// DeviceUnavailable in a build without CUDA.
const GemmVariant& find_gemm_variant(std::string_view name);

/// Device workspace a variant needs for a problem (its GemmWorkspace): the bf16 copies of A and B
/// (2 bytes an element of each) for cuBLAS in bf16; the K-major copies of our tensor-core
/// kernels (2 bytes an element in bf16, 4 in tf32 for each operand not already K-major); 0
/// otherwise.
std::size_t gemm_workspace_bytes(const GemmVariant& variant, const GemmProblem& problem);

/// Whether the variant runs on CUDA device `device` ("" when it does, else the reason: the sm_90a
/// variants need compute capability 9.0). DeviceUnavailable without CUDA.
std::string gemm_variant_device_support(const GemmVariant& variant, int device);

/// Floating-point operations of a run: 2 M N K (the seed's count).
double gemm_flops(const GemmProblem& problem);
/// Global-memory bytes under the design's rule: A and B read once, C written once and read once
/// more when beta != 0, in the precision's storage type.
double gemm_bytes(const GemmProblem& problem, bool reads_c);

}  // namespace gpukit::blas
