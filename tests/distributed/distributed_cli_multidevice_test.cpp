// The gpukit tool's device lists in one process across two GPUs or more (label multidevice:
// scripts/gpu-scale-check.sh runs it, the one-GPU lanes of scripts/gpu-check.sh do not): mc, bs
// and reduce on cuda:all, in reverse order and with repeats, byte for byte the output on cuda:0
// alone; poisson on cuda:all (the NCCL engine where the build has NCCL) within the agreement bound
// of cuda:0. GPUKIT_REQUIRE_GPUS=N (scripts/gpu-scale-check.sh) makes a machine with fewer than N
// GPUs fail these tests instead of skipping them.

#include <gtest/gtest.h>

#include <string>

#include "distributed_cli_gpu_test_support.hpp"
#include "gpukit/distributed/communicator.hpp"

namespace gpukit::distributed_testing {
namespace {

class DistributedCliMultiGpu : public DistributedCliGpu {
 protected:
  void SetUp() override {
    DistributedCliGpu::SetUp();
    if (::testing::Test::IsSkipped()) return;
    gpus_ = cuda_device_count();
    if (gpus_ < 2) {
      if (required_gpus() >= 2) {
        FAIL() << "GPUKIT_REQUIRE_GPUS=" << required_gpus() << ", found " << gpus_;
      }
      GTEST_SKIP() << "needs 2 GPUs, found " << gpus_;
    }
  }
  int gpus_ = 0;
};

TEST_F(DistributedCliMultiGpu, AllGpusGiveTheBitsOfOneGpu) {
  std::string reversed = "cuda:";
  for (int g = gpus_ - 1; g >= 0; --g) reversed += std::to_string(g) + (g > 0 ? "," : "");
  expect_lists_match_one_gpu({"cuda:all", reversed, "cuda:1,0,1"});
}

TEST_F(DistributedCliMultiGpu, PoissonOnAllGpusIsWithinTheBoundOfOneGpu) {
  // One process: peer copies (NCCL is for the ranks of mpirun).
  expect_poisson_lists_within_the_bound({"cuda:all"}, "cufft-copy");
}

}  // namespace
}  // namespace gpukit::distributed_testing
