// The gpukit binary end to end: exit codes, messages, files left (or not) behind.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/io/npy.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

TEST(Cli, PricesABookWithPassThroughColumnsAndGreeks) {
  const std::string book = write_file("book.csv",
                                      "id,Type,spot,strike,maturity,volatility\r\n"
                                      "A1,call,100,100,1,0.2\r\n"
                                      "\"B,2\",P,100,110,0.5,0.3\r\n");
  const auto out = (scratch() / "prices.csv").string();
  const Result r =
      run("bs --device cpu --input " + book + " --output " + out + " --rate 0.05 --greeks");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(out);
  // The input's CR LF line ends are kept (issue 30).
  EXPECT_EQ(text.substr(0, text.find('\n') + 1),
            "id,Type,spot,strike,maturity,volatility,price,delta,gamma,vega,theta,rho\r\n");
  EXPECT_NE(text.find("\"B,2\",P,100,110,0.5,0.3,"), std::string::npos) << text;
  // Hull's textbook value: S=K=100, T=1, r=5%, sigma=20% call = 10.4506.
  EXPECT_NE(text.find("A1,call,100,100,1,0.2,10.4505"), std::string::npos) << text;
}

TEST(Cli, BadRowNamesFileLineColumnAndLeavesNoOutput) {
  const std::string book = write_file("bad.csv",
                                      "type,spot,strike,maturity,rate,volatility\n"
                                      "call,100,100,1,0.05,0.2\n"
                                      "put,100,-5,1,0.05,0.2\n");
  const auto out = scratch() / "never.csv";
  const Result r = run("bs --device cpu --input " + book + " --output " + out.string());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("bad.csv:3:3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("strike"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  for (const auto& entry : std::filesystem::directory_iterator(scratch()))
    EXPECT_EQ(entry.path().filename().string().find(".gpukit-tmp"), std::string::npos);
}

TEST(Cli, EmptyBookGivesAHeaderOnlyOutputOnStdout) {
  const Result r = run("bs --device cpu --input - --output - --rate 0.01 --volatility 0.2",
                       "type,spot,strike,maturity\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "type,spot,strike,maturity,price\n");
}

TEST(Cli, MissingInputFileIsAnIoError) {
  const Result r = run("bs --device cpu --input /nonexistent/book.csv --output -");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/book.csv"), std::string::npos) << r.err;
}

TEST(Cli, UsageErrorsExitWith2) {
  EXPECT_EQ(run("bs --precision quad --input x --output y").exit_code, 2);
  EXPECT_EQ(run("no-such-command").exit_code, 2);
}

TEST(Cli, DeviceCudaWithoutAGpuFailsClearly) {
  if (gpukit::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  const Result r = run("bs --device cuda --generate 10");
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.err.find("device unavailable"), std::string::npos) << r.err;
}

TEST(Cli, AutoFallsBackToTheCpuWithOneLine) {
  if (gpukit::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  const Result r = run("bs --generate 1000 --check");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("using the CPU"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("check: PASS"), std::string::npos) << r.out;
}

TEST(Cli, InfoListsTheBackends) {
  const Result r = run("info");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu"), std::string::npos);
  EXPECT_NE(r.out.find("cuda"), std::string::npos);
}

// Counts and their nouns agree: "(1 option)", not "(1 options)".
TEST(Cli, ACountOfOneTakesTheSingular) {
  const Result r = run("bs --demo 1 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("European Options with Black-Scholes formula (1 option) on"),
            std::string::npos)
      << r.out;
}

TEST(Cli, DemoRunsAndPasses) {
  const Result r = run("demo --device cpu");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("check: PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("demo: 7 case studies run, 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== SAXPY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== Matrix multiplication"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Linf 2.404194e-05"), std::string::npos) << r.out;  // the seed's Poisson
}

TEST(Cli, GeneratedBookRoundTripsThroughBs) {
  const auto generated = (scratch() / "generated.csv").string();
  ASSERT_EQ(run("bs --device cpu --generate 100 --seed 3 --output " + generated).exit_code, 0);
  const auto repriced = (scratch() / "repriced.csv").string();
  const Result r =
      run("bs --device cpu --input " + generated + " --output " + repriced + " --check");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("check:"), std::string::npos) << r.err;
}

TEST(Cli, BenchWritesJson) {
  const auto json = (scratch() / "bench.json").string();
  const Result r = run("bench black_scholes --device cpu --size 2000 --repeat 2 --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu-openmp-float"), std::string::npos) << r.out;
  EXPECT_NE(slurp(json).find("\"samples_ms\""), std::string::npos);
}

}  // namespace

