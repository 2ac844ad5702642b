// gpukit: the command-line tool. Each subcommand parses, calls one library function and prints;
// errors become one line on stderr, starting with "gpukit:", and a distinct exit code (see
// gpukit::exit_code; usage errors, CLI11's included, exit 2).

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/bench/harness.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/standard_output.hpp"

namespace gpukit::cli {
void register_gemm(CLI::App& app);  // cmd_gemm.cpp
}  // namespace gpukit::cli

namespace {
// Results printed into a failing stdout (full disk, closed, broken) are an I/O error, not a silent
// success; `code` is returned when stdout took everything.
int finish_stdout(int code) {
  try {
    gpukit::io::flush_stdout();
  } catch (const gpukit::Error& e) {
    std::cerr << "gpukit: " << gpukit::kind_name(e.kind()) << ": " << e.what() << '\n';
    return code != 0 ? code : gpukit::exit_code(e.kind());
  }
  return code;
}

// Set by apps/gpukit/CMakeLists.txt.
#ifndef GPUKIT_VERSION
#define GPUKIT_VERSION "unknown"
#endif
#ifndef GPUKIT_CUDA_ARCHITECTURES
#define GPUKIT_CUDA_ARCHITECTURES ""
#endif

std::string version_text() {
  const std::string cuda = gpukit::built_with_cuda()
                               ? fmt::format("on (architectures {})", GPUKIT_CUDA_ARCHITECTURES)
                               : std::string("off (a CPU-only build)");
  return fmt::format("gpukit {}\ngit revision {}\nCUDA {}", GPUKIT_VERSION,
                     gpukit::bench::git_revision(), cuda);
}

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// CLI11 reads an unknown first word as "a subcommand is required"; say what was wrong instead,
// with the nearest command when one is close. Returns false after printing the message.
bool first_word_is_a_command(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.starts_with('-')) continue;  // the top-level flags take no values
    std::string nearest;
    std::size_t best = 3;  // farther than two edits is not a typo
    for (const CLI::App* command : app.get_subcommands({})) {
      if (command->get_name() == word) return true;
      const std::size_t d = edit_distance(word, command->get_name());
      if (d < best || (command->get_name().starts_with(word) && word.size() >= 2)) {
        best = std::min(d, best), nearest = command->get_name();
      }
    }
    std::cerr << fmt::format("gpukit: usage error: unknown command '{}'{} (see 'gpukit --help')\n",
                             word,
                             nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest));
    return false;
  }
  return true;
}

constexpr const char* kExitCodes =
    "Exit codes: 0 success, 1 unexpected error, 2 usage error (an unknown or bad option, a\n"
    "missing one), 3 invalid input data, 4 I/O error, 5 out of memory, 6 CUDA error, 7 no usable\n"
    "CUDA device, 8 a --check failed.";

}  // namespace

namespace gpukit::cli {
void register_saxpy(CLI::App& app);  // cmd_saxpy.cpp
}  // namespace gpukit::cli

int main(int argc, char** argv) {
  gpukit::cli::guard_standard_streams();
  // Ctrl-C, SIGTERM or a closed terminal while an output is written leaves no temporary file.
  gpukit::io::install_temporary_file_cleanup();
  gpukit::cli::set_command_line(argc, argv);
  CLI::App app{
      "gpukit: GPU case studies (Black-Scholes, Monte Carlo, Poisson, reduction, scan) on the CPU "
      "and NVIDIA GPUs, each checked against a CPU reference",
      "gpukit"};  // named, so that "Usage:" says gpukit, not the path it was started by
  gpukit::cli::install_usage_error_format(app);  // before the subcommands: they copy it
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", version_text,
                       "Print the version, git revision and CUDA support");
  app.footer(kExitCodes);
  gpukit::cli::add_quiet_flag(app);
  gpukit::cli::register_info(app);
  gpukit::cli::register_demo(app);
  gpukit::cli::register_bs(app);
  gpukit::cli::register_mc(app);
  gpukit::cli::register_reduce(app);
  gpukit::cli::register_scan(app);
  gpukit::cli::register_compact(app);
  gpukit::cli::register_poisson(app);
  gpukit::cli::register_saxpy(app);
  gpukit::cli::register_gemm(app);
  gpukit::cli::register_bench(app);
  if (!first_word_is_a_command(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return finish_stdout(app.exit(e));
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const gpukit::Error& e) {
    std::cerr << "gpukit: " << gpukit::kind_name(e.kind()) << ": " << e.what() << '\n';
    return gpukit::exit_code(e.kind());
  } catch (const std::bad_alloc&) {
    std::cerr << "gpukit: out of memory: a host allocation failed\n";
    return gpukit::exit_code(gpukit::ErrorKind::out_of_memory);
  } catch (const std::exception& e) {
    std::cerr << "gpukit: internal error: " << e.what() << '\n';
    return 1;
  }
  return finish_stdout(0);
}
