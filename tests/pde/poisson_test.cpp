// The Poisson solver through its public API, each scenario written once and run on every backend
// (Cpu/... on FFTW, Cuda/... on the default CUDA variant through the host path): manufactured
// solutions to rounding on non-square grids with unequal lengths, odd and even sizes, 2D and 3D,
// float and double; Nyquist modes; the long-double reference and its check; the gauges; the mean
// rule and --strict, its sums bit for bit the documented tree on every backend; plan reuse; in
// place; non-finite input. CPU only: bad input, host memory, the seed's N = 64 numbers. The CUDA
// variants one by one and the device path: poisson_gpu_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <utility>

#include "bench/poisson_demo.hpp"
#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "poisson_test_support.hpp"
#include "test_seed.hpp"

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

/// What a plan on backend B uses for grid g: FFTW on the CPU, the default variant on CUDA.
template <Backend B, class Real>
std::string expected_variant(const PoissonGrid& g) {
  return B == Backend::cpu ? std::string("cpu-fftw") : default_poisson_variant<Real>(g);
}

/// The bits of a double, so that a comparison tells -0.0 from 0.0 and matches NaN with itself.
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The test's own evaluation of the tree reduce_canonical.hpp documents, sharing no code with the
// library: tiles of 16384 elements; lane l of a tile adds its rows (elements l, l + 1024, ...) in
// order from zero; the 1024 lanes combine as adjacent pairs; tile results form the next level
// until one is left. Each addition is Neumaier's step on two compensated sums (or, for the test
// that plain summation fails, a plain addition).
struct Compensated {
  double value = 0, error = 0;
};
Compensated add(Compensated a, Compensated b, bool compensated) {
  const double t = a.value + b.value;
  if (!compensated) return {t, 0};
  const bool a_larger = std::fabs(a.value) >= std::fabs(b.value);
  const double rounding = a_larger ? (a.value - t) + b.value : (b.value - t) + a.value;
  return {t, (a.error + b.error) + rounding};
}
Compensated documented_tree(std::vector<Compensated> level, bool compensated) {
  constexpr std::size_t kLanes = 1024, kTile = 16 * kLanes;
  if (level.empty()) return {};
  for (;;) {
    std::vector<Compensated> next;
    for (std::size_t begin = 0; begin < level.size(); begin += kTile) {
      std::vector<Compensated> lanes(kLanes);
      const std::size_t end = std::min(level.size(), begin + kTile);
      for (std::size_t i = begin; i < end; ++i) {
        lanes[(i - begin) % kLanes] = add(lanes[(i - begin) % kLanes], level[i], compensated);
      }
      for (std::size_t width = kLanes; width > 1; width /= 2) {
        for (std::size_t j = 0; j < width / 2; ++j)
          lanes[j] = add(lanes[2 * j], lanes[2 * j + 1], compensated);
      }
      next.push_back(lanes[0]);
    }
    if (next.size() == 1) return next[0];
    level = std::move(next);
  }
}
/// What the mean rule should see for f: the sums and the means of f and |f|.
struct MeanTree {
  double sum, sum_abs, mean, mean_abs;
};
template <class Real>
MeanTree mean_tree(const std::vector<Real>& f, bool compensated) {
  std::vector<Compensated> values(f.size()), abs_values(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) {
    values[i] = {static_cast<double>(f[i]), 0};
    abs_values[i] = {std::fabs(static_cast<double>(f[i])), 0};
  }
  const Compensated s = documented_tree(values, compensated);
  const Compensated a = documented_tree(abs_values, compensated);
  const double sum = s.value + s.error, sum_abs = a.value + a.error;
  const auto n = static_cast<double>(f.size());
  return {sum, sum_abs, sum / n, sum_abs / n};
}

// --- scenarios on every backend, float and double ---------------------------------------------

template <class Case>
class PoissonTest : public gpukit::testing::EveryBackendTypedTest<Case> {};
TYPED_TEST_SUITE_P(PoissonTest);

