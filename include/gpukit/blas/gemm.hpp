#pragma once
// General matrix multiplication (seed 003, "Matrix Multiplication Performance Engineering"):
//     C = alpha * op(A) * op(B) + beta * C,
// C of M x N, op(A) of M x K, op(B) of K x N, op(X) = X or X^T, in float32, float64, or float32
// data multiplied on tensor cores in tf32 or bf16 with float32 accumulation.
//
// Storage (BLAS's rules). A, B and C share one layout, row-major or column-major. A matrix of
// R x Cols stored row-major has element (r, c) at r * ld + c with ld >= max(1, Cols); column-major
// at r + c * ld with ld >= max(1, R). The stored A is M x K, or K x M when transpose_a (then
// op(A) = A^T); the stored B is K x N, or N x K when transpose_b. A leading dimension of 0 in a
// GemmProblem means the packed one. Sizes and indices are 64-bit throughout.
//
// Degenerate and special values (BLAS's rules, the same on every backend and variant):
//   - M = 0 or N = 0: nothing is read or written;
//   - K = 0 or alpha = 0: C = beta * C, and A and B are not read;
//   - beta = 0: C is not read, only written, so a NaN or Inf already in C does not reach the
//     result (C may be uninitialised memory);
//   - otherwise NaN and Inf propagate as IEEE arithmetic gives them: a NaN in row i of op(A) makes
//     row i of C NaN (Inf * 0 is NaN too).
//
// Precisions. float32: float data, float32 products and sums (SIMT on the GPU, the seed's
// arithmetic). float64: double data. tf32: float data whose inputs are rounded to tf32 (10
// explicit mantissa bits, float32's range), products summed in float32; bf16: inputs rounded to
// bfloat16 (7 explicit mantissa bits) the same way. On the GPU the tensor cores do the rounding
// (cuBLAS TF32) or a conversion kernel does (bf16, round to nearest even); the CPU backend rounds
// the inputs to nearest (round_to_tf32 / round_to_bf16 below) and multiplies them in float32 with
// OpenBLAS, so that both backends answer the same question. The output stays float.
//
// Determinism. A given variant and problem gives the same bits run after run on one device (no
// atomics); different variants and backends agree within gemm_error_bound(), not bitwise.
//
// Tested in tests/blas/gemm_test.cpp (every backend, against gemm_reference: ragged sizes, both
// layouts, transposes, padded leading dimensions, exact integer products, the special values)
// and tests/blas/gemm_gpu_test.cpp (every CUDA variant of gemm_variants.hpp the same way).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/verify.hpp"

namespace gpukit::blas {

enum class Layout { row_major, column_major };

enum class GemmPrecision { float32, float64, tf32, bf16 };

/// "float", "double", "tf32", "bf16" (the CLI's spellings).
std::string_view gemm_precision_name(GemmPrecision precision);
/// The inverse of gemm_precision_name (also "float32", "float64"); InvalidInput otherwise.
GemmPrecision parse_gemm_precision(std::string_view name);

/// The storage type of a precision's data: float, except double for float64.
template <class T>
constexpr bool gemm_stores(GemmPrecision precision) {
  return (precision == GemmPrecision::float64) == (sizeof(T) == sizeof(double));
}

/// Rounds x to tf32 (10 explicit mantissa bits), to nearest with ties away from zero, as the
/// GPU's cvt.rna.tf32.f32 does; NaN and Inf stay, a finite value beyond tf32's largest becomes
/// Inf.
float round_to_tf32(float x);
/// Rounds x to bfloat16 (7 explicit mantissa bits), to nearest with ties to even, as CUDA's
/// __float2bfloat16_rn does; NaN stays NaN.
float round_to_bf16(float x);

/// One multiplication's shape and storage (see the file comment).
struct GemmProblem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  Layout layout = Layout::row_major;
  bool transpose_a = false;
  bool transpose_b = false;
  std::int64_t lda = 0;  // 0: packed
  std::int64_t ldb = 0;  // 0: packed
  std::int64_t ldc = 0;  // 0: packed
  GemmPrecision precision = GemmPrecision::float32;

  /// The leading dimensions actually used (the packed ones where 0 was given).
  std::int64_t effective_lda() const;
  std::int64_t effective_ldb() const;
  std::int64_t effective_ldc() const;
  /// Elements a buffer for the stored A, B or C must hold: (outer - 1) * ld + inner, 0 when the
  /// matrix is empty. The problem must be valid.
  std::int64_t a_elements() const;
  std::int64_t b_elements() const;
  std::int64_t c_elements() const;
  /// "float 31x33x1000 (row-major, A^T, lda 1024)".
  std::string describe() const;
};

/// InvalidInput naming the problem unless: M, N, K >= 0; each leading dimension 0 or at least
/// the smallest allowed for its matrix (the message names the matrix, the value and the minimum);
/// and every buffer's element count and byte size fit std::int64_t.
void validate_gemm_problem(const GemmProblem& problem);

