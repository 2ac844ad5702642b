// The gpukit tool's device lists in one process, on the CPU: what a list may not be (bad syntax,
// a command that runs on one device, a demo) and what a machine without the GPUs listed says.
// On GPUs: distributed_cli_gpu_test.cpp.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "distributed_cli_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/io/npy.hpp"

namespace gpukit::distributed_testing {
namespace {

TEST(DistributedCli, ListsWhereTheCommandRunsOnOneDeviceAreUsageErrors) {
  const std::string array = path("a.npy");
  const std::vector<double> values = {1, 2, 3};
  io::write_npy<double>(array, std::span<const double>(values));
  for (const std::string& args : std::vector<std::string>{
           "scan -i " + array + " -o " + path("b.npy") + " --device cuda:0,1",
           "scan -i " + array + " -o " + path("b.npy") + " --device cuda:all",
           "reduce -i " + array + " --device cuda:0,,1", "reduce -i " + array + " --device cuda:",
           "mc --demo 2 --device cuda:0,0", "bs --demo 10 --device cuda:all"}) {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << args << ": " << r.err;
  }
  const Result scan = run("scan -i " + array + " -o " + path("b.npy") + " --device cuda:0,1");
  EXPECT_NE(scan.err.find("device lists are for mc, bs, iv, reduce and poisson"), std::string::npos)
      << scan.err;
  const Result demo = run("mc --demo 2 --device cuda:0,0");
  EXPECT_NE(demo.err.find("mc --demo runs on one device"), std::string::npos) << demo.err;
}

TEST(DistributedCli, GpuListsWithoutTheGpusSayHowManyThereAre) {
  const std::string array = path("a.npy");
  const std::vector<double> values = {1, 2, 3};
  io::write_npy<double>(array, std::span<const double>(values));
  const int gpus = cuda_device_count();
  const Result past = run("reduce -i " + array + " --device cuda:0," + std::to_string(gpus));
  EXPECT_EQ(past.exit_code, 7) << past.err;
  if (gpus == 0) {
    EXPECT_NE(past.err.find("device unavailable"), std::string::npos) << past.err;
    EXPECT_EQ(run("reduce -i " + array + " --device cuda:all").exit_code, 7);
  } else {
    EXPECT_NE(past.err.find("cuda:" + std::to_string(gpus) + " does not exist"), std::string::npos)
        << past.err;
  }
}

// poisson takes device lists (slabs of axis 0 over the GPUs listed), but not for its demo, and a
// list it cannot run on is refused before anything is written. Before, every list was a usage
// error: "'cuda:all' lists several devices, but gpukit poisson runs on one".
TEST(DistributedCli, PoissonTakesDeviceListsButNotForItsDemo) {
  const std::string input = path("poisson_f.npy"), output = path("poisson_u.npy");
  const std::int64_t shape[] = {4, 6};
  std::vector<double> f(24);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = (i % 2 == 0 ? 1.0 : -1.0);
  io::write_npy<double>(input, shape, f);
  const std::string solve = "poisson -i " + input + " -o " + output + " --device ";

  const Result demo = run("poisson --demo 8 --device cuda:all");
  EXPECT_EQ(demo.exit_code, 2) << demo.err;
  EXPECT_NE(demo.err.find("poisson --demo runs on one device, but --device cuda:all lists several"),
            std::string::npos)
      << demo.err;
  for (const char* bad : {"cuda:0,,1", "cuda:", "cuda:all,0"}) {
    const Result r = run(solve + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << bad << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(output)) << bad;
  }
  const int gpus = cuda_device_count();
  for (const std::string& list :
       std::vector<std::string>{"cuda:all", "cuda:0,0", "cuda:0," + std::to_string(gpus)}) {
    std::filesystem::remove(output);
    const Result r = run(solve + list);
    EXPECT_EQ(r.err.find("runs on one"), std::string::npos) << list << ": " << r.err;
    if (gpus == 0 || list.ends_with(std::to_string(gpus))) {
      // No GPU here (or one past the last): the device error of the other list commands.
      EXPECT_EQ(r.exit_code, 7) << list << ": " << r.err;
      EXPECT_NE(r.err.find("gpukit: device unavailable"), std::string::npos)
          << list << ": " << r.err;
      EXPECT_FALSE(std::filesystem::exists(output)) << list;
    } else {
      EXPECT_EQ(r.exit_code, 0) << list << ": " << r.err;
      EXPECT_TRUE(std::filesystem::exists(output)) << list;
    }
  }
}

}  // namespace
}  // namespace gpukit::distributed_testing
