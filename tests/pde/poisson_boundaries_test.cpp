// Poisson and Helmholtz beyond periodic (issue 34), through the public API, each scenario written
// once and run on every backend (Cpu/... on FFTW's real-to-real and real-to-complex transforms;
// Cuda/... on the CUDA plan), float and double: every combination of periodic, dirichlet and
// neumann axes in 2D and 3D, both operators, several lambda, at sizes 7, 31, 97, 100 and 1000
// (1000 in 2D beside a small axis), non-square grids with unequal lengths:
// - manufactured solutions: sums of products of each axis' own modes (poisson.hpp, "Grid"),
//   evaluated by the test's own formulas, which both operators solve exactly (a mode of the
//   continuous Laplacian is also the fd2 eigenvector of the same nodes);
// - the fd2 operator against an independent sparse matrix of the 5/7-point stencil (ghosts: 0
//   beyond a dirichlet end, the mirrored value beyond a neumann end, the wrapped one on a periodic
//   axis): the residual (A - lambda) u - f, every element;
// - the long-double reference and its check;
// - the rules of singular and nonsingular problems (mean, strict, gauge), the Helmholtz constant
//   mode, the parsers and the refusals.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/poisson.hpp"
#include "poisson_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::pde {
namespace {

using testing::expect_close;
using testing::max_abs;

using testing::every_combination;
using testing::kBoundaries;
using testing::kOperators;

std::string describe(const PoissonGrid& g, const PoissonOptions& o) {
  return g.describe() + " " + std::string(operator_name(o.op)) + " lambda " +
         std::to_string(o.helmholtz);
}

// --- the test's own formulas of the modes (poisson.hpp, "Grid" and "Operator") ------------------

/// One mode of an axis: its number (k of sin / cos(pi k x / L), or m of the periodic
/// cos(2 pi m x / L + phase)) and, on a periodic axis, its phase.
struct AxisMode {
  int number = 0;
  double phase = 0;
};

/// The mode at node i: dirichlet sin(pi k x / L), x = (i + 1) L / (n + 1); neumann
/// cos(pi k x / L), x = (i + 1/2) L / n; periodic cos(2 pi m x / L + phase), x = i L / n. In long
/// double, the angle reduced in integers first (pi k x / L is pi k (i + 1) / (n + 1) and so on):
/// a mode of a fine grid sampled with an angle rounded at its size (1000 pi eps) is not an
/// eigenvector to rounding, and the solve amplifies the difference by the ratio of its eigenvalue
/// to the smallest.
long double mode_value(const PoissonGrid& g, int a, const AxisMode& m, std::int64_t i) {
  const std::int64_t n = g.shape[static_cast<std::size_t>(a)];
  const long double pi = std::numbers::pi_v<long double>;
  switch (g.boundary(a)) {
    case Boundary::dirichlet: {  // pi k (i + 1) / (n + 1), modulo 2 pi
      const std::int64_t turns = m.number * (i + 1) % (2 * (n + 1));
      return std::sin(pi * static_cast<long double>(turns) / static_cast<long double>(n + 1));
    }
    case Boundary::neumann: {  // pi k (2 i + 1) / (2 n), modulo 2 pi
      const std::int64_t turns = m.number * (2 * i + 1) % (4 * n);
      return std::cos(pi * static_cast<long double>(turns) / static_cast<long double>(2 * n));
    }
    case Boundary::periodic:
      break;
  }
  const std::int64_t turns = m.number * i % n;  // 2 pi m i / n, modulo 2 pi
  return std::cos(2 * pi * static_cast<long double>(turns) / static_cast<long double>(n) +
                  static_cast<long double>(m.phase));
}

/// The eigenvalue (<= 0) of the 1D operator on the mode, in long double.
long double mode_eigenvalue(const PoissonGrid& g, int a, const AxisMode& m, Operator op) {
  const long double L = g.length(a), n = g.shape[static_cast<std::size_t>(a)];
  const long double pi = std::numbers::pi_v<long double>;
  const Boundary b = g.boundary(a);
  if (op == Operator::spectral) {
    const long double k = (b == Boundary::periodic ? 2 : 1) * pi * m.number / L;
    return -k * k;
  }
  const long double h = b == Boundary::dirichlet ? L / (n + 1) : L / n;
  const long double theta = b == Boundary::periodic    ? 2 * pi * m.number / n
                            : b == Boundary::dirichlet ? pi * m.number / (n + 1)
                                                       : pi * m.number / n;
  const long double s = std::sin(theta / 2);
  return -4 / (h * h) * s * s;
}

/// The range of mode numbers of an axis: dirichlet 1..n, neumann 0..n-1, periodic 0..n/2.
int lowest_mode(Boundary b) { return b == Boundary::dirichlet ? 1 : 0; }
int highest_mode(Boundary b, std::int64_t n) {
  return static_cast<int>(b == Boundary::dirichlet ? n : b == Boundary::neumann ? n - 1 : n / 2);
}

/// u and f in long double, each rounded once to double at the end.
struct Manufactured {
  std::vector<double> u, f;
};

/// u = sum of three terms A prod_a mode_a(x_a), f = (lap - lambda) u term by term: random modes;
/// the highest mode of every axis (Nyquist on an even periodic one); the lowest non-constant one
/// on axis 0. In a singular problem a term that is constant on every axis (not mean-zero) is left
/// out; with lambda > 0 it stays (the constant mode is then solved too).
Manufactured manufactured(const PoissonGrid& g, const PoissonOptions& o, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int rank = g.rank();
  const bool singular = poisson_is_singular(g, o);
  std::vector<std::vector<AxisMode>> terms(3,
                                           std::vector<AxisMode>(static_cast<std::size_t>(rank)));
  for (int a = 0; a < rank; ++a) {
    const Boundary b = g.boundary(a);
    const std::int64_t n = g.shape[static_cast<std::size_t>(a)];
    const int low = lowest_mode(b), high = highest_mode(b, n);
    auto phase = [&] { return double(rng() % 1000) / 1000.0 * 2 * std::numbers::pi; };
    terms[0][static_cast<std::size_t>(a)] = {
        low + static_cast<int>(rng() % static_cast<unsigned>(high - low + 1)), phase()};
    terms[1][static_cast<std::size_t>(a)] = {high, phase()};
    terms[2][static_cast<std::size_t>(a)] = {
        a == 0 && b != Boundary::dirichlet && high >= 1 ? 1 : low, phase()};
  }
  const long double amplitudes[] = {1.0L, 0.25L, 0.75L};
  const std::int64_t n = g.size();
  std::vector<long double> u(static_cast<std::size_t>(n), 0.0L), f(u.size(), 0.0L);
  for (std::size_t t = 0; t < terms.size(); ++t) {
    long double eigenvalue = -static_cast<long double>(o.helmholtz);
    bool constant = true;
    for (int a = 0; a < rank; ++a) {
      const AxisMode& m = terms[t][static_cast<std::size_t>(a)];
      eigenvalue += mode_eigenvalue(g, a, m, o.op);
      constant = constant && g.boundary(a) != Boundary::dirichlet && m.number == 0;
    }
    if (singular && constant) continue;
    std::vector<std::vector<long double>> samples(static_cast<std::size_t>(rank));
    for (int a = 0; a < rank; ++a) {
      for (std::int64_t j = 0; j < g.shape[static_cast<std::size_t>(a)]; ++j)
        samples[static_cast<std::size_t>(a)].push_back(
            mode_value(g, a, terms[t][static_cast<std::size_t>(a)], j));
    }
    for (std::int64_t i = 0; i < n; ++i) {
      long double value = amplitudes[t];
      std::int64_t rest = i;  // i's .npy multi-index, last axis first
      for (int a = rank - 1; a >= 0; --a) {
        const std::int64_t len = g.shape[static_cast<std::size_t>(a)];
        value *= samples[static_cast<std::size_t>(a)][static_cast<std::size_t>(rest % len)];
        rest /= len;
      }
      u[static_cast<std::size_t>(i)] += value;
      f[static_cast<std::size_t>(i)] += eigenvalue * value;
    }
  }
  return {std::vector<double>(u.begin(), u.end()), std::vector<double>(f.begin(), f.end())};
}

// --- the 5/7-point stencil as a sparse matrix, built from its definition ------------------------

/// A(u) = sum over the axes of (u[i - 1] - 2 u[i] + u[i + 1]) / h^2 (poisson.hpp, "Operator"), as
/// compressed sparse rows: a neighbour beyond a dirichlet end is 0 (no entry), beyond a neumann
/// end the mirrored node (the node itself), on a periodic axis the wrapped node.
struct SparseMatrix {
  std::vector<std::int64_t> row_start, column;
  std::vector<long double> value;

