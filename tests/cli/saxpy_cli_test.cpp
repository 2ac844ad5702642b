// gpukit saxpy: OUT = alpha * X + Y for .npy files, on the CPU here (the device paths are the
// library's, tested in tests/blas): results against the exact reference, OUT over Y's path, n-D
// arrays, --check, and every refusal (mixed dtypes, other dtypes, shapes, bad alpha) with nothing
// written.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/io/npy.hpp"

namespace {

using gpukit::cli_testing::run;
using gpukit::cli_testing::scratch;

template <class T>
std::string npy(const std::string& name, const std::vector<T>& values,
                std::vector<std::int64_t> shape = {}) {
  const auto p = (scratch() / name).string();
  if (shape.empty()) shape = {static_cast<std::int64_t>(values.size())};
  gpukit::io::write_npy<T>(p, shape, std::span<const T>(values));
  return p;
}

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> d(T(-100), T(100));
  std::vector<T> v(n);
  for (T& x : v) x = d(rng);
  return v;
}

template <class T>
void expect_exact_saxpy(T alpha, const std::string& alpha_text) {
  const auto x = random_values<T>(1000, 1), y = random_values<T>(1000, 2);
  const std::string xs = npy("x.npy", x), ys = npy("y.npy", y);
  const auto out = (scratch() / "out.npy").string();
  std::filesystem::remove(out);
  const auto r =
      run("saxpy --alpha " + alpha_text + " " + xs + " " + ys + " -o " + out + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const gpukit::io::NpyArray result = gpukit::io::read_npy(out);
  EXPECT_EQ(result.dtype, gpukit::io::npy_dtype_of<T>());
  EXPECT_EQ(result.shape, std::vector<std::int64_t>{1000});
  const auto check = gpukit::blas::check_axpy_result<T>(
      alpha, x, y, result.values<T>(), gpukit::blas::AxpyRounding::fused_or_separate);
  EXPECT_TRUE(check.passed()) << check.first_bad;
}

TEST(SaxpyCli, Float32AndFloat64GiveTheExactRoundingInTheInputDtype) {
  expect_exact_saxpy<float>(2.7f, "2.7");  // alpha is read as a float: 2.7f, not (float)2.7
  expect_exact_saxpy<double>(-1.3, "-1.3");
}

TEST(SaxpyCli, OutputMayBeYsPathAndCheckReportsOnStderr) {
  const std::vector<double> x = {1, 2, 3}, y = {10, 20, 30};
  npy("x_in_place.npy", x);
  const auto ys = npy("y_in_place.npy", y);
  const auto r = run("saxpy --alpha 0.5 " + (scratch() / "x_in_place.npy").string() + " " + ys +
                     " -o " + ys + " --check --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("check: exact reference"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": ok"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  const auto result = gpukit::io::read_npy(ys);
  const auto v = result.values<double>();
  EXPECT_EQ(std::vector<double>(v.begin(), v.end()), (std::vector<double>{10.5, 21, 31.5}));
}

TEST(SaxpyCli, NdArraysGoElementByElementAndKeepTheirShape) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {6, 5, 4, 3, 2, 1};
  const auto xs = npy("x2d.npy", x, {2, 3}), ys = npy("y2d.npy", y, {2, 3});
  const auto out = (scratch() / "out2d.npy").string();
  const auto r = run("saxpy -a 2 " + xs + " " + ys + " -o " + out + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto result = gpukit::io::read_npy(out);
  EXPECT_EQ(result.shape, (std::vector<std::int64_t>{2, 3}));
  const auto v = result.values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{8, 9, 10, 11, 12, 13}));
}

