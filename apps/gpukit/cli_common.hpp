#pragma once
// Options and helpers shared by the subcommands.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "gpukit/core/context.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/io/option_book.hpp"

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

/// Reads an option book from `input` ("-" is stdin) for subcommand `command` ("bs", "mc"), with a
/// progress line on stderr while a person watches (stderr is a terminal).
io::OptionBook read_book_with_progress(const std::string& command, const std::string& input,
                                       const io::BookDefaults& defaults,
                                       io::BookColumns columns = io::BookColumns::european);

/// Calls f(T{}) with T the element type of an array read from `file`, for the five types the
/// primitives take; InvalidInput naming the file and `command` for uint64.
template <class F>
decltype(auto) with_primitive_element_type(io::NpyDtype dtype, const std::string& file,
                                           const std::string& command, F&& f) {
  switch (dtype) {
    case io::NpyDtype::int32:
      return f(std::int32_t{});
    case io::NpyDtype::int64:
      return f(std::int64_t{});
    case io::NpyDtype::uint32:
      return f(std::uint32_t{});
    case io::NpyDtype::float32:
      return f(float{});
    case io::NpyDtype::float64:
      return f(double{});
    case io::NpyDtype::uint64:
      break;
  }
  throw InvalidInput(file + ": " + command +
                     " supports int32, int64, uint32, float32 and float64, not uint64");
}

/// The registration functions of the subcommands (one file each).
void register_info(CLI::App& app);
void register_demo(CLI::App& app);
void register_bs(CLI::App& app);
void register_mc(CLI::App& app);
void register_bench(CLI::App& app);
void register_reduce(CLI::App& app);
void register_scan(CLI::App& app);
void register_compact(CLI::App& app);
void register_poisson(CLI::App& app);

/// The whole command line, for benchmark records.
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace gpukit::cli

namespace gpukit::bench {
struct BlackScholesSeedDemo;
}

namespace gpukit::cli {
/// Prints the seed demo in the seed's words (slides 12 and 15) and returns whether its check
/// passed (float results against the long double reference, each within its derived bound).
bool print_black_scholes_demo(const bench::BlackScholesSeedDemo& demo);
}  // namespace gpukit::cli
