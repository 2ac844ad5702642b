// The distributed Poisson solver (gpukit/scale_out/poisson.hpp) across MPI ranks (run by CTest
// under `mpirun -np 1`, `-np 2` and `-np 3`; alone, every scenario runs with one rank): FFTW's MPI
// engine against the serial CPU solver (every element within poisson_agreement_bound, both gauges,
// 2D and 3D, float and double, grids whose rows do not divide among the ranks, some ranks holding
// no rows; every combination of periodic, dirichlet and neumann axes in 2D and a sample in 3D,
// both operators, Helmholtz), the same bits run after run, the mean rule's sums bit for bit,
// strict and NaN refusals identical to the serial solver's on every rank (and the mean rule of
// grids with walls: singular ones only), the refusal of walls spread over several GPUs, the
// scale-out calls (arrays in memory: every rank the whole u; files), and the collective .npy
// reading and writing by slabs. (The failure rule itself:
// tests/distributed/communicator_mpi_test.cpp.)
//
// Every rank computes the whole serial solution itself (the grids are small) and checks its own
// slab. No assertion returns early between collectives, so a failure on one rank cannot leave
// the others waiting (CTest's timeout is the last resort).

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../pde/poisson_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/scale_out/job.hpp"
#include "gpukit/scale_out/npy_rows.hpp"
#include "gpukit/scale_out/poisson.hpp"
#include "test_seed.hpp"

namespace gpukit::pde {
namespace {

using scale_out::DistributedPoissonPlan;
using scale_out::slab_range;
using scale_out::SlabRange;

distributed::Communicator& group() { return distributed::Communicator::world(); }

std::string where() {
  return "rank " + std::to_string(group().rank()) + " of " + std::to_string(group().size());
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class Real>
class DistributedPoissonMpi : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DistributedPoissonMpi, Reals);

// The slab of this rank of the whole-grid vector v.
template <class T>
std::vector<T> slab_of(const std::vector<T>& v, const DistributedPoissonPlan<T>& plan) {
  const SlabRange s = plan.slab(0);
  const auto row = static_cast<std::size_t>(plan.row_elements());
  return {
      v.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s.begin) * row),
      v.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s.begin + s.count) * row)};
}

TYPED_TEST(DistributedPoissonMpi, EqualsTheSerialSolveWithinTheBound) {
  using Real = TypeParam;
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  // Rows of axis 0 that 2 and 3 ranks do not divide, and grids with fewer rows than ranks.
  const PoissonGrid grids[] = {{{13, 10}, {1.0, 2.0}}, {{5, 9}, {}},           {{2, 7}, {3.0, 1.0}},
                               {{7, 6, 5}, {}},        {{9, 4, 6}, {1, 2, 3}}, {{2, 3, 4}, {}},
                               {{16, 8, 12}, {}}};
  for (const PoissonGrid& g : grids) {
    for (const Gauge gauge : {Gauge::mean, Gauge::corner}) {
      SCOPED_TRACE(g.describe() + " gauge " + std::string(gauge_name(gauge)));
      PoissonOptions options;
      options.gauge = gauge;
      const std::vector<Real> f = testing::random_rhs<Real>(g.size(), seed.value() + g.size());
      std::vector<Real> serial(f.size());
      const PoissonResult expected =
          PoissonPlan<Real>(Context::cpu(1), g, options).solve(f, serial);
      DistributedPoissonPlan<Real> plan(Context::cpu(1), g, options, group());
      EXPECT_EQ(plan.parts(), group().size());
      EXPECT_EQ(plan.engine(), group().size() == 1 ? "cpu-fftw" : "fftw-mpi");
      const std::vector<Real> f_slab = slab_of(f, plan);
      std::vector<Real> u_slab(f_slab.size(), std::numeric_limits<Real>::quiet_NaN());
      const PoissonResult got = plan.solve(std::span<const Real>(f_slab), std::span<Real>(u_slab));
      EXPECT_TRUE(same_bits(got.mean, expected.mean)) << got.mean << " vs " << expected.mean;
      EXPECT_TRUE(same_bits(got.mean_abs, expected.mean_abs));
      EXPECT_EQ(got.mean_removed, expected.mean_removed);
      const double bound =
          poisson_agreement_bound<Real>(g, testing::max_abs(f), testing::max_abs(serial));
      testing::expect_close(g, slab_of(serial, plan), u_slab, bound, "distributed vs serial");
      if (gauge == Gauge::corner && plan.slab(0).begin == 0 && !u_slab.empty()) {
        EXPECT_EQ(u_slab[0], Real(0));
      }
      // In place (u is f), a second solve with the same plan: the same bits.
      std::vector<Real> in_place = f_slab;
      plan.solve(std::span<const Real>(in_place), std::span<Real>(in_place));
      EXPECT_EQ(std::memcmp(in_place.data(), u_slab.data(), u_slab.size() * sizeof(Real)), 0);
    }
  }
}

