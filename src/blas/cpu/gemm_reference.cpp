// The independent reference of the GEMM tests and `gemm --check`: a scalar long-double loop that
// shares no code with the backends it checks, and the error bound both compare with.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas {

namespace {

// Element (row, column) of a stored matrix.
template <class T>
long double stored_at(const T* x, std::int64_t row, std::int64_t column, std::int64_t ld,
                      Layout layout) {
  return static_cast<long double>(layout == Layout::row_major ? x[row * ld + column]
                                                              : x[row + column * ld]);
}

struct ReferenceTerms {
  long double value = 0;        // alpha * sum op(A)(i,p) op(B)(p,j) + beta * C0(i,j)
  long double abs_product = 0;  // |alpha| * sum |op(A)(i,p)| |op(B)(p,j)|
  long double abs_c_term = 0;   // |beta * C0(i,j)|
};

template <class T>
ReferenceTerms reference_terms(const GemmProblem& p, T alpha, const T* a, const T* b, T beta,
                               const T* c0, std::int64_t i, std::int64_t j) {
  ReferenceTerms terms;
  const std::int64_t lda = p.effective_lda(), ldb = p.effective_ldb(), ldc = p.effective_ldc();
  // BLAS's rules (gemm.hpp): K = 0 or alpha = 0 reads neither A nor B; beta = 0 never reads C.
  if (p.k > 0 && alpha != T(0)) {
    long double sum = 0, sum_abs = 0;
    for (std::int64_t q = 0; q < p.k; ++q) {
      const long double x =
          p.transpose_a ? stored_at(a, q, i, lda, p.layout) : stored_at(a, i, q, lda, p.layout);
      const long double y =
          p.transpose_b ? stored_at(b, j, q, ldb, p.layout) : stored_at(b, q, j, ldb, p.layout);
      sum += x * y;
      sum_abs += std::fabs(x) * std::fabs(y);
    }
    terms.value = static_cast<long double>(alpha) * sum;
    terms.abs_product = std::fabs(static_cast<long double>(alpha)) * sum_abs;
  }
  if (beta != T(0)) {
    const long double c_term = static_cast<long double>(beta) * stored_at(c0, i, j, ldc, p.layout);
    terms.value += c_term;
    terms.abs_c_term = std::fabs(c_term);
  }
  return terms;
}

template <class T>
void check_sizes(const GemmProblem& p, std::span<const T> a, std::span<const T> b, T alpha, T beta,
                 std::span<const T> c0) {
  validate_gemm_problem(p);
  const bool reads_operands = p.k > 0 && alpha != T(0);
  if (reads_operands && (a.size() < static_cast<std::size_t>(p.a_elements()) ||
                         b.size() < static_cast<std::size_t>(p.b_elements()))) {
    throw InvalidInput("gemm reference: A or B holds fewer elements than " + p.describe() +
                       " needs");
  }
  if (beta != T(0) && c0.size() < static_cast<std::size_t>(p.c_elements())) {
    throw InvalidInput("gemm reference: C0 holds fewer elements than " + p.describe() + " needs");
  }
}

// The threads for `elements` elements of C in `pieces` iterations, each element a sum of k
// products in long double: 2 ns a multiply-add on one thread (gpukit_tune_cpu_threads costs at
// idle, 32^3: 1.7, 2.4). The thread rule's figure.
int thread_count(std::int64_t elements, std::int64_t k, std::int64_t pieces, int threads) {
  constexpr double kNsPerMultiplyAdd = 2;
  return cpu_threads_for(
      {elements, kNsPerMultiplyAdd * double(std::max<std::int64_t>(k, 1)), pieces}, threads);
}

}  // namespace

double gemm_error_bound(GemmPrecision precision, std::int64_t k, double abs_product,
                        double abs_c_term) {
  double v = 0, u = 0;  // the inputs' and the accumulator's unit roundoff (gemm.hpp)
  switch (precision) {
    case GemmPrecision::float32:
      u = 0x1p-24;
      break;
    case GemmPrecision::float64:
      u = 0x1p-53;
      break;
    case GemmPrecision::tf32:
      v = 0x1p-10, u = 0x1p-23;
      break;
    case GemmPrecision::bf16:
      v = 0x1p-8, u = 0x1p-23;
      break;
  }
  const auto gamma = [u](double h) {
    const double hu = h * u;
    return hu < 1 ? hu / (1 - hu) : std::numeric_limits<double>::infinity();
  };
  const double w = 2 * v + v * v;
  return (w + gamma(static_cast<double>(k) + 2) * (1 + w)) * abs_product + gamma(2) * abs_c_term;
}

template <class T>
std::vector<long double> gemm_reference(const GemmProblem& p, T alpha, std::span<const T> a,
                                        std::span<const T> b, T beta, std::span<const T> c0,
                                        int threads) {
  check_sizes(p, a, b, alpha, beta, c0);
  std::vector<long double> result(static_cast<std::size_t>(p.m * p.n));
  const int team = thread_count(p.m * p.n, p.k, p.m, threads);  // a row an iteration
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      result[i * p.n + j] =
          reference_terms(p, alpha, a.data(), b.data(), beta, c0.data(), i, j).value;
    }
  }
  return result;
}

