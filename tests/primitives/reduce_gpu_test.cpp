// Every registered CUDA reduction variant x type x operation against the sequential reference at
// awkward sizes, aligned and misaligned; the deterministic engine bitwise against the CPU backend
// (every launch shape, 20 repeats, folded lanes over rows and levels); integer overflow and empty
// input on reduce_on_device; and one reduction over 2^31 + 7 elements made on the device. The
// public API on every backend (the chunked host path, NaN and signed zeros): reduce_test.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_variants.hpp"
#include "reduce_test_support.hpp"

namespace gpukit::primitives {
namespace {

using testing::awkward_sizes;
using testing::make_data;
using testing::ops_for;
using testing::same_bits;

// Device copy of `data` starting `offset` elements past a 256-byte boundary.
template <class T>
struct DeviceArray {
  cuda::DeviceBuffer<T> buffer;
  std::size_t offset = 0;
  DeviceArray(const std::vector<T>& data, std::size_t misalign) : offset(misalign) {
    buffer = cuda::DeviceBuffer<T>(data.size() + misalign + 1);
    if (!data.empty()) {
      cuda::copy_to_device(buffer.data() + offset, data.data(), data.size() * sizeof(T));
    }
    // A pageable copy may still be in flight when cudaMemcpy returns, and the tests' streams do
    // not wait for the legacy stream.
    cuda::synchronize_device();
  }
  const T* data() const { return buffer.data() + offset; }
};

// Runs a variant with a poisoned (0xFF) result slot and returns what it wrote.
template <class T>
reduce_result_t<T> run_variant(const ReduceVariant& v, const T* d_data, std::int64_t n, ReduceOp op,
                               ReduceWorkspace& workspace, cuda::Stream& stream,
                               const ReduceOptions& options = {}) {
  cuda::DeviceBuffer<reduce_result_t<T>> d_result(1);
  cuda::fill_bytes_async(d_result.data(), 0xFF, sizeof(reduce_result_t<T>), stream.handle());
  v.launch(d_data, n, op, d_result.data(), workspace, stream.handle(), options);
  stream.synchronize();
  reduce_result_t<T> result{};
  cuda::copy_to_host(&result, d_result.data(), sizeof result);
  return result;
}

template <class T>
class ReduceGpuTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, float, double>;
TYPED_TEST_SUITE(ReduceGpuTest, ElementTypes);

TYPED_TEST(ReduceGpuTest, EveryVariantAndOpMatchesTheReference) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  ReduceWorkspace workspace;
  cuda::Stream stream;
  for (const ReduceVariant& v : reduce_variants()) {
    for (ReduceOp op : ops_for(std::is_integral_v<T>)) {
      for (std::int64_t n : awkward_sizes()) {
        if (n == 0 && (op == ReduceOp::min || op == ReduceOp::max)) continue;
        // Non-deterministic variants get data every addition order sums exactly; the
        // deterministic one general data, compared bitwise with the CPU backend.
        const std::uint64_t seed = 5000 + static_cast<std::uint64_t>(n) * 13 + int(op);
        const std::vector<T> data = make_data<T>(n, op, seed, !v.info.deterministic);
        const auto expected = v.info.deterministic ? reduce<T>(Context::cpu(), data, op)
                                                   : reduce_sequential<T>(data, op);
        for (std::size_t misalign : {std::size_t{0}, std::size_t{1}}) {
          const DeviceArray<T> d(data, misalign);
          const auto actual = run_variant<T>(v, d.data(), n, op, workspace, stream);
          EXPECT_TRUE(same_bits(actual, expected))
              << v.info.name << " " << reduce_op_name(op) << " n=" << n << " misalign=" << misalign
              << " seed=" << seed << ": " << actual << " vs " << expected;
          if (!v.info.deterministic) continue;
          // These sizes have few tiles, so the tuned launch hands the tile sums on flagged; lanes
          // folded by a power-of-two grid, and flagged sums from a grid of mostly idle blocks,
          // must agree.
          for (int grid : {256, 1000}) {
            ReduceOptions options;
            options.grid_blocks = grid;
            const auto other = run_variant<T>(v, d.data(), n, op, workspace, stream, options);
            EXPECT_TRUE(same_bits(other, expected))
                << v.info.name << " grid " << grid << " " << reduce_op_name(op) << " n=" << n
                << " misalign=" << misalign << " seed=" << seed << ": " << other << " vs "
                << expected;
          }
        }
      }
    }
  }
}

TYPED_TEST(ReduceGpuTest, SeedKernelsTakeAnyBlockSize) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  ReduceWorkspace workspace;
  cuda::Stream stream;
  const std::vector<T> data = make_data<T>(100003, ReduceOp::sum, 77, true);
  const auto expected = reduce_sequential<T>(data, ReduceOp::sum);
  const DeviceArray<T> d(data, 0);
  for (const ReduceVariant& v : reduce_variants()) {
    if (!v.takes_block_threads || v.info.deterministic) continue;
    for (int threads : {64, 256, 1024}) {
      ReduceOptions options;
      options.block_threads = threads;
      EXPECT_EQ(run_variant<T>(v, d.data(), 100003, ReduceOp::sum, workspace, stream, options),
                expected)
          << v.info.name << " " << threads << " threads";
    }
  }
}

