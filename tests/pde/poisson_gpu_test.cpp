// CUDA only: what has no CPU counterpart. Every registered CUDA Poisson variant (the registry is
// iterated: a new variant is tested with no new code) against the CPU solver, float and double,
// at awkward shapes (axes of 1, odd and even, non-square, 2D and 3D), with poisoned (NaN)
// outputs, f checked unchanged, in place; per variant, the plan's host and device paths: mean
// rule, strict refusal, corner gauge, plan reuse, non-finite input; the default variant. The
// scenarios every backend shares (the default variant on CUDA, FFTW on the CPU) are written once
// in poisson_test.cpp.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "poisson_test_support.hpp"

namespace gpukit::pde {
namespace {

using gpukit::testing::quick_tests;
using testing::expect_close;
using testing::max_abs;

std::vector<PoissonGrid> awkward_grids() {
  std::vector<PoissonGrid> grids = {
      {{1, 1}, {}},    {{2, 2}, {}},           {{3, 5}, {1.0, 2.0}}, {{1, 16}, {}},
      {{17, 32}, {}},  {{64, 48}, {2.0, 0.5}}, {{33, 7, 20}, {}},    {{5, 1, 9}, {1.0, 1.0, 3.0}},
      {{2, 3, 2}, {}}, {{31, 33, 1}, {}},
  };
  if (!quick_tests()) {
    grids.push_back({{1000, 1027}, {3.0, 1.0}});
    grids.push_back({{96, 80, 67}, {1.0, 2.0, 1.0}});
  }
  return grids;
}

template <class Real>
std::vector<Real> cpu_solution(const PoissonGrid& g, const std::vector<Real>& f) {
  std::vector<Real> u(f.size());
  PoissonPlan<Real>(Context::cpu(), g).solve(f, u);
  return u;
}

template <class Real>
class PoissonGpuTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PoissonGpuTest, RealTypes);

TYPED_TEST(PoissonGpuTest, EveryVariantMatchesTheCpuAtAwkwardShapes) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  ASSERT_FALSE(poisson_variants().empty());
  cuda::Stream stream;
  std::uint64_t seed = 100;
  for (const PoissonGrid& g : awkward_grids()) {
    const std::vector<Real> f = testing::random_rhs<Real>(g.size(), ++seed);
    const std::vector<Real> expected = cpu_solution(g, f);
    const double bound = poisson_agreement_bound<Real>(g, max_abs(f), max_abs(expected));
    const std::size_t bytes = f.size() * sizeof(Real);
    const GridShape shape = grid_shape(g);
    for (const PoissonVariant& v : poisson_variants()) {
      if (!v.supports(shape)) continue;
      SCOPED_TRACE(std::string(v.info.name) + " " + g.describe() + " seed " + std::to_string(seed));
      std::unique_ptr<DeviceSolver<Real>> solver = v.make<Real>(shape);
      cuda::DeviceBuffer<Real> d_f(f.size()), d_u(f.size());
      d_f.copy_from_host(f);
      // A pageable copy may return before its DMA lands; the solve runs on a non-blocking stream.
      cuda::synchronize_device();
      cuda::fill_bytes_async(d_u.data(), 0xFF, bytes, stream.handle());  // NaN
      solver->solve(d_f.data(), d_u.data(), stream.handle());
      stream.synchronize();
      std::vector<Real> u(f.size()), f_after(f.size());
      d_u.copy_to_host(u);
      d_f.copy_to_host(f_after);
      expect_close(g, expected, u, bound, std::string(v.info.name));
      EXPECT_EQ(std::memcmp(f.data(), f_after.data(), bytes), 0) << "f was modified";
      // In place, twice (the solver is reused).
      for (int round = 0; round < 2; ++round) {
        d_f.copy_from_host(f);
        cuda::synchronize_device();
        solver->solve(d_f.data(), d_f.data(), stream.handle());
        stream.synchronize();
        std::vector<Real> in_place(f.size());
        d_f.copy_to_host(in_place);
        expect_close(g, expected, in_place, bound, std::string(v.info.name) + " in place");
      }
    }
  }
}

