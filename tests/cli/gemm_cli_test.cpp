// `gpukit gemm` end to end on the CPU: numpy matmul semantics for 2-D arrays (dtype and shape
// kept), transposes, alpha / beta with C0, C and Fortran order inputs, the tf32 and bf16
// rounding, --check (and that it catches a wrong result), and bad input refused clearly with
// nothing written.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/io/npy.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file
using gpukit::io::NpyDtype;

std::string path(const std::string& name) { return (scratch() / name).string(); }

template <class T>
std::string matrix_file(const std::string& name, std::int64_t rows, std::int64_t columns,
                        const std::vector<T>& row_major) {
  const std::int64_t shape[] = {rows, columns};
  gpukit::io::write_npy<T>(path(name), shape, row_major);
  return path(name);
}

// A float64 .npy in Fortran order (column-major data), written by hand as numpy does.
std::string fortran_file(const std::string& name, std::int64_t rows, std::int64_t columns,
                         const std::vector<double>& column_major) {
  std::string header = "{'descr': '<f8', 'fortran_order': True, 'shape': (" + std::to_string(rows) +
                       ", " + std::to_string(columns) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(column_major.data()), column_major.size() * 8);
  std::ofstream(path(name), std::ios::binary) << bytes;
  return path(name);
}

template <class T>
std::vector<T> read_values(const std::string& file, NpyDtype dtype,
                           const std::vector<std::int64_t>& shape) {
  const gpukit::io::NpyArray array = gpukit::io::read_npy(file);
  EXPECT_EQ(array.dtype, dtype);
  EXPECT_EQ(array.shape, shape);
  const auto values = array.values<T>();
  return {values.begin(), values.end()};
}

// A (3 x 4) and B (4 x 2) of small integers, and A @ B worked out by hand.
const std::vector<double> kA = {1, 2, 3, 4, -1, 0, 2, 1, 5, -2, 0, 3};
const std::vector<double> kB = {1, 0, 2, -1, 0, 3, -2, 1};
const std::vector<double> kAB = {-3, 11, -3, 7, -5, 5};

template <class T>
std::vector<T> as(const std::vector<double>& x) {
  return {x.begin(), x.end()};
}

TEST(GemmCli, MultipliesFloat32AsNumpyMatmulAndChecks) {
  const std::string out = path("ab32.npy");
  std::filesystem::remove(out);
  const Result r = run("gemm --device cpu " + matrix_file("a32.npy", 3, 4, as<float>(kA)) + " " +
                       matrix_file("b32.npy", 4, 2, as<float>(kB)) + " -o " + out + " --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("check: long double reference"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": ok"), std::string::npos) << r.err;
  EXPECT_EQ(read_values<float>(out, NpyDtype::float32, {3, 2}), as<float>(kAB));
}

TEST(GemmCli, Float64TransposesAlphaBetaAndC0) {
  // A^T stored as 4 x 3, B^T stored as 2 x 4: the same product; C = 2 A B - C0.
  std::vector<double> at(12), bt(8);
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 4; ++p) at[p * 3 + i] = kA[i * 4 + p];
  for (int p = 0; p < 4; ++p)
    for (int j = 0; j < 2; ++j) bt[j * 4 + p] = kB[p * 2 + j];
  const std::vector<double> c0 = {1, 2, 3, 4, 5, 6};
  const std::string out = path("c64.npy");
  const Result r = run("gemm --device cpu " + matrix_file("at.npy", 4, 3, at) + " " +
                       matrix_file("bt.npy", 2, 4, bt) + " --transpose-a --transpose-b -o " + out +
                       " --alpha 2 --beta -1 --c " + matrix_file("c0.npy", 3, 2, c0) + " --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<double> expected(6);
  for (int e = 0; e < 6; ++e) expected[e] = 2 * kAB[e] - c0[e];
  EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2}), expected);
}

TEST(GemmCli, FortranOrderInputsGiveTheSameProduct) {
  std::vector<double> a_column_major(12);
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 4; ++p) a_column_major[p * 3 + i] = kA[i * 4 + p];
  const std::string out = path("fortran.npy");
  const Result r = run("gemm --device cpu " + fortran_file("af.npy", 3, 4, a_column_major) + " " +
                       matrix_file("b64.npy", 4, 2, kB) + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2}), kAB);
}

TEST(GemmCli, Bf16AndTf32RoundTheInputsFirst) {
  // 1 + 2^-9 is exact in float32 and tf32 (10 mantissa bits) but rounds to 1 in bf16 (7 bits).
  const std::vector<float> a = {1.0f + 0x1p-9f}, b = {1.0f};
  const std::string a_file = matrix_file("r_a.npy", 1, 1, a),
                    b_file = matrix_file("r_b.npy", 1, 1, b);
  for (const auto& [precision, expected] :
       {std::pair{"float", 1.0f + 0x1p-9f}, std::pair{"tf32", 1.0f + 0x1p-9f},
        std::pair{"bf16", 1.0f}}) {
    const std::string out = path(std::string("r_") + precision + ".npy");
    const Result r = run("gemm --device cpu " + a_file + " " + b_file + " -o " + out +
                         " --check --precision " + precision);
    ASSERT_EQ(r.exit_code, 0) << precision << ": " << r.err;
    EXPECT_EQ(read_values<float>(out, NpyDtype::float32, {1, 1}), std::vector<float>{expected})
        << precision;
  }
}