TYPED_TEST_P(PoissonTest, ManufacturedSolutionsToRounding) {
  using Real = typename TypeParam::Element;
  std::uint64_t seed = 1;
  for (const PoissonGrid& g : manufactured_grids()) {
    SCOPED_TRACE(g.describe() + " seed " + std::to_string(seed));
    const testing::Manufactured m = manufactured(g, seed++);
    const std::vector<Real> f(m.f.begin(), m.f.end());
    std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
    PoissonPlan<Real> plan(this->context(2), g);
    EXPECT_EQ(plan.variant(), (expected_variant<TypeParam::backend, Real>(g)));
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
TYPED_TEST_P(PoissonTest, NyquistModesOfEvenAxesAgainstTheExactSolution) {
  using Real = typename TypeParam::Element;
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
    PoissonPlan<Real> plan(this->context(2), g);
    const PoissonResult r = plan.solve(f, u);
    EXPECT_FALSE(r.mean_removed) << "mean " << r.mean;
    expect_close(g, u_exact, u,
                 poisson_agreement_bound<Real>(g, max_abs(f_exact), max_abs(u_exact)), "nyquist");
  }
}

// The reference of `poisson --check` (long double FFTW): exact on manufactured solutions, and a
// check that passes the CPU solver's results and fails a wrong one.
TYPED_TEST_P(PoissonTest, ReferenceSolutionAndCheck) {
  using Real = typename TypeParam::Element;
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
      PoissonPlan<Real>(this->context(2), g, options).solve(f, u);
      testing::expect_check_passes_and_catches_errors(g, f, u, options);
    }
  }
}

TYPED_TEST_P(PoissonTest, CornerGaugeIsTheMeanGaugeShifted) {
  using Real = typename TypeParam::Element;
  const PoissonGrid g{{10, 14}, {1.0, 1.5}};
  const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 7);
  std::vector<Real> mean_u(f.size()), corner_u(f.size());
  PoissonPlan<Real>(this->context(2), g).solve(f, mean_u);
  PoissonOptions corner;
  corner.gauge = Gauge::corner;
  PoissonPlan<Real>(this->context(2), g, corner).solve(f, corner_u);
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

TYPED_TEST_P(PoissonTest, NonZeroMeanIsReportedAndRemovedOrRefused) {
  using Real = typename TypeParam::Element;
  const PoissonGrid g{{9, 12}, {}};
  const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 11);
  std::vector<Real> shifted(f);
  for (Real& x : shifted) x += Real(0.25);
  std::vector<Real> u(f.size()), u_shifted(f.size());
  PoissonPlan<Real> plan(this->context(2), g);
  const PoissonResult zero = plan.solve(f, u);
  EXPECT_FALSE(zero.mean_removed);
  const PoissonResult r = plan.solve(shifted, u_shifted);
  EXPECT_TRUE(r.mean_removed);
  EXPECT_NEAR(r.mean, 0.25, 1e-6);
  EXPECT_GT(r.mean_abs, 0.25);
  if constexpr (TypeParam::backend == Backend::cpu) {
    // FFTW runs one plan on both inputs: the shift changes only the roundings of f and of the
    // zero mode, a few eps of u.
    expect_close(g, u, u_shifted, 16 * std::numeric_limits<Real>::epsilon() * (1 + max_abs(u)),
                 "mean removed");
  } else {
    // A CUDA variant is held to the CPU's solution of the mean-zero f within the agreement bound.
    std::vector<Real> expected(f.size());
    PoissonPlan<Real>(Context::cpu(2), g).solve(f, expected);
    expect_close(g, expected, u_shifted,
                 poisson_agreement_bound<Real>(g, max_abs(shifted), max_abs(expected)),
                 "mean removed");
  }

  PoissonOptions strict;
  strict.strict = true;
  PoissonPlan<Real> strict_plan(this->context(2), g, strict);
  std::vector<Real> untouched(f.size(), Real(42));
  EXPECT_THROW(strict_plan.solve(shifted, untouched), InvalidInput);
  for (const Real x : untouched) ASSERT_EQ(x, Real(42));
  EXPECT_NO_THROW(strict_plan.solve(f, untouched));
}

