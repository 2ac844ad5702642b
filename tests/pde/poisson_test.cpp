// The CPU Poisson solver (FFTW), the reference the GPU tests trust: manufactured solutions to
// rounding on non-square grids with unequal lengths, odd and even sizes, 2D and 3D, float and
// double; the gauges; the mean rule and --strict; plan reuse; in place; bad input; the seed's
// N = 64 numbers.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "gpukit/bench/poisson_demo.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/poisson.hpp"
#include "pde/poisson_test_support.hpp"

namespace gpukit::pde {
namespace {

using testing::expect_close;
using testing::manufactured;
using testing::max_abs;

const Context kCpu = Context::cpu(2);

const std::vector<PoissonGrid>& manufactured_grids() {
  static const std::vector<PoissonGrid> grids = {{{8, 8}, {}},
                                                 {{12, 10}, {2.0, 0.5}},
                                                 {{7, 9}, {1.0, 3.0}},
                                                 {{16, 5}, {0.25, 1.0}},
                                                 {{1, 16}, {1.0, 2.0}},
                                                 {{33, 64}, {}},
                                                 {{6, 8, 5}, {}},
                                                 {{9, 4, 7}, {1.0, 2.0, 0.5}},
                                                 {{5, 1, 12}, {3.0, 1.0, 1.0}},
                                                 {{16, 17, 18}, {2.0, 1.0, 4.0}}};
  return grids;
}

template <class Real>
class PoissonCpuTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PoissonCpuTest, RealTypes);

TYPED_TEST(PoissonCpuTest, ManufacturedSolutionsToRounding) {
  using Real = TypeParam;
  std::uint64_t seed = 1;
  for (const PoissonGrid& g : manufactured_grids()) {
    SCOPED_TRACE(g.describe() + " seed " + std::to_string(seed));
    const testing::Manufactured m = manufactured(g, seed++);
    const std::vector<Real> f(m.f.begin(), m.f.end());
    std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
    PoissonPlan<Real> plan(kCpu, g);
    EXPECT_EQ(plan.variant(), "cpu-fftw");
    const PoissonResult r = plan.solve(f, u);
    EXPECT_FALSE(r.mean_removed) << "mean " << r.mean << " tolerance " << r.mean_tolerance;
    ASSERT_GT(max_abs(m.u), 0.1);  // a non-trivial solution (the 1-point grid aside)
    expect_close(g, m.u, u, poisson_agreement_bound<Real>(g, max_abs(m.f), max_abs(m.u)),
                 "manufactured");
  }
}

// The Nyquist mode of an even axis (j = n/2: cos(pi n x / L) samples to (-1)^j) is a mode like
// any other: the random manufactured solutions above never reach it (|m| < n/2), so these do,
// against the exact solution: u = cos(pi n_last x_last / L_last) (the last axis's Nyquist column
// of the half spectrum), times each other axis's Nyquist mode, and times a low sine.
TYPED_TEST(PoissonCpuTest, NyquistModesOfEvenAxesAgainstTheExactSolution) {
  using Real = TypeParam;
  const PoissonGrid grids[] = {{{8, 8}, {}},
                               {{6, 10}, {2.0, 0.5}},
                               {{1, 4}, {}},
                               {{4, 6, 8}, {1.0, 2.0, 3.0}},
                               {{5, 6, 2}, {}}};
  for (const PoissonGrid& g : grids) {
    SCOPED_TRACE(g.describe());
    const int rank = g.rank();
    const std::int64_t n = g.size();
    // Per axis a: the Nyquist wave number (0 on an odd axis, which has no Nyquist mode).
    std::vector<double> k_nyquist(static_cast<std::size_t>(rank), 0.0);
    for (int a = 0; a < rank; ++a) {
      if (g.shape[a] % 2 == 0)
        k_nyquist[static_cast<std::size_t>(a)] =
            std::numbers::pi * double(g.shape[a]) / g.length(a);
    }
    std::vector<double> u_exact(static_cast<std::size_t>(n)), f_exact(u_exact.size());
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t idx[3] = {0, 0, 0}, rest = i;
      for (int a = rank - 1; a >= 0; --a) idx[a] = rest % g.shape[a], rest /= g.shape[a];
      auto x = [&](int a) { return double(idx[a]) * g.length(a) / double(g.shape[a]); };
      auto nyquist = [&](int a) { return std::cos(k_nyquist[static_cast<std::size_t>(a)] * x(a)); };
      const double k_last = k_nyquist.back();
      // Term 1: the last axis alone.  Term 2: every even axis at once.  Term 3: a low sine on
      // axis 0 (when it has one) times the last axis's Nyquist mode.
      double t2 = 1, k2_all = 0;
      for (int a = 0; a < rank; ++a) {
        t2 *= nyquist(a);
        k2_all += k_nyquist[static_cast<std::size_t>(a)] * k_nyquist[static_cast<std::size_t>(a)];
      }
      const double k_low = g.shape[0] >= 3 ? 2 * std::numbers::pi / g.length(0) : 0.0;
      const double t1 = nyquist(rank - 1), t3 = std::sin(k_low * x(0)) * nyquist(rank - 1);
      u_exact[static_cast<std::size_t>(i)] = 1.0 * t1 + 0.5 * t2 + 0.75 * t3;
      f_exact[static_cast<std::size_t>(i)] =
          -k_last * k_last * t1 - 0.5 * k2_all * t2 - 0.75 * (k_low * k_low + k_last * k_last) * t3;
    }
    ASSERT_GT(max_abs(u_exact), 0.9);
    const std::vector<Real> f(f_exact.begin(), f_exact.end());
    std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
    PoissonPlan<Real> plan(kCpu, g);
    const PoissonResult r = plan.solve(f, u);
    EXPECT_FALSE(r.mean_removed) << "mean " << r.mean;
    expect_close(g, u_exact, u,
                 poisson_agreement_bound<Real>(g, max_abs(f_exact), max_abs(u_exact)), "nyquist");
  }
}