// Walls, fd2 and Helmholtz (issue 34): every combination of boundaries in 2D and a sample in 3D,
// both operators, lambda 0 and not, on grids whose axis 0 the ranks do not divide (and one with
// fewer rows than 3 ranks), against the serial CPU plan within poisson_agreement_bound, every
// element; mean_removed as the serial plan's; a second plan the same bits (and in place). f has
// a non-zero mean where the problem is nonsingular, so a constant mode dropped there would show;
// the corner gauge where it is singular, so a gauge applied to a nonsingular problem would show.
TYPED_TEST(DistributedPoissonMpi, WallsFd2AndHelmholtzEqualTheSerialSolveWithinTheBound) {
  using Real = TypeParam;
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  std::vector<PoissonGrid> grids;
  for (const std::vector<Boundary>& b : testing::every_combination(2)) {
    grids.push_back({{13, 10}, {1.0, 2.0}, b});
    grids.push_back({{2, 7}, {3.0, 1.0}, b});
  }
  using B = Boundary;
  for (const std::vector<Boundary>& b : {std::vector{B::dirichlet, B::neumann, B::periodic},
                                         {B::neumann, B::neumann, B::neumann},
                                         {B::periodic, B::dirichlet, B::neumann},
                                         {B::neumann, B::periodic, B::dirichlet},
                                         {B::dirichlet, B::dirichlet, B::dirichlet},
                                         {B::periodic, B::periodic, B::neumann}}) {
    grids.push_back({{7, 6, 5}, {1.0, 0.5, 2.0}, b});
    grids.push_back({{5, 9, 1}, {}, b});
  }
  std::uint64_t case_seed = seed.value();
  for (const PoissonGrid& g : grids) {
    for (const Operator op : testing::kOperators) {
      for (const double lambda : {0.0, 2.5}) {
        PoissonOptions options;
        options.op = op;
        options.helmholtz = lambda;
        const bool singular = poisson_is_singular(g, options);
        options.gauge = singular ? Gauge::corner : Gauge::mean;
        SCOPED_TRACE(g.describe() + " " + std::string(operator_name(op)) + " lambda " +
                     std::to_string(lambda) + " seed " + std::to_string(case_seed));
        std::vector<Real> f = testing::random_rhs<Real>(g.size(), case_seed++);
        if (!singular) {
          for (Real& x : f) x += Real(0.25);
        }
        std::vector<Real> serial(f.size());
        const PoissonResult expected =
            PoissonPlan<Real>(Context::cpu(1), g, options).solve(f, serial);
        DistributedPoissonPlan<Real> plan(Context::cpu(1), g, options, group());
        EXPECT_EQ(plan.engine(), group().size() == 1 ? "cpu-fftw" : "fftw-mpi");
        const std::vector<Real> f_slab = slab_of(f, plan);
        std::vector<Real> u_slab(f_slab.size(), std::numeric_limits<Real>::quiet_NaN());
        const PoissonResult got =
            plan.solve(std::span<const Real>(f_slab), std::span<Real>(u_slab));
        EXPECT_TRUE(same_bits(got.mean, expected.mean)) << got.mean << " vs " << expected.mean;
        EXPECT_EQ(got.mean_removed, expected.mean_removed);
        const double bound = poisson_agreement_bound<Real>(g, options, testing::max_abs(f),
                                                           testing::max_abs(serial));
        testing::expect_close(g, slab_of(serial, plan), u_slab, bound, "distributed vs serial");
        // Run after run the same bits: a second plan, in place.
        std::vector<Real> again = f_slab;
        DistributedPoissonPlan<Real>(Context::cpu(1), g, options, group())
            .solve(std::span<const Real>(again), std::span<Real>(again));
        EXPECT_EQ(std::memcmp(again.data(), u_slab.data(), u_slab.size() * sizeof(Real)), 0);
      }
    }
  }
}