  std::vector<long double> times(const std::vector<long double>& x) const {
    std::vector<long double> y(row_start.size() - 1, 0.0L);
    for (std::size_t r = 0; r + 1 < row_start.size(); ++r) {
      for (std::int64_t e = row_start[r]; e < row_start[r + 1]; ++e)
        y[r] += value[static_cast<std::size_t>(e)] *
                x[static_cast<std::size_t>(column[static_cast<std::size_t>(e)])];
    }
    return y;
  }
};

SparseMatrix fd2_matrix(const PoissonGrid& g) {
  const int rank = g.rank();
  const std::int64_t n = g.size();
  SparseMatrix m;
  m.row_start.push_back(0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<std::int64_t, long double>> entries;
    std::int64_t stride = 1;
    for (int a = rank - 1; a >= 0; --a) {
      const std::int64_t len = g.shape[static_cast<std::size_t>(a)];
      const std::int64_t j = i / stride % len;
      const Boundary b = g.boundary(a);
      const long double L = g.length(a);
      const long double h = b == Boundary::dirichlet ? L / (len + 1) : L / len;
      const long double w = 1 / (h * h);
      entries.push_back({i, -2 * w});
      for (const int step : {-1, 1}) {
        const std::int64_t k = j + step;
        if (k >= 0 && k < len) {
          entries.push_back({i + step * stride, w});
        } else if (b == Boundary::periodic) {
          entries.push_back({i + (k < 0 ? len - 1 : -(len - 1)) * stride, w});
        } else if (b == Boundary::neumann) {
          entries.push_back({i, w});  // u[-1] = u[0], u[n] = u[n-1]
        }                             // dirichlet: u = 0 beyond the end
      }
      stride *= len;
    }
    for (const auto& [column, value] : entries) {
      m.column.push_back(column);
      m.value.push_back(value);
    }
    m.row_start.push_back(static_cast<std::int64_t>(m.column.size()));
  }
  return m;
}

/// The largest absolute row sum of A - lambda: what an error e in u can become in the residual.
double stencil_norm(const PoissonGrid& g, double lambda) {
  double norm = lambda;
  for (int a = 0; a < g.rank(); ++a) {
    const double L = g.length(a), n = double(g.shape[static_cast<std::size_t>(a)]);
    const double h = g.boundary(a) == Boundary::dirichlet ? L / (n + 1) : L / n;
    norm += 4 / (h * h);
  }
  return norm;
}

// --- the grids ----------------------------------------------------------------------------------

struct Shape {
  std::vector<std::int64_t> shape;
  std::vector<double> lengths;
};
const std::vector<Shape>& shapes_2d() {
  static const std::vector<Shape> shapes = {
      {{7, 31}, {1.0, 2.0}}, {{97, 100}, {}}, {{1000, 7}, {3.0, 0.5}}, {{100, 1}, {1.0, 1.0}}};
  return shapes;
}
const std::vector<Shape>& shapes_3d() {
  static const std::vector<Shape> shapes = {{{7, 31, 10}, {1.0, 0.5, 2.0}}, {{6, 7, 1}, {}}};
  return shapes;
}
std::vector<PoissonGrid> grids_with_every_combination() {
  std::vector<PoissonGrid> grids;
  for (const auto* shapes : {&shapes_2d(), &shapes_3d()}) {
    for (const Shape& s : *shapes) {
      for (const std::vector<Boundary>& b : every_combination(static_cast<int>(s.shape.size())))
        grids.push_back({s.shape, s.lengths, b});
    }
  }
  return grids;
}

// --- scenarios on every backend, float and double ---------------------------------------------

template <class Case>
class PoissonBoundariesTest : public gpukit::testing::EveryBackendTypedTest<Case> {};
TYPED_TEST_SUITE_P(PoissonBoundariesTest);

// Manufactured solutions, every element within poisson_agreement_bound (the bound --check uses):
// a mode sampled at the axis' nodes is an eigenvector of both operators, so the solve is exact up
// to the transforms' rounding. One thread (the many small plans of these loops are the test's
// time; the threaded transforms are in the check's scenario below).
TYPED_TEST_P(PoissonBoundariesTest, ManufacturedModesOfEveryBoundaryCombination) {
  using Real = typename TypeParam::Element;
  const gpukit::testing::TestSeed seed;
  std::uint64_t case_seed = seed.value();
  for (const PoissonGrid& g : grids_with_every_combination()) {
    for (const Operator op : kOperators) {
      for (const double lambda : {0.0, 2.5, 400.0}) {
        PoissonOptions o;
        o.op = op;
        o.helmholtz = lambda;
        SCOPED_TRACE(describe(g, o) + " seed " + std::to_string(case_seed));
        const Manufactured m = manufactured(g, o, case_seed++);
        ASSERT_GT(max_abs(m.u), 0.2);
        const std::vector<Real> f(m.f.begin(), m.f.end());
        std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
        PoissonPlan<Real> plan(this->context(1), g, o);
        const PoissonResult r = plan.solve(f, u);
        EXPECT_FALSE(r.mean_removed) << "mean " << r.mean << " tolerance " << r.mean_tolerance;
        expect_close(g, m.u, u, poisson_agreement_bound<Real>(g, o, max_abs(m.f), max_abs(m.u)),
                     "manufactured");
      }
    }
  }
}

// fd2 against the sparse 5/7-point matrix, on random f (every mode present, so a wrong eigenvalue,
// normalisation or ghost shows at once): (A - lambda) u - f within |A - lambda|_inf times the
// agreement bound (|e| <= bound in u becomes at most that in A u; A is applied in long double).
// f - mean(f) in a singular problem (what the solver solves). The spectral solution of the same
// f fails the same test, so it can fail.
TYPED_TEST_P(PoissonBoundariesTest, Fd2SolvesTheSparseStencilSystemEveryElement) {
  using Real = typename TypeParam::Element;
  const gpukit::testing::TestSeed seed;
  std::mt19937_64 rng(seed.value());
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (const PoissonGrid& g : grids_with_every_combination()) {
    // In float, the rounding of u times the stencil's 4 / h^2 of a fine axis exceeds |f| on the
    // grids of 97 points or more an axis: the residual cannot tell a right solution from a wrong
    // one there (the manufactured solutions check those grids).
    if (sizeof(Real) == 4 && g.size() > 2500) continue;
    const SparseMatrix A = fd2_matrix(g);
    for (const double lambda : {0.0, 3.0}) {
      PoissonOptions o;
      o.op = Operator::fd2;
      o.helmholtz = lambda;
      SCOPED_TRACE(describe(g, o));
      std::vector<Real> f(static_cast<std::size_t>(g.size()));
      for (Real& x : f) x = static_cast<Real>(uniform(rng));
      long double mean = 0;
      for (const Real x : f) mean += x;
      mean /= static_cast<long double>(f.size());
      const bool singular = poisson_is_singular(g, o);
      auto residual_of = [&](const std::vector<Real>& u) {
        std::vector<long double> ul(u.begin(), u.end());
        std::vector<long double> r = A.times(ul);
        for (std::size_t i = 0; i < r.size(); ++i)
          r[i] -= lambda * ul[i] + (static_cast<long double>(f[i]) - (singular ? mean : 0.0L));
        return std::vector<double>(r.begin(), r.end());
      };
      std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
      PoissonPlan<Real>(this->context(1), g, o).solve(f, u);
      const double tolerance =
          stencil_norm(g, lambda) * poisson_agreement_bound<Real>(g, o, max_abs(f), max_abs(u));
      expect_close(g, std::vector<double>(f.size(), 0.0), residual_of(u), tolerance,
                   "fd2 residual");
      // The test can fail: the spectral solution of the same f (another problem's) does.
      PoissonOptions spectral = o;
      spectral.op = Operator::spectral;
      std::vector<Real> u_spectral(f.size());
      PoissonPlan<Real>(this->context(1), g, spectral).solve(f, u_spectral);
      EXPECT_GT(max_abs(residual_of(u_spectral)), tolerance);
    }
  }
}

// The long-double reference agrees with the solver within the bound; a wrong element or a NaN
// fails the check. Solver and reference on two threads.
TYPED_TEST_P(PoissonBoundariesTest, ReferenceAndCheckOfEveryCombination) {
  using Real = typename TypeParam::Element;
  const gpukit::testing::TestSeed seed;
  std::uint64_t case_seed = seed.value() + 1000;
  for (const PoissonGrid& g : grids_with_every_combination()) {
    for (const Operator op : kOperators) {
      PoissonOptions o;
      o.op = op;
      o.helmholtz = op == Operator::fd2 ? 1.5 : 0.0;
      o.gauge = case_seed % 2 ? Gauge::corner : Gauge::mean;
      SCOPED_TRACE(describe(g, o));
      // The reference of double f is exact to its rounding: the manufactured solution.
      const Manufactured m = manufactured(g, o, case_seed++);
      if (o.gauge == Gauge::mean) {
        const std::vector<double> reference = poisson_reference_solution<double>(g, m.f, o, 2);
        expect_close(g, m.u, reference,
                     poisson_agreement_bound<double>(g, o, max_abs(m.f), max_abs(m.u)),
                     "reference");
      }
      const std::vector<Real> f = testing::random_rhs<Real>(g.size(), case_seed++);
      std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
      PoissonPlan<Real>(this->context(2), g, o).solve(f, u);
      testing::expect_check_passes_and_catches_errors(g, f, u, o);
    }
  }
}

// A nonsingular problem (a dirichlet axis, or lambda > 0) removes nothing and refuses nothing:
// f of mean 0.25 is solved as it is, `strict` takes it, and every gauge gives the same bits. A
// singular neumann problem keeps the mean rule: the mean removed, or refused under `strict`.
TYPED_TEST_P(PoissonBoundariesTest, MeanRuleOnlyForSingularProblems) {
  using Real = typename TypeParam::Element;
  const std::vector<Real> zero_mean = testing::random_rhs<Real>(9 * 12, 5);
  std::vector<Real> f(zero_mean);
  for (Real& x : f) x += Real(0.25);
  struct Case {
    PoissonGrid grid;
    double lambda;
  } nonsingular[] = {{{{9, 12}, {}, {Boundary::dirichlet, Boundary::neumann}}, 0.0},
                     {{{9, 12}, {}, {Boundary::neumann, Boundary::neumann}}, 1.0},
                     {{{9, 12}, {}, {Boundary::periodic, Boundary::periodic}}, 1.0},
                     {{{9, 12}, {}}, 0.5}};
  for (const Case& c : nonsingular) {
    for (const Operator op : kOperators) {
      PoissonOptions o;
      o.op = op;
      o.helmholtz = c.lambda;
      SCOPED_TRACE(describe(c.grid, o));
      ASSERT_FALSE(poisson_is_singular(c.grid, o));
      std::vector<Real> mean_u(f.size()), corner_u(f.size()), strict_u(f.size());
      const PoissonResult r = PoissonPlan<Real>(this->context(2), c.grid, o).solve(f, mean_u);
      EXPECT_FALSE(r.mean_removed);
      EXPECT_NEAR(r.mean, 0.25, 1e-6);  // still reported
      o.gauge = Gauge::corner;
      PoissonPlan<Real>(this->context(2), c.grid, o).solve(f, corner_u);
      EXPECT_EQ(std::memcmp(mean_u.data(), corner_u.data(), f.size() * sizeof(Real)), 0);
      EXPECT_NE(corner_u[0], Real(0));
      o.strict = true;
      EXPECT_NO_THROW(PoissonPlan<Real>(this->context(2), c.grid, o).solve(f, strict_u));
    }
  }
  const PoissonGrid neumann{{9, 12}, {}, {Boundary::neumann, Boundary::periodic}};
  PoissonOptions o;
  ASSERT_TRUE(poisson_is_singular(neumann, o));
  std::vector<Real> u(f.size()), u_zero(f.size());
  const PoissonResult removed = PoissonPlan<Real>(this->context(2), neumann, o).solve(f, u);
  EXPECT_TRUE(removed.mean_removed);
  EXPECT_NE(describe_removed_mean(removed, neumann.boundaries)
                .find("lap(u) = f has no solution with boundaries neumann,periodic"),
            std::string::npos);
  PoissonPlan<Real>(this->context(2), neumann, o).solve(zero_mean, u_zero);
  // The constant removed: the solution of the mean-zero f, within the bound of two solvers (the
  // constant changes only the roundings of the transforms).
  expect_close(neumann, u_zero, u,
               poisson_agreement_bound<Real>(neumann, o, max_abs(f), max_abs(u)), "mean removed");
  o.gauge = Gauge::corner;
  PoissonPlan<Real>(this->context(2), neumann, o).solve(f, u);
  EXPECT_EQ(u[0], Real(0));
  o.strict = true;
  std::vector<Real> untouched(f.size(), Real(42));
  try {
    PoissonPlan<Real>(this->context(2), neumann, o).solve(f, untouched);
    ADD_FAILURE() << "strict took a non-zero mean";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("has no solution with boundaries neumann,periodic"),
              std::string::npos)
        << e.what();
  }
  for (const Real x : untouched) ASSERT_EQ(x, Real(42));
}

