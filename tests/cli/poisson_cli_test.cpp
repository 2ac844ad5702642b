// `gpukit poisson` end to end: files in and out (dtype and shape kept), lengths, gauges, the
// non-zero-mean warning and --strict, --check, the demo, and malformed inputs refused clearly
// (exit 3, no output file); walls, fd2 and Helmholtz (--boundary, --operator, --helmholtz).

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/poisson.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

std::string path(const std::string& name) { return (scratch() / name).string(); }

// f = -(k0^2 + k1^2) sin(k0 x0) cos(2 k1 x1)... on an n0 x n1 grid of lengths L0 x L1:
// u = sin(2 pi x0 / L0) cos(4 pi x1 / L1).
template <class T>
std::vector<T> sine_rhs(int n0, int n1, double L0, double L1, std::vector<double>* u) {
  std::vector<T> f;
  const double k0 = 2 * std::numbers::pi / L0, k1 = 4 * std::numbers::pi / L1;
  for (int i = 0; i < n0; ++i) {
    for (int j = 0; j < n1; ++j) {
      const double v = std::sin(k0 * i * L0 / n0) * std::cos(k1 * j * L1 / n1);
      if (u) u->push_back(v);
      f.push_back(static_cast<T>(-(k0 * k0 + k1 * k1) * v));
    }
  }
  return f;
}

TEST(PoissonCli, Solves2DFloat32KeepingDtypeAndShape) {
  std::vector<double> expected;
  const std::vector<float> f = sine_rhs<float>(12, 20, 2.0, 3.0, &expected);
  const std::int64_t shape[] = {12, 20};
  gpukit::io::write_npy<float>(path("f32.npy"), shape, f);
  const Result r = run("poisson --device cpu --input " + path("f32.npy") + " --output " +
                       path("u32.npy") + " --length 2,3 --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("check: long double reference (FFTW)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const gpukit::io::NpyArray u = gpukit::io::read_npy(path("u32.npy"));
  ASSERT_EQ(u.dtype, gpukit::io::NpyDtype::float32);
  ASSERT_EQ(u.shape, (std::vector<std::int64_t>{12, 20}));
  const auto values = u.values<float>();
  for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_NEAR(values[i], expected[i], 1e-5) << i;
}

TEST(PoissonCli, Solves3DFloat64WithCornerGaugeAndFloatPrecision) {
  std::vector<double> f;
  for (int i = 0; i < 4 * 6 * 5; ++i) f.push_back(std::sin(0.7 * i) - 0.0);
  double mean = 0;
  for (const double x : f) mean += x / double(f.size());
  for (double& x : f) x -= mean;
  const std::int64_t shape[] = {4, 6, 5};
  gpukit::io::write_npy<double>(path("f64.npy"), shape, f);
  const Result r = run("poisson --device cpu -i " + path("f64.npy") + " -o " + path("u64.npy") +
                       " --length 1,2,0.5 --gauge corner --precision float");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const gpukit::io::NpyArray u = gpukit::io::read_npy(path("u64.npy"));
  ASSERT_EQ(u.dtype, gpukit::io::NpyDtype::float64);
  ASSERT_EQ(u.shape, (std::vector<std::int64_t>{4, 6, 5}));
  EXPECT_EQ(u.values<double>()[0], 0.0);
}

TEST(PoissonCli, NonZeroMeanWarnsOrIsRefusedWithStrict) {
  std::vector<double> f(8 * 8, 1.0);
  f[3] = 2.0;
  const std::int64_t shape[] = {8, 8};
  gpukit::io::write_npy<double>(path("mean.npy"), shape, f);
  Result r = run("poisson --device cpu -i " + path("mean.npy") + " -o " + path("mean_u.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the mean of f, 1.01562, is not zero to rounding"),
            std::string::npos)
      << r.err;
  std::filesystem::remove(path("strict_u.npy"));
  r = run("poisson --device cpu -i " + path("mean.npy") + " -o " + path("strict_u.npy") +
          " --strict");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("not zero to rounding"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("strict_u.npy")));
}