TEST(SaxpyCli, AlphaZeroGivesYBitForBitAndNanPropagates) {
  const float nan = std::nanf("");
  const auto xs = npy<float>("x_nan.npy", {nan, 1, INFINITY});
  const auto ys = npy<float>("y_nan.npy", {1, -0.0f, 2});
  const auto out = (scratch() / "out_nan.npy").string();
  auto r = run("saxpy --alpha 0 " + xs + " " + ys + " -o " + out + " --device cpu --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto first = gpukit::io::read_npy(out);
  const auto u = first.values<float>();
  EXPECT_EQ(u[0], 1.0f);
  EXPECT_TRUE(std::signbit(u[1]));  // -0 stays -0
  EXPECT_EQ(u[2], 2.0f);
  r = run("saxpy --alpha 1 " + xs + " " + ys + " -o " + out + " --device cpu --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto result = gpukit::io::read_npy(out);
  const auto v = result.values<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 1.0f);
  EXPECT_EQ(v[2], INFINITY);
}

// Each refusal: its exit code, its message, and no output file.
void expect_refused(const std::string& args, int exit_code, const std::string& message) {
  const auto out = scratch() / "refused.npy";
  std::filesystem::remove(out);
  const auto r = run("saxpy " + args + " -o " + out.string() + " --device cpu");
  EXPECT_EQ(r.exit_code, exit_code) << args << ": " << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << args;
}

TEST(SaxpyCli, BadInputIsRefusedWithAClearMessageAndNothingWritten) {
  const auto x3 = npy<float>("x3.npy", {1, 2, 3});
  const auto y4 = npy<float>("y4.npy", {1, 2, 3, 4});
  const auto y3d = npy<double>("y3d.npy", {1, 2, 3});
  const auto y23 = npy<float>("y23.npy", {1, 2, 3, 4, 5, 6}, {2, 3});
  const auto x6 = npy<float>("x6.npy", {1, 2, 3, 4, 5, 6});
  const auto ints = npy<std::int32_t>("ints.npy", {1, 2, 3});
  expect_refused("--alpha 2 " + x3 + " " + y4, 3,
                 "the shapes differ: " + x3 + " is (3,) and " + y4 + " is (4,)");
  expect_refused("--alpha 2 " + x6 + " " + y23, 3, "is (6,) and " + y23 + " is (2, 3)");
  expect_refused("--alpha 2 " + x3 + " " + y3d, 3, "is float32 and " + y3d + " is float64");
  expect_refused("--alpha 2 " + ints + " " + x3, 3, "saxpy takes float32");
  expect_refused(x3 + " " + x3, 2, "--alpha");
  expect_refused("--alpha 2 " + x3 + " " + (scratch() / "missing.npy").string(), 4, "missing.npy");
}

// One rule for a scalar (gpukit/blas/scalar.hpp) and one exit code for breaking it, 2, whether the
// text is no number, not finite, or beyond the arrays' dtype (found after reading the header).
TEST(SaxpyCli, ABadAlphaIsAUsageErrorInEitherDtype) {
  const auto x32 = npy<float>("xa32.npy", {1, 2, 3});
  const auto x64 = npy<double>("xa64.npy", {1, 2, 3});
  expect_refused("--alpha two " + x32 + " " + x32, 2, "--alpha must be a number, got 'two'");
  expect_refused("--alpha nan " + x64 + " " + x64, 2, "--alpha must be finite, got 'nan'");
  expect_refused("--alpha -inf " + x32 + " " + x32, 2, "--alpha must be finite, got '-inf'");
  expect_refused("--alpha 1e400 " + x64 + " " + x64, 2,
                 "--alpha must fit float64 (magnitude at most 1.7976931348623157e+308), got "
                 "'1e400'");
  expect_refused("--alpha 1e39 " + x32 + " " + x32, 2,
                 "--alpha must fit float32 (magnitude at most 3.4028235e+38), got '1e39'");
  expect_refused("--alpha 1e-50 " + x32 + " " + x32, 2, "--alpha must not round to 0 in float32");
  // The same numbers fit float64.
  const auto out = (scratch() / "alpha_fits.npy").string();
  const auto r = run("saxpy --alpha 1e39 " + x64 + " " + x64 + " -o " + out + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(gpukit::io::read_npy(out).values<double>()[1], 2e39 + 2);
}

TEST(SaxpyCli, OutOfMemoryNamesTheBytesAskedAndWritesNothing) {
  // X through a pipe whose header declares 2^40 floats: from a pipe the storage is asked for from
  // the header (4 TiB), which no machine grants. (From a regular file the size is checked first.)
  const std::int64_t shape[1] = {std::int64_t{1} << 40};
  const std::string header =
      gpukit::io::detail::npy_header_bytes(gpukit::io::NpyDtype::float32, shape);
  const auto header_file = gpukit::cli_testing::write_file("huge_header.npy", header);
  const auto ys = npy<float>("y_oom.npy", {1, 2, 3});
  const auto out = scratch() / "out_oom.npy", err = scratch() / "stderr_oom.txt";
  std::filesystem::remove(out);
  // (A sanitized build's allocator must return null, as the plain one does, rather than abort.)
  const std::string command = "cat " + header_file +
                              " | ASAN_OPTIONS=allocator_may_return_null=1:protect_shadow_gap=0:"
                              "detect_leaks=0 " +
                              std::string(GPUKIT_BINARY) + " saxpy --alpha 2 - " + ys + " -o " +
                              out.string() + " --device cpu 2>" + err.string();
  const int status = std::system(command.c_str());
  const std::string message = gpukit::cli_testing::slurp(err);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 5) << message;
  EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
  EXPECT_NE(message.find("4398046511104 bytes"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SaxpyCli, AFailedRunLeavesAnExistingOutputAsItWas) {
  const auto x3 = npy<float>("x3b.npy", {1, 2, 3});
  const auto y4 = npy<float>("y4b.npy", {1, 2, 3, 4});
  const auto r = run("saxpy --alpha 2 " + x3 + " " + y4 + " -o " + y4 + " --device cpu");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto kept_array = gpukit::io::read_npy(y4);
  const auto kept = kept_array.values<float>();
  EXPECT_EQ(std::vector<float>(kept.begin(), kept.end()), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
