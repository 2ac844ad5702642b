// A reduction in fixed blocks (primitives/reduce_partials.hpp), each scenario written once and
// run on every backend and element type: the partials of any split of the blocks into ranges,
// folded by reduce_from_partials, give reduce()'s bits for every operation, the accurate mode
// and awkward sizes; level 1 (blocks of 2^28 elements) on one block here and on two on a GPU;
// partials made on the CPU (any thread count) and on a GPU are interchangeable; bad parts are
// refused.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "gpukit/primitives/reduce_partials.hpp"
#include "reduce_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::primitives {
namespace {

using gpukit::testing::EveryBackendTypedTest;
using gpukit::testing::TestSeed;
using testing::make_data;
using testing::ops_for;

template <class R>
bool same_bits(R a, R b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The partials of `data` split into `parts` random consecutive block ranges, each computed on
// `context`, in block order.
template <class T>
std::vector<std::byte> partials_in_parts(const Context& context, const std::vector<T>& data,
                                         const ReduceSplit& split, ReduceOp op,
                                         const ReduceOptions& options, int parts,
                                         std::mt19937_64& gen) {
  std::vector<std::int64_t> cuts = {0, split.blocks};
  std::uniform_int_distribution<std::int64_t> at(0, split.blocks);
  for (int k = 1; k < parts; ++k) cuts.push_back(at(gen));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::byte> all(static_cast<std::size_t>(split.blocks) * split.partial_bytes);
  for (std::size_t k = 1; k < cuts.size(); ++k) {
    const std::int64_t first = cuts[k - 1], blocks = cuts[k] - cuts[k - 1];
    const std::int64_t begin = std::min<std::int64_t>(first * split.block_elements, split.count);
    const std::int64_t end =
        std::min<std::int64_t>((first + blocks) * split.block_elements, split.count);
    reduce_partials<T>(
        context,
        std::span<const T>(data).subspan(static_cast<std::size_t>(begin),
                                         static_cast<std::size_t>(end - begin)),
        split, first, op, options,
        std::span<std::byte>(all).subspan(static_cast<std::size_t>(first) * split.partial_bytes,
                                          static_cast<std::size_t>(blocks) * split.partial_bytes));
  }
  return all;
}

template <class Case>
class ReducePartialsTest : public EveryBackendTypedTest<Case> {};
TYPED_TEST_SUITE_P(ReducePartialsTest);

TYPED_TEST_P(ReducePartialsTest, AnySplitGivesTheBitsOfTheWholeReduction) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  std::mt19937_64 gen(seed.value());
  for (const ReduceOp op : ops_for(std::is_integral_v<T>)) {
    for (const std::int64_t n :
         {std::int64_t{1}, std::int64_t{16383}, std::int64_t{16384}, std::int64_t{16385},
          7 * canonical::kTile + 1234, (std::int64_t{1} << 20) + 3}) {
      const std::vector<T> data = make_data<T>(n, op, seed.value() + std::uint64_t(n) + int(op));
      for (const bool accurate : {false, true}) {
        if (accurate && !std::is_floating_point_v<T>) continue;
        ReduceOptions options;
        options.accurate_sum = accurate;
        const auto whole = reduce<T>(this->context(), data, op, options);
        const ReduceSplit split = reduce_split<T>(n, op, options);
        EXPECT_EQ(split.level, 0);
        EXPECT_EQ(split.blocks, canonical::tile_count(n));
        for (const int parts : {1, 2, 5}) {
          const std::vector<std::byte> partials =
              partials_in_parts(this->context(), data, split, op, options, parts, gen);
          const auto folded = reduce_from_partials<T>(partials, split, op, options);
          EXPECT_TRUE(same_bits(folded, whole))
              << reduce_op_name(op) << " n=" << n << (accurate ? " accurate" : "") << ", " << parts
              << " parts: " << folded << " vs " << whole;
        }
      }
    }
  }
}

TYPED_TEST_P(ReducePartialsTest, LevelOneBlocksGiveTheBitsOfTheWholeReduction) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  std::mt19937_64 gen(seed.value());
  // One level-1 block (all of a 2^20-element array); on a GPU also two (2^28 + 5 elements,
  // 1-2 GiB: quick there, too long for the CPU machine).
  std::vector<std::int64_t> sizes = {(std::int64_t{1} << 20) + 3, 3 * canonical::kTile};
  if (this->context().backend == Backend::cuda && !gpukit::testing::quick_tests()) {
    sizes.push_back((std::int64_t{1} << 28) + 5);
  }
  for (const std::int64_t n : sizes) {
    const std::vector<T> data = make_data<T>(n, ReduceOp::sum, seed.value() + std::uint64_t(n));
    const auto whole = reduce<T>(this->context(), data, ReduceOp::sum);
    const ReduceSplit split = reduce_split<T>(n, ReduceOp::sum, {}, 1);
    EXPECT_EQ(split.block_elements, canonical::kTile * canonical::kTile);
    for (const int parts : {1, 2}) {
      const std::vector<std::byte> partials =
          partials_in_parts(this->context(), data, split, ReduceOp::sum, {}, parts, gen);
      EXPECT_TRUE(same_bits(reduce_from_partials<T>(partials, split, ReduceOp::sum), whole))
          << "n=" << n << ", " << parts << " parts";
    }
  }
  EXPECT_THROW(reduce_split<T>(canonical::kTile, ReduceOp::sum, {}, 1), InvalidInput);
  EXPECT_EQ(reduce_split<T>(std::int64_t{1} << 33, ReduceOp::sum).level, 1);
  EXPECT_EQ(reduce_split<T>((std::int64_t{1} << 32) - 1, ReduceOp::sum).level, 0);
}