// The reference of `poisson --check` (long double FFTW): exact on manufactured solutions, and a
// check that passes the CPU solver's results and fails a wrong one.
TYPED_TEST(PoissonCpuTest, ReferenceSolutionAndCheck) {
  using Real = TypeParam;
  std::uint64_t seed = 100;
  for (const PoissonGrid& g : manufactured_grids()) {
    SCOPED_TRACE(g.describe() + " seed " + std::to_string(seed));
    const testing::Manufactured m = manufactured(g, seed++);
    const std::vector<Real> f(m.f.begin(), m.f.end());
    // The reference on double f is exact to long double rounding of the transforms.
    const std::vector<double> f64(m.f.begin(), m.f.end());
    const std::vector<double> reference =
        poisson_reference_solution<double>(g, f64, Gauge::mean, 2);
    expect_close(g, m.u, reference, poisson_agreement_bound<double>(g, max_abs(m.f), max_abs(m.u)),
                 "reference");
    for (const Gauge gauge : {Gauge::mean, Gauge::corner}) {
      PoissonOptions options;
      options.gauge = gauge;
      std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
      PoissonPlan<Real>(kCpu, g, options).solve(f, u);
      const PoissonCheck ok = check_poisson_solution<Real>(g, f, u, gauge, 2);
      EXPECT_TRUE(ok.passed) << "max abs " << ok.metrics.max_abs << " bound " << ok.bound;
      // One element off by 100 bounds, then a NaN: both fail.
      std::vector<Real> wrong = u;
      wrong[wrong.size() / 2] += static_cast<Real>(100 * ok.bound);
      EXPECT_FALSE(check_poisson_solution<Real>(g, f, wrong, gauge, 2).passed);
      wrong = u;
      wrong.back() = std::numeric_limits<Real>::quiet_NaN();
      EXPECT_FALSE(check_poisson_solution<Real>(g, f, wrong, gauge, 2).passed);
    }
  }
}

TYPED_TEST(PoissonCpuTest, CornerGaugeIsTheMeanGaugeShifted) {
  using Real = TypeParam;
  const PoissonGrid g{{10, 14}, {1.0, 1.5}};
  const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 7);
  std::vector<Real> mean_u(f.size()), corner_u(f.size());
  PoissonPlan<Real>(kCpu, g).solve(f, mean_u);
  PoissonOptions corner;
  corner.gauge = Gauge::corner;
  PoissonPlan<Real>(kCpu, g, corner).solve(f, corner_u);
  EXPECT_EQ(corner_u[0], Real(0));
  double mean = 0;
  for (const Real x : mean_u) mean += x;
  EXPECT_LE(std::fabs(mean / double(f.size())),
            64 * std::numeric_limits<Real>::epsilon() * max_abs(mean_u));
  std::vector<double> shifted(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) shifted[i] = double(mean_u[i]) - double(mean_u[0]);
  expect_close(g, shifted, corner_u, 4 * std::numeric_limits<Real>::epsilon() * max_abs(mean_u),
               "corner");
}