TEST(PoissonCli, MalformedInputsAreRefusedClearly) {
  const std::int64_t one_d[] = {16}, four_d[] = {2, 2, 2, 2}, zero[] = {0, 4}, ok[] = {4, 4};
  gpukit::io::write_npy<double>(path("1d.npy"), one_d, std::vector<double>(16, 0.0));
  gpukit::io::write_npy<double>(path("4d.npy"), four_d, std::vector<double>(16, 0.0));
  gpukit::io::write_npy<double>(path("zero.npy"), zero, std::vector<double>{});
  gpukit::io::write_npy<std::int32_t>(path("int.npy"), ok, std::vector<std::int32_t>(16, 0));
  gpukit::io::write_npy<double>(path("ok.npy"), ok, std::vector<double>(16, 0.0));
  const std::string out = path("refused_u.npy");
  // Bad data exits 3; a bad --length (a command-line value) is a usage error, 2.
  struct Case {
    std::string args, message;
    int exit_code;
  } cases[] = {
      {"-i " + path("1d.npy"), "2D or 3D arrays, not 1D", 3},
      {"-i " + path("4d.npy"), "2D or 3D arrays, not 4D", 3},
      {"-i " + path("zero.npy"), "axis 0 has size 0", 3},
      {"-i " + path("int.npy"), "poisson takes float32 ('<f4') or float64 ('<f8'), not int32", 3},
      {"-i " + path("ok.npy") + " --length 1,2,3",
       "usage error: --length gives 3 values for a grid of 2 axes: give one for every axis, or "
       "one per axis",
       2},
      // The option's name once (it was "--length: --length: -2 must be ...").
      {"-i " + path("ok.npy") + " --length 1,-2",
       "usage error: --length: -2 must be finite and > 0", 2},
      {"-i " + path("ok.npy") + " --length 1,0", "--length: 0 must be finite and > 0", 2},
      {"-i " + path("ok.npy") + " --length 1,inf", "--length: inf must be finite and > 0", 2},
      {"-i " + path("ok.npy") + " --length 1,abc", "--length: 'abc' is not a number", 2},
      {"-i " + path("ok.npy") + " --length 1,", "--length: a trailing comma", 2},
  };
  for (const Case& c : cases) {
    std::filesystem::remove(out);
    const Result r = run("poisson --device cpu " + c.args + " -o " + out);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
  EXPECT_EQ(run("poisson --device cpu -i " + path("ok.npy")).exit_code, 2);  // no --output
  EXPECT_EQ(
      run("poisson --device cpu -i " + path("ok.npy") + " -o " + out + " --gauge x").exit_code, 2);
}

// One length is the period of every axis, as Python's lengths=2 (pde::axis_lengths). Before, the
// CLI refused it on a 2-D grid ("--length gives 1 lengths for an array of 2 axes").
TEST(PoissonCli, OneLengthIsThePeriodOfEveryAxis) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{8, 6}, std::vector<std::int64_t>{4, 6, 5}}) {
    std::vector<double> f(
        static_cast<std::size_t>(shape[0] * shape[1] * (shape.size() == 3 ? shape[2] : 1)));
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = std::sin(0.7 * static_cast<double>(i));
    double mean = 0;
    for (const double v : f) mean += v / static_cast<double>(f.size());
    for (double& v : f) v -= mean;
    gpukit::io::write_npy<double>(path("one_length_f.npy"), shape, f);
    const std::string every = shape.size() == 2 ? "2.5,2.5" : "2.5,2.5,2.5";
    const Result one = run("poisson --device cpu -i " + path("one_length_f.npy") + " -o " +
                           path("one_length_u1.npy") + " --length 2.5");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const Result all = run("poisson --device cpu -i " + path("one_length_f.npy") + " -o " +
                           path("one_length_u2.npy") + " --length " + every);
    ASSERT_EQ(all.exit_code, 0) << all.err;
    const Result unit = run("poisson --device cpu -i " + path("one_length_f.npy") + " -o " +
                            path("one_length_u3.npy"));
    ASSERT_EQ(unit.exit_code, 0) << unit.err;
    EXPECT_EQ(slurp(path("one_length_u1.npy")), slurp(path("one_length_u2.npy")));
    EXPECT_NE(slurp(path("one_length_u1.npy")), slurp(path("one_length_u3.npy")));
  }
}