TEST(GemmCli, EmptyProductsAreWritten) {
  const std::string out = path("empty.npy");
  const Result r =
      run("gemm --device cpu " + matrix_file("e_a.npy", 0, 3, std::vector<float>{}) + " " +
          matrix_file("e_b.npy", 3, 2, std::vector<float>(6, 1.0f)) + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_values<float>(out, NpyDtype::float32, {0, 2}).empty());
}

TEST(GemmCli, CheckCatchesAWrongResult) {
  const std::string out = path("perturbed.npy");
  std::filesystem::remove(out);
  ::setenv("GPUKIT_TEST_FAULT", "gemm-perturb", 1);
  const Result r = run("gemm --device cpu " + matrix_file("p_a.npy", 3, 4, kA) + " " +
                       matrix_file("p_b.npy", 4, 2, kB) + " -o " + out + " --check");
  ::unsetenv("GPUKIT_TEST_FAULT");
  EXPECT_EQ(r.exit_code, 8) << r.err;
  EXPECT_NE(r.err.find("FAILED"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("differs from the reference beyond the bound at (1, 1)"), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(out)) << "a failed check keeps C";
}

// The scalar rule of saxpy (gpukit/blas/scalar.hpp), with its exit code 2: a scalar that is no
// number, not finite, or beyond the inputs' dtype would make every element Inf or NaN.
TEST(GemmCli, AlphaAndBetaFollowTheScalarRuleOfSaxpy) {
  const std::string a32 = matrix_file("s_a32.npy", 3, 4, as<float>(kA)),
                    b32 = matrix_file("s_b32.npy", 4, 2, as<float>(kB)),
                    c32 = matrix_file("s_c32.npy", 3, 2, std::vector<float>(6, 1.0f)),
                    a64 = matrix_file("s_a64.npy", 3, 4, kA),
                    b64 = matrix_file("s_b64.npy", 4, 2, kB);
  const struct {
    std::string arguments, message;
  } cases[] = {
      {a64 + " " + b64 + " --alpha 1e400", "--alpha must fit float64"},
      {a64 + " " + b64 + " --alpha nan", "--alpha must be finite, got 'nan'"},
      {a32 + " " + b32 + " --alpha 1e39",
       "--alpha must fit float32 (magnitude at most 3.4028235e+38), got '1e39'"},
      {a32 + " " + b32 + " --beta 1e39 --c " + c32, "--beta must fit float32"},
      {a32 + " " + b32 + " --beta -inf --c " + c32, "--beta must be finite, got '-inf'"},
      {a32 + " " + b32 + " --precision tf32 --alpha 1e-50",
       "--alpha must not round to 0 in float32"},
      {a64 + " " + b64 + " --alpha two", "--alpha must be a number, got 'two'"},
  };
  for (const auto& c : cases) {
    const std::string out = path("s_out.npy");
    std::filesystem::remove(out);
    const Result r = run("gemm --device cpu " + c.arguments + " -o " + out);
    EXPECT_EQ(r.exit_code, 2) << c.arguments << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.arguments << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.arguments << ": an output was written";
  }
  // 1e39 fits float64: C = 1e39 A B.
  const std::string out = path("s_big.npy");
  const Result r = run("gemm --device cpu " + a64 + " " + b64 + " --alpha 1e39 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2})[1], 1e39 * kAB[1]);
}

// Before: "gemm - -" read A from stdin and then failed on B with "bad magic"; saxpy says why.
TEST(GemmCli, StdinFeedsOneInputAtMost) {
  const std::string a = matrix_file("in_a.npy", 3, 4, kA), b = matrix_file("in_b.npy", 4, 2, kB);
  const std::string out = path("in_out.npy");
  std::filesystem::remove(out);
  for (const auto& [arguments, message] :
       {std::pair{std::string("- -"), std::string("A and B cannot both be stdin ('-')")},
        std::pair{"- " + b + " --beta 1 --c -", std::string("A and C0 cannot both be stdin")},
        std::pair{std::string("- - --beta 2 --c -"),
                  std::string("A, B and C0 cannot all be stdin")}}) {
    const Result r = run("gemm --device cpu " + arguments + " -o " + out, slurp(a));
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << arguments << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << arguments;
  }
  // One input from stdin is fine, and with --beta 0 C0 from stdin is never read.
  const Result r = run("gemm --device cpu - " + b + " --c - -o " + out, slurp(a));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2}), kAB);
}

