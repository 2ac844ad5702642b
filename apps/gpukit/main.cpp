// gpukit: the command-line tool. Each subcommand parses, calls one library function and prints;
// errors become one line on stderr and a distinct exit code (see gpukit::exit_code).

#include <CLI/CLI.hpp>

#include <iostream>
#include <new>

#include "cli_common.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/standard_output.hpp"

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
}  // namespace

int main(int argc, char** argv) {
  gpukit::cli::guard_standard_streams();
  // Ctrl-C, SIGTERM or a closed terminal while an output is written leaves no temporary file.
  gpukit::io::install_temporary_file_cleanup();
  gpukit::cli::set_command_line(argc, argv);
  CLI::App app{
      "gpukit: GPU case studies (Black-Scholes, reduction, ...) on the CPU and NVIDIA GPUs"};
  app.require_subcommand(1);
  app.fallthrough();
  gpukit::cli::register_info(app);
  gpukit::cli::register_demo(app);
  gpukit::cli::register_bs(app);
  gpukit::cli::register_mc(app);
  gpukit::cli::register_reduce(app);
  gpukit::cli::register_scan(app);
  gpukit::cli::register_compact(app);
  gpukit::cli::register_poisson(app);
  gpukit::cli::register_bench(app);
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