// The mean rule's sums, sum(f) and sum(|f|), are the documented tree (reduce_canonical.hpp) of
// Neumaier steps on every backend: the mean and mean|f| a plan reports have exactly the bits of
// the test's own evaluation of that tree, at awkward 2D and 3D sizes from one element to many
// tiles (so the CPU and the GPU give the same bits and classify "mean is zero" alike). A backend
// that summed plainly, or in another order, would miss the bits on most of these grids.
TYPED_TEST_P(PoissonTest, MeanSumsAreTheDocumentedCompensatedTreeBitForBit) {
  using Real = typename TypeParam::Element;
  const gpukit::testing::TestSeed seed;
  const PoissonGrid grids[] = {{{1, 1}, {}},       {{3, 5}, {}},       {{33, 65}, {}},
                               {{129, 257}, {}},   {{256, 260}, {}},   {{2, 3, 2}, {}},
                               {{17, 31, 33}, {}}, {{5, 129, 257}, {}}};
  int plain_differs = 0;
  for (const PoissonGrid& g : grids) {
    SCOPED_TRACE(g.describe());
    const std::int64_t n = g.size();
    // Pairs +b, -b over thirty binades that cancel exactly, and a quarter of small values, all
    // shuffled: the sum is the small values' alone, far below the partial sums, whose plain
    // roundings lose it (the compensated tree keeps it).
    std::mt19937_64 rng(seed.value() + static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<Real> f(static_cast<std::size_t>(n));
    std::size_t i = 0;
    for (; i + 1 < f.size() - f.size() / 4; i += 2) {
      f[i] = static_cast<Real>(std::ldexp(dist(rng), int(rng() % 30)));
      f[i + 1] = -f[i];
    }
    for (; i < f.size(); ++i) f[i] = static_cast<Real>(std::ldexp(dist(rng), -20));
    std::shuffle(f.begin(), f.end(), rng);
    const MeanTree expected = mean_tree(f, true);
    if (!same_bits(mean_tree(f, false).mean, expected.mean)) ++plain_differs;
    std::vector<Real> u(f.size());
    const PoissonResult r = PoissonPlan<Real>(this->context(2), g).solve(f, u);
    EXPECT_TRUE(same_bits(r.mean, expected.mean)) << r.mean << " expected " << expected.mean;
    EXPECT_TRUE(same_bits(r.mean_abs, expected.mean_abs))
        << r.mean_abs << " expected " << expected.mean_abs;
    EXPECT_EQ(r.mean_removed, classify_mean<Real>(expected.sum, expected.sum_abs, n).mean_removed);
    // And across backends and thread counts directly: the CPU on one thread.
    const PoissonResult cpu = PoissonPlan<Real>(Context::cpu(1), g).solve(f, u);
    EXPECT_TRUE(same_bits(r.mean, cpu.mean)) << r.mean << " cpu " << cpu.mean;
    EXPECT_TRUE(same_bits(r.mean_abs, cpu.mean_abs)) << r.mean_abs << " cpu " << cpu.mean_abs;
  }
  // The test can fail: on these data plain summation over the same tree gives other bits (on
  // every grid of more than a few elements).
  EXPECT_GE(plain_differs, 5);
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

TYPED_TEST_P(PoissonTest, PlanReuseAndInPlace) {
  using Real = typename TypeParam::Element;
  const PoissonGrid g{{6, 10, 7}, {1.0, 2.0, 1.0}};
  PoissonPlan<Real> plan(this->context(2), g);
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
  solve_poisson<Real>(this->context(2), g, f1, one_shot);
  EXPECT_EQ(std::memcmp(u1.data(), one_shot.data(), u1.size() * sizeof(Real)), 0);
}

TYPED_TEST_P(PoissonTest, OnePointGridHasTheZeroSolution) {
  using Real = typename TypeParam::Element;
  const PoissonGrid g{{1, 1}, {}};
  std::vector<Real> f{Real(3.5)}, u{std::numeric_limits<Real>::quiet_NaN()};
  const PoissonResult r = PoissonPlan<Real>(this->context(2), g).solve(f, u);
  EXPECT_EQ(u[0], Real(0));
  EXPECT_TRUE(r.mean_removed);
  EXPECT_EQ(r.mean, 3.5);
}

// NaN and Inf have no solution: the plan refuses them before solving (both backends share the
// check), naming the first bad element by its .npy multi-index, and leaves u untouched.
TYPED_TEST_P(PoissonTest, NonFiniteRightHandSideIsRefusedNamingTheFirstBadIndex) {
  using Real = typename TypeParam::Element;
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
    PoissonPlan<Real> plan(this->context(2), c.grid);
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

REGISTER_TYPED_TEST_SUITE_P(PoissonTest, ManufacturedSolutionsToRounding,
                            NyquistModesOfEvenAxesAgainstTheExactSolution,
                            ReferenceSolutionAndCheck, CornerGaugeIsTheMeanGaugeShifted,
                            NonZeroMeanIsReportedAndRemovedOrRefused,
                            MeanSumsAreTheDocumentedCompensatedTreeBitForBit, PlanReuseAndInPlace,
                            OnePointGridHasTheZeroSolution,
                            NonFiniteRightHandSideIsRefusedNamingTheFirstBadIndex);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(PoissonTest, float, double);

// --- scenarios on every backend with their own types -------------------------------------------

class PoissonMeanTest : public gpukit::testing::EveryBackendTest {};

// A right-hand side whose mean is zero to rounding (poisson.hpp's rule) only when the sums are
// compensated: plain summation over the same tree makes it non-zero. The grid is one tile, its
// flat index r * 1024 + l being row r of lane l in the tree. Lanes 0..1022 hold +1, then 14
// copies of t = 2^-53 + 2^-60, then -1: each t rounds 1 + k ulp up to 1 + (k + 1) ulp (t is just
// over half an ulp of 1), so a plain lane ends at 14 ulp where the exact one is 14 t, about 7.05
// ulp. Lane 1023 holds d = 117 * 1023 ulp. Then (in ulps of 1, over 1023 lanes) the exact sum is
// 124.05 per lane, the plain one 131, and the bound 64 eps sum|f| is 128.0 per lane: zero when
// compensated, not zero when plain, each with a margin of 3% (roundings are 2^-52 relative).
// Double only: in float the bound is 64 * 2^-23, far beyond any rounding of a double sum.
TEST_P(PoissonMeanTest, MeanZeroOnlyUnderCompensatedSummationIsClassifiedZero) {
  const double t = 0x1p-53 + 0x1p-60, ulp = 0x1p-52, d = 117 * 1023 * ulp;
  for (const PoissonGrid& g : {PoissonGrid{{16, 1024}, {}}, PoissonGrid{{4, 4, 1024}, {}}}) {
    SCOPED_TRACE(g.describe());
    const std::int64_t n = g.size();
    ASSERT_EQ(n, 16384);  // one tile
    std::vector<double> f(static_cast<std::size_t>(n), 0.0);
    for (std::size_t l = 0; l < 1023; ++l) {
      f[l] = 1;
      for (std::size_t r = 1; r <= 14; ++r) f[r * 1024 + l] = t;
      f[15 * 1024 + l] = -1;
    }
    f[1023] = d;
    // The data do what they are meant to: exactly (long double holds every sum here), the mean
    // is zero to rounding; the documented tree with Neumaier steps agrees; plain sums do not.
    const long double exact_sum = 1023.0L * 14 * t + d, exact_abs = 2046.0L + 1023.0L * 14 * t + d;
    ASSERT_LE(exact_sum, 64 * std::numeric_limits<double>::epsilon() * exact_abs * 0.98L);
    const MeanTree compensated = mean_tree(f, true), plain = mean_tree(f, false);
    ASSERT_FALSE(classify_mean<double>(compensated.sum, compensated.sum_abs, n).mean_removed);
    ASSERT_TRUE(classify_mean<double>(plain.sum, plain.sum_abs, n).mean_removed);

    std::vector<double> u(f.size(), std::numeric_limits<double>::quiet_NaN());
    const PoissonResult r = PoissonPlan<double>(context(2), g).solve(f, u);
    EXPECT_FALSE(r.mean_removed) << "mean " << r.mean << " tolerance " << r.mean_tolerance;
    EXPECT_TRUE(same_bits(r.mean, compensated.mean)) << r.mean << " vs " << compensated.mean;
    EXPECT_TRUE(same_bits(r.mean_abs, compensated.mean_abs));
    // --strict refuses only a non-zero mean: this f passes it.
    PoissonOptions strict;
    strict.strict = true;
    EXPECT_NO_THROW(PoissonPlan<double>(context(2), g, strict).solve(f, u));
  }
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(PoissonMeanTest);

// --- CPU only -----------------------------------------------------------------------------------

// The lengths rule of the CLI's --length and Python's lengths=: one value is the period of every
// axis (the CLI refused it on a 2-D grid while Python took it), one per axis, or none (1 each).
TEST(PoissonCpu, AxisLengthsTakeOneValueForEveryAxisOrOnePerAxis) {
  const std::vector<double> none, one = {2.5}, two = {2.0, 3.0}, three = {1.0, 2.0, 3.0};
  EXPECT_EQ(axis_lengths("lengths", none, 2), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(axis_lengths("lengths", one, 2), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(axis_lengths("lengths", one, 3), (std::vector<double>{2.5, 2.5, 2.5}));
  EXPECT_EQ(axis_lengths("lengths", two, 2), two);
  EXPECT_EQ(axis_lengths("lengths", three, 3), three);
  try {
    axis_lengths("--length", three, 2);
    ADD_FAILURE() << "three lengths for two axes were accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "--length gives 3 values for a grid of 2 axes: give one for every axis, or one "
                 "per axis");
  }
  EXPECT_THROW(axis_lengths("lengths", two, 3), InvalidInput);
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

// What the CLI prints and refuses comes from the library, word for word (tests/cli keeps the
// command's bytes).
TEST(PoissonCpu, ArrayShapeChecksAndMessages) {
  const auto message = [](std::vector<std::int64_t> shape) {
    try {
      check_poisson_array_shape(shape, "f.npy");
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({16}), "f.npy: poisson takes 2D or 3D arrays, not 1D");
  EXPECT_EQ(message({2, 2, 2, 2}), "f.npy: poisson takes 2D or 3D arrays, not 4D");
  EXPECT_EQ(message({4, 0}), "f.npy: axis 1 has size 0");
  EXPECT_EQ(message({1, 1}), "accepted");
  EXPECT_EQ(message({3, 1, 5}), "accepted");

  PoissonResult r;
  r.mean = 1.015625;
  r.mean_tolerance = 1.5e-14;
  r.mean_removed = true;
  EXPECT_EQ(describe_removed_mean(r),
            "the mean of f, 1.01562, is not zero to rounding (|mean| > 64 eps mean|f| = 1.5e-14): "
            "lap(u) = f has no periodic solution; solved lap(u) = f - mean (--strict refuses "
            "instead)");
  PoissonCheck check;
  check.metrics.relative_l1 = 1.25e-16;
  check.metrics.max_abs = 3.5e-17;
  check.bound = 5.5e-14;
  check.passed = true;
  EXPECT_EQ(describe_poisson_check(check),
            "long double reference (FFTW), relative L1 1.25e-16, max abs error 3.5e-17 (bound "
            "5.5e-14): ok");
  check.passed = false;
  EXPECT_NE(describe_poisson_check(check).find("): FAILED"), std::string::npos);
}

// The registry's flop model (poisson_variants.hpp): 5 log2(N) + 1 per point, the same for every
// variant, filled in per grid by info_for (the traffic model's constant stays 0).
TEST(PoissonRegistry, FlopModelPerGrid) {
  EXPECT_EQ(poisson_flops_per_element(1), 0.0);
  EXPECT_EQ(poisson_flops_per_element(1024), 51.0);                    // 5 * 10 + 1
  EXPECT_EQ(poisson_flops_per_element(std::int64_t{1} << 24), 121.0);  // 5 * 24 + 1
  EXPECT_DOUBLE_EQ(poisson_flops_per_element(3 * 5), 5 * std::log2(15.0) + 1);
  GridShape shape;
  shape.rank = 3;
  shape.n[0] = 64, shape.n[1] = 32, shape.n[2] = 16;  // 2^15 points
  for (const PoissonVariant& v : poisson_variants()) {
    SCOPED_TRACE(std::string(v.info.name));
    EXPECT_EQ(v.info.traffic.flops_per_element, 0.0);
    const VariantInfo sized = v.info_for(shape);
    EXPECT_EQ(sized.traffic.flops_per_element, 76.0);  // 5 * 15 + 1
    EXPECT_EQ(sized.name, v.info.name);
    EXPECT_EQ(sized.traffic.reads_per_element, v.info.traffic.reads_per_element);
    EXPECT_EQ(sized.traffic.writes_per_element, v.info.traffic.writes_per_element);
  }
}

// One device solves grids below 2^31 elements (cuFFT's 32-bit plans, 32-bit indices); a larger
// grid's refusal says so and names the way on (needs the CUDA variants, not a GPU).
TEST(PoissonRegistry, AGridOf2To31ElementsOrMoreNamesTheLimit) {
  if (poisson_variant_names().empty()) GTEST_SKIP() << "built without CUDA";
  const PoissonGrid huge{{1541, 1541, 1541}, {}};
  try {
    (void)default_poisson_variant<double>(huge);
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(
        e.what(),
        "poisson: the grid 1541x1541x1541 (lengths 1x1x1) has 3659383421 elements; one "
        "device solves grids of fewer than 2^31 (mpirun -np N gpukit poisson splits a larger "
        "one over N GPUs)");
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