// The mean rule's sums on cancelling data over several tiles: the serial solver's bits for any
// rank count, so the warning and --strict decide alike.
TYPED_TEST(DistributedPoissonMpi, MeanSumsAndTheWarningAreTheSerialOnes) {
  using Real = TypeParam;
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  const PoissonGrid grids[] = {{{129, 257}, {}}, {{17, 31, 33}, {}}, {{3, 5}, {}}};
  for (const PoissonGrid& g : grids) {
    SCOPED_TRACE(g.describe());
    std::mt19937_64 rng(seed.value() + static_cast<std::uint64_t>(g.size()));
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<Real> f(static_cast<std::size_t>(g.size()));
    for (std::size_t i = 0; i < f.size(); ++i) {
      f[i] = static_cast<Real>(std::ldexp(dist(rng), int(rng() % 30)));
    }
    f[f.size() / 2] += Real(1);  // a mean far from zero: removed with a warning
    std::vector<Real> serial(f.size());
    const PoissonResult expected = PoissonPlan<Real>(Context::cpu(1), g).solve(f, serial);
    DistributedPoissonPlan<Real> plan(Context::cpu(1), g, {}, group());
    const std::vector<Real> f_slab = slab_of(f, plan);
    std::vector<Real> u_slab(f_slab.size());
    const PoissonResult got = plan.solve(std::span<const Real>(f_slab), std::span<Real>(u_slab));
    EXPECT_TRUE(same_bits(got.mean, expected.mean)) << got.mean << " vs " << expected.mean;
    EXPECT_TRUE(same_bits(got.mean_abs, expected.mean_abs));
    EXPECT_TRUE(same_bits(got.mean_tolerance, expected.mean_tolerance));
    EXPECT_EQ(got.mean_removed, expected.mean_removed);
    EXPECT_EQ(describe_removed_mean(got), describe_removed_mean(expected));
  }
}

