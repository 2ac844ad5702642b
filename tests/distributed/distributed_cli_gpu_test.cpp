// The gpukit tool's device lists in one process, on one GPU: mc, bs and reduce on cuda:0 listed
// twice and three times (workers sharing one GPU, each a share of the blocks) byte for byte the
// output on cuda:0 alone, and poisson on cuda:0,0 and cuda:0,0,0 (2 and 3 slabs, the peer-copy
// engine) within the agreement bound of cuda:0. Lists of several GPUs:
// distributed_cli_multidevice_test.cpp.

#include <gtest/gtest.h>

#include "distributed_cli_gpu_test_support.hpp"

namespace gpukit::distributed_testing {
namespace {

TEST_F(DistributedCliGpu, OneGpuListedTwiceGivesTheBitsOfOneGpu) {
  expect_lists_match_one_gpu({"cuda:0,0", "cuda:0,0,0"});
}

TEST_F(DistributedCliGpu, PoissonOnOneGpuListedTwiceIsWithinTheBoundOfOneGpu) {
  expect_poisson_lists_within_the_bound({"cuda:0,0", "cuda:0,0,0"}, "cufft-copy");
}

}  // namespace
}  // namespace gpukit::distributed_testing