namespace {

// Checks the elements (rows[e], columns[e]) of C against the reference, each within its bound.
template <class T>
GemmCheck check_elements(const GemmProblem& p, T alpha, std::span<const T> a, std::span<const T> b,
                         T beta, std::span<const T> c0, std::span<const T> c,
                         const std::vector<std::int64_t>& rows,
                         const std::vector<std::int64_t>& columns, int threads) {
  check_sizes(p, a, b, alpha, beta, c0);
  if (c.size() < static_cast<std::size_t>(p.c_elements())) {
    throw InvalidInput("gemm check: C holds fewer elements than " + p.describe() + " needs");
  }
  const std::size_t count = rows.size();
  std::vector<long double> reference(count);
  std::vector<double> got(count), bound(count);
  const std::int64_t ldc = p.effective_ldc();
  const int team = thread_count(static_cast<std::int64_t>(count), p.k, 0, threads);
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::size_t e = 0; e < count; ++e) {
    const std::int64_t i = rows[e], j = columns[e];
    const ReferenceTerms t = reference_terms(p, alpha, a.data(), b.data(), beta, c0.data(), i, j);
    reference[e] = t.value;
    got[e] = static_cast<double>(p.layout == Layout::row_major ? c[i * ldc + j] : c[i + j * ldc]);
    bound[e] = gemm_error_bound(p.precision, p.k, static_cast<double>(t.abs_product),
                                static_cast<double>(t.abs_c_term));
  }
  GemmCheck check;
  check.metrics = compare(std::span<const long double>(reference), std::span<const double>(got));
  for (std::size_t e = 0; e < count; ++e) {
    const long double r = reference[e];
    const double g = got[e];
    bool ok = false;
    if (std::isnan(r)) {
      ok = std::isnan(g);
    } else if (std::isinf(r)) {
      ok = g == static_cast<double>(r);
    } else if (std::isfinite(g)) {
      const double error = static_cast<double>(std::fabs(static_cast<long double>(g) - r));
      ok = error <= bound[e];
      if (bound[e] > 0) {
        check.worst_error_over_bound = std::max(check.worst_error_over_bound, error / bound[e]);
      } else if (error > 0) {
        check.worst_error_over_bound = std::numeric_limits<double>::infinity();
      }
    }
    if (!ok) {
      if (check.failures == 0) {
        check.first_failure_row = rows[e];
        check.first_failure_column = columns[e];
      }
      ++check.failures;
    }
  }
  return check;
}

}  // namespace

template <class T>
GemmCheck check_gemm(const GemmProblem& p, T alpha, std::span<const T> a, std::span<const T> b,
                     T beta, std::span<const T> c0, std::span<const T> c, int threads) {
  validate_gemm_problem(p);
  std::vector<std::int64_t> rows, columns;
  rows.reserve(static_cast<std::size_t>(p.m * p.n));
  columns.reserve(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) rows.push_back(i), columns.push_back(j);
  }
  return check_elements(p, alpha, a, b, beta, c0, c, rows, columns, threads);
}

template <class T>
GemmCheck check_gemm_sampled(const GemmProblem& p, T alpha, std::span<const T> a,
                             std::span<const T> b, T beta, std::span<const T> c0,
                             std::span<const T> c, int samples, int threads) {
  validate_gemm_problem(p);
  std::vector<std::int64_t> rows, columns;
  if (p.m > 0 && p.n > 0) {
    for (int s = 0; s < samples; ++s) {
      // The four corners first (ragged edges live there), then positions spread by a hash of
      // the sample's index (splitmix64).
      std::uint64_t z = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(s + 1);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      const std::int64_t i = s < 4 ? (s < 2 ? 0 : p.m - 1) : static_cast<std::int64_t>(z % p.m);
      const std::int64_t j =
          s < 4 ? (s % 2 == 0 ? 0 : p.n - 1) : static_cast<std::int64_t>((z >> 32) % p.n);
      rows.push_back(i), columns.push_back(j);
    }
  }
  return check_elements(p, alpha, a, b, beta, c0, c, rows, columns, threads);
}

#define GPUKIT_GEMM_REFERENCE(T)                                                                  \
  template std::vector<long double> gemm_reference<T>(                                            \
      const GemmProblem&, T, std::span<const T>, std::span<const T>, T, std::span<const T>, int); \
  template GemmCheck check_gemm<T>(const GemmProblem&, T, std::span<const T>, std::span<const T>, \
                                   T, std::span<const T>, std::span<const T>, int);               \
  template GemmCheck check_gemm_sampled<T>(const GemmProblem&, T, std::span<const T>,             \
                                           std::span<const T>, T, std::span<const T>,             \
                                           std::span<const T>, int, int);
GPUKIT_GEMM_REFERENCE(float)
GPUKIT_GEMM_REFERENCE(double)
#undef GPUKIT_GEMM_REFERENCE

}  // namespace gpukit::blas
