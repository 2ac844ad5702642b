#pragma once
// Options and helpers shared by the subcommands.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "gpukit/core/context.hpp"

namespace gpukit::cli {

struct DeviceOptions {
  std::string device = "auto";
  int threads = 0;
};

/// Adds --device and --threads to a subcommand.
void add_device_options(CLI::App& command, DeviceOptions& options);

/// Resolves the device and prints `auto`'s one-line notice on stderr.
Context resolve_context(const DeviceOptions& options);

/// Writes a file atomically: `write` fills a temporary file beside `path`, which is renamed into
/// place only when everything succeeded, so a failure leaves no partial output. "-" is stdout
/// (written only after `write` has produced everything in memory).
void write_output_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write);

/// The registration functions of the subcommands (one file each).
void register_info(CLI::App& app);
void register_demo(CLI::App& app);
void register_bs(CLI::App& app);
void register_bench(CLI::App& app);
void register_reduce(CLI::App& app);

/// The whole command line, for benchmark records.
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace gpukit::cli

namespace gpukit::bench {
struct BlackScholesSeedDemo;
}

namespace gpukit::cli {
/// Prints the seed demo in the seed's words (slides 12 and 15) and returns whether its check
/// passed (float results against the double reference: L1 < 1e-6, max error < 1e-4).
bool print_black_scholes_demo(const bench::BlackScholesSeedDemo& demo);
}  // namespace gpukit::cli