namespace {

// Typed values as a .npy file through gpukit's own writer (tested in io_tests).
template <class T>
std::string write_npy_file(const std::string& name, const std::vector<T>& values) {
  const auto p = scratch() / name;
  gpukit::io::write_npy<T>(p, std::span<const T>(values));
  return p.string();
}

TEST(Cli, ReducePrintsIntegersExactlyAndFloatsRoundTrip) {
  const auto ints = write_npy_file<std::int32_t>("ints.npy", {2147483647, 2147483647, 5});
  Result r = run("reduce --device cpu --input " + ints);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "4294967299\n");  // widened to int64, exact
  r = run("reduce --device cpu --op max --json --input " + ints);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"result\":\"2147483647\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"dtype\":\"int32\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"n\":3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"op\":\"max\""), std::string::npos) << r.out;

  const auto floats = write_npy_file<double>("doubles.npy", {0.1, 0.2, 1e-17});
  r = run("reduce --device cpu --check --input " + floats);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::stod(r.out), 0.1 + 0.2 + 1e-17);  // the printed digits read back exactly
  EXPECT_NE(r.err.find("check:"), std::string::npos);
}

// --json's result is always a string: the printed result's text, exact for every integer (int64
// sums beyond 2^53 included, which a JSON number read as a double would round) and every float,
// and valid JSON for NaN and the infinities. Before: a number, or a string for NaN and Inf.
TEST(Cli, ReduceJsonResultIsAlwaysTheExactTextAsAString) {
  const auto expect_result = [](const std::string& file, const std::string& op,
                                const std::string& text) {
    const Result r = run("reduce --device cpu --json --op " + op + " --input " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);  // valid JSON, one object
    ASSERT_TRUE(j["result"].is_string()) << r.out;
    EXPECT_EQ(j["result"].get<std::string>(), text) << r.out;
    // The same text as without --json.
    const Result plain = run("reduce --device cpu --op " + op + " --input " + file);
    EXPECT_EQ(plain.out, text + "\n");
  };
  expect_result(write_npy_file<std::int64_t>("json_big.npy", {(std::int64_t{1} << 62) + 1, 0}),
                "sum", "4611686018427387905");
  expect_result(write_npy_file<double>("json_tenth.npy", {0.1, 0.2}), "sum", "0.30000000000000004");
  expect_result(write_npy_file<float>("json_float.npy", {0.1f}), "sum", "0.1");
  expect_result(write_npy_file<double>("json_nan.npy", {1.0, std::nan("")}), "sum", "nan");
  expect_result(write_npy_file<double>("json_negative_nan.npy", {-std::nan("")}), "sum", "nan");
  expect_result(write_npy_file<double>("json_inf.npy", {1.0, -INFINITY}), "sum", "-inf");
  expect_result(write_npy_file<float>("json_max.npy", {3e38f, 3e38f}), "sum", "inf");
}

TEST(Cli, ReduceRefusesBadInputWithDistinctExitCodes) {
  const auto floats = write_npy_file<float>("floats.npy", {1.0f});
  Result r = run("reduce --device cpu --op xor --input " + floats);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("needs integer input"), std::string::npos) << r.err;
  r = run("reduce --device cpu --op mean --input " + floats);
  EXPECT_EQ(r.exit_code, 2);  // a bad option value is a usage error
  EXPECT_NE(r.err.find("unknown reduction"), std::string::npos) << r.err;
  r = run("reduce --device cpu --input " + write_file("bad.npy", "\x93NUMPY garbage"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  r = run("reduce --device cpu --input " + (scratch() / "missing.npy").string());
  EXPECT_EQ(r.exit_code, 4);
  const auto empty = write_npy_file<float>("empty.npy", {});
  r = run("reduce --device cpu --op min --input " + empty);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
}

}  // namespace

