// The distributed Poisson solver's NCCL engine across the GPUs of one process (grouped
// ncclSend/ncclRecv for both transposes), against the CPU solver (every element within
// poisson_agreement_bound) and against the peer-copy engine running the same parts on one GPU:
// the same arithmetic on the same GPU model, hence the same bits; the device path against the
// host path, bit for bit. Labelled `multidevice` (not `gpu`): a single-GPU machine cannot run it,
// and scripts/gpu-scale-check.sh runs it on 2 or more GPUs with GPUKIT_REQUIRE_GPU=1.

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "../pde/poisson_test_support.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/scale_out/poisson.hpp"
#include "poisson_gpu_test_support.hpp"

namespace gpukit::pde {
namespace {

using scale_out::DistributedPoissonPlan;
using testing::grids;
using testing::solve_device;
using testing::solve_host;

template <class Real>
class DistributedPoissonGpu : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DistributedPoissonGpu, Reals);

TYPED_TEST(DistributedPoissonGpu, NcclEngineAcrossGpusMatchesTheCopyEngineBitForBit) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  const int count = cuda_device_count();
  if (count < 2) GPUKIT_GPU_SKIP("needs 2 GPUs, found " << count);
  distributed::Communicator self;  // a job of one
  std::vector<int> devices(static_cast<std::size_t>(count));
  std::iota(devices.begin(), devices.end(), 0);
  const std::vector<int> one_gpu(devices.size(), 0);
  for (const PoissonGrid& g : grids()) {
    SCOPED_TRACE(g.describe() + ", " + std::to_string(count) + " GPUs");
    const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 5 + g.size());
    std::vector<Real> serial(f.size());
    PoissonPlan<Real>(Context::cpu(1), g).solve(f, serial);
    // (One process picks the copy engine by itself: NCCL is asked for.)
    PoissonOptions nccl_options;
    nccl_options.variant = "cufft-nccl";
    DistributedPoissonPlan<Real> nccl(Context::cuda(0), g, nccl_options, self, devices);
    EXPECT_EQ(nccl.engine(), "cufft-nccl");
    EXPECT_EQ(DistributedPoissonPlan<Real>(Context::cuda(0), g, {}, self, devices).engine(),
              "cufft-copy");
    PoissonOptions copy_options;
    copy_options.variant = "cufft-copy";
    DistributedPoissonPlan<Real> copy(Context::cuda(0), g, copy_options, self, one_gpu);
    const std::vector<Real> a = solve_host(nccl, f), b = solve_host(copy, f);
    testing::expect_close(
        g, serial, a,
        poisson_agreement_bound<Real>(g, testing::max_abs(f), testing::max_abs(serial)),
        "nccl engine vs serial CPU");
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)), 0);
    const std::vector<Real> d = solve_device(nccl, devices, f);
    EXPECT_EQ(std::memcmp(a.data(), d.data(), a.size() * sizeof(Real)), 0);
  }
}

}  // namespace
}  // namespace gpukit::pde
