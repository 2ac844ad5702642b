// The CPU backend of GemmPlan: OpenBLAS (the Debian libopenblas-dev package), not a loop of
// ours; tf32 and bf16 round the inputs first as the GPU does and multiply in float32.

#include "blas/cpu/gemm_openblas.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::blas::cpu_detail {

namespace {

constexpr std::int64_t kBlasIntMax = std::numeric_limits<blasint>::max();

// A multiply-add of OpenBLAS's SGEMM on one thread: 0.026 ns (gpukit_tune_cpu_threads costs at
// idle, 256^3: 0.023, 0.029). The thread rule's figure; DGEMM's is about twice that, so it starts
// threads a little late.
constexpr double kNsPerMultiplyAdd = 0.026;

// A packed copy of a stored matrix (rows x columns in `layout`, leading dimension ld), each
// element rounded by `round`; its leading dimension is the packed one.
template <class Round>
std::vector<float> rounded_packed_copy(const float* x, std::int64_t rows, std::int64_t columns,
                                       std::int64_t ld, Layout layout, Round round,
                                       std::int64_t& packed_ld) {
  const std::int64_t outer = layout == Layout::row_major ? rows : columns;
  const std::int64_t inner = layout == Layout::row_major ? columns : rows;
  packed_ld = std::max<std::int64_t>(1, inner);
  std::vector<float> copy(static_cast<std::size_t>(outer * inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) copy[o * inner + i] = round(x[o * ld + i]);
  }
  return copy;
}

}  // namespace

GemmSupport openblas_can_implement(const GemmProblem& p) {
  const std::int64_t values[] = {
      p.m, p.n, p.k, p.effective_lda(), p.effective_ldb(), p.effective_ldc()};
  for (std::int64_t v : values) {
    if (v > kBlasIntMax) {
      return {false, fmt::format("OpenBLAS takes sizes and leading dimensions up to {}, not {}",
                                 kBlasIntMax, v)};
    }
  }
  return {};
}

template <class T>
void gemm_openblas(const GemmProblem& p, T alpha, const T* a, const T* b, T beta, T* c,
                   int threads) {
  // Process-wide in OpenBLAS; set per call so that the context's thread count holds, as the thread
  // rule gives it for the multiply-adds (OpenBLAS's own rule, one thread below 64^3, is tighter).
  openblas_set_num_threads(cpu_threads_for(
      {static_cast<std::int64_t>(std::min(double(p.m) * double(p.n) * double(p.k), 0x1p62)),
       kNsPerMultiplyAdd},
      threads));
  const CBLAS_ORDER order = p.layout == Layout::row_major ? CblasRowMajor : CblasColMajor;
  const CBLAS_TRANSPOSE op_a = p.transpose_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE op_b = p.transpose_b ? CblasTrans : CblasNoTrans;
  const auto m = static_cast<blasint>(p.m), n = static_cast<blasint>(p.n),
             k = static_cast<blasint>(p.k);
  const std::int64_t ldc = p.effective_ldc();
  if (beta == T(0)) {
    // BLAS's rule that beta = 0 never reads C, made independent of the library's beta kernel.
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j) {
        c[p.layout == Layout::row_major ? i * ldc + j : i + j * ldc] = T(0);
      }
    }
  }
  if constexpr (sizeof(T) == sizeof(double)) {
    cblas_dgemm(order, op_a, op_b, m, n, k, alpha, a, static_cast<blasint>(p.effective_lda()), b,
                static_cast<blasint>(p.effective_ldb()), beta, c, static_cast<blasint>(ldc));
  } else {
    if (p.precision == GemmPrecision::float32) {
      cblas_sgemm(order, op_a, op_b, m, n, k, alpha, a, static_cast<blasint>(p.effective_lda()), b,
                  static_cast<blasint>(p.effective_ldb()), beta, c, static_cast<blasint>(ldc));
      return;
    }
    const auto round = p.precision == GemmPrecision::tf32 ? &round_to_tf32 : &round_to_bf16;
    std::int64_t packed_lda = 0, packed_ldb = 0;
    const std::vector<float> a_rounded =
        rounded_packed_copy(a, p.transpose_a ? p.k : p.m, p.transpose_a ? p.m : p.k,
                            p.effective_lda(), p.layout, round, packed_lda);
    const std::vector<float> b_rounded =
        rounded_packed_copy(b, p.transpose_b ? p.n : p.k, p.transpose_b ? p.k : p.n,
                            p.effective_ldb(), p.layout, round, packed_ldb);
    cblas_sgemm(order, op_a, op_b, m, n, k, alpha, a_rounded.data(),
                static_cast<blasint>(packed_lda), b_rounded.data(),
                static_cast<blasint>(packed_ldb), beta, c, static_cast<blasint>(ldc));
  }
}

template void gemm_openblas<float>(const GemmProblem&, float, const float*, const float*, float,
                                   float*, int);
template void gemm_openblas<double>(const GemmProblem&, double, const double*, const double*,
                                    double, double*, int);

}  // namespace gpukit::blas::cpu_detail
