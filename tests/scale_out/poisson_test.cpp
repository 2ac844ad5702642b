// The distributed Poisson solver's parts that one process can test (gpukit/scale_out/poisson.hpp):
// the slab partition (FFTW's block distribution, written out independently), the canonical sums
// of an array split into parts against the serial tree over the whole array (bit for bit), the
// one-part plan against the single-device plan (the same bits), the scale-out calls on a job of
// one CPU worker (the single-device bits), and the collective .npy writer in a job of one. The MPI
// scenarios are in poisson_mpi_test.cpp (run under mpirun).

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "../pde/poisson_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "gpukit/scale_out/job.hpp"
#include "gpukit/scale_out/npy_rows.hpp"
#include "gpukit/scale_out/poisson.hpp"
#include "scale_out/slab_layout.hpp"
#include "scale_out/tile_sums.hpp"
#include "test_seed.hpp"

namespace gpukit::pde {
namespace {

namespace canonical = primitives::canonical;
namespace slabs = scale_out::detail;
using scale_out::DistributedPoissonPlan;
using scale_out::slab_block;
using scale_out::slab_range;
using scale_out::SlabRange;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// ---------------------------------------------------------------------------------------------
// The slab partition.

TEST(SlabPartition, IsFftwsBlockDistribution) {
  // Written out from FFTW's definition (mpi/block.c): block b = ceil(n / P); part p holds
  // min(b, max(0, n - p b)) rows from p b.
  EXPECT_EQ(slab_block(10, 4), 3);
  const SlabRange ten_of_four[] = {{0, 3}, {3, 3}, {6, 3}, {9, 1}};
  for (int p = 0; p < 4; ++p) EXPECT_EQ(slab_range(10, 4, p), ten_of_four[p]) << p;
  const SlabRange five_of_four[] = {{0, 2}, {2, 2}, {4, 1}, {5, 0}};
  for (int p = 0; p < 4; ++p) EXPECT_EQ(slab_range(5, 4, p), five_of_four[p]) << p;
  const SlabRange four_of_three[] = {{0, 2}, {2, 2}, {4, 0}};
  for (int p = 0; p < 3; ++p) EXPECT_EQ(slab_range(4, 3, p), four_of_three[p]) << p;
  EXPECT_EQ(slab_range(7, 1, 0), (SlabRange{0, 7}));
}

TEST(SlabPartition, TilesEveryAxisOnceInPartOrder) {
  for (std::int64_t n = 1; n <= 70; ++n) {
    for (int parts = 1; parts <= 9; ++parts) {
      std::int64_t next = 0;
      for (int p = 0; p < parts; ++p) {
        const SlabRange r = slab_range(n, parts, p);
        ASSERT_GE(r.count, 0);
        ASSERT_LE(r.count, slab_block(n, parts));
        if (r.count > 0) {
          ASSERT_EQ(r.begin, next) << n << " rows, part " << p << " of " << parts;
        }
        next = r.count > 0 ? r.begin + r.count : next;
      }
      ASSERT_EQ(next, n) << n << " rows in " << parts << " parts";
      // Part 0 always holds row 0 (the corner gauge's value lives there).
      ASSERT_GE(slab_range(n, parts, 0).count, 1);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The CUDA engine's data movement (slab_layout.hpp), replayed on the host: the packing of each
// part's A = (rows, M, T), the forward transpose's blocks, the inverse's, the unpacking, exactly
// as the engine issues them (cudaMemcpy2DAsync per Copy2D, one send/recv or peer copy per Block).
// Every value is tagged with its place in the whole spectrum, so each one is checked where it
// lands: B_q must hold every row of axis 0 for columns C_q (the layout the transform along axis 0
// and the scaling kernel assume), and the inverse must restore A exactly.

void copy_2d(std::vector<std::int64_t>& destination, const std::vector<std::int64_t>& source,
             const slabs::SlabLayout::Copy2D& k) {
  for (std::int64_t r = 0; r < k.height; ++r) {
    for (std::int64_t w = 0; w < k.width; ++w) {
      destination.at(static_cast<std::size_t>(k.destination_offset + r * k.destination_pitch + w)) =
          source.at(static_cast<std::size_t>(k.source_offset + r * k.source_pitch + w));
    }
  }
}

TEST(SlabLayout, TransposesPutEveryValueInPlaceAndBack) {
  const PoissonGrid grids[] = {{{7, 10}, {}},   {{2, 9}, {}},    {{5, 4, 6}, {}},
                               {{9, 3, 5}, {}}, {{3, 8, 2}, {}}, {{16, 6, 4}, {}}};
  for (const PoissonGrid& g : grids) {
    for (int parts = 1; parts <= 5; ++parts) {
      SCOPED_TRACE(g.describe() + ", " + std::to_string(parts) + " parts");
      const slabs::SlabLayout L(g, parts);
      // The tag of spectrum value (x, y, z): its index in the whole (n0, M, T) array.
      auto tag = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        return (x * L.m + y) * L.t + z;
      };
      std::vector<std::vector<std::int64_t>> a(parts), send(parts), work(parts);
      for (int p = 0; p < parts; ++p) {
        const SlabRange r = L.rows(p);
        a[p].resize(static_cast<std::size_t>(L.a_elements(p)));
        for (std::int64_t x = 0; x < r.count; ++x)
          for (std::int64_t y = 0; y < L.m; ++y)
            for (std::int64_t z = 0; z < L.t; ++z)
              a[p][static_cast<std::size_t>((x * L.m + y) * L.t + z)] = tag(r.begin + x, y, z);
        send[p].assign(static_cast<std::size_t>(L.send_elements(p)), -1);
        work[p].assign(static_cast<std::size_t>(L.work_elements(p)), -1);
        for (int q = 0; q < parts; ++q) copy_2d(send[p], a[p], L.pack(p, q));
      }
      auto move = [&](bool forward) {
        for (int from = 0; from < parts; ++from) {
          for (int to = 0; to < parts; ++to) {
            const auto b = L.block(from, to, forward);
            const auto& source = forward ? send[from] : work[from];
            auto& destination = forward ? work[to] : send[to];
            for (std::int64_t k = 0; k < b.count; ++k)
              destination.at(static_cast<std::size_t>(b.destination_offset + k)) =
                  source.at(static_cast<std::size_t>(b.source_offset + k));
          }
        }
      };
      move(true);
      for (int q = 0; q < parts; ++q) {
        const SlabRange c = L.columns(q);
        for (std::int64_t x = 0; x < L.n0; ++x)
          for (std::int64_t y = 0; y < c.count; ++y)
            for (std::int64_t z = 0; z < L.t; ++z)
              ASSERT_EQ(work[q][static_cast<std::size_t>((x * c.count + y) * L.t + z)],
                        tag(x, c.begin + y, z))
                  << "B of part " << q << " at " << x << ", " << y << ", " << z;
      }
      for (int p = 0; p < parts; ++p) std::ranges::fill(send[p], -1);
      move(false);
      for (int p = 0; p < parts; ++p) {
        std::vector<std::int64_t> back(a[p].size(), -1);
        for (int q = 0; q < parts; ++q) copy_2d(back, send[p], L.unpack(p, q));
        ASSERT_EQ(back, a[p]) << "part " << p;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The canonical sums of a split array.

// Data whose plain sum loses its small part: pairs +b, -b over thirty binades and a quarter of
// small values, shuffled (as poisson_test.cpp's bit-for-bit test of the serial sums).
template <class Real>
std::vector<Real> cancelling(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<Real> f(static_cast<std::size_t>(n));
  std::size_t i = 0;
  for (; i + 1 < f.size() - f.size() / 4; i += 2) {
    f[i] = static_cast<Real>(std::ldexp(dist(rng), int(rng() % 30)));
    f[i + 1] = -f[i];
  }
  for (; i < f.size(); ++i) f[i] = static_cast<Real>(std::ldexp(dist(rng), -20));
  std::shuffle(f.begin(), f.end(), rng);
  return f;
}

template <class Real>
void expect_split_sums_equal_whole(std::int64_t n, const std::vector<std::int64_t>& cuts,
                                   std::uint64_t seed) {
  const std::vector<Real> f = cancelling<Real>(n, seed);
  const detail::MeanSums whole = detail::host_mean_sums<Real>(f, 1);
  std::vector<slabs::TileContribution> parts;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    parts.push_back(slabs::host_tile_contribution<Real>(
        std::span(f).subspan(static_cast<std::size_t>(cuts[k]),
                             static_cast<std::size_t>(cuts[k + 1] - cuts[k])),
        cuts[k], n, 2));
  }
  // Any order of the parts (rank 0 receives them in rank order, but the sums must not care).
  std::reverse(parts.begin(), parts.end());
  const detail::MeanSums split = slabs::combine_tile_contributions(parts, n);
  EXPECT_TRUE(same_bits(split.total(), whole.total()))
      << n << ": " << split.total() << " vs " << whole.total();
  EXPECT_TRUE(same_bits(split.abs_total(), whole.abs_total())) << n;
}

TEST(DistributedSums, EverySplitGivesTheWholeArraysBitsOverTheCanonicalTree) {
  const gpukit::testing::TestSeed seed;
  std::mt19937_64 rng(seed.value());
  const std::int64_t sizes[] = {1,
                                31,
                                canonical::kTile - 1,
                                canonical::kTile,
                                canonical::kTile + 1,
                                3 * canonical::kTile + 5,
                                40000,
                                20 * canonical::kTile + 3};
  for (const std::int64_t n : sizes) {
    for (int parts = 1; parts <= 5; ++parts) {
      // Slab-like cuts (equal blocks), then random cuts anywhere (inside tiles, on tile
      // boundaries, empty parts).
      std::vector<std::int64_t> cuts = {0};
      for (int p = 0; p < parts; ++p) {
        const SlabRange r = slab_range(n, parts, p);
        cuts.push_back(r.begin + r.count);
      }
      std::ranges::sort(cuts);
      expect_split_sums_equal_whole<double>(n, cuts, seed.value() + static_cast<std::uint64_t>(n));
      std::vector<std::int64_t> random_cuts = {0, n};
      for (int p = 1; p < parts; ++p) {
        random_cuts.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1)));
      }
      if (parts == 3 && n > canonical::kTile) random_cuts.push_back(canonical::kTile);
      std::ranges::sort(random_cuts);
      expect_split_sums_equal_whole<float>(n, random_cuts, seed.value() + 7);
    }
  }
}

TEST(DistributedSums, WrongCoverageIsALogicError) {
  const std::vector<double> f(100, 1.0);
  const auto a = slabs::host_tile_contribution<double>(std::span(f).first(60), 0, 100, 1);
  const auto b = slabs::host_tile_contribution<double>(std::span(f).subspan(50), 50, 100, 1);
  const slabs::TileContribution twice[] = {a, b};
  EXPECT_THROW(slabs::combine_tile_contributions(twice, 100), std::logic_error);
  const slabs::TileContribution short_of_it[] = {a};
  EXPECT_THROW(slabs::combine_tile_contributions(short_of_it, 100), std::logic_error);
}

TEST(DistributedSums, SplitOfTilesAtTheEdges) {
  const std::int64_t T = canonical::kTile;
  // A part inside one tile: all of it is shared.
  auto s = slabs::split_tiles(10, 100, 3 * T);
  EXPECT_EQ(s.tile_count, 0);
  EXPECT_EQ(s.head, 100);
  // A part from inside tile 0 to the end: tiles 1 and 2 whole (the last one short).
  s = slabs::split_tiles(T / 2, 3 * T - 5 - T / 2, 3 * T - 5);
  EXPECT_EQ(s.first_tile, 1);
  EXPECT_EQ(s.tile_count, 2);
  EXPECT_EQ(s.head, T - T / 2);
  EXPECT_EQ(s.tail_begin, 3 * T - 5 - T / 2);
  // A part of exactly tile 1.
  s = slabs::split_tiles(T, T, 3 * T);
  EXPECT_EQ(s.first_tile, 1);
  EXPECT_EQ(s.tile_count, 1);
  EXPECT_EQ(s.head, 0);
  EXPECT_EQ(s.tail_begin, T);
}

// ---------------------------------------------------------------------------------------------
// A job of one process.

// One part: the single-device plan itself, the same bits, the same result and the same refusals.
TEST(DistributedPoissonOnePart, IsTheSingleDevicePlanBitForBit) {
  const gpukit::testing::TestSeed seed;
  distributed::Communicator self;  // a job of one
  const PoissonGrid grids[] = {{{9, 14}, {1.0, 2.0}}, {{5, 6, 7}, {}}};
  for (const PoissonGrid& g : grids) {
    for (const Gauge gauge : {Gauge::mean, Gauge::corner}) {
      PoissonOptions options;
      options.gauge = gauge;
      const std::vector<double> f = testing::random_rhs<double>(g.size(), seed.value());
      std::vector<double> serial(f.size()), distributed(f.size(), std::nan(""));
      const PoissonResult a = PoissonPlan<double>(Context::cpu(1), g, options).solve(f, serial);
      DistributedPoissonPlan<double> plan(Context::cpu(1), g, options, self);
      EXPECT_EQ(plan.parts(), 1);
      EXPECT_EQ(plan.engine(), "cpu-fftw");
      EXPECT_EQ(plan.slab(0), (SlabRange{0, g.shape[0]}));
      const PoissonResult b =
          plan.solve(std::span<const double>(f), std::span<double>(distributed));
      EXPECT_TRUE(same_bits(a.mean, b.mean));
      EXPECT_EQ(std::memcmp(serial.data(), distributed.data(), f.size() * sizeof(double)), 0)
          << g.describe();
    }
  }
  PoissonOptions strict;
  strict.strict = true;
  DistributedPoissonPlan<float> plan(Context::cpu(1), {{4, 4}, {}}, strict, self);
  std::vector<float> f(16, 1.0f), u(16);
  EXPECT_THROW(plan.solve(std::span<const float>(f), std::span<float>(u)), InvalidInput);
  EXPECT_THROW(plan.solve(std::span<const float>(f).first(3), std::span<float>(u)), InvalidInput);
  // A CPU plan of several parts needs MPI; a device list is refused on the CPU.
  EXPECT_THROW(DistributedPoissonPlan<float>(Context::cpu(1), {{4, 4}, {}}, {}, self, {0}),
               InvalidInput);
}

// Walls, fd2 and Helmholtz (issue 34): one part is the single-device plan, the same bits; several
// CUDA parts do not solve them yet and refuse them on every rank before anything is planned, in
// words that say what does (here two parts on one CUDA device, refused before the device is
// looked at, so with or without a GPU; several CPU ranks solve them: poisson_mpi_test.cpp).
TEST(DistributedPoissonOnePart, WallsFd2AndHelmholtzAreTheSingleDevicePlanOrRefused) {
  const gpukit::testing::TestSeed seed;
  distributed::Communicator self;
  const PoissonGrid g{{9, 14}, {1.0, 2.0}, {Boundary::dirichlet, Boundary::neumann}};
  PoissonOptions options;
  options.op = Operator::fd2;
  options.helmholtz = 2;
  const std::vector<double> f = testing::random_rhs<double>(g.size(), seed.value());
  std::vector<double> serial(f.size()), distributed(f.size(), std::nan(""));
  PoissonPlan<double>(Context::cpu(1), g, options).solve(f, serial);
  DistributedPoissonPlan<double> plan(Context::cpu(1), g, options, self);
  plan.solve(std::span<const double>(f), std::span<double>(distributed));
  EXPECT_EQ(std::memcmp(serial.data(), distributed.data(), f.size() * sizeof(double)), 0);
  try {
    DistributedPoissonPlan<double>(Context::cuda(0), g, options, self, {0, 0});
    ADD_FAILURE() << "two parts took a dirichlet grid";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "poisson: a solve spread over several GPUs does not yet solve "
                 "dirichlet/neumann/fd2/helmholtz; use one GPU or mpirun on the CPU");
  }
}

// The scale-out calls on a job of one CPU worker: the single-device solve's bits, for arrays in
// memory (in place too) and for files (the output write_npy writes for the single solve, in the
// input's dtype when the solve's precision differs); what they refuse.
TEST(ScaleOutPoisson, AJobOfOneWorkerGivesTheSingleDeviceBits) {
  const gpukit::testing::TestSeed seed;
  distributed::Communicator self;
  const scale_out::Job job = scale_out::join_job("cpu", 1, self);
  EXPECT_FALSE(job.spread);
  const PoissonGrid g{{9, 14}, {1.0, 2.0}};
  PoissonOptions options;
  options.gauge = Gauge::corner;
  const std::vector<double> f = testing::random_rhs<double>(g.size(), seed.value());
  std::vector<double> serial(f.size()), u(f.size(), std::nan(""));
  const PoissonResult a = PoissonPlan<double>(Context::cpu(1), g, options).solve(f, serial);
  scale_out::PoissonSpread spread;
  const PoissonResult b = scale_out::solve_poisson<double>(
      job, g, options, f, u, [&](const scale_out::PoissonSpread& s) { spread = s; });
  EXPECT_TRUE(same_bits(a.mean, b.mean));
  EXPECT_EQ(std::memcmp(serial.data(), u.data(), u.size() * sizeof(double)), 0);
  EXPECT_EQ(spread.engine, "cpu-fftw");
  EXPECT_EQ(spread.rows, std::vector<std::int64_t>{9});
  std::vector<double> in_place = f;
  scale_out::solve_poisson<double>(job, g, options, in_place, in_place);
  EXPECT_EQ(std::memcmp(serial.data(), in_place.data(), u.size() * sizeof(double)), 0);
  EXPECT_THROW(scale_out::solve_poisson<double>(job, g, options, std::span(f).first(5), u),
               InvalidInput);
  EXPECT_THROW(scale_out::solve_poisson<double>(job, g, options, std::span(u).first(100),
                                                std::span(u).subspan(1)),
               InvalidInput);

  // Files: a float32 input solved in double, written back in float32.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpukit_scale_out_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<float> f32(f.begin(), f.end());
  io::write_npy<float>(dir / "f.npy", g.shape, f32);
  std::vector<double> widened(f32.begin(), f32.end()), solved(widened.size());
  PoissonPlan<double>(Context::cpu(1), g, options).solve(widened, solved);
  io::write_npy<float>(dir / "expected.npy", g.shape,
                       std::vector<float>(solved.begin(), solved.end()));
  scale_out::PoissonFileRequest request;
  request.input = dir / "f.npy";
  request.output = dir / "u.npy";
  request.lengths = [](int axes) {
    EXPECT_EQ(axes, 2);
    return std::vector<double>{1.0, 2.0};
  };
  request.options = options;
  request.precision = io::NpyDtype::float64;
  int planned = 0;
  request.planned = [&](const scale_out::PoissonSpread& s) {
    ++planned;
    EXPECT_FALSE(s.single_precision);
    EXPECT_EQ(s.grid.lengths, (std::vector<double>{1.0, 2.0}));
  };
  scale_out::solve_poisson_file(job, request);
  EXPECT_EQ(planned, 1);
  std::ifstream got(dir / "u.npy", std::ios::binary), want(dir / "expected.npy", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(got), {}),
            std::string(std::istreambuf_iterator<char>(want), {}));
  request.output = "-";
  EXPECT_THROW(scale_out::solve_poisson_file(job, request), InvalidInput);
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// The collective .npy writer in a job of one: the file numpy reads, or nothing at all.

class NpySlabFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("gpukit_npy_slabs_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(NpySlabFiles, OneProcessWritesTheFileWriteNpyWrites) {
  distributed::Communicator self;  // a job of one
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const std::int64_t shape[] = {3, 2};
  scale_out::write_npy_rows_collectively(self, dir_ / "a.npy", io::NpyDtype::float32, shape, 0,
                                         std::as_bytes(std::span(values)));
  io::write_npy<float>(dir_ / "b.npy", shape, values);
  EXPECT_EQ(testing::max_abs(values), 6.0);
  std::ifstream a(dir_ / "a.npy", std::ios::binary), b(dir_ / "b.npy", std::ios::binary);
  const std::string bytes_a((std::istreambuf_iterator<char>(a)), {});
  const std::string bytes_b((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(bytes_a, bytes_b);
  // Standard output is refused, and nothing is left behind.
  EXPECT_THROW(scale_out::write_npy_rows_collectively(self, "-", io::NpyDtype::float32, shape, 0,
                                                      std::as_bytes(std::span(values))),
               InvalidInput);
  // Rows that do not reach their place (a missing directory) leave nothing either.
  EXPECT_THROW(
      scale_out::write_npy_rows_collectively(self, dir_ / "no" / "c.npy", io::NpyDtype::float32,
                                             shape, 0, std::as_bytes(std::span(values))),
      IoError);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    names.push_back(entry.path().filename().string());
  std::ranges::sort(names);
  EXPECT_EQ(names, (std::vector<std::string>{"a.npy", "b.npy"}));
}

}  // namespace
}  // namespace gpukit::pde
