// `--check` end to end for `bs`, `iv` and `poisson`: correct results pass (no false failures:
// Hull's polynomial in double, a float book at spot 25000), a deliberately wrong result fails with
// exit 8 on the CPU backend (no false passes: the reference is independent of the backend), and a
// failed check still writes the output. GPUKIT_TEST_FAULT is the CLI's test-only hook that
// corrupts a result after it is computed.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/io/npy.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

std::string path(const std::string& name) { return (scratch() / name).string(); }

/// `gpukit <args>` with the test-only fault hook set to `fault`.
Result run_with_fault(const std::string& fault, const std::string& args) {
  const auto out = scratch() / "fault_stdout.txt", err = scratch() / "fault_stderr.txt";
  const std::string command = "GPUKIT_TEST_FAULT=" + fault + " " + std::string(GPUKIT_BINARY) +
                              " " + args + " </dev/null >" + out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A book of `n` options, calls and puts alternating, spot and strike around `spot`.
std::string book(int n, double spot, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::string csv = "id,type,spot,strike,maturity,rate,volatility\n";
  for (int i = 0; i < n; ++i) {
    csv += std::to_string(i) + (i % 2 ? ",put," : ",call,") +
           std::to_string(spot * (0.8 + 0.4 * u(rng))) + "," +
           std::to_string(spot * (0.5 + u(rng))) + "," + std::to_string(0.1 + 5 * u(rng)) + "," +
           std::to_string(0.05 * u(rng)) + "," + std::to_string(0.1 + 0.5 * u(rng)) + "\n";
  }
  return csv;
}

TEST(CheckCli, BsHullPolynomialInDoublePasses) {
  const std::string in = write_file("hull_book.csv", book(2000, 100, 1));
  const Result r =
      run("bs --device cpu --cdf hull --check --input " + in + " --output " + path("hull_out.csv"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("long double reference"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": ok"), std::string::npos) << r.err;
}

TEST(CheckCli, BsFloatBookAtSpot25000Passes) {
  const std::string in = write_file("big_book.csv", book(2000, 25000, 2));
  for (const std::string cdf : {"erfc", "hull"}) {
    const Result r = run("bs --device cpu --precision float --cdf " + cdf + " --check --input " +
                         in + " --output " + path("big_out.csv"));
    EXPECT_EQ(r.exit_code, 0) << cdf << ": " << r.err;
    EXPECT_NE(r.err.find(": ok"), std::string::npos) << r.err;
  }
}

TEST(CheckCli, BsWrongPricesFailWithExit8AndTheOutputIsStillWritten) {
  const std::string in = write_file("fault_book.csv", book(200, 30, 3));
  for (const std::string precision : {"double", "float"}) {
    const std::string out = path("fault_out_" + precision + ".csv");
    std::filesystem::remove(out);
    const Result f = run("bs --device cpu --precision " + precision + " --check --input " + in +
                         " --output " + out);
    ASSERT_EQ(f.exit_code, 0) << "without the fault: " << f.err;
    std::filesystem::remove(out);
    const Result bad =
        run_with_fault("bs-zero-puts", "bs --device cpu --precision " + precision +
                                           " --check --input " + in + " --output " + out);
    EXPECT_EQ(bad.exit_code, 8) << precision << ": " << bad.err;
    EXPECT_NE(bad.err.find("FAILED"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("was written"), std::string::npos) << bad.err;
    EXPECT_TRUE(std::filesystem::exists(out)) << "a failed check keeps the priced book";
    EXPECT_NE(slurp(out).find("price"), std::string::npos);
  }
  // The generated book (`--generate N --output`) is checked the same way.
  const std::string generated = path("generated_fault.csv");
  EXPECT_EQ(run("bs --device cpu --generate 100 --check --output " + generated).exit_code, 0);
  const Result bad = run_with_fault("bs-zero-puts",
                                    "bs --device cpu --generate 100 --check --output " + generated);
  EXPECT_EQ(bad.exit_code, 8) << bad.err;
}

TEST(CheckCli, PoissonWrongSolutionFailsWithExit8AndTheOutputIsStillWritten) {
  const std::int64_t shape[] = {16, 12};
  std::vector<double> f(16 * 12);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = std::sin(0.37 * double(i));
  double mean = 0;
  for (const double x : f) mean += x / double(f.size());
  for (double& x : f) x -= mean;
  gpukit::io::write_npy<double>(path("check_f.npy"), shape, f);
  const std::string out = path("check_u.npy");
  for (const std::string precision : {"double", "float"}) {
    Result r = run("poisson --device cpu --check --precision " + precision + " -i " +
                   path("check_f.npy") + " -o " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("long double reference"), std::string::npos) << r.err;
    std::filesystem::remove(out);
    r = run_with_fault("poisson-perturb", "poisson --device cpu --check --precision " + precision +
                                              " -i " + path("check_f.npy") + " -o " + out);
    EXPECT_EQ(r.exit_code, 8) << precision << ": " << r.err;
    EXPECT_NE(r.err.find("FAILED"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(out)) << "a failed check keeps u";
  }
}

// One rule for every --check (README): the output is written, a failed check keeps it and exits 8.
// Before, saxpy, scan and compact wrote nothing on a failed check (gemm's and poisson's are
// tested beside them: GemmCli.CheckCatchesAWrongResult and the test above). Each case: the command,
// its test fault, and the output's expected values without the fault (so the kept file is shown to
// hold the computed result, perturbed in its middle element).
TEST(CheckCli, EveryFailedCheckKeepsTheOutputAndExits8) {
  const std::int64_t shape[] = {5};
  gpukit::io::write_npy<double>(path("keep_x.npy"), shape, std::vector<double>{1, 2, 3, 4, 5});
  gpukit::io::write_npy<double>(path("keep_y.npy"), shape, std::vector<double>{10, 20, 30, 40, 50});
  gpukit::io::write_npy<std::int32_t>(path("keep_i.npy"), shape,
                                      std::vector<std::int32_t>{3, -1, 4, 1, -5});
  const struct {
    std::string fault, args;
    std::vector<double> correct;
  } cases[] = {
      {"saxpy-perturb",
       "saxpy --alpha 2 " + path("keep_x.npy") + " " + path("keep_y.npy"),
       {12, 24, 36, 48, 60}},
      {"scan-perturb", "scan -i " + path("keep_i.npy"), {3, 2, 6, 7, 2}},
      {"compact-perturb", "compact --keep positive -i " + path("keep_i.npy"), {3, 4, 1}},
  };
  for (const auto& c : cases) {
    const std::string out = path("keep_out.npy");
    std::filesystem::remove(out);
    Result r = run("--quiet " + c.args + " --device cpu --check -o " + out);
    ASSERT_EQ(r.exit_code, 0) << c.args << ": " << r.err;
    std::filesystem::remove(out);
    r = run_with_fault(c.fault, c.args + " --device cpu --check -o " + out);
    EXPECT_EQ(r.exit_code, 8) << c.fault << ": " << r.err;
    EXPECT_NE(r.err.find("FAILED"), std::string::npos) << r.err;
    EXPECT_NE(
        r.err.find("--check: the result differs from the reference ('" + out + "' was written)"),
        std::string::npos)
        << r.err;
    ASSERT_TRUE(std::filesystem::exists(out)) << c.fault << ": a failed check keeps the output";
    if (c.fault == "saxpy-perturb") {
      EXPECT_NE(r.err.find("FAILED: 1 element, the first at 2"), std::string::npos) << r.err;
    }
    const gpukit::io::NpyArray kept = gpukit::io::read_npy(out);
    std::vector<double> values;
    if (kept.dtype == gpukit::io::NpyDtype::float64) {
      for (const double v : kept.values<double>()) values.push_back(v);
    } else {
      for (const std::int32_t v : kept.values<std::int32_t>()) values.push_back(v);
    }
    ASSERT_EQ(values.size(), c.correct.size()) << c.fault;
    for (std::size_t i = 0; i < values.size(); ++i) {
      // Every element as computed, but the middle one, which the fault changed.
      if (i == values.size() / 2) {
        EXPECT_NE(values[i], c.correct[i]) << c.fault;
      } else {
        EXPECT_EQ(values[i], c.correct[i]) << c.fault << " element " << i;
      }
    }
  }
}

TEST(CheckCli, PoissonDemoPassesAtOtherSizesAndInFloat) {
  for (const std::string args : {"--demo 8", "--demo 64 --precision float", "--demo 30"}) {
    const Result r = run("poisson --device cpu " + args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.out << r.err;
    EXPECT_NE(r.out.find("check against a long double solve"), std::string::npos) << r.out;
  }
}

// Section 2 wording: the int64 overflow message must not advise a wider type that does not exist.
TEST(WordingCli, Int64ScanOverflowDoesNotSuggestAWiderType) {
  const std::int64_t shape[] = {3};
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  gpukit::io::write_npy<std::int64_t>(path("big64.npy"), shape,
                                      std::vector<std::int64_t>{big, big, 1});
  Result r = run("scan --device cpu -i " + path("big64.npy") + " -o " + path("big64_out.npy"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("overflows int64"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("e.g. int64"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("float64"), std::string::npos) << r.err;
  // int32 still gets the int64 advice.
  const std::int32_t big32 = std::numeric_limits<std::int32_t>::max();
  gpukit::io::write_npy<std::int32_t>(path("big32.npy"), shape,
                                      std::vector<std::int32_t>{big32, big32, 1});
  r = run("scan --device cpu -i " + path("big32.npy") + " -o " + path("big32_out.npy"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("convert the input to int64"), std::string::npos) << r.err;
}

TEST(CheckCli, IvWrongVolatilityFailsNamingItsRow) {
  // Nine options near the money (every volatility well determined by its price), priced by bs.
  const std::string priced = path("fault.csv"), inverted = path("fault_iv.csv");
  ASSERT_EQ(
      run("bs --device cpu -i " + write_file("fault_book.csv", book(9, 100, 5)) + " -o " + priced)
          .exit_code,
      0);
  std::filesystem::remove(inverted);
  const Result r =
      run_with_fault("iv-perturb", "iv --device cpu --check -i " + priced + " -o " + inverted);
  EXPECT_EQ(r.exit_code, 8) << r.err;
  EXPECT_NE(r.err.find("FAILED"), std::string::npos) << r.err;
  // The middle row (the hook's) is the worst: line 6 of the file, data row 5.
  EXPECT_NE(r.err.find(priced + ":6, data row 5"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(inverted)) << "a failed check keeps the output";
}

}  // namespace
