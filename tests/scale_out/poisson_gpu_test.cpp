// The distributed Poisson solver's CUDA engine in one process: several parts on one GPU (the
// "cufft-copy" engine, so that a single-GPU machine tests the whole slab algorithm: the trailing
// transforms, the packing, both transposes, the transform along axis 0, the scaling) and, where
// there are several GPUs, the NCCL engine across them. Against the serial CPU solver (every
// element within poisson_agreement_bound), the device path against the host path (the same
// bits), the NCCL engine against the copy engine (the same arithmetic on the same GPU model:
// the same bits), the mean rule's bits, the refusals, and the memory check.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "../pde/poisson_test_support.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
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

TYPED_TEST(DistributedPoissonGpu, CopyEngineOnOneGpuMatchesTheCpuAndTheDevicePathTheHostPath) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  distributed::Communicator self;  // a job of one
  for (const int parts : {2, 3}) {
    const std::vector<int> devices(static_cast<std::size_t>(parts), 0);
    for (const PoissonGrid& g : grids()) {
      for (const Gauge gauge : {Gauge::mean, Gauge::corner}) {
        SCOPED_TRACE(g.describe() + ", " + std::to_string(parts) + " parts, gauge " +
                     std::string(gauge_name(gauge)));
        PoissonOptions options;
        options.gauge = gauge;
        const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 17 + g.size());
        std::vector<Real> serial(f.size());
        const PoissonResult expected =
            PoissonPlan<Real>(Context::cpu(1), g, options).solve(f, serial);
        DistributedPoissonPlan<Real> plan(Context::cuda(0), g, options, self, devices);
        EXPECT_EQ(plan.engine(), "cufft-copy");
        EXPECT_EQ(plan.parts(), parts);
        EXPECT_GT(plan.device_bytes(0), 0u);
        PoissonResult host_result, device_result;
        const std::vector<Real> host = solve_host(plan, f, &host_result);
        const double bound =
            poisson_agreement_bound<Real>(g, testing::max_abs(f), testing::max_abs(serial));
        testing::expect_close(g, serial, host, bound, "copy engine vs serial CPU");
        EXPECT_EQ(host_result.mean, expected.mean);
        EXPECT_EQ(host_result.mean_abs, expected.mean_abs);
        const std::vector<Real> device = solve_device(plan, devices, f, &device_result);
        EXPECT_EQ(device_result.mean, expected.mean);
        EXPECT_EQ(device_result.mean_abs, expected.mean_abs);
        ASSERT_EQ(device.size(), host.size());
        EXPECT_EQ(std::memcmp(device.data(), host.data(), host.size() * sizeof(Real)), 0)
            << "the device path differs from the host path";
      }
    }
  }
}

TEST(DistributedPoissonGpuRefusals, NonFiniteStrictAxesOfOneAndMemory) {
  GPUKIT_REQUIRE_GPU();
  distributed::Communicator self;  // a job of one
  const std::vector<int> two = {0, 0};
  const PoissonGrid g{{6, 5, 4}, {}};
  std::vector<double> f = testing::random_rhs<double>(g.size(), 3);
  f[100] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> u(f.size());
  std::string serial_message;
  try {
    PoissonPlan<double>(Context::cpu(1), g).solve(f, u);
  } catch (const InvalidInput& e) {
    serial_message = e.what();
  }
  DistributedPoissonPlan<double> plan(Context::cuda(0), g, {}, self, two);
  try {
    solve_host(plan, f);
    ADD_FAILURE() << "no refusal";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()), serial_message);
  }
  try {
    solve_device(plan, two, f);
    ADD_FAILURE() << "no refusal";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("NaN or an Inf"), std::string::npos) << e.what();
  }
  PoissonOptions strict;
  strict.strict = true;
  DistributedPoissonPlan<double> strict_plan(Context::cuda(0), g, strict, self, two);
  std::vector<double> ones(f.size(), 1.0);
  EXPECT_THROW(solve_host(strict_plan, ones), InvalidInput);
  EXPECT_THROW(solve_device(strict_plan, two, ones), InvalidInput);
  // An axis of one point, and the NCCL engine with one GPU twice.
  EXPECT_THROW(DistributedPoissonPlan<double>(Context::cuda(0), {{6, 1, 4}, {}}, {}, self, two),
               InvalidInput);
  PoissonOptions nccl;
  nccl.variant = "cufft-nccl";
  EXPECT_THROW(DistributedPoissonPlan<double>(Context::cuda(0), g, nccl, self, two), InvalidInput);
  // A grid far beyond the device: refused with the bytes before anything large is allocated.
  try {
    DistributedPoissonPlan<double>(Context::cuda(0), {{4096, 4096, 4096}, {}}, {}, self, two);
    ADD_FAILURE() << "no OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_GT(e.bytes_requested(), std::size_t{1} << 39);
  }
}

}  // namespace
}  // namespace gpukit::pde