// Partials made anywhere fold together: blocks 0-3 on the CPU (one thread), the rest on the
// scenario's backend (the CPU instance: all threads).
TYPED_TEST_P(ReducePartialsTest, PartialsFromEveryBackendAreInterchangeable) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  const std::int64_t n = 9 * canonical::kTile + 17;
  const std::vector<T> data = make_data<T>(n, ReduceOp::sum, seed.value());
  const ReduceSplit split = reduce_split<T>(n, ReduceOp::sum);
  std::vector<std::byte> partials(static_cast<std::size_t>(split.blocks) * split.partial_bytes);
  const std::size_t cut = 4 * static_cast<std::size_t>(canonical::kTile);
  reduce_partials<T>(Context::cpu(1), std::span<const T>(data).first(cut), split, 0, ReduceOp::sum,
                     {}, std::span<std::byte>(partials).first(4 * split.partial_bytes));
  reduce_partials<T>(this->context(), std::span<const T>(data).subspan(cut), split, 4,
                     ReduceOp::sum, {},
                     std::span<std::byte>(partials).subspan(4 * split.partial_bytes));
  EXPECT_TRUE(same_bits(reduce_from_partials<T>(partials, split, ReduceOp::sum),
                        reduce<T>(Context::cpu(), data, ReduceOp::sum)));
}

TYPED_TEST_P(ReducePartialsTest, PartsThatAreNotWholeBlocksAreRefused) {
  using T = typename TypeParam::Element;
  const std::int64_t n = 3 * canonical::kTile + 5;
  const std::vector<T> data = make_data<T>(n, ReduceOp::sum, 1);
  const ReduceSplit split = reduce_split<T>(n, ReduceOp::sum);
  std::vector<std::byte> out(2 * split.partial_bytes);
  const std::span<const T> all(data);
  // Ends inside a block / the wrong room for partials / past the end.
  EXPECT_THROW(reduce_partials<T>(this->context(), all.first(canonical::kTile + 1), split, 0,
                                  ReduceOp::sum, {}, out),
               InvalidInput);
  EXPECT_THROW(reduce_partials<T>(this->context(), all.first(canonical::kTile), split, 0,
                                  ReduceOp::sum, {}, out),
               InvalidInput);
  EXPECT_THROW(reduce_partials<T>(this->context(), all.first(canonical::kTile), split, 4,
                                  ReduceOp::sum, {}, out),
               InvalidInput);
  EXPECT_NO_THROW(reduce_partials<T>(this->context(), all.subspan(2 * canonical::kTile), split, 2,
                                     ReduceOp::sum, {},
                                     std::span<std::byte>(out).first(2 * split.partial_bytes)));
  EXPECT_THROW(reduce_from_partials<T>(std::span<const std::byte>(out), split, ReduceOp::sum),
               InvalidInput);
  // The empty array: no block, the empty sum.
  const ReduceSplit empty = reduce_split<T>(0, ReduceOp::sum);
  EXPECT_EQ(empty.blocks, 0);
  EXPECT_EQ(reduce_from_partials<T>({}, empty, ReduceOp::sum), reduce_result_t<T>(0));
  EXPECT_THROW(reduce_split<T>(0, ReduceOp::min), InvalidInput);
}

REGISTER_TYPED_TEST_SUITE_P(ReducePartialsTest, AnySplitGivesTheBitsOfTheWholeReduction,
                            LevelOneBlocksGiveTheBitsOfTheWholeReduction,
                            PartialsFromEveryBackendAreInterchangeable,
                            PartsThatAreNotWholeBlocksAreRefused);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(ReducePartialsTest, std::int32_t, std::int64_t, std::uint32_t,
                                    float, double);

}  // namespace
}  // namespace gpukit::primitives
