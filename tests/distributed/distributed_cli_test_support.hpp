#pragma once
// Shared by the tests of the gpukit tool's device lists (distributed_cli_test.cpp on the CPU,
// distributed_cli_gpu_test.cpp on GPUs): run the tool (GPUKIT_BINARY, set by CMake) in a scratch
// folder of the test process, capturing its exit code, stdout and stderr.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpukit::distributed_testing {

struct Result {
  int exit_code;
  std::string out, err;
};

inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::path(::testing::TempDir()) /
             ("gpukit_dist_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string path(const std::string& name) { return (scratch() / name).string(); }

inline std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline Result run(const std::string& args) {
  const std::string out = path("stdout.txt"), err = path("stderr.txt");
  const std::string line =
      std::string(GPUKIT_BINARY) + " " + args + " </dev/null >" + out + " 2>" + err;
  const int status = std::system(line.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

inline std::string write_file(const std::string& name, const std::string& text) {
  std::ofstream(path(name), std::ios::binary) << text;
  return path(name);
}

/// How many GPUs the cuda:all tests need where the machine must have them (GPUKIT_REQUIRE_GPUS,
/// set by scripts/gpu-scale-check.sh): there a machine with fewer fails instead of skipping.
inline int required_gpus() {
  const char* value = std::getenv("GPUKIT_REQUIRE_GPUS");
  return value != nullptr ? std::atoi(value) : 0;
}

}  // namespace gpukit::distributed_testing
