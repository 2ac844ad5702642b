#include "bench/harness.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/black_scholes_seed_demo.hpp"
#include "gpukit/core/error.hpp"

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
  r.verify(true, "ok: a unit-test row");
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

// The run's date, ISO 8601 in UTC to the second, taken when the report is made: parsed back as
// UTC it lies within a minute of now (a local-time stamp off UTC, or a fixed string, fails).
TEST(Harness, JsonCarriesTheRunsDateInUtc) {
  const std::time_t before = std::time(nullptr);
  Report report;
  report.case_name = "unit";
  const std::string path = ::testing::TempDir() + "/gpukit_harness_date_test.json";
  report.write_json(path);
  std::ifstream f(path);
  const nlohmann::json j = nlohmann::json::parse(f);
  std::remove(path.c_str());
  ASSERT_TRUE(j.contains("date"));
  const std::string date = j["date"].get<std::string>();
  EXPECT_TRUE(std::regex_match(date, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << date;
  std::tm utc{};
  std::istringstream in(date);
  in >> std::get_time(&utc, "%Y-%m-%dT%H:%M:%SZ");
  ASSERT_FALSE(in.fail()) << date;
  const std::time_t stamped = timegm(&utc);
  EXPECT_LE(std::abs(std::difftime(stamped, before)), 60.0) << date;
  EXPECT_EQ(date, report.date);
}

// A registry entry's traffic model gives the row its bytes and flops (each input read once, each
// output written once, in values of the element type), and the JSON its TFLOP/s; its role gives
// the vendor and ladder flags.
TEST(Harness, VariantRowDerivesBytesAndFlopsFromTheTrafficModel) {
  constexpr VariantInfo scan{.name = "scan-like",
                             .description = "reads one, writes one",
                             .seed_reference = "004",
                             .role = VariantRole::step,
                             .traffic = {.reads_per_element = 1, .writes_per_element = 1}};
  const Row s = variant_row(scan, {.elements = 1000, .value_bytes = 4});
  EXPECT_EQ(s.variant, "scan-like");
  EXPECT_EQ(s.seed_reference, "004");
  EXPECT_DOUBLE_EQ(s.elements, 1000.0);
  EXPECT_DOUBLE_EQ(s.bytes, 8000.0);  // 1000 x (4 read + 4 written)
  EXPECT_DOUBLE_EQ(s.flops, 0.0);
  EXPECT_TRUE(s.ladder);
  EXPECT_FALSE(s.vendor);

  // Writes count per output element (a compaction keeping 300 of 1000); the label names the row.
  constexpr VariantInfo select{.name = "select",
                               .role = VariantRole::vendor,
                               .traffic = {.reads_per_element = 1, .writes_per_element = 1}};
  const Row c =
      variant_row(select, {.elements = 1000, .output_elements = 300, .value_bytes = 8}, "label");
  EXPECT_EQ(c.variant, "label");
  EXPECT_DOUBLE_EQ(c.bytes, (1000.0 + 300.0) * 8);
  EXPECT_TRUE(c.vendor);
  EXPECT_FALSE(c.ladder);

  // Black-Scholes-like: three inputs read, two outputs written, flops counted.
  constexpr VariantInfo pricing{
      .name = "pricing",
      .role = VariantRole::best,
      .traffic = {.reads_per_element = 3, .writes_per_element = 2, .flops_per_element = 50}};
  Row p = variant_row(pricing, {.elements = 1e6, .value_bytes = 4});
  EXPECT_DOUBLE_EQ(p.bytes, 20e6);
  EXPECT_DOUBLE_EQ(p.flops, 50e6);
  p.samples_ms = {1.0};  // 1 ms: 20 GB/s, 0.05 TFLOP/s
  p.verify(true, "ok");
  Report report;
  report.case_name = "unit";
  Table t;
  t.rows = {p};
  report.tables.push_back(t);
  const std::string path = ::testing::TempDir() + "/gpukit_harness_traffic_test.json";
  report.write_json(path);
  std::ifstream f(path);
  const nlohmann::json j = nlohmann::json::parse(f);
  const auto& row = j["tables"][0]["rows"][0];
  EXPECT_DOUBLE_EQ(row["gbps"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(row["flops"].get<double>(), 50e6);
  EXPECT_DOUBLE_EQ(row["tflops"].get<double>(), 0.05);
  std::remove(path.c_str());
}

// An injected row whose verification failed: the text says FAILED, the JSON carries a boolean
// "verified" per row, and require_verified (what `gpukit bench` calls last) throws the
// check-failed error (exit 8) naming the row; a skipped row (not measured) does not count.
TEST(Harness, AnUnverifiedRowFailsTheRun) {
  Report report;
  report.case_name = "unit";
  Table t;
  t.title = "unit table";
  Row bad = row("wrong", 2.0);
  bad.verify(false, "MISMATCH 3 vs 4");
  Row skipped;
  skipped.variant = "unsupported";
  skipped.skipped = "does not support the shape";
  t.rows = {row("good", 1.0), bad, skipped};
  report.tables.push_back(t);
  ASSERT_EQ(report.unverified_rows(), std::vector<std::string>{"unit table: wrong"});

  std::ostringstream text;
  report.print(text);
  EXPECT_NE(text.str().find("FAILED"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("skipped"), std::string::npos) << text.str();

  const std::string path = ::testing::TempDir() + "/gpukit_harness_verified.json";
  report.write_json(path);
  std::ifstream f(path);
  const nlohmann::json j = nlohmann::json::parse(f);
  const auto& rows = j["tables"][0]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["verified"], true);
  EXPECT_EQ(rows[1]["verified"], false);
  EXPECT_EQ(rows[2]["verified"], false);
  EXPECT_EQ(rows[2]["skipped"], "does not support the shape");
  EXPECT_FALSE(rows[0].contains("skipped"));
  std::remove(path.c_str());

  try {
    require_verified(report);
    ADD_FAILURE() << "an unverified row passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::check_failed);
    EXPECT_EQ(exit_code(e.kind()), 8);
    EXPECT_NE(std::string(e.what()).find("unit table: wrong"), std::string::npos) << e.what();
  }
  // The same report with the row fixed passes; an unset flag (a bench that forgot to verify)
  // fails like a failed check.
  report.tables[0].rows[1].verify(true, "ok");
  EXPECT_NO_THROW(require_verified(report));
  report.tables[0].rows[1].verified = false;
  report.tables[0].rows[1].note.clear();
  EXPECT_THROW(require_verified(report), Error);
}

TEST(Harness, HostTimingReturnsEverySample) {
  int calls = 0;
  const auto samples = time_on_host(2, 5, [&] { ++calls; });
  EXPECT_EQ(samples.size(), 5u);
  EXPECT_EQ(calls, 7);
}

// A host entry goes through the same time_variant as a device one: checked first (a failing check
// leaves the row unverified), then timed on the host with at most kHostRepeat samples after one
// warm-up; its traffic model gives the bytes, and it stays off the ladder columns.
struct FakeHostWorkload {
  std::vector<std::string> calls;
  bool passes = true;
  WorkloadShape shape() const { return {.elements = 100, .value_bytes = 8}; }
  void launch(const HostVariant<int>& entry) { calls.push_back(fmt_call("launch", entry)); }
  Check check(const HostVariant<int>& entry) {
    calls.push_back(fmt_call("check", entry));
    return {passes, passes ? "ok: fake" : "MISMATCH: fake"};
  }
  static std::string fmt_call(const char* what, const HostVariant<int>& entry) {
    return std::string(what) + " " + std::to_string(entry.launch);
  }
};

TEST(Harness, HostEntriesAreCheckedThenTimedOnTheHost) {
  constexpr HostVariant<int> entry = {
      .info = {.name = "cpu-fake",
               .description = "a host entry",
               .seed_reference = "CPU backend",
               .traffic = {.reads_per_element = 2, .writes_per_element = 1}},
      .launch = 7,
  };
  BenchConfig config;
  config.warmup = 3;
  config.repeat = 20;
  FakeHostWorkload w;
  const Row r = time_variant(config, entry, w, "cpu-fake 100");
  ASSERT_EQ(w.calls.size(), 1u + 1u + std::size_t(kHostRepeat));  // check, warm-up, samples
  EXPECT_EQ(w.calls.front(), "check 7");
  for (std::size_t i = 1; i < w.calls.size(); ++i) EXPECT_EQ(w.calls[i], "launch 7");
  EXPECT_EQ(r.samples_ms.size(), std::size_t(kHostRepeat));
  EXPECT_EQ(r.variant, "cpu-fake 100");
  EXPECT_EQ(r.description, "a host entry");
  EXPECT_EQ(r.seed_reference, "CPU backend");
  EXPECT_DOUBLE_EQ(r.bytes, (2 * 100 + 1 * 100) * 8.0);
  EXPECT_FALSE(r.ladder);
  EXPECT_FALSE(r.vendor);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.note, "ok: fake");

  config.repeat = 2;
  config.warmup = 0;
  FakeHostWorkload failing;
  failing.passes = false;
  const Row f = time_variant(config, entry, failing);
  EXPECT_EQ(failing.calls.size(), 1u + 2u);  // check, no warm-up, two samples
  EXPECT_EQ(f.variant, "cpu-fake");
  EXPECT_FALSE(f.verified);
  EXPECT_EQ(f.note, "MISMATCH: fake");
}

// Every case's CPU rows are verified against their independent reference (a small size where the
// case takes one), and every row is measured.
TEST(BenchCases, CpuRunOfEveryCaseVerifiesEveryRow) {
  for (const BenchCase& c : bench_cases()) {
    BenchConfig config;
    config.context = Context::cpu();
    config.size = c.size_unit.empty() ? 0 : c.name == "poisson" ? 96 : 4099;
    config.repeat = 2;
    config.warmup = 0;
    Report report;
    report.case_name = c.name;
    report.context = config.context;
    c.run(config, report);
    ASSERT_FALSE(report.tables.empty()) << c.name;
    std::size_t rows = 0;
    for (const Table& t : report.tables) {
      for (const Row& r : t.rows) {
        ++rows;
        EXPECT_TRUE(r.verified) << c.name << " " << r.variant << ": " << r.note;
        EXPECT_FALSE(r.note.empty()) << c.name << " " << r.variant << ": says what was compared";
        EXPECT_FALSE(r.samples_ms.empty()) << c.name << " " << r.variant;
      }
    }
    EXPECT_GE(rows, 1u) << c.name;
    EXPECT_TRUE(report.unverified_rows().empty()) << c.name;
  }
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
