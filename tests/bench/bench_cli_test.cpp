// `gpukit bench` and `gpukit info --measure` from the outside: bad sizes, variant names and JSON
// folders are refused before any benchmark runs; the JSON carries a boolean "verified" per row;
// each case answers to its case study's stem (`bs` and `mc` as deprecated spellings); the
// CPU-only info measures the host memory bandwidth.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "../cli/cli_test_support.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

TEST(BenchCli, SizeOutOfRangeIsAUsageErrorNamingTheRange) {
  const Result r = run("bench black_scholes --device cpu --size 1e12");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--size 1000000000000 is out of range: 1 to 536870912 options"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");  // nothing was measured
  const Result negative = run("bench reduce --device cpu --size -5");
  EXPECT_EQ(negative.exit_code, 2) << negative.err;
  EXPECT_NE(negative.err.find("must be at least 0, got -5"), std::string::npos) << negative.err;
  const Result fixed = run("bench monte_carlo --device cpu --size 1000");
  EXPECT_EQ(fixed.exit_code, 2) << fixed.err;
  EXPECT_NE(fixed.err.find("--size is not accepted"), std::string::npos) << fixed.err;
}

TEST(BenchCli, UnknownCaseIsAUsageErrorListingTheCases) {
  const Result r = run("bench nonsense --device cpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown case 'nonsense'; the cases: black_scholes, implied_volatility, "
                       "monte_carlo, reduce, scan, rng, poisson, saxpy, gemm (see"),
            std::string::npos)
      << r.err;
}

TEST(BenchCli, HelpListsEveryCaseByItsStem) {
  const Result r = run("bench --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Case study: black_scholes, implied_volatility, monte_carlo, reduce, scan, "
                       "rng, poisson, saxpy, gemm"),
            std::string::npos)
      << r.out;
}

TEST(BenchCli, CaseIsRecordedByItsStem) {
  const auto json = (scratch() / "stem.json").string();
  const Result r = run("bench black_scholes --device cpu --size 2000 --repeat 1 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("deprecated"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["case"], "black_scholes");
}

// The spellings of the cases before they took their case studies' stems keep working for the
// scripts that use them: the same run, recorded under the stem, with a warning (kept by --quiet)
// that names the stem.
TEST(BenchCli, DeprecatedCaseSpellingsRunTheStemWithAWarning) {
  const auto json = (scratch() / "deprecated.json").string();
  const Result bs = run("-q bench bs --device cpu --size 2000 --repeat 1 --json " + json);
  ASSERT_EQ(bs.exit_code, 0) << bs.err;
  EXPECT_NE(bs.err.find("gpukit: bench: warning: 'bs' is the deprecated spelling of "
                        "'black_scholes': use `gpukit bench black_scholes`\n"),
            std::string::npos)
      << bs.err;
  EXPECT_NE(bs.out.find("cpu-openmp-float"), std::string::npos) << bs.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["case"], "black_scholes");
  // Refusals name the stem too.
  const Result mc = run("bench mc --device cpu --size 1000");
  EXPECT_EQ(mc.exit_code, 2) << mc.err;
  EXPECT_NE(mc.err.find("'mc' is the deprecated spelling of 'monte_carlo'"), std::string::npos)
      << mc.err;
  EXPECT_NE(mc.err.find("bench monte_carlo: --size is not accepted"), std::string::npos) << mc.err;
}

TEST(BenchCli, UnknownVariantIsAUsageErrorListingTheValidNames) {
  const Result r = run("bench black_scholes --device cpu --size 1000 --variants nonsense");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown variant 'nonsense'"), std::string::npos) << r.err;
  // The valid names where the build has variants (with CUDA), else that it has none.
  EXPECT_TRUE(r.err.find("valid names: ") != std::string::npos ||
              r.err.find("there are none to select") != std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  const Result size_word = run("bench black_scholes --device cpu --size lots");
  EXPECT_EQ(size_word.exit_code, 2) << size_word.err;
  EXPECT_NE(size_word.err.find("must be a whole number"), std::string::npos) << size_word.err;
}

TEST(BenchCli, JsonIntoAMissingFolderFailsBeforeTheBenchmark) {
  const auto json = (scratch() / "no-such-folder" / "bench.json").string();
  const Result r = run("bench black_scholes --device cpu --size 1000 --repeat 1 --json " + json);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "the benchmark ran before the JSON path was checked";
}

TEST(BenchCli, JsonCarriesABooleanVerifiedPerRow) {
  const auto json = (scratch() / "verified.json").string();
  const Result r = run("bench reduce --device cpu --size 4099 --repeat 2 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  std::size_t rows = 0;
  for (const auto& t : j["tables"]) {
    for (const auto& row : t["rows"]) {
      ++rows;
      ASSERT_TRUE(row["verified"].is_boolean()) << row.dump();
      EXPECT_TRUE(row["verified"].get<bool>()) << row.dump();
    }
  }
  EXPECT_GE(rows, 2u);
}

TEST(InfoCli, MeasureOnTheCpuPrintsTheHostMemoryBandwidth) {
  const Result r = run("info --measure");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measured host memory copy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos) << r.out;
}

}  // namespace
