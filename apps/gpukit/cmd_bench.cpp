// gpukit bench <case>: the seeds' tables measured on this machine.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bench/harness.hpp"
#include "cli_common.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::cli {

namespace {

// The names two cases had before every case answered to its case study's stem, still accepted for
// the scripts that use them: the same run, recorded under the stem, after a warning.
struct DeprecatedCaseSpelling {
  std::string_view spelling;
  std::string_view stem;
};
constexpr DeprecatedCaseSpelling kDeprecatedCaseSpellings[] = {{"bs", "black_scholes"},
                                                               {"mc", "monte_carlo"}};

// The case `name` stands for: its stem, with a warning on stderr (kept by --quiet) where `name` is
// a deprecated spelling; `name` itself otherwise.
std::string case_stem(const std::string& name) {
  for (const DeprecatedCaseSpelling& d : kDeprecatedCaseSpellings) {
    if (name == d.spelling) {
      fmt::print(stderr,
                 "gpukit: bench: warning: '{}' is the deprecated spelling of '{}': use `gpukit "
                 "bench {}`\n",
                 d.spelling, d.stem, d.stem);
      return std::string(d.stem);
    }
  }
  return name;
}

// --size within the case's range (0: its default), refused as a usage error otherwise.
void check_size(const bench::BenchCase& c, std::int64_t size) {
  if (size == 0) return;
  if (c.size_unit.empty()) {
    throw CLI::ValidationError(
        fmt::format("bench {}: --size is not accepted (its problem sizes are fixed)", c.name));
  }
  if (size < 0 || size > c.max_size) {
    throw CLI::ValidationError(
        fmt::format("bench {}: --size {} is out of range: 1 to {} {} (0 or none: the default)",
                    c.name, size, c.max_size, c.size_unit));
  }
}

// Every name of --variants must be one of the case's variants.
std::vector<std::string> parse_variants(const bench::BenchCase& c, const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) names.push_back(name);
  if (names.empty()) return names;
  const std::vector<std::string> valid = c.variant_names();
  if (valid.empty()) {
    throw CLI::ValidationError(fmt::format(
        "bench {}: unknown variant '{}' in --variants: there are none to select for {} in this "
        "build{}",
        c.name, names.front(), c.name, built_with_cuda() ? "" : " (built without CUDA)"));
  }
  for (const std::string& name : names) {
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      std::string all;
      for (const std::string& v : valid) all += (all.empty() ? "" : ", ") + v;
      throw CLI::ValidationError(fmt::format(
          "bench {}: unknown variant '{}' in --variants; valid names: {}", c.name, name, all));
    }
  }
  return names;
}

// The --json file's folder must exist and be writable before minutes of benchmarking.
void check_json_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw IoError(
        fmt::format("bench --json {}: the folder {} does not exist", path, folder.string()));
  }
  if (fs::is_directory(p, ec)) throw IoError(fmt::format("bench --json {}: is a folder", path));
  if (::access(folder.c_str(), W_OK) != 0) {
    throw IoError(fmt::format("bench --json {}: cannot write in {}: {}", path, folder.string(),
                              std::strerror(errno)));
  }
}

}  // namespace

void register_bench(CLI::App& app) {
  auto* command = app.add_subcommand("bench", "Benchmark a case study's variants");
  struct Args {
    std::string case_name;
    DeviceOptions device;
    bench::BenchConfig config;
    std::int64_t size = 0;
    std::string variants;
    std::string json_path;
  };
  auto args = std::make_shared<Args>();
  std::string cases;
  for (const bench::BenchCase& c : bench::bench_cases()) {
    cases += (cases.empty() ? "" : ", ") + c.name;
  }
  // An unknown case is a usage error (exit 2) naming the cases, found before anything runs.
  command->add_option("case", args->case_name, "Case study: " + cases)->required();
  add_device_options(*command, args->device);
  command
      ->add_option("--size", args->size,
                   "Elements (0 = the case's default; the range depends on the case)")
      ->transform(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  command->add_option("--variants", args->variants,
                      "Comma-separated variant names (default all; unknown names are refused)");
  // Integer options as every command's: 1e3 is 1000; the ranges in plain words.
  command->add_option("--repeat", args->config.repeat, "Timed repetitions per row")
      ->transform(integer_in(1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  command->add_option("--warmup", args->config.warmup, "Untimed runs before timing")
      ->transform(integer_in(0, std::numeric_limits<int>::max()))
      ->capture_default_str();
  command->add_option("--precision", args->config.precision, "float | double | both")
      ->check(CLI::IsMember({"float", "double", "both"}))
      ->capture_default_str();
  command->add_option("--json", args->json_path, "Write every sample and the context as JSON");
  command->callback([args, cases] {
    const std::string case_name = case_stem(args->case_name);
    const bench::BenchCase* chosen = nullptr;
    for (const bench::BenchCase& c : bench::bench_cases())
      if (c.name == case_name) chosen = &c;
    if (chosen == nullptr) {
      throw CLI::ValidationError(
          fmt::format("bench: unknown case '{}'; the cases: {}", args->case_name, cases));
    }
    args->config.size = args->size;
    check_size(*chosen, args->size);
    args->config.variants = parse_variants(*chosen, args->variants);
    if (!args->json_path.empty()) check_json_path(args->json_path);
    args->config.context = resolve_context(args->device);
    bench::Report report;
    report.case_name = chosen->name;
    report.command_line = command_line();
    report.context = args->config.context;
    chosen->run(args->config, report);
    // `--json -` puts the JSON on stdout; the table then goes to stderr.
    report.print(args->json_path == "-" ? std::cerr : std::cout);
    if (!args->json_path.empty()) report.write_json(args->json_path);
    // A row that failed its verification fails the run (exit 8), after the tables and the JSON
    // are out, so that the failing numbers can be read.
    bench::require_verified(report);
  });
}

}  // namespace gpukit::cli