TEST(PoissonCli, NonFiniteInputIsInvalidInputNamingTheFirstBadIndexAndWritesNothing) {
  const std::int64_t shape[] = {5, 6};
  std::vector<double> f(30, 0.0);
  f[3 * 6 + 4] = std::numeric_limits<double>::quiet_NaN();
  f[4 * 6 + 1] = std::numeric_limits<double>::infinity();
  gpukit::io::write_npy<double>(path("nan.npy"), shape, f);
  std::vector<float> g(30, 0.0f);
  g[7] = -std::numeric_limits<float>::infinity();
  gpukit::io::write_npy<float>(path("inf.npy"), shape, g);
  const std::string out = path("nan_u.npy");
  for (const std::string extra : {"", " --check", " --precision float"}) {
    std::filesystem::remove(out);
    Result r = run("poisson --device cpu -i " + path("nan.npy") + " -o " + out + extra);
    EXPECT_EQ(r.exit_code, 3) << extra << ": " << r.err;
    EXPECT_NE(r.err.find("f[3, 4] is nan"), std::string::npos) << extra << ": " << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << "blames the mean: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << extra;
    r = run("poisson --device cpu -i " + path("inf.npy") + " -o " + out + extra);
    EXPECT_EQ(r.exit_code, 3) << extra << ": " << r.err;
    EXPECT_NE(r.err.find("f[1, 1] is -inf"), std::string::npos) << extra << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << extra;
  }
}

