#pragma once
// Shared by the CLI tests: run the gpukit binary (GPUKIT_BINARY, set by CMake) with arguments
// and stdin text, capturing its exit code, stdout and stderr, in a scratch folder per process.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpukit::cli_testing {

struct Result {
  int exit_code;
  std::string out, err;
};

inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d =
        std::filesystem::path(::testing::TempDir()) / ("gpukit_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Runs `gpukit <args>` with `stdin_text` on its standard input.
inline Result run(const std::string& args, const std::string& stdin_text = "") {
  const auto in = scratch() / "stdin.txt", out = scratch() / "stdout.txt",
             err = scratch() / "stderr.txt";
  std::ofstream(in, std::ios::binary) << stdin_text;
  const std::string command = std::string(GPUKIT_BINARY) + " " + args + " <" + in.string() + " >" +
                              out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

/// Writes `text` to scratch()/name and returns the path.
inline std::string write_file(const std::string& name, const std::string& text) {
  const auto p = scratch() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

}  // namespace gpukit::cli_testing