TYPED_TEST(PoissonCpuTest, NonZeroMeanIsReportedAndRemovedOrRefused) {
  using Real = TypeParam;
  const PoissonGrid g{{9, 12}, {}};
  const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 11);
  std::vector<Real> shifted(f);
  for (Real& x : shifted) x += Real(0.25);
  std::vector<Real> u(f.size()), u_shifted(f.size());
  PoissonPlan<Real> plan(kCpu, g);
  const PoissonResult zero = plan.solve(f, u);
  EXPECT_FALSE(zero.mean_removed);
  const PoissonResult r = plan.solve(shifted, u_shifted);
  EXPECT_TRUE(r.mean_removed);
  EXPECT_NEAR(r.mean, 0.25, 1e-6);
  EXPECT_GT(r.mean_abs, 0.25);
  expect_close(g, u, u_shifted, 16 * std::numeric_limits<Real>::epsilon() * (1 + max_abs(u)),
               "mean removed");

  PoissonOptions strict;
  strict.strict = true;
  PoissonPlan<Real> strict_plan(kCpu, g, strict);
  std::vector<Real> untouched(f.size(), Real(42));
  EXPECT_THROW(strict_plan.solve(shifted, untouched), InvalidInput);
  for (const Real x : untouched) ASSERT_EQ(x, Real(42));
  EXPECT_NO_THROW(strict_plan.solve(f, untouched));
}

TEST(PoissonMeanRule, ZeroToRoundingBoundary) {
  // n = 4, sum|f| = 4 -> mean_abs 1, tolerance 64 eps.
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_FALSE(classify_mean<double>(4 * 64 * eps, 4, 4).mean_removed);
  EXPECT_TRUE(classify_mean<double>(4 * 65 * eps, 4, 4).mean_removed);
  EXPECT_TRUE(classify_mean<double>(-4 * 65 * eps, 4, 4).mean_removed);
  EXPECT_FALSE(classify_mean<float>(4 * 64 * 0x1p-23, 4, 4).mean_removed);
  EXPECT_TRUE(classify_mean<float>(4 * 65 * 0x1p-23, 4, 4).mean_removed);
  EXPECT_FALSE(classify_mean<double>(0, 0, 4).mean_removed);  // f = 0
  EXPECT_TRUE(classify_mean<double>(std::numeric_limits<double>::quiet_NaN(), 1, 4).mean_removed);
}

TYPED_TEST(PoissonCpuTest, PlanReuseAndInPlace) {
  using Real = TypeParam;
  const PoissonGrid g{{6, 10, 7}, {1.0, 2.0, 1.0}};
  PoissonPlan<Real> plan(kCpu, g);
  const std::vector<Real> f1 = testing::random_rhs<Real>(g.size(), 21);
  const std::vector<Real> f2 = testing::random_rhs<Real>(g.size(), 22);
  std::vector<Real> u1(f1.size()), u2(f1.size()), again(f1.size());
  plan.solve(f1, u1);
  plan.solve(f2, u2);
  plan.solve(f1, again);
  EXPECT_EQ(std::memcmp(u1.data(), again.data(), u1.size() * sizeof(Real)), 0);
  EXPECT_NE(std::memcmp(u1.data(), u2.data(), u1.size() * sizeof(Real)), 0);
  std::vector<Real> in_place(f1);
  plan.solve(in_place, in_place);
  EXPECT_EQ(std::memcmp(u1.data(), in_place.data(), u1.size() * sizeof(Real)), 0);
  // The same bits from the one-shot function and another plan.
  std::vector<Real> one_shot(f1.size());
  solve_poisson<Real>(kCpu, g, f1, one_shot);
  EXPECT_EQ(std::memcmp(u1.data(), one_shot.data(), u1.size() * sizeof(Real)), 0);
}

TEST(PoissonCpu, OnePointGridHasTheZeroSolution) {
  const PoissonGrid g{{1, 1}, {}};
  std::vector<double> f{3.5}, u{std::numeric_limits<double>::quiet_NaN()};
  const PoissonResult r = PoissonPlan<double>(kCpu, g).solve(f, u);
  EXPECT_EQ(u[0], 0.0);
  EXPECT_TRUE(r.mean_removed);
  EXPECT_EQ(r.mean, 3.5);
}