/// A stored matrix as a front door knows it before it reads the elements: the name its messages
/// give it (a file's path, an argument's name), its shape as stored (C order) and its dtype in
/// numpy's name ("float32", "float64", "int32", ...).
struct GemmOperand {
  std::string_view name;
  std::span<const std::int64_t> shape;
  std::string_view dtype;
};

/// The problem of numpy's matmul of two stored 2-D matrices, as `gpukit gemm` and Python's gemm
/// take them: op(A) (M x K) times op(B) (K x N), row-major and packed, in `precision` ("" for the
/// data's own: float for float32, double for float64; else a parse_gemm_precision name). The
/// rules both front doors apply, written once: each operand 2-D, float32 or float64, both of one
/// dtype, a precision that computes on that dtype (tf32 and bf16 on float32: the output keeps the
/// inputs' dtype), K columns of op(A) against K rows of op(B), and validate_gemm_problem's sizes.
/// InvalidInput in the front door's words: the operands by their names, the precision by
/// `precision_argument` ("--precision", "precision").
GemmProblem gemm_problem(const GemmOperand& a, const GemmOperand& b, bool transpose_a,
                         bool transpose_b, std::string_view precision,
                         std::string_view precision_argument);

/// InvalidInput, in the same words, unless `c0` (the matrix beta scales) is M x N of the inputs'
/// dtype (`problem` from gemm_problem).
void check_gemm_c0(const GemmProblem& problem, const GemmOperand& c0);

/// Whether a plan can run a problem, and why not.
struct GemmSupport {
  bool ok = true;
  std::string reason;  // empty when ok
  explicit operator bool() const { return ok; }
};

/// A multiplication of one problem on one device with one variant, created once and run many
/// times (CUTLASS's shape: can_implement, workspace, run). Construction checks the problem
/// (InvalidInput: validate_gemm_problem, or can_implement's reason), creates what the variant
/// needs (a cuBLAS handle; the bf16 copies of A and B: workspace_bytes() of device memory,
/// OutOfMemory naming the bytes) and never runs anything. DeviceUnavailable for a CUDA context
/// without a usable device. A plan is not used by two threads at once.
///
/// On a CPU plan, run() takes host pointers and ignores the stream (it returns when done); on a
/// CUDA plan, device pointers on the plan's device, and it returns once the work is queued.
class GemmPlan {
 public:
  /// `variant`: a CUDA variant's name (gemm_variants.hpp); empty: default_gemm_variant() for the
  /// problem's precision. On a CPU context it must be empty or "openblas".
  GemmPlan(const Context& context, const GemmProblem& problem, std::string_view variant = {});
  GemmPlan(GemmPlan&&) noexcept;
  GemmPlan& operator=(GemmPlan&&) noexcept;
  ~GemmPlan();

  /// Whether `variant` on `context` can run `problem` (a valid one), with the reason when not:
  /// a precision the variant does not compute, sizes beyond what it takes.
  static GemmSupport can_implement(const Context& context, const GemmProblem& problem,
                                   std::string_view variant = {});

  /// C = alpha * op(A) * op(B) + beta * C. T is float (float32, tf32, bf16) or double (float64);
  /// InvalidInput for the other. a, b and c hold a_elements(), b_elements(), c_elements() (may be
  /// null where that is 0, or where the rules above say they are not read); C overlapping A or B
  /// is not allowed. On CUDA: queued on `stream`, not waited for; the buffers and the plan must
  /// live until the stream has run it.
  template <class T>
  void run(T alpha, const T* a, const T* b, T beta, T* c, StreamHandle stream = nullptr);

