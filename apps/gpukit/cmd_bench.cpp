// gpukit bench <case>: the seeds' tables measured on this machine.

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/bench/harness.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::cli {

void register_bench(CLI::App& app) {
  auto* command = app.add_subcommand("bench", "Benchmark a case study's variants");
  struct Args {
    std::string case_name;
    DeviceOptions device;
    bench::BenchConfig config;
    std::string variants;
    std::string json_path;
  };
  auto args = std::make_shared<Args>();
  std::string cases;
  std::vector<std::string> case_names;
  for (const bench::BenchCase& c : bench::bench_cases()) {
    cases += (cases.empty() ? "" : ", ") + c.name;
    case_names.push_back(c.name);
  }
  // An unknown case is a usage error (exit 2), found while parsing.
  command->add_option("case", args->case_name, "Case study: " + cases)
      ->check(CLI::IsMember(case_names))
      ->required();
  add_device_options(*command, args->device);
  command->add_option("--size", args->config.size, "Elements (0 = the case's default)");
  command->add_option("--variants", args->variants, "Comma-separated variant names (default all)");
  command->add_option("--repeat", args->config.repeat, "Timed repetitions per row")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--warmup", args->config.warmup, "Untimed runs before timing")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--precision", args->config.precision, "float | double | both")
      ->check(CLI::IsMember({"float", "double", "both"}))
      ->capture_default_str();
  command->add_option("--json", args->json_path, "Write every sample and the context as JSON");
  command->callback([args] {
    const bench::BenchCase* chosen = nullptr;
    for (const bench::BenchCase& c : bench::bench_cases())
      if (c.name == args->case_name) chosen = &c;
    if (chosen == nullptr)
      throw InvalidInput(fmt::format("bench: unknown case '{}'", args->case_name));
    if (args->config.size < 0) throw InvalidInput("--size must be >= 0");
    args->config.context = resolve_context(args->device);
    std::stringstream list(args->variants);
    for (std::string name; std::getline(list, name, ',');)
      if (!name.empty()) args->config.variants.push_back(name);
    bench::Report report;
    report.case_name = chosen->name;
    report.command_line = command_line();
    report.context = args->config.context;
    chosen->run(args->config, report);
    // `--json -` puts the JSON on stdout; the table then goes to stderr.
    report.print(args->json_path == "-" ? std::cerr : std::cout);
    if (!args->json_path.empty()) report.write_json(args->json_path);
  });
}

}  // namespace gpukit::cli