// Helmholtz's constant mode: on periodic and neumann axes a constant f = c is the k = 0 mode, so
// u = -c / lambda everywhere; a large lambda makes u -f / lambda to first order.
TYPED_TEST_P(PoissonBoundariesTest, HelmholtzConstantModeAndLargeLambda) {
  using Real = typename TypeParam::Element;
  const double eps = std::numeric_limits<Real>::epsilon();
  for (const auto& boundaries :
       {std::vector<Boundary>{Boundary::periodic, Boundary::neumann},
        std::vector<Boundary>{Boundary::neumann, Boundary::neumann, Boundary::periodic},
        std::vector<Boundary>{Boundary::periodic, Boundary::periodic}}) {
    const PoissonGrid g{std::vector<std::int64_t>(boundaries.size(), 10), {}, boundaries};
    for (const Operator op : kOperators) {
      for (const double lambda : {0.75, 1e6}) {
        PoissonOptions o;
        o.op = op;
        o.helmholtz = lambda;
        SCOPED_TRACE(describe(g, o));
        const std::vector<Real> f(static_cast<std::size_t>(g.size()), Real(3));
        std::vector<Real> u(f.size(), std::numeric_limits<Real>::quiet_NaN());
        PoissonPlan<Real>(this->context(2), g, o).solve(f, u);
        const double exact = -3 / lambda;
        expect_close(g, std::vector<double>(f.size(), exact), u,
                     poisson_agreement_bound<Real>(g, o, 3.0, std::fabs(exact)), "constant");
        ASSERT_LT(poisson_agreement_bound<Real>(g, o, 3.0, std::fabs(exact)),
                  1e-3 * std::fabs(exact) + 64 * eps);
      }
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(PoissonBoundariesTest, ManufacturedModesOfEveryBoundaryCombination,
                            Fd2SolvesTheSparseStencilSystemEveryElement,
                            ReferenceAndCheckOfEveryCombination, MeanRuleOnlyForSingularProblems,
                            HelmholtzConstantModeAndLargeLambda);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(PoissonBoundariesTest, float, double);

// --- CPU only: the rules of the front doors ------------------------------------------------------

TEST(PoissonBoundaryRules, AxisBoundariesTakeOneNameForEveryAxisOrOnePerAxis) {
  using B = Boundary;
  EXPECT_EQ(axis_boundaries("boundary", "", 2), (std::vector<B>{B::periodic, B::periodic}));
  EXPECT_EQ(axis_boundaries("boundary", "dirichlet", 3),
            (std::vector<B>{B::dirichlet, B::dirichlet, B::dirichlet}));
  EXPECT_EQ(axis_boundaries("boundary", "neumann,periodic", 2),
            (std::vector<B>{B::neumann, B::periodic}));
  EXPECT_EQ(axis_boundaries("boundary", "periodic,dirichlet,neumann", 3),
            (std::vector<B>{B::periodic, B::dirichlet, B::neumann}));
  // Rank 0: the names checked only, as given (a front door's parse-time check).
  EXPECT_EQ(axis_boundaries("--boundary", "neumann,dirichlet,neumann", 0),
            (std::vector<B>{B::neumann, B::dirichlet, B::neumann}));
  const auto message = [](std::string_view name, std::string_view text, int rank) {
    try {
      axis_boundaries(name, text, rank);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("--boundary", "dirichlet,neumann", 3),
            "--boundary gives 2 values for a grid of 3 axes: give one for every axis, or one per "
            "axis");
  EXPECT_EQ(message("boundary", "wall", 2),
            "boundary: unknown boundary 'wall' (known: periodic, dirichlet, neumann)");
  EXPECT_EQ(message("--boundary", "dirichlet,", 0),
            "--boundary: unknown boundary '' (known: periodic, dirichlet, neumann)");
  EXPECT_EQ(message("--boundary", "Dirichlet", 2),
            "--boundary: unknown boundary 'Dirichlet' (known: periodic, dirichlet, neumann)");
  for (const B b : kBoundaries) EXPECT_EQ(parse_boundary(boundary_name(b)), b);
  EXPECT_THROW(parse_boundary("free"), InvalidInput);
}

TEST(PoissonBoundaryRules, OperatorAndHelmholtz) {
  for (const Operator op : kOperators) EXPECT_EQ(parse_operator(operator_name(op)), op);
  try {
    parse_operator("fd4");
    ADD_FAILURE() << "fd4 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "poisson: unknown operator 'fd4' (known: spectral, fd2)");
  }
  try {
    parse_operator("FD2", "--operator");
    ADD_FAILURE() << "FD2 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "--operator: unknown operator 'FD2' (known: spectral, fd2)");
  }
  EXPECT_EQ(helmholtz_lambda("helmholtz", 0.0), 0.0);
  EXPECT_EQ(helmholtz_lambda("helmholtz", 2.5), 2.5);
  try {
    helmholtz_lambda("--helmholtz", -1);
    ADD_FAILURE() << "-1 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "--helmholtz must be finite and >= 0, got -1");
  }
  const PoissonGrid g{{4, 6}, {}};
  for (const double bad : {-1e-300, -1.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(helmholtz_lambda("helmholtz", bad), InvalidInput) << bad;
    PoissonOptions o;
    o.helmholtz = bad;
    EXPECT_THROW(PoissonPlan<double>(Context::cpu(1), g, o), InvalidInput) << bad;
  }
}

TEST(PoissonBoundaryRules, GridsNameTheirBoundariesAndCountThem) {
  EXPECT_EQ((PoissonGrid{{64, 48}, {1.0, 2.0}}.describe()), "64x48 (lengths 1x2)");
  EXPECT_EQ(
      (PoissonGrid{{64, 48}, {1.0, 2.0}, {Boundary::periodic, Boundary::periodic}}.describe()),
      "64x48 (lengths 1x2)");
  EXPECT_EQ((PoissonGrid{{64, 48}, {}, {Boundary::dirichlet, Boundary::neumann}}.describe()),
            "64x48 (lengths 1x1, boundaries dirichlet,neumann)");
  EXPECT_THROW(validate_grid({{8, 8}, {}, {Boundary::dirichlet}}), InvalidInput);
  EXPECT_THROW(
      validate_grid({{8, 8}, {}, {Boundary::dirichlet, Boundary::dirichlet, Boundary::neumann}}),
      InvalidInput);
  EXPECT_NO_THROW(
      validate_grid({{8, 8, 2}, {}, {Boundary::dirichlet, Boundary::periodic, Boundary::neumann}}));
  // Singular: no dirichlet axis and lambda 0, whatever the operator.
  PoissonOptions o;
  EXPECT_TRUE(poisson_is_singular({{8, 8}, {}}, o));
  EXPECT_TRUE(poisson_is_singular({{8, 8}, {}, {Boundary::neumann, Boundary::periodic}}, o));
  EXPECT_FALSE(poisson_is_singular({{8, 8}, {}, {Boundary::neumann, Boundary::dirichlet}}, o));
  o.op = Operator::fd2;
  EXPECT_TRUE(poisson_is_singular({{8, 8}, {}, {Boundary::neumann, Boundary::neumann}}, o));
  o.helmholtz = 1e-12;
  EXPECT_FALSE(poisson_is_singular({{8, 8}, {}}, o));
}

// The agreement bound of the seed's problem keeps its bits; other problems take the smallest
// eigenvalue magnitude divided by (mu_min) and the transforms' FFT lengths, as documented.
TEST(PoissonBoundaryRules, AgreementBoundOfEachProblem) {
  const double eps = std::numeric_limits<double>::epsilon(), pi = std::numbers::pi;
  const PoissonGrid periodic{{8, 16}, {1.0, 2.0}};
  const double seed_bound = 4 * 7 * eps * (1.0 + 2.0 * (2 / (2 * pi)) * (2 / (2 * pi)));
  EXPECT_EQ(poisson_agreement_bound<double>(periodic, 2.0, 1.0), seed_bound);
  EXPECT_EQ(poisson_agreement_bound<double>(periodic, PoissonOptions{}, 2.0, 1.0), seed_bound);
  // Dirichlet x neumann, spectral: M = 2 (8 + 1) * 2 * 16 = 576; mu_min = (pi / 1)^2 (dirichlet
  // k = 1) + lambda.
  const PoissonGrid walls{{8, 16}, {1.0, 2.0}, {Boundary::dirichlet, Boundary::neumann}};
  PoissonOptions o;
  o.helmholtz = 3;
  EXPECT_NEAR(poisson_agreement_bound<double>(walls, o, 2.0, 1.0),
              4 * std::log2(576.0) * eps * (1.0 + 2.0 / (pi * pi + 3)), 1e-12 * eps);
  // Neumann x periodic, fd2, lambda 0 (singular): the smaller first eigenvalue of the two axes,
  // neumann's (4 / h^2) sin^2(pi / 16) with h = 1 / 8, against periodic's (4 / h^2) sin^2(pi / 16)
  // with h = 2 / 16: equal here; M = 16 * 16.
  const PoissonGrid open{{8, 16}, {1.0, 2.0}, {Boundary::neumann, Boundary::periodic}};
  o = {};
  o.op = Operator::fd2;
  const double first = 4 * 64 * std::pow(std::sin(pi / 16), 2);
  EXPECT_NEAR(poisson_agreement_bound<double>(open, o, 2.0, 1.0), 4 * 8 * eps * (1.0 + 2.0 / first),
              1e-12 * eps);
}

// A CUDA plan solves every problem: the periodic spectral Poisson problem by the registry's
// variants, every other by the walls solver ("cufft-r2r", or its per-axis step
// "cufft-r2r-axes" when asked); a periodic variant asked for another problem is refused.
TEST(PoissonBoundaryRules, CudaPlansTakeTheWallsSolverForEveryOtherProblem) {
  GPUKIT_REQUIRE_GPU();
  PoissonOptions fd2;
  fd2.op = Operator::fd2;
  PoissonOptions helmholtz;
  helmholtz.helmholtz = 1;
  const PoissonGrid periodic{{8, 8}, {}},
      walls{{8, 8}, {}, {Boundary::dirichlet, Boundary::periodic}};
  const std::pair<PoissonGrid, PoissonOptions> others[] = {
      {walls, {}}, {periodic, fd2}, {periodic, helmholtz}};
  for (auto [g, o] : others) {
    EXPECT_EQ(PoissonPlan<double>(Context::cuda(0), g, o).variant(), "cufft-r2r") << describe(g, o);
    o.variant = "cufft-r2r-axes";
    EXPECT_EQ(PoissonPlan<double>(Context::cuda(0), g, o).variant(), "cufft-r2r-axes")
        << describe(g, o);
    o.variant = "fused";
    try {
      PoissonPlan<double>(Context::cuda(0), g, o);
      ADD_FAILURE() << "accepted fused for " << describe(g, o);
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("solves the periodic spectral Poisson problem only"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NE(PoissonPlan<double>(Context::cuda(0), periodic, {}).variant(), "cufft-r2r");
}

}  // namespace
}  // namespace gpukit::pde