  const GemmProblem& problem() const;
  /// "openblas" or the CUDA variant's name.
  std::string_view variant() const;
  /// Device memory the plan holds for the variant (the bf16 operands), 0 on the CPU.
  std::size_t workspace_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template void GemmPlan::run<float>(float, const float*, const float*, float, float*,
                                          StreamHandle);
extern template void GemmPlan::run<double>(double, const double*, const double*, double, double*,
                                           StreamHandle);

/// Every variant name a GemmPlan may be given: "openblas" (the CPU backend's one) and the CUDA
/// variants of gemm_variants() in ladder order (none in a build without CUDA).
std::vector<std::string> gemm_variant_names();

/// InvalidInput listing gemm_variant_names() unless `name` is one of them: for front doors that
/// check a name before any input is read (`gpukit gemm --variant`). Whether the variant runs on
/// a given context is GemmPlan::can_implement's question.
void check_gemm_variant_name(std::string_view name);

/// The variant a CUDA plan uses when none is named: for now the vendor row (cuBLAS) for every
/// precision, until a ladder step of ours matches it. DeviceUnavailable without CUDA.
std::string default_gemm_variant(GemmPrecision precision);

/// The host-data API: C = alpha * op(A) * op(B) + beta * C for matrices in host memory, on the
/// context's device (a CUDA context copies A, B, and C when beta != 0, to the device and C back;
/// the spans must not overlap C). The spans hold at least a_elements(), b_elements(),
/// c_elements() (InvalidInput naming the matrix otherwise); elements outside the matrices (a
/// leading dimension's padding) are neither read nor written. Blocks until C is written. The plan
/// is the calling thread's cached one (below).
template <class T>
void gemm(const Context& context, const GemmProblem& problem, T alpha, std::span<const T> a,
          std::span<const T> b, T beta, std::span<T> c, std::string_view variant = {});

/// The device-data API: the same product for matrices in device memory of the context's GPU (a
/// CUDA context; pointers holding a_elements(), b_elements(), c_elements(); C overlapping neither A
/// nor B), queued on `stream` and not waited for: the buffers must live until the stream has run
/// it. DeviceUnavailable on a CPU context or without CUDA.
///
/// The plan cache (of gemm() and gemm_on_device()): each thread keeps the GemmPlan of its last
/// product (its context, problem and variant: a cuBLAS handle, the bf16 workspace), so that a
/// loop of products of one shape plans once; a call that differs replaces it (until then the plan
/// keeps its device memory: the bf16 copies of A and B where it has them). A plan's runs share
/// its workspace, so before it serves another stream, or a host call, or is replaced, the stream
/// of its last queued run is waited for: that stream must stay valid until the thread's next GEMM
/// call (or its exit, when the plan is freed).
template <class T>
void gemm_on_device(const Context& context, const GemmProblem& problem, T alpha, const T* a,
                    const T* b, T beta, T* c, StreamHandle stream, std::string_view variant = {});

/// The independent reference of the tests and of `gemm --check`: every element of
/// alpha * op(A) * op(B) + beta * C0 as a scalar loop in long double over the inputs as given
/// (not rounded to tf32 or bf16: gemm_error_bound accounts for that), with the special-value rules
/// above. Returns the M x N result in row-major order, packed. c0 may be empty when beta = 0.
template <class T>
std::vector<long double> gemm_reference(const GemmProblem& problem, T alpha, std::span<const T> a,
                                        std::span<const T> b, T beta, std::span<const T> c0,
                                        int threads = 0);

/// How far a correct result may be from the exact one, element (i, j) (the derivation):
///   |computed - exact| <= (w + gamma(K + 2, u)(1 + w)) * |alpha| * (|op(A)| |op(B)|)_ij
///                          + gamma(2, u) * |beta * C0_ij|,
/// gamma(h, u) = h u / (1 - h u). The inputs' rounding to the precision's format costs each
/// product at most w = 2 v + v^2, v the input's unit roundoff: 0 for float32 and float64, 2^-11
/// for tf32 rounded to nearest but 2^-10 as cuBLAS may truncate instead, 2^-8 for bf16. The sum
/// of K products, the scaling by alpha and the addition of beta * C0 are K + 2 roundings in the
/// accumulator's format in any summation order (Higham, Lemma 3.1 / 3.5), u = 2^-24 for float32
/// (2^-23 for the tensor-core precisions, whose adders may truncate) and 2^-53 for float64.
/// `abs_product` is |alpha| (|op(A)||op(B)|)_ij, `abs_c_term` is |beta C0_ij|.
double gemm_error_bound(GemmPrecision precision, std::int64_t k, double abs_product,
                        double abs_c_term);

/// The result of checking a computed C against gemm_reference, element by element.
struct GemmCheck {
  ErrorMetrics metrics;       // C (M x N) against the reference: the seeds' L1 norm, max abs
  std::int64_t failures = 0;  // elements outside their gemm_error_bound (a NaN where the
                              // reference is finite, or the other way round, is one)
  std::int64_t first_failure_row = -1;
  std::int64_t first_failure_column = -1;
  double worst_error_over_bound = 0;  // max |c - ref| / bound over the finite elements
  bool passed() const { return failures == 0; }
};

/// Checks c (the computed C, stored as the problem says) against gemm_reference of the same
/// inputs, every element within its gemm_error_bound; NaN and Inf must sit where the
/// reference has them (same sign for Inf). The shared bound of `gemm --check` and the tests.
template <class T>
GemmCheck check_gemm(const GemmProblem& problem, T alpha, std::span<const T> a,
                     std::span<const T> b, T beta, std::span<const T> c0, std::span<const T> c,
                     int threads = 0);

/// check_gemm on `samples` elements of C: its four corners, then positions spread over C by a
/// hash of the sample's index (the same positions on every call). For products too large for a
/// full long-double reference (the benchmarks' 16384^3): each sampled element is still a full
/// K-long sum, so a wrong tile, transpose or edge shows. first_failure_* name the element.
template <class T>
GemmCheck check_gemm_sampled(const GemmProblem& problem, T alpha, std::span<const T> a,
                             std::span<const T> b, T beta, std::span<const T> c0,
                             std::span<const T> c, int samples, int threads = 0);

}  // namespace gpukit::blas