template <class T>
class ReduceGpuFloatingTest : public ::testing::Test {};
using FloatingTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ReduceGpuFloatingTest, FloatingTypes);

TYPED_TEST(ReduceGpuFloatingTest, DeterministicAcrossRunsAndLaunchShapes) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  ReduceWorkspace workspace;
  cuda::Stream stream;
  const std::int64_t n = 37 * canonical::kTile + 4321;
  const std::vector<T> data = make_data<T>(n, ReduceOp::sum, 31337);
  const DeviceArray<T> d(data, 0);
  for (bool accurate : {false, true}) {
    ReduceOptions base;
    base.accurate_sum = accurate;
    const T cpu = reduce<T>(Context::cpu(), data, ReduceOp::sum, base);
    SCOPED_TRACE(accurate ? "accurate" : "default");
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(same_bits(
          reduce_on_device(d.data(), n, ReduceOp::sum, workspace, stream.handle(), base), cpu))
          << "run " << i;
    }
    // Every block size, with the default grid (flagged tile sums here), grids that fold lanes
    // (powers of two that divide 1024, from 128 up; most blocks get no tile) and grids that do
    // not.
    for (int threads : {128, 256, 512, 1024}) {
      for (int grid : {0, 1, 7, 128, 1000, 1024}) {
        ReduceOptions options = base;
        options.block_threads = threads;
        options.grid_blocks = grid;
        EXPECT_TRUE(same_bits(
            reduce_on_device(d.data(), n, ReduceOp::sum, workspace, stream.handle(), options), cpu))
            << threads << " threads, " << grid << " blocks";
      }
    }
  }
}

// Fast random floats of mixed sign and magnitude (the tree rounds at every level), for sizes
// where the test support's generator would take seconds.
template <class T>
std::vector<T> hashed_data(std::int64_t n, std::uint64_t seed) {
  std::vector<T> data(static_cast<std::size_t>(n));
  std::uint64_t state = seed;
  for (T& x : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint64_t r = state >> 16;
    const T magnitude = std::ldexp(T(r & 0xFFFF) + 1, int((r >> 16) % 24) - 30);
    x = (r >> 40) & 1 ? -magnitude : magnitude;
  }
  return data;
}

// Many tiles: the default launch folds the lanes of the level above in its blocks (a 256-block
// grid of 512 threads on the H200). 1500 tiles reach two rows of that level's lanes 0-475 and one
// row of the rest; 2^28 + 3 tiles + 100 elements (16388 tiles) reach a second, almost empty tile of
// it and a third level. Each must be bitwise the CPU's, in both modes, for folding and other grids.
TYPED_TEST(ReduceGpuFloatingTest, FoldedLanesMatchTheCpuOverRowsAndLevels) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  ReduceWorkspace workspace;
  cuda::Stream stream;
  std::vector<std::int64_t> sizes = {1500 * canonical::kTile + 1234};
  if (!gpukit::testing::quick_tests()) {
    sizes.push_back(canonical::kTile * canonical::kTile + 3 * canonical::kTile + 100);
  }
  for (const std::int64_t n : sizes) {
    const std::uint64_t seed = 99 + static_cast<std::uint64_t>(n);
    const std::vector<T> data = hashed_data<T>(n, seed);
    const DeviceArray<T> d(data, 0);
    for (bool accurate : {false, true}) {
      ReduceOptions base;
      base.accurate_sum = accurate;
      const T cpu = reduce<T>(Context::cpu(), data, ReduceOp::sum, base);
      // Folding grids (the default, 128, 1024; 256-thread blocks fold over 512 blocks) and a
      // grid that does not fold (tile sums, read by the last block).
      const std::pair<int, int> shapes[] = {{0, 0}, {128, 0}, {1024, 0}, {0, 256}, {1000, 0}};
      for (const auto& [grid, threads] : shapes) {
        ReduceOptions options = base;
        options.grid_blocks = grid;
        options.block_threads = threads;
        const T gpu =
            reduce_on_device(d.data(), n, ReduceOp::sum, workspace, stream.handle(), options);
        EXPECT_TRUE(same_bits(gpu, cpu))
            << "n=" << n << " seed=" << seed << (accurate ? " accurate" : " default") << ", "
            << grid << " blocks of " << threads << " threads: " << gpu << " vs " << cpu;
      }
    }
  }
}