// Section 2 wording: an unknown --variant on the CPU is not "a CUDA variant".
TEST(PoissonCli, UnknownVariantOnTheCpuIsNotCalledACudaVariant) {
  const std::int64_t shape[] = {4, 4};
  gpukit::io::write_npy<double>(path("variant_f.npy"), shape, std::vector<double>(16, 0.0));
  const Result r = run("poisson --device cpu --variant nonsense -i " + path("variant_f.npy") +
                       " -o " + path("variant_u.npy"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("CUDA variant"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown variant 'nonsense'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cpu-fftw"), std::string::npos) << r.err;
}

// A dirichlet x neumann grid with the fd2 operator and lambda 2.5: f = (e - lambda) u for u the
// product of the axes' own modes, sin(pi k x / L0) at the interior nodes x = (i + 1) L0 / (n0 + 1)
// and cos(pi m y / L1) at the cell centres y = (j + 1/2) L1 / n1, e the sum of their fd2
// eigenvalues -(4 / h^2) sin^2(theta / 2). The solve is exact up to rounding: every element within
// the library's agreement bound, --check passes, the line names the problem (no gauge: the
// problem is nonsingular).
TEST(PoissonCli, SolvesDirichletNeumannFd2HelmholtzToRounding) {
  const int n0 = 9, n1 = 12, k = 3, m = 5;
  const double L0 = 1.0, L1 = 2.0, lambda = 2.5, pi = std::numbers::pi;
  const double h0 = L0 / (n0 + 1), h1 = L1 / n1;
  const double e0 = -4 / (h0 * h0) * std::pow(std::sin(pi * k / (n0 + 1) / 2), 2);
  const double e1 = -4 / (h1 * h1) * std::pow(std::sin(pi * m / n1 / 2), 2);
  std::vector<double> u, f;
  for (int i = 0; i < n0; ++i) {
    for (int j = 0; j < n1; ++j) {
      const double v = std::sin(pi * k * (i + 1) / (n0 + 1)) * std::cos(pi * m * (j + 0.5) / n1);
      u.push_back(v);
      f.push_back((e0 + e1 - lambda) * v);
    }
  }
  const std::int64_t shape[] = {n0, n1};
  gpukit::io::write_npy<double>(path("walls_f.npy"), shape, f);
  const Result r =
      run("poisson --device cpu -i " + path("walls_f.npy") + " -o " + path("walls_u.npy") +
          " --length 1,2 --boundary dirichlet,neumann --operator fd2 --helmholtz 2.5 "
          "--check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gpukit: poisson: 9x12 (lengths 1x2, boundaries dirichlet,neumann) double, "
                       "cpu"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(cpu-fftw), operator fd2, helmholtz 2.5\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("gauge"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("check: long double reference (FFTW)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("): ok"), std::string::npos) << r.err;
  const gpukit::io::NpyArray out = gpukit::io::read_npy(path("walls_u.npy"));
  ASSERT_EQ(out.shape, (std::vector<std::int64_t>{n0, n1}));
  gpukit::pde::PoissonOptions options;
  options.op = gpukit::pde::Operator::fd2;
  options.helmholtz = lambda;
  const gpukit::pde::PoissonGrid grid{
      {n0, n1}, {L0, L1}, {gpukit::pde::Boundary::dirichlet, gpukit::pde::Boundary::neumann}};
  double max_f = 0;
  for (const double x : f) max_f = std::max(max_f, std::fabs(x));
  const double bound = gpukit::pde::poisson_agreement_bound<double>(grid, options, max_f, 1.0);
  const auto values = out.values<double>();
  for (std::size_t i = 0; i < u.size(); ++i) ASSERT_NEAR(values[i], u[i], bound) << i;
  // The spectral operator solves another problem: the same f gives another u.
  const Result spectral =
      run("poisson --device cpu -i " + path("walls_f.npy") + " -o " + path("walls_spectral_u.npy") +
          " --length 1,2 --boundary dirichlet,neumann --helmholtz 2.5");
  ASSERT_EQ(spectral.exit_code, 0) << spectral.err;
  EXPECT_NE(slurp(path("walls_u.npy")), slurp(path("walls_spectral_u.npy")));
}

// A neumann problem with lambda 0 is singular as a periodic one is: the mean of f is removed with
// a warning in its own words, or refused under --strict; the gauge applies.
TEST(PoissonCli, NeumannKeepsTheMeanRuleInItsOwnWords) {
  const std::int64_t shape[] = {6, 8};
  gpukit::io::write_npy<double>(path("neumann_f.npy"), shape, std::vector<double>(48, 1.0));
  Result r = run("poisson --device cpu -i " + path("neumann_f.npy") + " -o " +
                 path("neumann_u.npy") + " --boundary neumann --gauge corner");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(", gauge corner\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: the mean of f, 1, is not zero to rounding"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lap(u) = f has no solution with boundaries neumann,neumann"),
            std::string::npos)
      << r.err;
  std::filesystem::remove(path("neumann_strict_u.npy"));
  r = run("poisson --device cpu -i " + path("neumann_f.npy") + " -o " +
          path("neumann_strict_u.npy") + " --boundary neumann --strict");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("neumann_strict_u.npy")));
  // With a dirichlet axis the problem has one solution for any f: no warning, --strict takes it.
  r = run("poisson --device cpu -i " + path("neumann_f.npy") + " -o " +
          path("neumann_strict_u.npy") + " --boundary neumann,dirichlet --strict");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

// The problem's options are judged by the library's rules before any input is read: usage
// errors (exit 2), nothing written, the option named.
TEST(PoissonCli, BadBoundaryOperatorOrHelmholtzIsAUsageError) {
  const std::int64_t shape[] = {4, 4, 4};
  gpukit::io::write_npy<double>(path("problem_f.npy"), shape, std::vector<double>(64, 0.0));
  const std::string out = path("problem_u.npy");
  const struct {
    std::string args, message;
  } cases[] = {
      {"--boundary dirichlet,neumann",
       "usage error: --boundary gives 2 values for a grid of 3 axes: give one for every axis, or "
       "one per axis"},
      {"--boundary wall",
       "usage error: --boundary: unknown boundary 'wall' (known: periodic, dirichlet, neumann)"},
      {"--boundary dirichlet,,neumann", "usage error: --boundary: unknown boundary ''"},
      {"--operator fd4", "usage error: --operator: unknown operator 'fd4' (known: spectral, fd2)"},
      {"--helmholtz -1", "usage error: --helmholtz must be finite and >= 0, got -1"},
      {"--helmholtz nan", "usage error: --helmholtz must be finite and >= 0, got nan"},
      {"--helmholtz inf", "usage error: --helmholtz must be finite and >= 0, got inf"},
  };
  for (const auto& c : cases) {
    std::filesystem::remove(out);
    const Result r =
        run("poisson --device cpu -i " + path("problem_f.npy") + " -o " + out + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
  // Judged before the input is read: a missing file is not what is reported.
  const Result early =
      run("poisson --device cpu -i " + path("no_such_file.npy") + " -o " + out + " --operator fd4");
  EXPECT_EQ(early.exit_code, 2) << early.err;
  EXPECT_EQ(run("poisson --device cpu --demo --boundary dirichlet").exit_code, 2);
}

TEST(PoissonCli, DemoReproducesTheSeedAt64) {
  const Result r = run("poisson --demo 64 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Solution at (32,32): computed=  0.975879 reference=  0.975882"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Linf err=2.404194e-05 L2 norm err = 9.412790e-08"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("reproduced"), std::string::npos) << r.out;
}

}  // namespace