TYPED_TEST(PoissonGpuTest, PlanOnTheDeviceGaugesMeanAndStrict) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  const PoissonGrid g{{24, 18, 10}, {2.0, 1.0, 1.0}};
  const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 5);
  std::vector<Real> shifted(f);
  for (Real& x : shifted) x += Real(-0.5);
  const std::vector<Real> expected = cpu_solution(g, f);
  const double bound = poisson_agreement_bound<Real>(g, max_abs(shifted), max_abs(expected));
  for (const PoissonVariant& v : poisson_variants()) {
    if (!v.supports(grid_shape(g))) continue;
    SCOPED_TRACE(std::string(v.info.name));
    PoissonOptions options;
    options.variant = std::string(v.info.name);
    PoissonPlan<Real> plan(Context::cuda(0), g, options);
    EXPECT_EQ(plan.variant(), v.info.name);
    EXPECT_GT(plan.device_bytes(), f.size() * sizeof(Real));
    std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
    PoissonResult r = plan.solve(f, u);
    EXPECT_FALSE(r.mean_removed);
    expect_close(g, expected, u, bound, "host path");
    std::fill(u.begin(), u.end(), std::numeric_limits<Real>::quiet_NaN());
    r = plan.solve(shifted, u);  // reuse, a non-zero mean
    EXPECT_TRUE(r.mean_removed);
    EXPECT_NEAR(r.mean, -0.5, 1e-6);
    expect_close(g, expected, u, bound, "mean removed");

    options.gauge = Gauge::corner;
    options.strict = true;
    PoissonPlan<Real> corner(Context::cuda(0), g, options);
    cuda::Stream stream;
    cuda::DeviceBuffer<Real> d_f(f.size()), d_u(f.size());
    d_f.copy_from_host(shifted);
    cuda::synchronize_device();
    cuda::fill_bytes_async(d_u.data(), 0xFF, f.size() * sizeof(Real), stream.handle());
    EXPECT_THROW(corner.solve_on_device(d_f.data(), d_u.data(), stream.handle()), InvalidInput);
    stream.synchronize();
    std::vector<Real> untouched(f.size());
    d_u.copy_to_host(untouched);
    for (const Real x : untouched) ASSERT_TRUE(std::isnan(x)) << "strict wrote u";
    d_f.copy_from_host(f);
    cuda::synchronize_device();
    corner.solve_on_device(d_f.data(), d_u.data(), stream.handle());
    stream.synchronize();
    d_u.copy_to_host(u);
    EXPECT_EQ(u[0], Real(0));
    std::vector<double> shifted_expected(f.size());
    for (std::size_t i = 0; i < f.size(); ++i)
      shifted_expected[i] = double(expected[i]) - double(expected[0]);
    expect_close(g, shifted_expected, u, 2 * bound, "corner gauge");
  }
}

// NaN and Inf are refused on the GPU too: from host memory with the CPU's message (the check
// runs before dispatch), from device memory through the sums; u is never written.
TYPED_TEST(PoissonGpuTest, NonFiniteRightHandSideIsRefusedByEveryVariant) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  const PoissonGrid g{{3, 4, 6}, {}};
  std::vector<Real> f(static_cast<std::size_t>(g.size()), Real(0));
  f[(1 * 4 + 2) * 6 + 5] = std::numeric_limits<Real>::quiet_NaN();
  f[70] = std::numeric_limits<Real>::infinity();
  for (const PoissonVariant& v : poisson_variants()) {
    if (!v.supports(grid_shape(g))) continue;
    SCOPED_TRACE(std::string(v.info.name));
    PoissonOptions options;
    options.variant = std::string(v.info.name);
    PoissonPlan<Real> plan(Context::cuda(0), g, options);
    std::vector<Real> u(f.size(), Real(42));
    try {
      plan.solve(f, u);
      ADD_FAILURE() << "no error";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("f[1, 2, 5] is nan"), std::string::npos) << e.what();
    }
    for (const Real x : u) ASSERT_EQ(x, Real(42)) << "u was written";
    cuda::Stream stream;
    cuda::DeviceBuffer<Real> d_f(f.size()), d_u(f.size());
    d_f.copy_from_host(f);
    cuda::synchronize_device();
    cuda::fill_bytes_async(d_u.data(), 0xFF, f.size() * sizeof(Real), stream.handle());
    EXPECT_THROW(plan.solve_on_device(d_f.data(), d_u.data(), stream.handle()), InvalidInput);
    stream.synchronize();
    std::vector<Real> untouched(f.size());
    d_u.copy_to_host(untouched);
    for (const Real x : untouched) ASSERT_TRUE(std::isnan(x)) << "the device path wrote u";
  }
}

TEST(PoissonGpu, DefaultVariantAndRefusals) {
  GPUKIT_REQUIRE_GPU();
  const PoissonGrid g{{64, 64}, {}};
  const std::string best = default_poisson_variant<double>(g);
  EXPECT_EQ(best, best_poisson_variants().front());
  EXPECT_EQ(PoissonPlan<double>(Context::cuda(0), g).variant(), best);
  PoissonOptions unknown;
  unknown.variant = "no-such-variant";
  EXPECT_THROW(PoissonPlan<double>(Context::cuda(0), g, unknown), InvalidInput);
  // Beyond cuFFT's 32-bit plans: no variant supports it (refused before allocating).
  const PoissonGrid huge{{std::int64_t{1} << 16, std::int64_t{1} << 16}, {}};
  EXPECT_THROW(PoissonPlan<float>(Context::cuda(0), huge), InvalidInput);
}

}  // namespace
}  // namespace gpukit::pde
