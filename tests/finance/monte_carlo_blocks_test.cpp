// Monte Carlo in fixed blocks (finance/monte_carlo_blocks.hpp), each scenario written once and run
// on the CPU and on CUDA: a book's blocks priced in any split into ranges, on any number of
// "workers", and merged by monte_carlo_result_from_blocks give price_monte_carlo_book's bits on
// that backend, for every statistic, precision, path kind and Greeks. Small blocks (2 or 4
// tiles, through the internal block size) cut small books into many blocks; the public block
// size is checked on a row of several blocks where a GPU makes it quick. Plain tests: the tree
// identity the GPU's bits rest on, checked on the host with the device's fused rounding, and the
// packed book that travels between processes.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "every_backend_test_support.hpp"
#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"
#include "gpukit/finance/option_book_bytes.hpp"
#include "monte_carlo_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using testing::barrier_rows;
using testing::expect_same_result;
using testing::McBook;
using testing::McRow;
using testing::random_european_rows;
using testing::same_bits;

// `count` blocks cut into `parts` random consecutive ranges (some empty).
std::vector<std::pair<std::int64_t, std::int64_t>> random_ranges(std::int64_t count, int parts,
                                                                 std::mt19937_64& gen) {
  std::vector<std::int64_t> cuts = {0, count};
  std::uniform_int_distribution<std::int64_t> at(0, count);
  for (int k = 1; k < parts; ++k) cuts.push_back(at(gen));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (std::size_t k = 1; k < cuts.size(); ++k)
    ranges.emplace_back(cuts[k - 1], cuts[k] - cuts[k - 1]);
  return ranges;
}

class MonteCarloBlocksTest : public gpukit::testing::EveryBackendTest {
 protected:
  // The book priced whole, then in blocks of `block_tiles` tiles split into random ranges: the
  // same bits.
  void expect_blocks_match_whole(const std::vector<McRow>& rows, const MonteCarloOptions& options,
                                 std::int64_t block_tiles, const std::string& what) {
    const McBook book(rows);
    const MonteCarloBookResult whole = price_monte_carlo_book(context(), book.view(), options);
    const std::int64_t per_row = mc::blocks_per_row(options, block_tiles);
    const std::int64_t count = book.view().count * per_row;
    const int scenarios = monte_carlo_scenarios(book.view(), options);
    std::mt19937_64 gen(gpukit::testing::test_seed() + static_cast<std::uint64_t>(block_tiles));
    for (const int parts : {1, 3, 7}) {
      std::vector<MonteCarloBlockMoments> all;
      for (const auto& [first, n] : random_ranges(count, parts, gen)) {
        const std::vector<MonteCarloBlockMoments> part =
            mc::price_blocks(context(), book.view(), options, first, n, block_tiles);
        ASSERT_EQ(static_cast<std::int64_t>(part.size()), n * scenarios) << what;
        all.insert(all.end(), part.begin(), part.end());
      }
      const MonteCarloBookResult merged =
          mc::result_from_blocks(book.view(), options, all, GetParam(), block_tiles);
      expect_same_result(merged, whole,
                         what + ", " + std::to_string(block_tiles) + " tiles a block, " +
                             std::to_string(parts) + " parts, seed " +
                             std::to_string(gpukit::testing::test_seed()));
    }
  }
};