TEST(ReduceGpu, MinOfNothingOnTheDeviceIsRefused) {
  GPUKIT_REQUIRE_GPU();
  ReduceWorkspace workspace;
  cuda::Stream stream;
  EXPECT_THROW(reduce_on_device<float>(nullptr, 0, ReduceOp::min, workspace, stream.handle()),
               InvalidInput);
}

// The default variant as the first user of a fresh workspace, and on one that grows at every
// call (a growing workspace moves its counters, where the overflow flag lives).
TEST(ReduceGpu, DefaultVariantOnFreshAndGrowingWorkspaces) {
  GPUKIT_REQUIRE_GPU();
  const ReduceVariant& v = default_reduce_variant();
  cuda::Stream stream;
  ReduceWorkspace growing;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1} << 20, (std::int64_t{1} << 22) + 3,
                               (std::int64_t{1} << 24) + 5 * canonical::kTile}) {
    const std::uint64_t seed = 777 + static_cast<std::uint64_t>(n);
    const std::vector<std::int32_t> data = make_data<std::int32_t>(n, ReduceOp::sum, seed);
    const auto expected = reduce_sequential<std::int32_t>(data, ReduceOp::sum);
    const DeviceArray<std::int32_t> d(data, 0);
    ReduceWorkspace fresh;
    EXPECT_EQ(run_variant<std::int32_t>(v, d.data(), n, ReduceOp::sum, fresh, stream), expected)
        << "fresh workspace, n=" << n << " seed=" << seed;
    EXPECT_EQ(run_variant<std::int32_t>(v, d.data(), n, ReduceOp::sum, growing, stream), expected)
        << "growing workspace, n=" << n << " seed=" << seed;
  }
}

TEST(ReduceGpu, IntegerSumOverflowOnTheDeviceIsReportedAndCleared) {
  GPUKIT_REQUIRE_GPU();
  std::vector<std::int64_t> data(40000, std::numeric_limits<std::int64_t>::max() / 8);
  ReduceWorkspace workspace;
  cuda::Stream stream;
  const DeviceArray<std::int64_t> d(data, 0);
  EXPECT_THROW(reduce_on_device(d.data(), 40000, ReduceOp::sum, workspace, stream.handle()),
               InvalidInput);
  // The flag is cleared by the next launch.
  EXPECT_EQ(reduce_on_device(d.data(), 7, ReduceOp::sum, workspace, stream.handle()),
            7 * (std::numeric_limits<std::int64_t>::max() / 8));
}

// 2^31 + 7 int32 elements (8 GiB), every byte 0x01: each element is 0x01010101.
TEST(ReduceGpu, MoreThan2To31ElementsMadeOnTheDevice) {
  GPUKIT_REQUIRE_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 7;
  cuda::DeviceBuffer<std::int32_t> d(static_cast<std::size_t>(n) + 1);
  cuda::Stream stream;
  cuda::fill_bytes_async(d.data(), 0x01, static_cast<std::size_t>(n + 1) * 4, stream.handle());
  ReduceWorkspace workspace;
  // Misaligned by one element too: the engine's scalar path over 2^31 elements.
  for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
    EXPECT_EQ(reduce_on_device<std::int32_t>(d.data() + offset, n, ReduceOp::sum, workspace,
                                             stream.handle()),
              n * 0x01010101)
        << "offset " << offset;
  }
  EXPECT_EQ(reduce_on_device<std::int32_t>(d.data(), n, ReduceOp::max, workspace, stream.handle()),
            0x01010101);
}

}  // namespace
}  // namespace gpukit::primitives