// NaN and Inf have no solution: the plan refuses them before solving (both backends share the
// check), naming the first bad element by its .npy multi-index, and leaves u untouched.
TYPED_TEST(PoissonCpuTest, NonFiniteRightHandSideIsRefusedNamingTheFirstBadIndex) {
  using Real = TypeParam;
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  const Real inf = std::numeric_limits<Real>::infinity();
  struct Case {
    PoissonGrid grid;
    std::vector<std::pair<std::size_t, Real>> bad;  // (flat index, value), first one named
    std::string message;
  } cases[] = {
      {{{4, 6}, {}}, {{8, nan}}, "f[1, 2] is nan"},
      {{{4, 6}, {}}, {{23, inf}}, "f[3, 5] is inf"},
      {{{4, 6}, {}}, {{0, -inf}, {7, nan}}, "f[0, 0] is -inf"},
      {{{3, 4, 5}, {}}, {{59, nan}, {33, -inf}}, "f[1, 2, 3] is -inf"},
  };
  for (const Case& c : cases) {
    std::vector<Real> f(static_cast<std::size_t>(c.grid.size()), Real(0));
    for (const auto& [i, v] : c.bad) f[i] = v;
    std::vector<Real> u(f.size(), Real(42));  // must stay as it is
    PoissonPlan<Real> plan(kCpu, c.grid);
    try {
      plan.solve(f, u);
      ADD_FAILURE() << c.message << ": no error";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
    for (const Real x : u) ASSERT_EQ(x, Real(42)) << c.message << ": u was written";
    // In place too (u is f): refused the same way.
    EXPECT_THROW(plan.solve(f, f), InvalidInput);
  }
}

TEST(PoissonCpu, BadGridsAndArgumentsAreRefused) {
  const auto refused = [](PoissonGrid g) {
    EXPECT_THROW(validate_grid(g), InvalidInput) << g.shape.size();
    EXPECT_THROW(PoissonPlan<double>(kCpu, g), InvalidInput);
  };
  refused({{8}, {}});
  refused({{2, 2, 2, 2}, {}});
  refused({{0, 8}, {}});
  refused({{8, -1}, {}});
  refused({{8, 8}, {1.0}});
  refused({{8, 8}, {1.0, 0.0}});
  refused({{8, 8}, {1.0, -2.0}});
  refused({{8, 8}, {1.0, std::numeric_limits<double>::infinity()}});
  refused({{8, 8}, {std::numeric_limits<double>::quiet_NaN(), 1.0}});
  refused({{std::int64_t{1} << 40, std::int64_t{1} << 40}, {}});  // overflows
  EXPECT_THROW(parse_gauge("middle"), InvalidInput);
  EXPECT_EQ(parse_gauge("corner"), Gauge::corner);

  const PoissonGrid g{{4, 6}, {}};
  PoissonPlan<double> plan(kCpu, g);
  std::vector<double> f(24, 0.0), u(23), big(48);
  EXPECT_THROW(plan.solve(f, u), InvalidInput);
  // u overlapping f without being f.
  EXPECT_THROW(
      plan.solve(std::span<const double>(big.data(), 24), std::span<double>(big.data() + 1, 24)),
      InvalidInput);
  EXPECT_THROW(plan.solve_on_device(f.data(), f.data(), nullptr), InvalidInput);
  PoissonOptions cuda_variant;
  cuda_variant.variant = "r2c";
  EXPECT_THROW(PoissonPlan<double>(kCpu, g, cuda_variant), InvalidInput);
}

TEST(PoissonCpu, GridBeyondHostMemoryIsOutOfMemoryBeforeAllocating) {
  const PoissonGrid g{{std::int64_t{1} << 20, std::int64_t{1} << 20, 16}, {}};
  try {
    PoissonPlan<double> plan(kCpu, g);
    FAIL() << "no error";
  } catch (const OutOfMemory& e) {
    EXPECT_GE(e.bytes_requested(), (std::size_t{1} << 44) * sizeof(double));
  }
}

TEST(PoissonDemo, ReproducesTheSeedAtN64OnTheCpu) {
  const bench::PoissonDemo d = bench::run_poisson_demo(kCpu, 64);
  EXPECT_NEAR(d.computed, 0.975879, 5e-7);
  EXPECT_NEAR(d.reference, 0.975882, 5e-7);
  EXPECT_NEAR(d.linf, 2.404194e-05, 5e-12);
  EXPECT_NEAR(d.l2, 9.412790e-08, 5e-14);
  EXPECT_TRUE(d.passed());
  EXPECT_EQ(d.variant, "cpu-fftw");
}

// Other sizes and float are checked against the long double reference, not against the seed's
// double-precision printout or the analytic Linf (a discretization error, not the solver's).
TEST(PoissonDemo, OtherSizesAndFloatPassAgainstTheReference) {
  for (const int n : {8, 16, 64, 100}) {
    for (const bool single : {false, true}) {
      const bench::PoissonDemo d = bench::run_poisson_demo(kCpu, n, single);
      EXPECT_TRUE(d.check.passed) << n << " " << single << ": " << d.check.metrics.max_abs
                                  << " bound " << d.check.bound;
      EXPECT_TRUE(d.passed()) << n << " " << single;
      EXPECT_GT(d.check.bound, 0.0);
    }
  }
}

}  // namespace
}  // namespace gpukit::pde