TEST_P(MonteCarloBlocksTest, AnySplitOfTheBlocksGivesTheBitsOfTheWholeBook) {
  MonteCarloOptions options;
  // 5 tiles and a ragged one: blocks of 1, 2 and 4 tiles, the last of a row short.
  options.paths = 5 * kMonteCarloTileSamples + 777;
  options.seed = 19;
  const std::vector<McRow> europeans = random_european_rows(9, 5);
  for (const std::int64_t block_tiles : {1, 2, 4}) {
    for (const Precision precision : {Precision::float64, Precision::float32}) {
      options.precision = precision;
      expect_blocks_match_whole(
          europeans, options, block_tiles,
          precision == Precision::float32 ? "european float" : "european double");
    }
  }
  // Barriers, discrete and continuous, with every statistic and the Greeks.
  std::vector<McRow> rows = barrier_rows(6);
  rows.resize(10);
  rows.push_back(europeans[0]);
  options.paths = 3 * kMonteCarloTileSamples + 10;  // even, for the antithetic pairs
  options.antithetic = true;
  options.control_variate = true;
  options.variance_reduction_factors = true;
  options.greeks = true;
  options.monitoring = BarrierMonitoring::continuous;
  for (const Precision precision : {Precision::float64, Precision::float32}) {
    options.precision = precision;
    expect_blocks_match_whole(rows, options, 2, "barriers, every statistic, Greeks");
  }
  options.greeks = false;
  options.control_variate = false;
  options.monitoring = BarrierMonitoring::discrete;
  expect_blocks_match_whole(rows, options, 1, "discrete barriers, antithetic");
  // Greeks of every method: pathwise (European, Asian), central differences (a barrier) and a
  // European heston row, whose sixth book every range has, the ranges without that row too.
  std::vector<McRow> greek_rows = {europeans[1], rows[2]};
  McRow asian = europeans[2];
  asian.average = AverageType::arithmetic, asian.steps = 5;
  McRow heston = europeans[3];
  heston.model = AssetModel::heston, heston.steps = 4;
  heston.v0 = 0.05, heston.kappa = 1.5, heston.theta = 0.04, heston.sigma_v = 0.4;
  heston.rho = -0.6;
  greek_rows.push_back(asian), greek_rows.push_back(heston);
  options.greeks = true;
  options.monitoring = BarrierMonitoring::continuous;
  expect_blocks_match_whole(greek_rows, options, 1, "Greeks of every method");
}

// The sobol sampler: a block is one replicate of a row, whatever the block size (a replicate's
// moments come from one tile tree), so that R replicates share out over R workers.
TEST_P(MonteCarloBlocksTest, SobolBooksInBlocksOfAReplicateGiveTheBitsOfTheWholeBook) {
  std::vector<McRow> rows = random_european_rows(3, 6);
  for (const McRow& r : barrier_rows(4)) rows.push_back(r);
  rows.resize(6);
  McRow asian = rows[0], heston = rows[1];
  asian.average = AverageType::arithmetic, asian.steps = 5;
  heston.model = AssetModel::heston, heston.steps = 6;
  heston.v0 = 0.05, heston.kappa = 2, heston.theta = 0.04, heston.sigma_v = 0.5, heston.rho = -0.6;
  rows.push_back(asian), rows.push_back(heston);
  MonteCarloOptions options;
  options.sampler = MonteCarloSampler::sobol;
  options.replicates = 4;
  options.paths = 4 * (kMonteCarloTileSamples + 300);  // a tile and a ragged one a replicate
  for (const std::int64_t block_tiles : {1, 4}) {
    EXPECT_EQ(mc::blocks_per_row(options, block_tiles), 4);
    expect_blocks_match_whole(rows, options, block_tiles, "sobol");
  }
  options.antithetic = true;
  options.control_variate = true;
  options.variance_reduction_factors = true;
  options.greeks = true;
  options.precision = Precision::float32;
  rows.pop_back();  // Greeks are not computed on heston rows
  expect_blocks_match_whole(rows, options, 2, "sobol float, every statistic, Greeks");
}

// Early-exercise rows: a row's first block carries its whole Longstaff-Schwartz pricing (both
// passes: the regression needs all of pass 1), its other blocks nothing; the European rows of the
// book are cut as usual.
TEST_P(MonteCarloBlocksTest, EarlyExerciseRowsTravelWholeInTheirFirstBlock) {
  std::vector<McRow> rows = random_european_rows(5, 9);
  for (std::size_t i : {1u, 2u, 4u}) {
    rows[i].exercise = i == 2 ? ExerciseStyle::bermudan : ExerciseStyle::american;
    rows[i].steps = 4 + static_cast<std::uint32_t>(i);
    rows[i].type = BarrierType::none;
  }
  MonteCarloOptions options;
  options.paths = 2 * kMonteCarloTileSamples + 100;
  options.seed = 5;
  const McBook book(rows);
  const MonteCarloBlocks blocks = monte_carlo_blocks(book.view(), options);
  ASSERT_EQ(blocks.blocks_per_row, 1);
  for (const Precision precision : {Precision::float64, Precision::float32}) {
    options.precision = precision;
    options.greeks = precision == Precision::float64;
    // Antithetic pairs (and their variance reduction) travel in the early-exercise rows' blocks.
    options.antithetic = precision == Precision::float32;
    options.variance_reduction_factors = options.antithetic;
    ASSERT_EQ(mc::blocks_per_row(options, 1), options.antithetic ? 2 : 3);  // blocks of one tile
    expect_blocks_match_whole(rows, options, 1, "early exercise");
  }
  // The public blocks: one a row at these paths; an early-exercise row weighs both its passes.
  EXPECT_GT(blocks.weight[1], blocks.weight[0]);
}

