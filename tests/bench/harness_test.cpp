#include "gpukit/bench/harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpukit/bench/black_scholes_seed_demo.hpp"

namespace gpukit::bench {
namespace {

Row row(std::string name, double ms, bool ladder = true, bool vendor = false) {
  Row r;
  r.variant = std::move(name);
  r.elements = 1e6;
  r.bytes = 2e9;
  r.samples_ms = {ms * 1.1, ms, ms * 0.9, ms};  // median ms
  r.ladder = ladder;
  r.vendor = vendor;
  return r;
}

TEST(Harness, MedianOfEvenAndOddSamples) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(Harness, DerivedColumnsInTextAndJson) {
  Report report;
  report.case_name = "unit";
  report.command_line = "gpukit bench unit";
  Table t;
  t.title = "unit table";
  t.limit_gbps = 1000;
  t.limit_name = "D2D copy";
  t.rows = {row("first", 4.0), row("second", 2.0), row("off-ladder", 8.0, false), row("third", 1.0),
            row("vendor", 2.0, false, true)};
  report.tables.push_back(t);

  std::ostringstream text;
  report.print(text);
  EXPECT_NE(text.str().find("unit table"), std::string::npos);
  EXPECT_NE(text.str().find("third"), std::string::npos);

  const std::string path = ::testing::TempDir() + "/gpukit_harness_test.json";
  report.write_json(path);
  std::ifstream f(path);
  const nlohmann::json j = nlohmann::json::parse(f);
  const auto& rows = j["tables"][0]["rows"];
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0]["samples_ms"].size(), 4u);
  EXPECT_DOUBLE_EQ(rows[0]["gbps"].get<double>(), 2e9 / 4e-3 / 1e9);  // 500 GB/s
  EXPECT_DOUBLE_EQ(rows[0]["percent_of_limit"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(rows[1]["step_speedup"].get<double>(), 2.0);        // 4 ms -> 2 ms
  EXPECT_TRUE(rows[2]["step_speedup"].is_null());                      // not on the ladder
  EXPECT_DOUBLE_EQ(rows[3]["step_speedup"].get<double>(), 2.0);        // 2 ms -> 1 ms
  EXPECT_DOUBLE_EQ(rows[3]["cumulative_speedup"].get<double>(), 4.0);  // 4 ms -> 1 ms
  EXPECT_DOUBLE_EQ(rows[3]["vs_vendor"].get<double>(), 2.0);           // vendor 2 ms
  EXPECT_EQ(j["command_line"], "gpukit bench unit");
  EXPECT_TRUE(j.contains("git_revision"));
  std::remove(path.c_str());
}

TEST(Harness, HostTimingReturnsEverySample) {
  int calls = 0;
  const auto samples = time_on_host(2, 5, [&] { ++calls; });
  EXPECT_EQ(samples.size(), 5u);
  EXPECT_EQ(calls, 7);
}

TEST(BlackScholesBench, CpuRunVerifiesEveryRow) {
  BenchConfig config;
  config.context = Context::cpu();
  config.size = 4099;
  config.repeat = 2;
  config.warmup = 0;
  Report report;
  report.context = config.context;
  bench_cases()[0].run(config, report);
  ASSERT_FALSE(report.tables.empty());
  std::size_t rows = 0;
  for (const Table& t : report.tables) {
    for (const Row& r : t.rows) {
      ++rows;
      EXPECT_NE(r.note.find("ok"), std::string::npos) << r.variant << ": " << r.note;
      EXPECT_EQ(r.samples_ms.size(), 2u);
    }
  }
  EXPECT_GE(rows, 2u);  // float and double on the CPU
}

TEST(SeedBook, DeterministicAndWithinTheSeedsRanges) {
  const GeneratedBook a = generate_seed_book(10000, 5), b = generate_seed_book(10000, 5);
  const GeneratedBook c = generate_seed_book(10000, 6);
  EXPECT_EQ(a.spot, b.spot);
  EXPECT_NE(a.spot, c.spot);
  for (std::size_t i = 0; i < a.spot.size(); ++i) {
    ASSERT_TRUE(a.spot[i] >= 5 && a.spot[i] <= 30);
    ASSERT_TRUE(a.strike[i] >= 1 && a.strike[i] <= 100);
    ASSERT_TRUE(a.maturity[i] >= 0.25 && a.maturity[i] <= 10);
  }
}

TEST(SeedDemo, CpuDemoReproducesTheSeedsErrorLevel) {
  const BlackScholesSeedDemo demo = run_black_scholes_seed_demo(Context::cpu(), 100000, 2008);
  // The seed reports L1 6e-8 and max error 1.5e-5 for float against double.
  EXPECT_LT(demo.error.relative_l1, 1e-6);
  EXPECT_LT(demo.error.max_abs, 1e-4);
  EXPECT_GT(demo.error.max_abs, 0.0) << "float and double cannot agree exactly";
}

}  // namespace
}  // namespace gpukit::bench
