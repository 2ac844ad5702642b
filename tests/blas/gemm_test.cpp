// GEMM through the public host-data API, each scenario written once and run on every backend
// (Cpu/... on OpenBLAS, Cuda/... on the default CUDA variant): ragged shapes x both layouts x
// transposes x padded leading dimensions x the four precisions against the long-double
// reference within gemm_error_bound, exact integer products, the special values (K = 0,
// alpha = 0, beta = 0 with NaN in C, NaN propagation, empty shapes) and argument errors.
// CPU only: the tf32/bf16 rounding, the bound itself, and that the check catches a wrong
// element. Every CUDA variant one by one: gemm_gpu_test.cpp.
//
// Tolerance (gemm.hpp, gemm_error_bound), per element (i, j), with v the inputs' unit roundoff
// (float32/float64 0, tf32 2^-10 allowing truncation, bf16 2^-8) and u the accumulator's
// (float32 2^-24, tensor-core precisions 2^-23, float64 2^-53):
//   |c - exact| <= (2v + v^2 + gamma(K + 2, u)(1 + 2v + v^2)) |alpha| (|op(A)||op(B)|)_ij
//                  + gamma(2, u) |beta c0_ij|.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gemm_test_support.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/error.hpp"
#include "refusal_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::blas {
namespace {

using gpukit::testing::EveryBackendTest;
using gpukit::testing::refusal;
using gpukit::testing::TestSeed;
using testing::GemmCase;
using testing::GemmInputs;
using testing::GemmRunner;
using testing::Values;

class GemmScenarios : public EveryBackendTest {
 protected:
  template <class T>
  GemmRunner<T> host_api() const {
    const Context context = this->context();
    return [context](const GemmInputs<T>& in, std::vector<T>& c) {
      gemm<T>(context, in.problem, in.alpha, in.a, in.b, in.beta, c);
    };
  }
};

TEST_P(GemmScenarios, RaggedShapesLayoutsTransposesAndPaddedLeadingDimensions) {
  const TestSeed seed;
  std::uint64_t stream = seed.value();
  for (const GemmPrecision precision : testing::kPrecisions) {
    testing::with_storage_type(precision, [&]<class T>() {
      for (const GemmCase& shape : testing::ragged_cases()) {
        for (const Layout layout : testing::kLayouts) {
          for (const bool ta : {false, true}) {
            for (const bool tb : {false, true}) {
              // Half the cases padded (3 elements past the packed leading dimension), half not;
              // alpha and beta plain or not.
              const std::int64_t pad = (ta != tb) ? 3 : 0;
              const GemmProblem p = testing::make_problem(shape, layout, ta, tb, precision, pad);
              const bool plain = (shape.m + shape.n + ta) % 2 == 0;
              const auto in = testing::make_inputs<T>(
                  p, plain ? T(1) : T(1.5), plain ? T(0) : T(-0.75), Values::uniform, ++stream);
              testing::expect_gemm_matches_reference<T>(in, Values::uniform, host_api<T>(), "gemm");
            }
          }
        }
      }
    });
  }
}

TEST_P(GemmScenarios, SmallIntegerInputsGiveExactResultsInEveryPrecision) {
  const TestSeed seed;
  std::uint64_t stream = seed.value();
  for (const GemmPrecision precision : testing::kPrecisions) {
    testing::with_storage_type(precision, [&]<class T>() {
      for (const GemmCase shape : {GemmCase{33, 31, 1000}, GemmCase{1, 1, 4097},
                                   GemmCase{64, 64, 64}, GemmCase{1000, 2, 31}}) {
        for (const Layout layout : testing::kLayouts) {
          for (const auto& [alpha, beta] : {std::pair{T(1), T(0)}, std::pair{T(2), T(-3)}}) {
            const GemmProblem p = testing::make_problem(shape, layout, shape.m % 2 == 0,
                                                        layout == Layout::row_major, precision, 1);
            const auto in =
                testing::make_inputs<T>(p, alpha, beta, Values::small_integers, ++stream);
            testing::expect_gemm_matches_reference<T>(in, Values::small_integers, host_api<T>(),
                                                      "gemm");
          }
        }
      }
    });
  }
}

TEST_P(GemmScenarios, KZeroOrAlphaZeroGivesBetaTimesCWithoutReadingAOrB) {
  for (const Layout layout : testing::kLayouts) {
    for (const std::int64_t k : {0, 5}) {
      GemmProblem p;
      p.m = 3, p.n = 4, p.k = k, p.layout = layout;
      // K = 0: A and B hold nothing; alpha = 0 (K = 5): they hold NaN, which must not be read.
      const std::vector<float> a(static_cast<std::size_t>(p.a_elements()), NAN);
      const std::vector<float> b(static_cast<std::size_t>(p.b_elements()), NAN);
      std::vector<float> c(12);
      for (std::size_t e = 0; e < c.size(); ++e) c[e] = static_cast<float>(e) - 5;
      const float alpha = k == 0 ? 2.0f : 0.0f;
      gemm<float>(context(), p, alpha, a, b, -2.0f, c);
      for (std::size_t e = 0; e < c.size(); ++e) {
        EXPECT_EQ(c[e], -2.0f * (static_cast<float>(e) - 5)) << "element " << e << ", K " << k;
      }
      // beta = 0 as well: zeros, even over NaN.
      std::vector<float> nan_c(12, NAN);
      gemm<float>(context(), p, alpha, a, b, 0.0f, nan_c);
      for (std::size_t e = 0; e < nan_c.size(); ++e) EXPECT_EQ(nan_c[e], 0.0f) << "element " << e;
    }
  }
}

TEST_P(GemmScenarios, BetaZeroNeverReadsCSoNanInCDoesNotPropagate) {
  for (const GemmPrecision precision : testing::kPrecisions) {
    testing::with_storage_type(precision, [&]<class T>() {
      GemmProblem p;
      p.m = 5, p.n = 7, p.k = 3, p.precision = precision;
      const std::vector<T> a(15, T(1)), b(21, T(2));
      std::vector<T> c(35, std::numeric_limits<T>::quiet_NaN());
      c[3] = std::numeric_limits<T>::infinity();
      gemm<T>(context(), p, T(1), a, b, T(0), c);
      for (std::size_t e = 0; e < c.size(); ++e) {
        EXPECT_EQ(c[e], T(6)) << gemm_precision_name(precision) << " element " << e;
      }
    });
  }
}

TEST_P(GemmScenarios, NanAndInfPropagateAsIeeeArithmeticGivesThem) {
  // Row-major, no transposes: a NaN at A(1, 2) makes row 1 of C NaN; an Inf at B(0, 3) makes
  // column 3 +-Inf where A(i, 0) is non-zero and finite, NaN where A(i, 0) is 0 (Inf * 0).
  GemmProblem p;
  p.m = 4, p.n = 5, p.k = 3, p.precision = GemmPrecision::float64;
  std::vector<double> a = {1, 2, 3, 0, 1, std::nan(""), -2, 1, 1, 4, 0, 0};
  std::vector<double> b(15, 0.5);
  b[3] = std::numeric_limits<double>::infinity();
  std::vector<double> c(20, std::nan(""));
  gemm<double>(context(), p, 1.0, a, b, 0.0, c);
  for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(c[5 + j])) << "C(1, " << j << ")";
  EXPECT_EQ(c[0 * 5 + 3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(c[2 * 5 + 3], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(c[3 * 5 + 3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(c[0 * 5 + 0], 3.0);  // (1 + 2 + 3) / 2
  EXPECT_EQ(c[2 * 5 + 4], 0.0);  // (-2 + 1 + 1) / 2
  EXPECT_EQ(c[3 * 5 + 1], 2.0);  // (4 + 0 + 0) / 2
  // And check_gemm agrees, position by position.
  std::vector<double> c0(20, 0.0);
  EXPECT_TRUE(check_gemm<double>(p, 1.0, a, b, 0.0, c0, c).passed());
}

TEST_P(GemmScenarios, EmptyShapesTouchNothing) {
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 4}, {4, 0}, {0, 0}}) {
    GemmProblem p;
    p.m = m, p.n = n, p.k = 3;
    const std::vector<float> a(static_cast<std::size_t>(p.a_elements()), 1.0f);
    const std::vector<float> b(static_cast<std::size_t>(p.b_elements()), 1.0f);
    std::vector<float> c(4, 7.0f);  // more than C needs (nothing): must stay
    gemm<float>(context(), p, 1.0f, a, b, 1.0f, c);
    for (float x : c) EXPECT_EQ(x, 7.0f);
  }
}

TEST_P(GemmScenarios, BadArgumentsAreRefusedWithTheShapesNamed) {
  const auto message_of = [&](GemmProblem p, std::size_t a_size, std::size_t b_size,
                              std::size_t c_size) -> std::string {
    std::vector<float> a(a_size), b(b_size), c(c_size);
    try {
      gemm<float>(context(), p, 1.0f, a, b, 0.0f, c);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "no error";
  };
  GemmProblem p;
  p.m = 4, p.n = 5, p.k = 3;
  EXPECT_EQ(message_of(p, 11, 15, 20),
            "gemm: A holds 11 elements; float 4x5x3 (row-major) needs 12");
  EXPECT_EQ(message_of(p, 12, 15, 19),
            "gemm: C holds 19 elements; float 4x5x3 (row-major) needs 20");
  GemmProblem negative = p;
  negative.k = -1;
  EXPECT_EQ(message_of(negative, 12, 15, 20), "gemm: M, N and K must be >= 0, not 4, 5 and -1");
  GemmProblem small_ld = p;
  small_ld.lda = 2;
  EXPECT_EQ(message_of(small_ld, 12, 15, 20),
            "gemm: lda 2 is below the smallest allowed, 3, for A stored 4x3 row-major");
  GemmProblem small_ldb = p;
  small_ldb.layout = Layout::column_major;
  small_ldb.transpose_b = true;
  small_ldb.ldb = 4;
  EXPECT_EQ(message_of(small_ldb, 12, 15, 20),
            "gemm: ldb 4 is below the smallest allowed, 5, for B stored 5x3 column-major");
  GemmProblem huge = p;
  huge.m = std::int64_t{1} << 40, huge.lda = std::int64_t{1} << 40;
  EXPECT_EQ(message_of(huge, 12, 15, 20).rfind("gemm: A stored 1099511627776x3 with lda", 0), 0u);
  // float data for a float64 problem.
  GemmProblem wrong_type = p;
  wrong_type.precision = GemmPrecision::float64;
  EXPECT_EQ(message_of(wrong_type, 12, 15, 20),
            "gemm: a double plan runs on double data, not float");
}

// The calling thread's plan cache (gemm.hpp): testing::one_field_changes, every product checked
// against the reference.
TEST_P(GemmScenarios, TheThreadsCachedPlanIsReplacedWhenAnyFieldOfTheProblemChanges) {
  std::uint64_t stream = TestSeed().value();
  const std::vector<GemmProblem> loop = testing::one_field_changes();
  for (std::size_t i = 0; i < loop.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "product " << i << ": " << loop[i].describe());
    const auto in = testing::make_inputs<float>(loop[i], 1.5f, -0.5f, Values::uniform, ++stream);
    testing::expect_gemm_matches_reference<float>(in, Values::uniform, host_api<float>(), "gemm");
  }
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(GemmScenarios);

// --- CPU only ----------------------------------------------------------------------------------

// gemm_problem: numpy's matmul of two stored 2-D matrices, as `gpukit gemm` and Python take them.
TEST(GemmProblemOfStoredMatrices, IsNumpysMatmulWithTheDatasPrecision) {
  const std::vector<std::int64_t> a_shape = {3, 4}, b_shape = {4, 2}, bt_shape = {2, 4};
  const GemmProblem plain =
      gemm_problem({"A", a_shape, "float64"}, {"B", b_shape, "float64"}, false, false, "", "-p");
  EXPECT_EQ(plain.m, 3);
  EXPECT_EQ(plain.n, 2);
  EXPECT_EQ(plain.k, 4);
  EXPECT_EQ(plain.layout, Layout::row_major);
  EXPECT_EQ(plain.lda, 0);  // packed
  EXPECT_EQ(plain.precision, GemmPrecision::float64);
  // op(A) = A^T is 4 x 3, so op(B) has 3 rows.
  const std::vector<std::int64_t> c_shape = {3, 5};
  const GemmProblem transposed =
      gemm_problem({"A", a_shape, "float32"}, {"C", c_shape, "float32"}, true, false, "tf32", "-p");
  EXPECT_TRUE(transposed.transpose_a);
  EXPECT_FALSE(transposed.transpose_b);
  EXPECT_EQ(transposed.m, 4);
  EXPECT_EQ(transposed.n, 5);
  EXPECT_EQ(transposed.k, 3);
  EXPECT_EQ(transposed.precision, GemmPrecision::tf32);
  const GemmProblem b_transposed =
      gemm_problem({"A", a_shape, "float32"}, {"B", bt_shape, "float32"}, false, true, "", "-p");
  EXPECT_EQ(b_transposed.n, 2);
  EXPECT_EQ(b_transposed.precision, GemmPrecision::float32);
  EXPECT_EQ(refusal([&] {
              check_gemm_c0(plain, {"C0", std::vector<std::int64_t>{3, 2}, "float64"});
            }),
            "no error");
}

TEST(GemmProblemOfStoredMatrices, EachRuleIsRefusedInTheCallersWords) {
  const std::vector<std::int64_t> m34 = {3, 4}, m42 = {4, 2}, v4 = {4}, t = {2, 2, 2};
  const auto problem = [&](GemmOperand a, GemmOperand b, bool ta, std::string_view precision,
                           std::string_view argument) {
    return refusal([&] { gemm_problem(a, b, ta, false, precision, argument); });
  };
  EXPECT_EQ(problem({"a", m34, "float64"}, {"b", v4, "float64"}, false, "", "precision"),
            "gemm takes 2-D arrays, not 1-D (b has shape (4,))");
  EXPECT_EQ(problem({"x.npy", t, "float64"}, {"b", m42, "float64"}, false, "", "precision"),
            "gemm takes 2-D arrays, not 3-D (x.npy has shape (2, 2, 2))");
  EXPECT_EQ(problem({"a", m34, "int32"}, {"b", m42, "int32"}, false, "", "precision"),
            "gemm takes float32 or float64, not int32 (a)");
  EXPECT_EQ(problem({"a", m34, "float64"}, {"b", m42, "float32"}, false, "", "precision"),
            "gemm: a is float64 but b is float32; give both the same dtype");
  EXPECT_EQ(problem({"a", m34, "float32"}, {"b", m42, "float32"}, false, "double", "--precision"),
            "gemm: --precision double computes on float64 data, but the inputs are float32 (the "
            "output keeps the inputs' dtype)");
  EXPECT_EQ(problem({"a", m34, "float64"}, {"b", m42, "float64"}, false, "bf16", "precision"),
            "gemm: precision bf16 computes on float32 data, but the inputs are float64 (the "
            "output keeps the inputs' dtype)");
  EXPECT_EQ(problem({"a", m34, "float64"}, {"b", m42, "float64"}, false, "half", "precision"),
            "unknown precision 'half' (known: float, double, tf32, bf16)");
  EXPECT_EQ(problem({"a", m34, "float64"}, {"b", m42, "float64"}, true, "", "precision"),
            "gemm: shapes do not match: a (transposed) has shape (3, 4) and b has shape (4, 2) (3 "
            "columns against 4 rows)");
  // Sizes whose product overflows stop here (validate_gemm_problem's rule).
  const std::vector<std::int64_t> tall = {std::int64_t{1} << 40, 0},
                                  wide = {0, std::int64_t{1} << 40};
  EXPECT_NE(problem({"a", tall, "float32"}, {"b", wide, "float32"}, false, "", "precision"),
            "no error");
}

TEST(GemmProblemOfStoredMatrices, TheMatrixBetaScalesIsMByNOfTheInputsDtype) {
  const std::vector<std::int64_t> m34 = {3, 4}, m42 = {4, 2};
  const GemmProblem p =
      gemm_problem({"a", m34, "float32"}, {"b", m42, "float32"}, false, false, "tf32", "precision");
  const std::vector<std::int64_t> good = {3, 2}, swapped = {2, 3}, flat = {6};
  EXPECT_EQ(refusal([&] { check_gemm_c0(p, {"c", good, "float32"}); }), "no error");
  EXPECT_EQ(refusal([&] {
              check_gemm_c0(p, {"c", good, "float64"});
            }),
            "gemm: c is float64 but the inputs are float32");
  EXPECT_EQ(refusal([&] {
              check_gemm_c0(p, {"c0.npy", swapped, "float32"});
            }),
            "gemm: c0.npy has shape (2, 3), but the product has shape (3, 2)");
  EXPECT_EQ(refusal([&] {
              check_gemm_c0(p, {"c", flat, "float32"});
            }),
            "gemm: c has shape (6,), but the product has shape (3, 2)");
}

TEST(GemmRounding, Tf32KeepsTenMantissaBitsRoundingToNearestTiesAway) {
  const float one = 1.0f, ulp = 0x1p-10f;  // tf32's unit in the last place at 1
  EXPECT_EQ(round_to_tf32(one + ulp), one + ulp);
  EXPECT_EQ(round_to_tf32(one + 0x1p-12f), one);              // a quarter ulp: down
  EXPECT_EQ(round_to_tf32(one + 0x1p-11f), one + ulp);        // a tie: away from zero
  EXPECT_EQ(round_to_tf32(-(one + 0x1p-11f)), -(one + ulp));  // the same for negatives
  EXPECT_EQ(round_to_tf32(one + 0x1p-11f + 0x1p-23f), one + ulp);
  EXPECT_EQ(round_to_tf32(0x1.fffffep0f), 2.0f);  // a carry into the exponent
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::max()),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(round_to_tf32(NAN)));
  EXPECT_EQ(round_to_tf32(-INFINITY), -INFINITY);
  EXPECT_EQ(round_to_tf32(3.0f), 3.0f);
}

TEST(GemmRounding, Bf16KeepsSevenMantissaBitsRoundingToNearestEven) {
  const float one = 1.0f, ulp = 0x1p-7f;
  EXPECT_EQ(round_to_bf16(one + ulp), one + ulp);
  EXPECT_EQ(round_to_bf16(one + 0x1p-8f), one);                   // a tie, 1 is even: down
  EXPECT_EQ(round_to_bf16(one + ulp + 0x1p-8f), one + 2 * ulp);   // a tie, odd: up
  EXPECT_EQ(round_to_bf16(one + 0x1p-8f + 0x1p-20f), one + ulp);  // above the tie: up
  EXPECT_EQ(round_to_bf16(-(one + 0x1p-8f + 0x1p-20f)), -(one + ulp));
  EXPECT_TRUE(std::isnan(round_to_bf16(NAN)));
  EXPECT_EQ(round_to_bf16(INFINITY), INFINITY);
  EXPECT_EQ(round_to_bf16(255.0f), 255.0f);  // 8 significant bits: exact
  EXPECT_EQ(round_to_bf16(257.0f), 256.0f);  // 9: rounded
}

TEST(GemmErrorBound, IsTheDerivedExpression) {
  // float32, K = 1000: gamma(1002, 2^-24) |alpha||A||B|.
  const double u = 0x1p-24;
  EXPECT_DOUBLE_EQ(gemm_error_bound(GemmPrecision::float32, 1000, 1.0, 0.0),
                   1002 * u / (1 - 1002 * u));
  EXPECT_DOUBLE_EQ(gemm_error_bound(GemmPrecision::float32, 0, 0.0, 1.0), 2 * u / (1 - 2 * u));
  // bf16: the inputs' rounding dominates, 2 * 2^-8 + 2^-16 and a little.
  const double w = 2 * 0x1p-8 + 0x1p-16;
  const double g = 12 * 0x1p-23 / (1 - 12 * 0x1p-23);
  EXPECT_DOUBLE_EQ(gemm_error_bound(GemmPrecision::bf16, 10, 1.0, 0.0), w + g * (1 + w));
  EXPECT_LT(gemm_error_bound(GemmPrecision::float64, 1000, 1.0, 0.0), 1e-12);
}

TEST(GemmCheckTest, CatchesOneElementJustOutsideItsBound) {
  // A result within the bound passes; the same with one element moved to twice its bound from
  // the exact value fails there, so the tests' check is not vacuous.
  GemmProblem p;
  p.m = 3, p.n = 4, p.k = 5;
  const auto in = testing::make_inputs<float>(p, 1.0f, 0.0f, Values::uniform, 7);
  std::vector<float> c(12);
  const std::vector<long double> reference = gemm_reference<float>(p, 1.0f, in.a, in.b, 0.0f, {});
  for (std::size_t e = 0; e < c.size(); ++e) c[e] = static_cast<float>(reference[e]);
  EXPECT_TRUE(check_gemm<float>(p, 1.0f, in.a, in.b, 0.0f, {}, c).passed());
  // |A||B| for element (2, 1).
  long double abs_product = 0;
  for (int q = 0; q < 5; ++q)
    abs_product += std::fabs(in.a[2 * 5 + q]) * std::fabs(in.b[q * 4 + 1]);
  const double bound =
      gemm_error_bound(GemmPrecision::float32, 5, static_cast<double>(abs_product), 0);
  c[2 * 4 + 1] = static_cast<float>(reference[2 * 4 + 1] + 2 * bound);
  const GemmCheck check = check_gemm<float>(p, 1.0f, in.a, in.b, 0.0f, {}, c);
  EXPECT_FALSE(check.passed());
  EXPECT_EQ(check.failures, 1);
  EXPECT_EQ(check.first_failure_row, 2);
  EXPECT_EQ(check.first_failure_column, 1);
  // A NaN where the reference is finite fails too.
  c[2 * 4 + 1] = NAN;
  EXPECT_FALSE(check_gemm<float>(p, 1.0f, in.a, in.b, 0.0f, {}, c).passed());
}

TEST(GemmCheckTest, SampledCheckLooksAtTheCornersAndCatchesAWrongOne) {
  // 8 samples of a 37 x 29 C: the four corners are always among them, so a wrong last element
  // (a ragged edge's) fails; the correct C passes.
  GemmProblem p;
  p.m = 37, p.n = 29, p.k = 11;
  const auto in = testing::make_inputs<float>(p, 1.0f, 0.0f, Values::uniform, 9);
  const std::vector<long double> reference = gemm_reference<float>(p, 1.0f, in.a, in.b, 0.0f, {});
  std::vector<float> c(reference.size());
  for (std::size_t e = 0; e < c.size(); ++e) c[e] = static_cast<float>(reference[e]);
  EXPECT_TRUE(check_gemm_sampled<float>(p, 1.0f, in.a, in.b, 0.0f, {}, c, 8).passed());
  c.back() += 1.0f;
  const GemmCheck check = check_gemm_sampled<float>(p, 1.0f, in.a, in.b, 0.0f, {}, c, 8);
  EXPECT_FALSE(check.passed());
  EXPECT_EQ(check.first_failure_row, 36);
  EXPECT_EQ(check.first_failure_column, 28);
}

TEST(GemmReference, HandCheckedProductWithTransposesAndColumnMajor) {
  // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: A B = [[19, 22], [43, 50]],
  // A^T B = [[26, 30], [38, 44]], both as row-major results.
  GemmProblem p;
  p.m = 2, p.n = 2, p.k = 2;
  const std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  const auto ab = gemm_reference<double>(p, 1.0, a, b, 0.0, {});
  EXPECT_EQ(ab, (std::vector<long double>{19, 22, 43, 50}));
  p.transpose_a = true;
  const auto atb = gemm_reference<double>(p, 1.0, a, b, 0.0, {});
  EXPECT_EQ(atb, (std::vector<long double>{26, 30, 38, 44}));
  // Column-major storage of the same numbers is the transposes: A_cm = A^T, B_cm = B^T;
  // A_cm B_cm = (B A)^T, B A = [[23, 34], [31, 46]].
  p.transpose_a = false;
  p.layout = Layout::column_major;
  const auto cm = gemm_reference<double>(p, 1.0, a, b, 0.0, {});
  EXPECT_EQ(cm, (std::vector<long double>{23, 31, 34, 46}));
}

}  // namespace
}  // namespace gpukit::blas