TEST_P(MonteCarloBlocksTest, RowsKeyedByIdKeepTheirNumbersInEveryRange) {
  std::vector<McRow> rows = random_european_rows(6, 8);
  McBook book(rows);
  std::vector<std::uint64_t> keys = {monte_carlo_stream_key("a"), 7, 1ull << 40, 3, 99, 0};
  MonteCarloBookView view = book.view();
  view.stream = keys.data();
  MonteCarloOptions options;
  options.paths = 2 * kMonteCarloTileSamples + 1;
  options.first_option_index = 1000;
  const MonteCarloBookResult whole = price_monte_carlo_book(context(), view, options);
  const std::vector<MonteCarloBlockMoments> a = mc::price_blocks(context(), view, options, 0, 7, 1);
  const std::vector<MonteCarloBlockMoments> b =
      mc::price_blocks(context(), view, options, 7, 11, 1);
  std::vector<MonteCarloBlockMoments> all = a;
  all.insert(all.end(), b.begin(), b.end());
  expect_same_result(mc::result_from_blocks(view, options, all, GetParam(), 1), whole,
                     "stream keys");
  // Without keys, rows follow first_option_index + row wherever their blocks are priced.
  expect_blocks_match_whole(rows, options, 2, "row numbers from first_option_index");
}

TEST_P(MonteCarloBlocksTest, ThePublicBlocksOfALongRow) {
  // Several blocks of the public size in a row: quick on a GPU, a few seconds on 2 CPU cores.
  MonteCarloOptions options;
  options.paths =
      (GetParam() == Backend::cuda ? 5 : 2) * kMonteCarloBlockTiles * kMonteCarloTileSamples +
      12345;
  options.precision = Precision::float32;
  const std::vector<McRow> rows = random_european_rows(2, 3);
  const McBook book(rows);
  const MonteCarloBlocks blocks = monte_carlo_blocks(book.view(), options);
  EXPECT_EQ(blocks.rows, 2);
  EXPECT_EQ(blocks.blocks_per_row, GetParam() == Backend::cuda ? 6 : 3);
  ASSERT_EQ(static_cast<std::int64_t>(blocks.weight.size()), blocks.count());
  EXPECT_LT(blocks.weight[static_cast<std::size_t>(blocks.blocks_per_row - 1)], blocks.weight[0]);
  const MonteCarloBookResult whole = price_monte_carlo_book(context(), book.view(), options);
  std::vector<MonteCarloBlockMoments> all;
  for (const auto& [first, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 1}, {1, blocks.count() - 2}, {blocks.count() - 1, 1}}) {
    const auto part = price_monte_carlo_blocks(context(), book.view(), options, first, n);
    all.insert(all.end(), part.begin(), part.end());
  }
  expect_same_result(monte_carlo_result_from_blocks(book.view(), options, all, GetParam()), whole,
                     "public block size");
}

