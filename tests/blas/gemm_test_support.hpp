#pragma once
// Shared by the GEMM tests: the cases (ragged shapes, both layouts, transposes, padded leading
// dimensions), their random or exact-integer inputs, and one check that runs any way of
// computing C (the host API on a backend, or one CUDA variant through a plan) against the
// independent long-double reference, every element within gemm_error_bound.
//
// Vacuous passes are guarded against: A's and B's padding (the elements between rows that a
// leading dimension above the packed one leaves) holds NaN, so a kernel that reads it fails; C's
// padding holds a sentinel that must survive; C itself holds NaN when beta = 0 (it must not be
// read) and every element is checked against a reference that is not all zeros.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpukit/blas/gemm.hpp"

namespace gpukit::blas::testing {

struct GemmCase {
  std::int64_t m, n, k;
};

/// Ragged on purpose (the 1, 31, 33, 1000-ish), each reference at most ~10^6 long-double
/// multiply-adds so that every layout, transpose and precision runs in CI time.
inline std::vector<GemmCase> ragged_cases() {
  return {{1, 1, 1},     {1, 33, 31},  {31, 1, 33},   {33, 31, 1},    {31, 33, 32}, {33, 33, 33},
          {64, 17, 100}, {1000, 3, 7}, {5, 1000, 33}, {31, 33, 1000}, {17, 65, 31}, {2, 3, 1025}};
}

constexpr Layout kLayouts[] = {Layout::row_major, Layout::column_major};
constexpr GemmPrecision kPrecisions[] = {GemmPrecision::float32, GemmPrecision::float64,
                                         GemmPrecision::tf32, GemmPrecision::bf16};

/// The value C's padding holds; it must come back unchanged.
template <class T>
constexpr T kPaddingSentinel = T(-12345.5);

/// The problem for a case, with leading dimensions `pad` above the packed ones (0: packed).
inline GemmProblem make_problem(const GemmCase& c, Layout layout, bool transpose_a,
                                bool transpose_b, GemmPrecision precision, std::int64_t pad) {
  GemmProblem p;
  p.m = c.m, p.n = c.n, p.k = c.k;
  p.layout = layout;
  p.transpose_a = transpose_a, p.transpose_b = transpose_b;
  p.precision = precision;
  if (pad > 0) {
    GemmProblem packed = p;
    p.lda = packed.effective_lda() + pad;
    p.ldb = packed.effective_ldb() + pad;
    p.ldc = packed.effective_ldc() + pad;
  }
  return p;
}

/// Whether element e of a stored matrix's buffer lies inside the matrix (rows x columns, ld) or
/// in a leading dimension's padding.
inline bool inside(std::int64_t e, std::int64_t rows, std::int64_t columns, std::int64_t ld,
                   Layout layout) {
  const std::int64_t inner = layout == Layout::row_major ? columns : rows;
  (void)rows;
  return e % ld < inner;
}

template <class T>
struct GemmInputs {
  GemmProblem problem;
  T alpha = 1, beta = 0;
  std::vector<T> a, b, c0;
};

/// How the inputs are drawn: uniform in [-1, 1], or small integers whose products and sums are
/// exact in every precision (|a|, |b| <= 4, |c0| <= 64: |alpha sum| <= 2 * 16 K, exact in
/// float32 while 32 K + 3 * 64 < 2^24, that is K < 524000; 4 is exact in bf16 and tf32).
enum class Values { uniform, small_integers };

template <class T>
GemmInputs<T> make_inputs(const GemmProblem& p, T alpha, T beta, Values values,
                          std::uint64_t seed) {
  GemmInputs<T> in;
  in.problem = p;
  in.alpha = alpha;
  in.beta = beta;
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::uniform_int_distribution<int> integer(-4, 4);
  std::uniform_int_distribution<int> c_integer(-64, 64);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const auto fill = [&](std::vector<T>& x, std::int64_t count, std::int64_t rows,
                        std::int64_t columns, std::int64_t ld, bool is_c) {
    x.resize(static_cast<std::size_t>(count));
    for (std::int64_t e = 0; e < count; ++e) {
      if (!inside(e, rows, columns, ld, p.layout)) {
        x[e] = is_c ? kPaddingSentinel<T> : nan;
      } else if (is_c && beta == T(0)) {
        x[e] = nan;  // beta = 0 never reads C
      } else if (values == Values::uniform) {
        x[e] = static_cast<T>(uniform(engine));
      } else {
        x[e] = static_cast<T>(is_c ? c_integer(engine) : integer(engine));
      }
    }
  };
  fill(in.a, p.a_elements(), p.transpose_a ? p.k : p.m, p.transpose_a ? p.m : p.k,
       p.effective_lda(), false);
  fill(in.b, p.b_elements(), p.transpose_b ? p.n : p.k, p.transpose_b ? p.k : p.n,
       p.effective_ldb(), false);
  fill(in.c0, p.c_elements(), p.m, p.n, p.effective_ldc(), true);
  return in;
}

/// Computes C in place from in.c0's copy: the way under test.
template <class T>
using GemmRunner = std::function<void(const GemmInputs<T>& in, std::vector<T>& c)>;

/// Runs `run` on `in` and checks every element of C against the reference within its bound
/// (exactly, for Values::small_integers), C's padding unchanged. `what` names the way in messages.
template <class T>
void expect_gemm_matches_reference(const GemmInputs<T>& in, Values values, const GemmRunner<T>& run,
                                   const std::string& what) {
  const GemmProblem& p = in.problem;
  SCOPED_TRACE(what + " " + p.describe() + " alpha " + std::to_string(in.alpha) + " beta " +
               std::to_string(in.beta));
  std::vector<T> c = in.c0;
  run(in, c);
  const GemmCheck check = check_gemm<T>(p, in.alpha, in.a, in.b, in.beta, in.c0, c);
  EXPECT_TRUE(check.passed()) << check.failures << " of " << p.m * p.n
                              << " elements outside the bound, first at ("
                              << check.first_failure_row << ", " << check.first_failure_column
                              << "); worst error/bound " << check.worst_error_over_bound;
  const std::int64_t ldc = p.effective_ldc();
  if (values == Values::small_integers) {
    const std::vector<long double> reference =
        gemm_reference<T>(p, in.alpha, in.a, in.b, in.beta, in.c0);
    std::int64_t inexact = 0;
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j) {
        const T got = c[p.layout == Layout::row_major ? i * ldc + j : i + j * ldc];
        if (static_cast<long double>(got) != reference[i * p.n + j]) ++inexact;
      }
    }
    EXPECT_EQ(inexact, 0) << "integer products must be exact";
  }
  std::int64_t padding_changed = 0;
  for (std::int64_t e = 0; e < p.c_elements(); ++e) {
    if (!inside(e, p.m, p.n, ldc, p.layout) && !(c[e] == kPaddingSentinel<T>)) ++padding_changed;
  }
  EXPECT_EQ(padding_changed, 0) << "elements of C's padding were written";
}