// The documented rule (BLAS's, and Python's): with beta = 0, C0 is not read. Before, --beta 0
// needed --c, and read and validated it.
TEST(GemmCli, BetaZeroNeitherNeedsNorReadsC0) {
  const std::string a = matrix_file("z_a.npy", 3, 4, kA), b = matrix_file("z_b.npy", 4, 2, kB);
  const std::string wrong_shape = matrix_file("z_c.npy", 2, 2, std::vector<double>(4, 1.0));
  const std::string out = path("z_out.npy");
  for (const std::string& c0 :
       {std::string(""), " --c " + path("z_missing.npy"), " --c " + wrong_shape}) {
    std::filesystem::remove(out);
    const Result r = run("gemm --device cpu " + a + " " + b + " --beta 0" + c0 + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << c0 << ": " << r.err;
    EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2}), kAB) << c0;
    if (!c0.empty()) {
      EXPECT_NE(r.err.find("gpukit: gemm: --beta is 0, so --c "), std::string::npos) << r.err;
    }
  }
  // --c without --beta: beta is 0 as well.
  const Result r = run("gemm --device cpu " + a + " " + b + " --c " + wrong_shape + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2}), kAB);
}

// Python's gemm has variant=; the CLI now has --variant, checked as bs's and poisson's are.
TEST(GemmCli, VariantNamesTheCpuVariantAndUnknownNamesAreUsageErrors) {
  const std::string a = matrix_file("v_a.npy", 3, 4, kA), b = matrix_file("v_b.npy", 4, 2, kB);
  const std::string out = path("v_out.npy");
  Result r = run("gemm --device cpu --variant openblas " + a + " " + b + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_values<double>(out, NpyDtype::float64, {3, 2}), kAB);
  std::filesystem::remove(out);
  r = run("gemm --device cpu --variant nosuch " + a + " " + b + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--variant: unknown gemm variant 'nosuch' (known: openblas"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  if (gpukit::built_with_cuda()) {
    // A CUDA variant on the CPU: a known name the CPU backend cannot run.
    r = run("gemm --device cpu --variant cublas " + a + " " + b + " -o " + out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("the CPU backend has one variant, 'openblas', not 'cublas'"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

struct BadCase {
  const char* what;
  std::string arguments;
  int exit_code;
  std::string message;
};

TEST(GemmCli, BadInputIsRefusedClearlyAndNothingIsWritten) {
  const std::string a = matrix_file("bad_a.npy", 3, 4, kA);  // float64
  const std::string b = matrix_file("bad_b.npy", 4, 2, kB);
  const std::string b32 = matrix_file("bad_b32.npy", 4, 2, as<float>(kB));
  const std::string a32 = matrix_file("bad_a32.npy", 3, 4, as<float>(kA));
  const std::int64_t vector_shape[] = {4};
  gpukit::io::write_npy<double>(path("bad_v.npy"), vector_shape, std::vector<double>(4, 1.0));
  const std::int64_t int_shape[] = {4, 2};
  gpukit::io::write_npy<std::int32_t>(path("bad_i.npy"), int_shape,
                                      std::vector<std::int32_t>(8, 1));
  const std::int64_t tall[] = {std::int64_t{1} << 40, 0}, wide[] = {0, std::int64_t{1} << 40};
  gpukit::io::write_npy<float>(path("bad_tall.npy"), tall, std::vector<float>{});
  gpukit::io::write_npy<float>(path("bad_wide.npy"), wide, std::vector<float>{});
  const BadCase cases[] = {
      {"shape mismatch", a + " " + a, 3,
       "gemm: shapes do not match: " + a + " has shape (3, 4) and " + a +
           " has shape (3, 4) (4 columns against 3 rows)"},
      {"shape mismatch after a transpose", a + " " + b + " --transpose-a", 3,
       "has shape (3, 4) and " + b + " has shape (4, 2) (3 columns against 4 rows)"},
      {"not 2-D", a + " " + path("bad_v.npy"), 3,
       "gemm takes 2-D arrays, not 1-D (" + path("bad_v.npy") + " has shape (4,))"},
      {"mixed dtypes", a + " " + b32, 3, "gemm: " + a + " is float64 but " + b32 + " is float32"},
      {"unsupported dtype", path("bad_i.npy") + " " + b, 3, "int32"},
      {"precision against dtype", a32 + " " + b32 + " --precision double", 3,
       "--precision double computes on float64 data, but the inputs are float32"},
      {"tf32 of float64", a + " " + b + " --precision tf32", 3,
       "--precision tf32 computes on float32 data, but the inputs are float64"},
      {"C0 shape", a + " " + b + " --beta 1 --c " + a, 3,
       "has shape (3, 4), but the product has shape (3, 2)"},
      {"product overflows", path("bad_tall.npy") + " " + path("bad_wide.npy"), 3,
       "too large to address"},
      {"beta without C0", a + " " + b + " --beta 1", 2,
       "--beta 1 needs --c (the M x N matrix C0 it scales)"},
      {"unknown precision", a + " " + b + " --precision half", 2, "unknown precision 'half'"},
  };
  for (const BadCase& c : cases) {
    const std::string out = path("bad_out.npy");
    std::filesystem::remove(out);
    const Result r = run("gemm --device cpu " + c.arguments + " -o " + out);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.what << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.what << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.what << ": an output was written";
  }
}

}  // namespace