TEST_P(MonteCarloBlocksTest, BadRangesAndCountsAreRefused) {
  const McBook book(random_european_rows(3, 1));
  MonteCarloOptions options;
  options.paths = 1000;
  EXPECT_THROW(price_monte_carlo_blocks(context(), book.view(), options, 2, 2), InvalidInput);
  EXPECT_THROW(price_monte_carlo_blocks(context(), book.view(), options, -1, 1), InvalidInput);
  EXPECT_TRUE(price_monte_carlo_blocks(context(), book.view(), options, 3, 0).empty());
  const std::vector<MonteCarloBlockMoments> two(2);
  EXPECT_THROW(monte_carlo_result_from_blocks(book.view(), options, two, GetParam()), InvalidInput);
  EXPECT_THROW(mc::price_blocks(context(), book.view(), options, 0, 1, 3), InvalidInput);
  // A bad row is found by whoever prices its blocks.
  std::vector<McRow> rows = random_european_rows(3, 1);
  rows[2].type = BarrierType::down_out;
  rows[2].barrier = 0;
  const McBook bad(rows);
  EXPECT_NO_THROW(price_monte_carlo_blocks(context(), bad.view(), options, 0, 2));
  EXPECT_THROW(price_monte_carlo_blocks(context(), bad.view(), options, 2, 1), InvalidInput);
  // ... and named by its row in the book, wherever the range starts.
  try {
    (void)price_monte_carlo_blocks(context(), bad.view(), options, 2, 1);
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("option 2:"), std::string::npos) << e.what();
  }
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MonteCarloBlocksTest);

// The identity the GPU's bits rest on, on the host with the device's rounding (FusedMulAdd):
// the stride-doubling tree over all tiles equals the same tree within aligned blocks of 2^k
// tiles, then over the blocks' roots, for every tile count; and TileTree builds that tree.
TEST(MonteCarloBlockTree, BlocksOfTheStrideDoublingTreeGiveItsRootWithFusedRounding) {
  using M = mc::Mode<false, true>;
  const std::vector<McRow> rows = random_european_rows(1, 77);
  const McBook book(rows);
  MonteCarloOptions options;
  options.control_variate = true;
  for (const std::int64_t tiles : {1, 2, 3, 5, 8, 13, 33}) {
    options.paths = tiles * kMonteCarloTileSamples - 3;
    const std::vector<mc::PathParams<double>> params =
        mc::book_path_params<double>(book.view(), mc::book_inputs<double>(book.view()), options);
    // One block a tile: each tile's own moments.
    const std::vector<mc::Moments<double>> tile =
        mc::cpu_block_moments(params, options.paths, options.seed, false, true, 0, 0, tiles, 1);
    ASSERT_EQ(static_cast<std::int64_t>(tile.size()), tiles);
    // The device's tree, level by level (merge_tiles_in_block), fused.
    std::vector<mc::Moments<double>> level = tile;
    for (std::int64_t stride = 1; stride < tiles; stride *= 2) {
      for (std::int64_t i = 0; i + stride < tiles; i += 2 * stride) {
        level[static_cast<std::size_t>(i)] = mc::merge<M, mc::FusedMulAdd>(
            level[static_cast<std::size_t>(i)], level[static_cast<std::size_t>(i + stride)]);
      }
    }
    const mc::Moments<double> root = level[0];
    for (const std::int64_t block : {1, 2, 4, 8, 64}) {
      mc::TileTree<M, mc::FusedMulAdd> over_blocks;
      for (std::int64_t b = 0; b < tiles; b += block) {
        mc::TileTree<M, mc::FusedMulAdd> in_block;
        for (std::int64_t t = b; t < std::min(tiles, b + block); ++t) {
          in_block.push(tile[static_cast<std::size_t>(t)]);
        }
        over_blocks.push(in_block.finish());
      }
      const mc::Moments<double> folded = over_blocks.finish();
      EXPECT_EQ(std::memcmp(&folded, &root, sizeof root), 0)
          << tiles << " tiles, blocks of " << block;
    }
  }
}

