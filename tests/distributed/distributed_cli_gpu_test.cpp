// The gpukit tool's device lists in one process, on GPUs: mc, bs and reduce on cuda:0 listed
// twice and three times (workers sharing one GPU, each a share of the blocks) and, where the
// machine has several GPUs, on cuda:all, in reverse order and with repeats, byte for byte the
// output on cuda:0 alone. GPUKIT_REQUIRE_GPUS=N (scripts/gpu-scale-check.sh) makes a machine with
// fewer than N GPUs fail the cuda:all test instead of skipping it.

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "distributed_cli_test_support.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/io/npy.hpp"
#include "test_seed.hpp"

namespace gpukit::distributed_testing {
namespace {

class DistributedCliGpu : public ::testing::Test {
 protected:
  void SetUp() override { GPUKIT_REQUIRE_GPU(); }
  // `args` with {out} replaced, on `device`; the output file's bytes.
  std::string output_on(const std::string& args, const std::string& device,
                        const std::string& label) {
    std::string a = args;
    const std::string out = path(label + ".out");
    std::filesystem::remove(out);
    if (const std::size_t at = a.find("{out}"); at != std::string::npos) a.replace(at, 5, out);
    const Result r = run(a + " --device " + device);
    EXPECT_EQ(r.exit_code, 0) << args << " on " << device << ": " << r.err;
    return a.find(out) != std::string::npos ? slurp(out) : r.out;
  }

  // Every command of the scenario on each device list, byte for byte its output on cuda:0.
  void expect_lists_match_one_gpu(const std::vector<std::string>& lists) {
    std::mt19937_64 gen(gpukit::testing::kDefaultTestSeed);
    std::ostringstream mc_book;
    mc_book << "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n";
    for (int i = 0; i < 9; ++i) {
      mc_book << 'T' << i << (i % 2 ? ",put," : ",call,") << "100," << 90 + i * 3 << ",1,0.03,0.25,"
              << (i % 3 == 0   ? ",none,"
                  : i % 3 == 1 ? "80,down-out,4"
                               : "125,up-in,12")
              << '\n';
    }
    const std::string book = write_file("mc.csv", mc_book.str());
    const std::string bs_book = path("bs.csv");
    ASSERT_EQ(run("bs --device cpu --generate 100003 --seed 9 -o " + bs_book).exit_code, 0);
    std::vector<float> f(3 * 16384 * 64 + 1001);
    std::vector<double> d(f.size());
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t k = 0; k < f.size(); ++k) {
      d[k] = normal(gen);
      f[k] = static_cast<float>(d[k]);
    }
    io::write_npy<float>(path("f4.npy"), std::span<const float>(f));
    io::write_npy<double>(path("f8.npy"), std::span<const double>(d));
    const std::vector<std::string> commands = {
        // 2^23 + 5 paths: 5 blocks a row, the last short; float and double; every statistic
        // (antithetic pairs need an even count: 2^23 + 6).
        "mc -i " + book + " -o {out} --paths 8388613",
        "mc -i " + book + " -o {out} --paths 8388614 --precision float --antithetic",
        "mc -i " + book +
            " -o {out} --paths 300000 --greeks --control-variate --monitoring "
            "continuous",
        "bs -i " + bs_book + " -o {out} --greeks",
        "bs -i " + bs_book + " -o {out} --precision float",
        "reduce -i " + path("f4.npy"),
        "reduce -i " + path("f4.npy") + " --accurate",
        "reduce -i " + path("f8.npy") + " --op min"};
    for (std::size_t c = 0; c < commands.size(); ++c) {
      const std::string one = output_on(commands[c], "cuda:0", "one" + std::to_string(c));
      ASSERT_FALSE(one.empty()) << commands[c];
      for (const std::string& list : lists) {
        EXPECT_TRUE(output_on(commands[c], list, "list" + std::to_string(c)) == one)
            << commands[c] << " on " << list << " differs from cuda:0";
      }
    }
  }
};

TEST_F(DistributedCliGpu, OneGpuListedTwiceGivesTheBitsOfOneGpu) {
  expect_lists_match_one_gpu({"cuda:0,0", "cuda:0,0,0"});
}

TEST_F(DistributedCliGpu, AllGpusGiveTheBitsOfOneGpu) {
  const int gpus = cuda_device_count();
  if (gpus < 2) {
    if (required_gpus() >= 2)
      FAIL() << "GPUKIT_REQUIRE_GPUS=" << required_gpus() << ", found " << gpus;
    GTEST_SKIP() << "needs 2 GPUs, found " << gpus;
  }
  std::string reversed = "cuda:";
  for (int g = gpus - 1; g >= 0; --g) reversed += std::to_string(g) + (g > 0 ? "," : "");
  expect_lists_match_one_gpu({"cuda:all", reversed, "cuda:1,0,1"});
}

}  // namespace
}  // namespace gpukit::distributed_testing