namespace {

TEST(Cli, ScanWritesTheSameDtypeAndShape) {
  const auto in = write_npy_file<std::int32_t>("scan_in.npy", {3, 1, 7, 0, 4, 1, 6, 3});
  const auto out = (scratch() / "scan_out.npy").string();
  Result r = run("scan --device cpu --exclusive --check --input " + in + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("check:"), std::string::npos) << r.err;
  gpukit::io::NpyArray y = gpukit::io::read_npy(out);
  ASSERT_EQ(y.dtype, gpukit::io::NpyDtype::int32);
  const auto v = y.values<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(v.begin(), v.end()),
            (std::vector<std::int32_t>{0, 3, 4, 11, 11, 15, 16, 22}));  // seed 004's example

  // A 2-D array keeps its shape; the scan runs in C order.
  const auto grid_path = (scratch() / "grid.npy").string();
  const std::vector<double> grid = {1, 2, 3, 4, 5, 6};
  const std::int64_t shape[2] = {2, 3};
  gpukit::io::write_npy<double>(grid_path, shape, std::span<const double>(grid));
  r = run("scan --device cpu --op max --input " + grid_path + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  y = gpukit::io::read_npy(out);
  EXPECT_EQ(y.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(y.values<double>()[5], 6.0);
}

TEST(Cli, ScanRefusesOverflowAndBadOptionsWithoutWriting) {
  const auto in = write_npy_file<std::int32_t>("overflow.npy", {2147483647, 1, 0});
  const auto out = (scratch() / "never.npy").string();
  Result r = run("scan --device cpu --input " + in + " --output " + out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("overflows int32 at element 1"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run("scan --device cpu --op mean --input " + in + " --output " + out);
  EXPECT_EQ(r.exit_code, 2);  // a bad option value is a usage error
  EXPECT_NE(r.err.find("unknown scan operation"), std::string::npos) << r.err;
  const auto wide = write_npy_file<std::uint64_t>("u64.npy", {1, 2});
  r = run("scan --device cpu --input " + wide + " --output " + out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("not uint64"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, CompactKeepsInOrderAndCountsOnStderr) {
  const auto in = write_npy_file<float>("compact_in.npy", {1.5f, -2.0f, 0.0f, -0.0f, 3.0f});
  const auto out = (scratch() / "compact_out.npy").string();
  Result r = run("compact --device cpu --keep positive --check --input " + in + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("gpukit: compact: kept 2 of 5 elements (positive)\n"), std::string::npos)
      << r.err;
  const auto y = gpukit::io::read_npy(out);
  const auto v = y.values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{1.5f, 3.0f}));
  r = run("compact --device cpu --keep odd --input " + in + " --output " + out);
  EXPECT_EQ(r.exit_code, 2);  // a bad option value is a usage error
  EXPECT_NE(r.err.find("unknown keep predicate"), std::string::npos) << r.err;
}

}  // namespace

// ---- gpukit mc ----------------------------------------------------------------------------------

TEST(MonteCarloCli, PricesEuropeanAndBarrierRowsWithAllColumns) {
  const std::string book = write_file("mc_book.csv",
                                      "id,type,spot,strike,maturity,rate,volatility,barrier,"
                                      "barrier_type,steps\n"
                                      "A,call,100,100,1,0.05,0.2,,none,\n"
                                      "B,call,100,100,1,0.05,0.2,90,down-out,12\n"
                                      "C,put,100,100,1,0.05,0.2,100,Down-In,4\n");
  const auto out = (scratch() / "mc_prices.csv").string();
  const Result r = run("mc --device cpu --input " + book + " --output " + out +
                       " --paths 4096 --seed 5 --antithetic --control-variate --greeks");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(out);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps,price,"
            "std_error,ci_low,ci_high,paths,delta,gamma,vega,vrf_antithetic,vrf_control");
  EXPECT_NE(text.find("\nA,call,100,100,1,0.05,0.2,,none,,10.4"), std::string::npos) << text;
  EXPECT_NE(text.find(",4096,"), std::string::npos) << text;
  // Breached at the start: the knock-in put is the vanilla put (about 5.57).
  EXPECT_NE(text.find("\nC,put,100,100,1,0.05,0.2,100,Down-In,4,5."), std::string::npos) << text;
  // The same seed gives the same bytes; bs keeps treating the barrier columns as pass-through.
  const auto again = (scratch() / "mc_prices_again.csv").string();
  ASSERT_EQ(run("mc --device cpu --threads 1 --input " + book + " --output " + again +
                " --paths 4096 --seed 5 --antithetic --control-variate --greeks")
                .exit_code,
            0);
  EXPECT_EQ(slurp(again), text);
  const Result bs = run("bs --device cpu --input " + book + " --output -");
  ASSERT_EQ(bs.exit_code, 0) << bs.err;
  EXPECT_NE(bs.out.find("\nB,call,100,100,1,0.05,0.2,90,down-out,12,10.45"), std::string::npos)
      << bs.out;
}

TEST(MonteCarloCli, BadRowsNameFileLineColumnAndLeaveNoOutput) {
  const std::string header =
      "type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n";
  const struct {
    std::string row, where, what;
  } cases[] = {
      {"call,100,100,1,0.05,0.2,90,sideways,10\n", "mc_bad.csv:3:8", "barrier_type"},
      {"call,100,100,1,0.05,0.2,-90,down-out,10\n", "mc_bad.csv:3:7", "barrier"},
      {"call,100,100,1,0.05,0.2,,down-out,10\n", "mc_bad.csv:3:7", "barrier"},
      {"call,100,100,1,0.05,0.2,90,down-out,2.5\n", "mc_bad.csv:3:9", "steps"},
      {"call,100,100,1,0.05,0.2,90,down-out,\n", "mc_bad.csv:3:9", "steps"},
      {"call,100,-100,1,0.05,0.2,90,down-out,3\n", "mc_bad.csv:3:3", "strike"},
  };
  for (const auto& c : cases) {
    const std::string book =
        write_file("mc_bad.csv", header + "put,100,100,1,0.05,0.2,,none,\n" + c.row);
    const auto out = scratch() / "mc_never.csv";
    const Result r =
        run("mc --device cpu --paths 100 --input " + book + " --output " + out.string());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(c.where), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // A barrier column without barrier_type, and an odd path count with antithetic variates.
  const std::string half =
      write_file("mc_half.csv", "type,spot,strike,maturity,barrier\ncall,1,1,1,2\n");
  const Result r1 =
      run("mc --device cpu --rate 0 --volatility 0.2 --input " + half + " --output -");
  EXPECT_EQ(r1.exit_code, 3) << r1.err;
  EXPECT_NE(r1.err.find("barrier_type"), std::string::npos) << r1.err;
  const Result r2 =
      run("mc --device cpu --paths 101 --antithetic --rate 0 --volatility 0.2 "
          "--input - --output -",
          "type,spot,strike,maturity\ncall,1,1,1\n");
  EXPECT_EQ(r2.exit_code, 3) << r2.err;
  EXPECT_NE(r2.err.find("even"), std::string::npos) << r2.err;
}

TEST(MonteCarloCli, CheckPricesAgainOnTheCpuAndPrintsTheDifferences) {
  const std::string book = write_file("mc_check.csv",
                                      "type,spot,strike,maturity,barrier,barrier_type,steps\n"
                                      "call,100,100,1,,,\n"
                                      "put,100,95,1,90,down-out,6\n");
  const auto out = (scratch() / "mc_check_prices.csv").string();
  // --device auto: the GPU where there is one, else the CPU; either against the independent
  // long-double reference (never the pricer against itself).
  const Result r = run("mc --input " + book + " --output " + out +
                       " --paths 5000 --rate 0.05 --volatility 0.25 --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gpukit: mc: check: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("vs an independent long-double reference on the same random numbers (2 "
                       "options): max abs price difference "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("of the derived bound"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(MonteCarloCli, DemoPrintsMonteCarloBesideBlackScholes) {
  const Result r = run("mc --demo --device cpu --paths 20000 --demo-options 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MC: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BS: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Rel: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("All 3 options"), std::string::npos) << r.out;
}