// TileTree takes a complete aligned subtree whole (its root and its level) with the merges of its
// tiles pushed one by one: the identity the side-by-side fold of result_from_blocks rests on.
TEST(MonteCarloBlockTree, ASubtreePushedWholeMergesAsItsTilesWould) {
  using M = mc::Mode<true, true>;
  std::mt19937_64 gen(gpukit::testing::test_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (const std::int64_t tiles : {1, 2, 3, 7, 8, 9, 31, 64, 100}) {
    std::vector<mc::Moments<double>> tile(static_cast<std::size_t>(tiles));
    for (mc::Moments<double>& m : tile) {
      m = {double(1 + gen() % 3),
           u(gen),
           1 + u(gen),
           u(gen),
           1 + u(gen),
           u(gen),
           u(gen),
           1 + u(gen)};
    }
    mc::TileTree<M, mc::FusedMulAdd> one_by_one;
    for (const mc::Moments<double>& m : tile) one_by_one.push(m);
    const mc::Moments<double> expected = one_by_one.finish();
    for (const int level : {0, 1, 2, 3, 5}) {
      const std::int64_t piece = std::int64_t{1} << level;
      mc::TileTree<M, mc::FusedMulAdd> tree;
      std::int64_t t = 0;
      for (; t + piece <= tiles; t += piece) {
        mc::TileTree<M, mc::FusedMulAdd> subtree;
        for (std::int64_t k = t; k < t + piece; ++k)
          subtree.push(tile[static_cast<std::size_t>(k)]);
        tree.push(subtree.finish(), level);
      }
      for (; t < tiles; ++t) tree.push(tile[static_cast<std::size_t>(t)]);
      const mc::Moments<double> got = tree.finish();
      EXPECT_EQ(std::memcmp(&got, &expected, sizeof got), 0)
          << tiles << " tiles, pieces of " << piece << ", seed " << gpukit::testing::test_seed();
    }
  }
}

// result_from_blocks folds rows and pieces of rows side by side: for any thread count and piece
// size, the bits of the block-by-block fold (written here with TileTree), with either backend's
// rounding, Greeks' five scenarios included.
TEST(MonteCarloBlockFold, AnyThreadCountAndPieceSizeGiveTheBlockByBlockFold) {
  const McBook book(random_european_rows(3, 11));
  MonteCarloOptions options;
  options.paths = 37 * kMonteCarloTileSamples - 5;  // 37 blocks of one tile a row, the last short
  options.greeks = true;
  options.control_variate = true;
  options.seed = gpukit::testing::test_seed();
  const std::int64_t per_row = mc::blocks_per_row(options, 1);
  ASSERT_EQ(per_row, 37);
  const std::vector<MonteCarloBlockMoments> blocks =
      mc::price_blocks(Context::cpu(), book.view(), options, 0, 3 * per_row, 1);
  const int kinds = monte_carlo_scenarios(book.view(), options);
  ASSERT_EQ(static_cast<std::int64_t>(blocks.size()), 3 * per_row * kinds);
  const std::vector<mc::OptionInputs> inputs = mc::book_inputs<double>(book.view());
  const mc::Scenarios scenarios = mc::scenarios(inputs, options, kinds);
  for (const Backend computed_on : {Backend::cpu, Backend::cuda}) {
    std::vector<std::vector<mc::Moments<double>>> rows(static_cast<std::size_t>(kinds));
    for (int s = 0; s < kinds; ++s) {
      for (std::int64_t i = 0; i < 3; ++i) {
        auto fold = [&]<class MulAdd>(MulAdd) {
          mc::TileTree<mc::Mode<false, true>, MulAdd> tree;
          for (std::int64_t k = 0; k < per_row; ++k) {
            const MonteCarloBlockMoments& b =
                blocks[static_cast<std::size_t>((i * per_row + k) * kinds + s)];
            tree.push({b.count, b.mean_x, b.m2_x, b.mean_c, b.m2_c, b.co_xc, b.mean_d, b.m2_d});
          }
          return tree.finish();
        };
        rows[static_cast<std::size_t>(s)].push_back(
            computed_on == Backend::cuda ? fold(mc::FusedMulAdd{}) : fold(mc::BackendMulAdd{}));
      }
    }
    const MonteCarloBookResult expected = mc::result_from_moments(scenarios, rows, options);
    ASSERT_GT(expected.price[0], 0);
    for (const int threads : {1, 2, 3}) {
      for (const int level : {0, 1, 2, 5, 8}) {
        expect_same_result(
            mc::result_from_blocks(book.view(), options, blocks, computed_on, 1, {threads, level}),
            expected,
            "fold on " + std::to_string(threads) + " threads, pieces of 2^" +
                std::to_string(level) + " blocks, " +
                (computed_on == Backend::cuda ? "fused" : "CPU") + " rounding");
      }
    }
  }
  EXPECT_THROW(mc::result_from_blocks(book.view(), options, blocks, Backend::cpu, 1, {1, -1}),
               InvalidInput);
}

TEST(PackedOptionBook, RowsTravelWithEveryArrayAndTheBookWideValues) {
  std::vector<McRow> rows = barrier_rows(3);
  const McBook book(rows);
  MonteCarloBookView view = book.view();
  view.volatility = {nullptr, 0.31};  // book-wide
  std::vector<std::uint64_t> keys(rows.size());
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 1000 + i;
  view.stream = keys.data();
  // The columns of Asian, early-exercise and Heston rows travel too (a rank that lost them would
  // price such rows as European ones).
  std::vector<AverageType> average(rows.size());
  std::vector<ExerciseStyle> exercise(rows.size());
  std::vector<AssetModel> model(rows.size());
  std::vector<double> v0(rows.size()), theta(rows.size()), sigma_v(rows.size()), rho(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    average[i] = static_cast<AverageType>(i % 3);
    exercise[i] = static_cast<ExerciseStyle>((i + 1) % 3);
    model[i] = static_cast<AssetModel>(i % 2);
    v0[i] = 0.01 * double(i), theta[i] = 0.02 + 0.001 * double(i);
    sigma_v[i] = 0.3 + 0.01 * double(i), rho[i] = -0.5 + 0.01 * double(i);
  }
  view.average = average.data(), view.exercise = exercise.data(), view.model = model.data();
  view.v0 = {v0.data(), 0}, view.kappa = {nullptr, 1.75}, view.theta = {theta.data(), 0};
  view.sigma_v = {sigma_v.data(), 0}, view.rho = {rho.data(), 0};
  for (const auto& [first, count] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, view.count}, {5, 7}, {view.count, 0}}) {
    const std::vector<std::byte> bytes = pack_option_book(view, first, count);
    const PackedOptionBook packed(bytes);
    const OptionBookView& v = packed.view();
    ASSERT_EQ(v.count, count);
    EXPECT_EQ(v.volatility.values, nullptr);
    EXPECT_EQ(v.volatility.scalar, 0.31);
    EXPECT_EQ(v.kappa.values, nullptr);
    EXPECT_EQ(v.kappa.scalar, 1.75);
    if (count > 0) {  // (an empty array's data() may be null)
      ASSERT_NE(v.average, nullptr);
      ASSERT_NE(v.exercise, nullptr);
      ASSERT_NE(v.model, nullptr);
      ASSERT_NE(v.v0.values, nullptr);
      ASSERT_NE(v.theta.values, nullptr);
      ASSERT_NE(v.sigma_v.values, nullptr);
      ASSERT_NE(v.rho.values, nullptr);
    }
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t r = first + i;
      EXPECT_EQ(v.is_put[i], view.is_put[r]);
      EXPECT_EQ(v.spot[i], view.spot[r]);
      EXPECT_EQ(v.strike[i], view.strike[r]);
      EXPECT_EQ(v.maturity[i], view.maturity[r]);
      EXPECT_EQ(v.rate.values[i], view.rate.values[r]);
      EXPECT_EQ(v.dividend.values[i], view.dividend.values[r]);
      EXPECT_EQ(v.barrier_type[i], view.barrier_type[r]);
      EXPECT_EQ(v.barrier[i], view.barrier[r]);
      EXPECT_EQ(v.steps[i], view.steps[r]);
      EXPECT_EQ(v.stream[i], view.stream[r]);
      EXPECT_EQ(v.average[i], view.average[r]);
      EXPECT_EQ(v.exercise[i], view.exercise[r]);
      EXPECT_EQ(v.model[i], view.model[r]);
      EXPECT_EQ(v.v0.values[i], view.v0.values[r]);
      EXPECT_EQ(v.theta.values[i], view.theta.values[r]);
      EXPECT_EQ(v.sigma_v.values[i], view.sigma_v.values[r]);
      EXPECT_EQ(v.rho.values[i], view.rho.values[r]);
    }
    std::vector<std::byte> cut(bytes.begin(), bytes.end() - 1);
    if (count > 0) {
      EXPECT_THROW(PackedOptionBook{cut}, InvalidInput);
    }
    std::vector<std::byte> longer = bytes;
    longer.push_back(std::byte{0});
    EXPECT_THROW(PackedOptionBook{longer}, InvalidInput);
  }
  const std::vector<std::byte> junk(100, std::byte{7});
  EXPECT_THROW(PackedOptionBook{junk}, InvalidInput);
}

}  // namespace
}  // namespace gpukit::finance
