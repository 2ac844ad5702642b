// gpukit: the command-line tool. Each subcommand parses, calls one library function and prints;
// errors become one line on stderr, starting with "gpukit:", and a distinct exit code (see
// gpukit::exit_code; usage errors, CLI11's included, exit 2).

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <new>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bench/harness.hpp"
#include "cli_common.hpp"
#include "cli_distributed.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"
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
bool first_word_is_a_command(const CLI::App& app, int argc, char** argv, std::ostream& err) {
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
    err << fmt::format("gpukit: usage error: unknown command '{}'{} (see 'gpukit --help')\n", word,
                       nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest));
    return false;
  }
  return true;
}

// The command word of the command line (the first word that is not an option), or "".
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (!word.starts_with('-')) return word;
  }
  return {};
}

// FNV-1a 64 of the arguments but --device and --threads, which may differ between ranks (MPMD
// jobs: `mpirun -np 2 gpukit ... --device cuda : -np 1 gpukit ... --device cpu`).
std::uint64_t arguments_hash(int argc, char** argv) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--device" || word == "--threads") {
      ++i;
      continue;
    }
    if (word.starts_with("--device=") || word.starts_with("--threads=")) continue;
    for (const char c : word) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    hash = (hash ^ 0xFFu) * 0x100000001b3ull;  // a separator no argument holds
  }
  return hash;
}

// Under an MPI launcher: every rank must run the same command, and only the commands that run
// across ranks may have several. The message, or "" when the job may start. Collective.
std::string job_problem(gpukit::distributed::Communicator& comm, int argc, char** argv) {
  if (!comm.distributed()) return {};
  const std::vector<std::int64_t> hashes =
      comm.all_gather(static_cast<std::int64_t>(arguments_hash(argc, argv)));
  for (std::size_t r = 1; r < hashes.size(); ++r) {
    if (hashes[r] != hashes[0]) {
      return fmt::format(
          "every rank must run the same command (only --device and --threads may differ), but "
          "rank {}'s arguments differ from rank 0's",
          r);
    }
  }
  const std::string_view command = command_word(argc, argv);
  if (!command.empty() && !gpukit::cli::runs_across_ranks(command)) {
    return fmt::format(
        "gpukit {} runs in one process, and this MPI job has {} ranks (mc, bs, iv, reduce and "
        "poisson run across ranks)",
        command, comm.size());
  }
  return {};
}

// A stream that drops what it is given: CLI11's messages on the ranks other than 0.
struct NullBuffer : std::streambuf {
  int overflow(int c) override { return c; }
};

constexpr const char* kExitCodes =
    "Exit codes: 0 success, 1 unexpected error, 2 usage error (an unknown or bad option, a\n"
    "missing one), 3 invalid input data, 4 I/O error, 5 out of memory, 6 CUDA error, 7 no usable\n"
    "CUDA device, 8 a --check failed, 130 interrupted (Ctrl-C).";

}  // namespace

namespace gpukit::cli {
void register_saxpy(CLI::App& app);  // cmd_saxpy.cpp
}  // namespace gpukit::cli

int main(int argc, char** argv) {
  gpukit::cli::guard_standard_streams();
  // An MPI job's ranks start MPI here (a process started alone does not); it ends when main does.
  gpukit::distributed::Environment mpi(argc, argv);
  if (!mpi.problem().empty()) {
    if (gpukit::distributed::launcher_rank() == 0) {
      std::cerr << "gpukit: usage error: " << mpi.problem() << '\n';
    }
    return 2;
  }
  gpukit::distributed::Communicator& comm = gpukit::distributed::Communicator::world();
  // Only rank 0 speaks for a job of several ranks: the others keep their messages to themselves
  // unless a failure was theirs alone (below).
  NullBuffer null_buffer;
  std::ostream null_stream(&null_buffer);
  std::ostream& err = comm.is_root() ? std::cerr : null_stream;
  std::ostream& out = comm.is_root() ? std::cout : null_stream;
  if (const std::string problem = job_problem(comm, argc, argv); !problem.empty()) {
    err << "gpukit: usage error: " << problem << '\n';
    return 2;
  }
  // Ctrl-C, SIGTERM or a closed terminal while an output is written leaves no temporary file.
  gpukit::io::install_temporary_file_cleanup();
  gpukit::cli::set_command_line(argc, argv);
  CLI::App app{
      "gpukit: GPU case studies (Black-Scholes, implied volatility, Monte Carlo, Poisson, "
      "reduction, scan and compaction, SAXPY, GEMM) on the CPU and NVIDIA GPUs, each checked "
      "against a CPU reference",
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
  gpukit::cli::register_iv(app);
  gpukit::cli::register_mc(app);
  gpukit::cli::register_reduce(app);
  gpukit::cli::register_scan(app);
  gpukit::cli::register_compact(app);
  gpukit::cli::register_poisson(app);
  gpukit::cli::register_saxpy(app);
  gpukit::cli::register_gemm(app);
  gpukit::cli::register_bench(app);
  if (!first_word_is_a_command(app, argc, argv, err)) return 2;
  // An error that every rank throws alike (agreed by gpukit/distributed, or by a module's own
  // agreement, or found before any rank could differ: the arguments) is reported once, by rank 0,
  // and every rank exits with its code. One that a rank met alone ends the whole job: the other
  // ranks never reach this point, so after a grace period the rank prints it and aborts the job.
  const auto report = [&](const std::exception& e, const std::string& line, int code) {
    if (!comm.distributed() || dynamic_cast<const gpukit::distributed::Agreed*>(&e) != nullptr ||
        comm.all_reach_exit(std::chrono::seconds(20))) {
      err << line;
      return code;
    }
    std::cerr << fmt::format("gpukit: rank {} of {}: ", comm.rank(), comm.size())
              << line.substr(line.find(": ") + 2);
    std::cerr.flush();
    gpukit::distributed::abort_job(code);
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return finish_stdout(app.exit(e, out, err));
  } catch (const CLI::ParseError& e) {
    // The same on every rank: the arguments agree and usage errors come before any collective.
    app.exit(e, out, err);
    return 2;
  } catch (const gpukit::Error& e) {
    return report(e, std::string("gpukit: ") + gpukit::kind_name(e.kind()) + ": " + e.what() + '\n',
                  gpukit::exit_code(e.kind()));
  } catch (const std::bad_alloc& e) {
    return report(e, "gpukit: out of memory: a host allocation failed\n",
                  gpukit::exit_code(gpukit::ErrorKind::out_of_memory));
  } catch (const std::exception& e) {
    return report(e, std::string("gpukit: internal error: ") + e.what() + '\n', 1);
  }
  return finish_stdout(0);
}
