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

#include "gpu_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "pde/distributed/poisson_distributed.hpp"
#include "poisson_test_support.hpp"

namespace gpukit::pde {
namespace {

using distributed::ProcessGroup;

template <class Real>
class DistributedPoissonGpu : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DistributedPoissonGpu, Reals);

// Splits the whole-grid vector into the plan's local slabs.
template <class T>
std::vector<std::vector<T>> slabs_of(const std::vector<T>& v,
                                     const DistributedPoissonPlan<T>& plan) {
  std::vector<std::vector<T>> out;
  const auto row = static_cast<std::ptrdiff_t>(plan.row_elements());
  for (int i = 0; i < plan.local_parts(); ++i) {
    const SlabRange s = plan.slab(i);
    out.emplace_back(v.begin() + s.begin * row, v.begin() + (s.begin + s.count) * row);
  }
  return out;
}

template <class T>
std::vector<T> joined(const std::vector<std::vector<T>>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The host path's solution (joined), and the result.
template <class Real>
std::vector<Real> solve_host(DistributedPoissonPlan<Real>& plan, const std::vector<Real>& f,
                             PoissonResult* result = nullptr) {
  const std::vector<std::vector<Real>> f_parts = slabs_of(f, plan);
  std::vector<std::vector<Real>> u_parts;
  std::vector<std::span<const Real>> fs;
  std::vector<std::span<Real>> us;
  for (const auto& p : f_parts)
    u_parts.emplace_back(p.size(), std::numeric_limits<Real>::quiet_NaN());
  for (std::size_t i = 0; i < f_parts.size(); ++i) {
    fs.emplace_back(f_parts[i]);
    us.emplace_back(u_parts[i]);
  }
  const PoissonResult r = plan.solve(fs, us);
  if (result != nullptr) *result = r;
  return joined(u_parts);
}

// The device path's solution (joined): each part's slab copied to its device, solved in place.
template <class Real>
std::vector<Real> solve_device(DistributedPoissonPlan<Real>& plan, const std::vector<int>& devices,
                               const std::vector<Real>& f, PoissonResult* result = nullptr) {
  const std::vector<std::vector<Real>> f_parts = slabs_of(f, plan);
  std::vector<cuda::DeviceBuffer<Real>> buffers;
  std::vector<const Real*> in;
  std::vector<Real*> out;
  for (std::size_t i = 0; i < f_parts.size(); ++i) {
    cuda::set_device(devices[i]);
    buffers.emplace_back(std::max<std::size_t>(1, f_parts[i].size()));
    if (!f_parts[i].empty()) buffers.back().copy_from_host(f_parts[i]);
    in.push_back(buffers.back().data());
    out.push_back(buffers.back().data());
  }
  const PoissonResult r = plan.solve_on_device(in, out);
  if (result != nullptr) *result = r;
  std::vector<Real> u;
  for (std::size_t i = 0; i < f_parts.size(); ++i) {
    cuda::set_device(devices[i]);
    std::vector<Real> part(f_parts[i].size());
    if (!part.empty()) buffers[i].copy_to_host(part);
    u.insert(u.end(), part.begin(), part.end());
  }
  return u;
}

std::vector<PoissonGrid> grids() {
  return {{{13, 10}, {1.0, 2.0}}, {{2, 9}, {}},    {{64, 48}, {2.0, 0.5}}, {{7, 6, 5}, {}},
          {{9, 4, 6}, {1, 2, 3}}, {{2, 3, 4}, {}}, {{33, 20, 17}, {}}};
}

TYPED_TEST(DistributedPoissonGpu, CopyEngineOnOneGpuMatchesTheCpuAndTheDevicePathTheHostPath) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  const ProcessGroup self = ProcessGroup::self();
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

TYPED_TEST(DistributedPoissonGpu, NcclEngineAcrossGpusMatchesTheCopyEngineBitForBit) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  const int count = cuda_device_count();
  if (count < 2) GTEST_SKIP() << "needs 2 GPUs (found " << count << ")";
  const ProcessGroup self = ProcessGroup::self();
  std::vector<int> devices(static_cast<std::size_t>(count));
  std::iota(devices.begin(), devices.end(), 0);
  const std::vector<int> one_gpu(devices.size(), 0);
  for (const PoissonGrid& g : grids()) {
    SCOPED_TRACE(g.describe() + ", " + std::to_string(count) + " GPUs");
    const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 5 + g.size());
    std::vector<Real> serial(f.size());
    PoissonPlan<Real>(Context::cpu(1), g).solve(f, serial);
    DistributedPoissonPlan<Real> nccl(Context::cuda(0), g, {}, self, devices);
    EXPECT_EQ(nccl.engine(), "cufft-nccl");
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

TEST(DistributedPoissonGpuRefusals, NonFiniteStrictAxesOfOneAndMemory) {
  GPUKIT_REQUIRE_GPU();
  const ProcessGroup self = ProcessGroup::self();
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