// The message of the InvalidInput `call` throws; "(nothing thrown)" when it throws none.
template <class Call>
std::string invalid_input_of(Call call) {
  try {
    call();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// The serial solver's refusal, or nullopt.
template <class Real>
std::optional<std::string> serial_refusal(const PoissonGrid& g, const PoissonOptions& options,
                                          const std::vector<Real>& f) {
  std::vector<Real> u(f.size());
  try {
    PoissonPlan<Real>(Context::cpu(1), g, options).solve(f, u);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return std::nullopt;
}

TYPED_TEST(DistributedPoissonMpi, StrictAndNonFiniteRefusalsAreTheSerialOnesOnEveryRank) {
  using Real = TypeParam;
  SCOPED_TRACE(where());
  const PoissonGrid g{{7, 5, 3}, {}};
  struct Case {
    const char* what;
    std::int64_t index;  // of the bad element; -1: a non-zero mean with strict
    Real value;
  } cases[] = {{"nan in the last row", g.size() - 2, std::numeric_limits<Real>::quiet_NaN()},
               {"inf in the first row", 4, std::numeric_limits<Real>::infinity()},
               {"nan and -inf: the first is named", -2, Real(0)},
               {"strict", -1, Real(0)}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<Real> f = testing::random_rhs<Real>(g.size(), 99);
    PoissonOptions options;
    if (c.index >= 0) f[static_cast<std::size_t>(c.index)] = c.value;
    if (c.index == -2) {
      f[70] = std::numeric_limits<Real>::quiet_NaN();
      f[100] = -std::numeric_limits<Real>::infinity();
    }
    if (c.index == -1) {
      options.strict = true;
      for (Real& x : f) x += Real(0.5);
    }
    const std::optional<std::string> expected = serial_refusal<Real>(g, options, f);
    ASSERT_TRUE(expected.has_value());
    DistributedPoissonPlan<Real> plan(Context::cpu(1), g, options, group());
    const std::vector<Real> f_slab = slab_of(f, plan);
    std::vector<Real> u_slab(f_slab.size(), Real(7));
    EXPECT_EQ(invalid_input_of(
                  [&] { plan.solve(std::span<const Real>(f_slab), std::span<Real>(u_slab)); }),
              *expected);
    for (const Real x : u_slab) EXPECT_EQ(x, Real(7)) << "u was written";
  }
}

// The mean rule on grids with walls, as the serial plan applies it: a singular problem (no
// dirichlet axis, lambda 0) removes a non-zero mean with the serial plan's warning, or refuses it
// with `strict` in the serial plan's words (naming the boundaries) on every rank, u untouched; a
// nonsingular one (a dirichlet axis, or lambda > 0) removes nothing and refuses nothing, and its
// corner gauge changes nothing.
TYPED_TEST(DistributedPoissonMpi, TheMeanRuleOfWallsIsTheSerialOneOnEveryRank) {
  using Real = TypeParam;
  SCOPED_TRACE(where());
  using B = Boundary;
  struct Case {
    PoissonGrid grid;
    double lambda;
  } cases[] = {{{{11, 6}, {}, {B::neumann, B::neumann}}, 0},
               {{{7, 5, 3}, {}, {B::periodic, B::neumann, B::periodic}}, 0},
               {{{11, 6}, {}, {B::neumann, B::dirichlet}}, 0},
               {{{7, 5, 3}, {}, {B::neumann, B::neumann, B::neumann}}, 1.5}};
  for (const Case& c : cases) {
    for (const bool strict : {false, true}) {
      const PoissonGrid& g = c.grid;
      PoissonOptions options;
      options.helmholtz = c.lambda;
      options.strict = strict;
      options.gauge = Gauge::corner;
      const bool singular = poisson_is_singular(g, options);
      SCOPED_TRACE(g.describe() + " lambda " + std::to_string(c.lambda) +
                   (strict ? " strict" : ""));
      std::vector<Real> f = testing::random_rhs<Real>(g.size(), 17);
      for (Real& x : f) x += Real(0.5);  // a mean far from zero
      const std::optional<std::string> refusal = serial_refusal<Real>(g, options, f);
      EXPECT_EQ(refusal.has_value(), singular && strict);
      DistributedPoissonPlan<Real> plan(Context::cpu(1), g, options, group());
      const std::vector<Real> f_slab = slab_of(f, plan);
      std::vector<Real> u_slab(f_slab.size(), Real(7));
      if (refusal) {
        const std::string message = invalid_input_of(
            [&] { plan.solve(std::span<const Real>(f_slab), std::span<Real>(u_slab)); });
        EXPECT_EQ(message, *refusal);
        EXPECT_NE(message.find("has no solution with boundaries"), std::string::npos) << message;
        for (const Real x : u_slab) EXPECT_EQ(x, Real(7)) << "u was written";
        continue;
      }
      std::vector<Real> serial(f.size());
      const PoissonResult expected =
          PoissonPlan<Real>(Context::cpu(1), g, options).solve(f, serial);
      const PoissonResult got = plan.solve(std::span<const Real>(f_slab), std::span<Real>(u_slab));
      EXPECT_EQ(got.mean_removed, singular);
      EXPECT_EQ(got.mean_removed, expected.mean_removed);
      EXPECT_TRUE(same_bits(got.mean_tolerance, expected.mean_tolerance));
      EXPECT_EQ(describe_removed_mean(got, g.boundaries),
                describe_removed_mean(expected, g.boundaries));
      const double bound =
          poisson_agreement_bound<Real>(g, options, testing::max_abs(f), testing::max_abs(serial));
      testing::expect_close(g, slab_of(serial, plan), u_slab, bound, "distributed vs serial");
      // The corner gauge: u[0, ..., 0] = 0 when singular; nothing subtracted otherwise.
      if (plan.slab(0).begin == 0 && !u_slab.empty()) {
        EXPECT_EQ(u_slab[0] == Real(0), singular) << u_slab[0];
      }
    }
  }
}

// Several GPUs do not solve walls, fd2 or Helmholtz yet: refused on every rank, before any device
// is looked at (so with or without a GPU), in words that say what solves them.
TEST(DistributedPoissonMpiCuda, WallsSpreadOverSeveralGpusAreRefusedOnEveryRank) {
  SCOPED_TRACE(where());
  if (group().size() == 1) GTEST_SKIP() << "one rank, one GPU: the single-device plan";
  const PoissonGrid g{{9, 14}, {}, {Boundary::neumann, Boundary::periodic}};
  EXPECT_EQ(invalid_input_of(
                [&] { DistributedPoissonPlan<double>(Context::cuda(0), g, {}, group(), {0}); }),
            "poisson: a solve spread over several GPUs does not yet solve "
            "dirichlet/neumann/fd2/helmholtz; use one GPU or mpirun on the CPU");
}

// The scale-out call on arrays: every rank passes the whole f and gets the whole u, within the
// bound of the serial solve (its bits on one rank).
TYPED_TEST(DistributedPoissonMpi, TheArraysCallGivesEveryRankTheWholeSolution) {
  using Real = TypeParam;
  SCOPED_TRACE(where());
  const scale_out::Job job = scale_out::join_job("cpu", 1, group());
  const PoissonGrid g{{11, 6, 5}, {1.0, 2.0, 0.5}};
  const std::vector<Real> f = testing::random_rhs<Real>(g.size(), 31);
  std::vector<Real> serial(f.size()), u(f.size(), std::numeric_limits<Real>::quiet_NaN());
  PoissonPlan<Real>(Context::cpu(1), g).solve(f, serial);
  scale_out::PoissonSpread spread;
  scale_out::solve_poisson<Real>(job, g, {}, f, u,
                                 [&](const scale_out::PoissonSpread& s) { spread = s; });
  EXPECT_EQ(spread.ranks, group().size());
  EXPECT_EQ(static_cast<int>(spread.rows.size()), group().size());
  const double bound =
      poisson_agreement_bound<Real>(g, testing::max_abs(f), testing::max_abs(serial));
  testing::expect_close(g, serial, u, bound, "arrays call vs serial");
  if (group().size() == 1) {
    EXPECT_EQ(std::memcmp(serial.data(), u.data(), u.size() * sizeof(Real)), 0);
  }
}

// The collective .npy reader and writer: each rank writes its rows, rank 0 renames; the file
// is what write_npy writes for the whole array. A refusal anywhere leaves no file.
TEST(DistributedNpy, RowsWrittenByEveryRankMakeTheWholeFile) {
  SCOPED_TRACE(where());
  distributed::Communicator& g = group();
  std::int64_t pid = ::getpid();
  g.broadcast_value(pid, 0);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpukit_npy_mpi_" + std::to_string(pid));
  if (g.rank() == 0) std::filesystem::create_directories(dir);
  g.barrier();
  const std::int64_t shape[] = {7, 3, 2};
  std::vector<double> whole(42);
  for (std::size_t i = 0; i < whole.size(); ++i) whole[i] = 0.25 * double(i) - 3;
  const SlabRange rows = slab_range(7, g.size(), g.rank());
  const std::span<const double> mine = std::span(whole).subspan(
      static_cast<std::size_t>(rows.begin * 6), static_cast<std::size_t>(rows.count * 6));
  scale_out::write_npy_rows_collectively(g, dir / "u.npy", io::NpyDtype::float64, shape, rows.begin,
                                         std::as_bytes(mine));
  if (g.rank() == 0) {
    io::write_npy<double>(dir / "expected.npy", shape, whole);
    const io::NpyArray a = io::read_npy(dir / "u.npy");
    const io::NpyArray b = io::read_npy(dir / "expected.npy");
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(std::memcmp(a.bytes(), b.bytes(), a.byte_size()), 0);
  }
  // Each rank reads its rows back.
  constexpr io::NpyDtype kDouble[] = {io::NpyDtype::float64};
  const io::NpyArray back = scale_out::read_npy_rows_collectively(
      g, dir / "u.npy", {kDouble, "test"}, rows.begin, rows.count);
  EXPECT_EQ(std::memcmp(back.bytes(), mine.data(), mine.size_bytes()), 0);
  // A file one rank cannot read (truncated: the header says more than there is) fails every rank.
  if (g.rank() == 0) std::filesystem::resize_file(dir / "expected.npy", 200);
  g.barrier();
  EXPECT_THROW(scale_out::read_npy_rows_collectively(g, dir / "expected.npy", {kDouble, "test"},
                                                     rows.begin, rows.count),
               Error);
  // An output nobody may write into (a missing directory): every rank fails, nothing is left.
  EXPECT_THROW(
      scale_out::write_npy_rows_collectively(g, dir / "missing" / "u.npy", io::NpyDtype::float64,
                                             shape, rows.begin, std::as_bytes(mine)),
      Error);
  g.barrier();
  if (g.rank() == 0) {
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
    EXPECT_EQ(files, 2u);  // u.npy and expected.npy, no temporary
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace gpukit::pde

// MPI starts when mpirun started the test (and ends after the tests), as in gpukit's main().
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const gpukit::distributed::Environment environment(argc, argv);
  return RUN_ALL_TESTS();
}