/// Products for the calling thread's plan cache (gemm.hpp): a float problem three times, then
/// each field of it changed alone, each followed by the problem again, so that a cache that
/// compared too few fields would run a stale plan.
inline std::vector<GemmProblem> one_field_changes() {
  const GemmProblem base =
      make_problem({31, 33, 17}, Layout::row_major, false, false, GemmPrecision::float32, 0);
  std::vector<GemmProblem> loop = {base, base, base};
  const auto changed = [&](auto change) {
    GemmProblem p = base;
    change(p);
    loop.push_back(p);
    loop.push_back(base);
  };
  changed([](GemmProblem& p) { p.m = 32; });
  changed([](GemmProblem& p) { p.n = 34; });
  changed([](GemmProblem& p) { p.k = 18; });
  changed([](GemmProblem& p) { p.layout = Layout::column_major; });
  changed([](GemmProblem& p) { p.transpose_a = true; });
  changed([](GemmProblem& p) { p.transpose_b = true; });
  changed([](GemmProblem& p) { p.lda = 20; });
  changed([](GemmProblem& p) { p.ldb = 40; });
  changed([](GemmProblem& p) { p.ldc = 35; });
  changed([](GemmProblem& p) { p.precision = GemmPrecision::tf32; });
  changed([](GemmProblem& p) { p.precision = GemmPrecision::bf16; });
  return loop;
}

/// The element type a precision's data is stored in, as a callable's template argument.
template <class F>
void with_storage_type(GemmPrecision precision, F&& f) {
  if (precision == GemmPrecision::float64) {
    f.template operator()<double>();
  } else {
    f.template operator()<float>();
  }
}

}  // namespace gpukit::blas::testing
