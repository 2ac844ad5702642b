// The public scan engines (gpukit/primitives/cuda/scan.cuh: deterministic_scan; exact_scan, the
// classic look-back; exact_scan_sm90, the same look-back in persistent warp-specialised blocks;
// and their detail/ agents for the knobs tests turn) instantiated with operations of a user's own:
// a non-commutative 2x2 matrix product against a sequential fold (also with look-backs that must
// walk through aggregates alone), an operation that records any element past n reaching it, every
// tile size of the exact engine and the pipelined engine on one workspace that no memset clears
// between launches (scans, compactions, overflow reports), the pipelined engine for every type and
// operation of the API at awkward sizes and in other shapes than its default, and one scan over
// 2^31 + 7 elements (the API's default engine) made and checked on the device.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/cuda/compact.cuh"
#include "gpukit/primitives/cuda/scan.cuh"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives {

/// Pipelined shapes other than the default (ExactScanPolicySm90). Outside the anonymous
/// namespace so that their kernels keep external linkage, like the library's own, and compile to
/// the same PTX as the positional shapes they replace.
namespace test_shapes {
struct SmallStagesNoLag {
  static constexpr int stage_bytes = 8192;
  static constexpr int fold_stages = 2;
  static constexpr int scan_stages = 2;
  static constexpr int lag = 0;
  static constexpr int lookback_lag = 0;
  static constexpr int consumer_warps = 8;
  static constexpr int reducer_warps = 2;
};
struct SmallStagesLongLookbackLag {
  static constexpr int stage_bytes = 8192;
  static constexpr int fold_stages = 3;
  static constexpr int scan_stages = 2;
  static constexpr int lag = 3;
  static constexpr int lookback_lag = 5;
  static constexpr int consumer_warps = 4;
  static constexpr int reducer_warps = 2;
};
}  // namespace test_shapes

namespace {

namespace engine = device::detail;
namespace sm90 = device::detail::exact_scan_sm90_agent;

struct Matrix2 {
  std::uint32_t a, b, c, d;  // row major, arithmetic modulo 2^32
  bool operator==(const Matrix2&) const = default;
};

struct MatrixProduct {
  using Input = Matrix2;
  using Acc = Matrix2;
  __host__ __device__ Acc identity() const { return {1, 0, 0, 1}; }
  __host__ __device__ Acc load(const Input& x) const { return x; }
  __host__ __device__ Acc operator()(const Acc& x, const Acc& y) const {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
  }
};

enum class Engine { deterministic, exact, pipelined };
const char* engine_name(Engine e) {
  return e == Engine::exact       ? "exact_scan"
         : e == Engine::pipelined ? "exact_scan_sm90"
                                  : "deterministic_scan";
}

/// Whether the current GPU runs the pipelined engine (sm_90 and later).
bool pipelined_available() {
  int device = 0, major = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         major >= 9;
}

/// Scans with one of the public engines (each reserves its own workspace); the pipelined one
/// must take the call.
template <class Op, class Output>
void launch_engine(Engine engine, const Op& op, const typename Op::Input* input, Output* output,
                   std::int64_t n, ScanKind kind, ScanWorkspace& workspace, cudaStream_t stream) {
  if (engine == Engine::exact) {
    engine::exact_scan_agent::launch(op, input, output, n, kind, workspace, stream);
  } else if (engine == Engine::pipelined) {
    ASSERT_TRUE(sm90::launch(op, input, output, n, kind, workspace, stream))
        << "exact_scan_sm90 declined n=" << n;
  } else {
    workspace.reserve(device::deterministic_scan_workspace_bytes<Op>(n));
    device::deterministic_scan(op, input, output, n, kind, workspace, stream);
  }
}

TEST(ScanEngineGpu, NonCommutativeUserOperationMatchesASequentialFold) {
  GPUKIT_REQUIRE_GPU();
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  cuda::Stream stream;
  ScanWorkspace workspace;
  const MatrixProduct op;
  for (const std::int64_t n : {1, 2, 33, 1023, 1025, 4095, 4097, 70001, 1 << 20}) {
    std::vector<Matrix2> x(static_cast<std::size_t>(n));
    for (auto& m : x) {
      m = {std::uint32_t(rng() % 5), std::uint32_t(rng() % 5), std::uint32_t(rng() % 5),
           std::uint32_t(rng() % 5)};
    }
    x[0] = {1, 1, 0, 1};  // shears that do not commute open the array
    if (n > 1) x[1] = {1, 0, 1, 1};
    cuda::DeviceBuffer<Matrix2> in(x.size()), out(x.size());
    cuda::copy_to_device(in.data(), x.data(), x.size() * sizeof(Matrix2));
    cuda::synchronize_device();
    for (const auto& [engine, kind] : {std::pair{Engine::deterministic, ScanKind::inclusive},
                                       std::pair{Engine::deterministic, ScanKind::exclusive},
                                       std::pair{Engine::exact, ScanKind::inclusive},
                                       std::pair{Engine::exact, ScanKind::exclusive},
                                       std::pair{Engine::pipelined, ScanKind::inclusive},
                                       std::pair{Engine::pipelined, ScanKind::exclusive}}) {
      if (engine == Engine::pipelined && !pipelined_available()) continue;
      cuda::fill_bytes_async(out.data(), 0xA5, x.size() * sizeof(Matrix2), stream.handle());
      launch_engine(engine, op, in.data(), out.data(), n, kind, workspace, stream.handle());
      stream.synchronize();
      std::vector<Matrix2> y(x.size());
      cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(Matrix2));
      Matrix2 acc = op.identity();
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (kind == ScanKind::exclusive) {
          ASSERT_EQ(y[i], acc) << engine_name(engine) << " n=" << n << " i=" << i
                               << " seed=" << seed;
        }
        acc = op(acc, x[i]);
        if (kind == ScanKind::inclusive) {
          ASSERT_EQ(y[i], acc) << engine_name(engine) << " n=" << n << " i=" << i
                               << " seed=" << seed;
        }
      }
    }
  }
}

/// An int32 sum wrapping modulo 2^32: its accumulator fits the packed 64-bit status word.
struct WrappingIntSum {
  using Input = std::int32_t;
  using Acc = std::int32_t;
  __host__ __device__ Acc identity() const { return 0; }
  __host__ __device__ Acc load(Input x) const { return x; }
  __host__ __device__ Acc operator()(Acc x, Acc y) const {
    return static_cast<Acc>(static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(y));
  }
};

/// exact_scan with every tile but the first publishing only its aggregate, so each look-back walks
/// window after window of aggregates back to the first tile: the carry between windows, the
/// in-order combination within a lane's status words and across lanes, for a packed status word
/// (int32) and a split one (the 2x2 matrix product), at the default window and poll delay and at
/// other ones.
template <int kWords, unsigned kPollDelayNs, bool kPipelined = false, class Op>
void check_lookback_through_aggregates(const Op& op, std::int64_t n, std::mt19937& rng,
                                       std::uint64_t seed) {
  using T = typename Op::Input;
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) {
    if constexpr (std::is_same_v<T, Matrix2>) {
      v = {std::uint32_t(rng() % 5), std::uint32_t(rng() % 5), std::uint32_t(rng() % 5),
           std::uint32_t(rng() % 5)};
    } else {
      v = static_cast<T>(rng() % 1000003) - 500001;
    }
  }
  cuda::Stream stream;
  ScanWorkspace workspace;
  cuda::DeviceBuffer<T> in(x.size()), out(x.size());
  cuda::copy_to_device(in.data(), x.data(), x.size() * sizeof(T));
  cuda::synchronize_device();
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    cuda::fill_bytes_async(out.data(), 0xA5, x.size() * sizeof(T), stream.handle());
    if constexpr (kPipelined) {
      ASSERT_TRUE((sm90::launch<sm90::ExactScanPolicySm90, false>(
          op, in.data(), out.data(), n, kind, workspace, stream.handle())));
    } else {
      // One sub-tile a tile: the most tiles, so the longest walks.
      engine::exact_scan_agent::launch<kWords, kPollDelayNs, false>(
          op, in.data(), out.data(), n, kind, workspace, stream.handle(), 0,
          /*sub_tiles=*/1);
    }
    stream.synchronize();
    std::vector<T> y(x.size());
    cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(T));
    auto acc = op.identity();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (kind == ScanKind::exclusive) {
        ASSERT_EQ(y[i], acc) << "words=" << kWords << " delay=" << kPollDelayNs << " n=" << n
                             << " i=" << i << " seed=" << seed;
      }
      acc = op(acc, op.load(x[i]));
      if (kind == ScanKind::inclusive) {
        ASSERT_EQ(y[i], acc) << "words=" << kWords << " delay=" << kPollDelayNs << " n=" << n
                             << " i=" << i << " seed=" << seed;
      }
    }
  }
}

TEST(ScanEngineGpu, ExactLookbackThroughAggregatesAloneCombinesInOrder) {
  GPUKIT_REQUIRE_GPU();
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  // int32: 1024 tiles of 4096 at 2^22 (the last walks 32 windows of 32); matrices: 1024 tiles.
  for (const std::int64_t n : {4097, 300001, 1 << 22}) {
    check_lookback_through_aggregates<engine::kLookbackWords, engine::kLookbackPollDelayNs>(
        WrappingIntSum{}, n, rng, seed);
    check_lookback_through_aggregates<4, 0>(WrappingIntSum{}, n, rng, seed);
    check_lookback_through_aggregates<1, 200>(WrappingIntSum{}, n, rng, seed);
  }
  for (const std::int64_t n : {70001, 1 << 20}) {
    check_lookback_through_aggregates<engine::kLookbackWords, engine::kLookbackPollDelayNs>(
        MatrixProduct{}, n, rng, seed);
    check_lookback_through_aggregates<3, 100>(MatrixProduct{}, n, rng, seed);
  }
  if (!pipelined_available()) return;
  // The pipelined engine: 8192-element tiles of int32 (512 at 2^22), 2048 of matrices.
  for (const std::int64_t n : {8193, 300001, 1 << 22}) {
    check_lookback_through_aggregates<1, 0, true>(WrappingIntSum{}, n, rng, seed);
  }
  for (const std::int64_t n : {70001, 1 << 20}) {
    check_lookback_through_aggregates<1, 0, true>(MatrixProduct{}, n, rng, seed);
  }
}

/// An exact int32 sum as gpukit's (int64 accumulator clamped to +-2^40 between tiles, so that the
/// status word packs it; outputs must fit int32, else the first failing index is reported).
struct CheckedIntSum {
  using Input = std::int32_t;
  using Acc = long long;
  __host__ __device__ Acc identity() const { return 0; }
  __host__ __device__ Acc load(Input x) const { return x; }
  __host__ __device__ Acc operator()(Acc x, Acc y) const { return x + y; }
  __host__ __device__ static bool fits(Acc y) { return y >= INT32_MIN && y <= INT32_MAX; }
  __host__ __device__ static Input store(Acc y) { return static_cast<Input>(y); }
  __host__ __device__ static Acc clamp_carry(Acc y) {
    constexpr Acc kLimit = Acc{1} << 40;
    return y > kLimit ? kLimit : (y < -kLimit ? -kLimit : y);
  }
};

struct KeepPositive {
  __host__ __device__ bool operator()(std::int32_t x) const { return x > 0; }
};

/// Checks that a finished launch over `tiles` tiles left its tile counter, done counter, report
/// gate and every tile's status word zero (the next launch's memset-free start depends on it; the
/// overflow report may hold anything). The status is the packed one of CheckedIntSum and of the
/// compaction's count.
void expect_status_left_clean(const ScanWorkspace& workspace, std::int64_t tiles,
                              const std::string& context) {
  std::vector<unsigned long long> words(engine::kStatusOffset / 8 + std::size_t(tiles));
  cuda::copy_to_host(words.data(), workspace.data(), words.size() * sizeof(unsigned long long));
  EXPECT_EQ(words[offsetof(engine::LaunchControl, tile_counter) / 8], 0u)
      << context << ": tile counter";
  EXPECT_EQ(words[offsetof(engine::LaunchControl, done_counter) / 8], 0u)
      << context << ": done counter";
  EXPECT_EQ(words[offsetof(engine::LaunchControl, report_cleared) / 8], 0u)
      << context << ": report gate";
  for (std::int64_t t = 0; t < tiles; ++t) {
    ASSERT_EQ(words[engine::kStatusOffset / 8 + std::size_t(t)], 0u)
        << context << ": status of tile " << t << " of " << tiles;
  }
}

/// The same for an exact-engine launch (or compaction) over `n` int32 elements with `sub_tiles`
/// sub-tiles a tile (0: the default rule).
void expect_workspace_left_clean(const ScanWorkspace& workspace, std::int64_t n, int sub_tiles,
                                 const char* what, std::uint64_t seed) {
  if (sub_tiles == 0) sub_tiles = engine::sub_tiles_for<std::int32_t>(n);
  const std::int64_t tile = std::int64_t{sub_tiles} * engine::TileShape<std::int32_t>::kSubTile;
  expect_status_left_clean(workspace, (n + tile - 1) / tile,
                           std::string(what) + ", n=" + std::to_string(n) + " sub_tiles=" +
                               std::to_string(sub_tiles) + " seed=" + std::to_string(seed));
}

/// Scans x on the exact engine with `sub_tiles` sub-tiles a tile (0: the default rule); checks
/// every output, the overflow report (-1 expected unless `first_overflow` says otherwise) and that
/// the workspace is left clean.
void check_exact_sum(const std::vector<std::int32_t>& x, const cuda::DeviceBuffer<std::int32_t>& in,
                     cuda::DeviceBuffer<std::int32_t>& out, int sub_tiles, ScanKind kind,
                     ScanWorkspace& workspace, cuda::Stream& stream, std::uint64_t seed,
                     std::int64_t first_overflow = -1) {
  const auto n = static_cast<std::int64_t>(x.size());
  cuda::fill_bytes_async(out.data(), 0xA5, x.size() * sizeof(std::int32_t), stream.handle());
  engine::exact_scan_agent::launch(CheckedIntSum{}, in.data(), out.data(), n, kind, workspace,
                                   stream.handle(), 0, sub_tiles);
  stream.synchronize();
  std::vector<std::int32_t> y(x.size());
  cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(std::int32_t));
  EXPECT_EQ(device::scan_overflow_index(workspace), first_overflow)
      << "n=" << n << " sub_tiles=" << sub_tiles << " seed=" << seed;
  expect_workspace_left_clean(workspace, n, sub_tiles, "scan", seed);
  if (first_overflow >= 0) return;
  long long acc = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (kind == ScanKind::exclusive) {
      ASSERT_EQ(y[i], acc) << "n=" << n << " sub_tiles=" << sub_tiles << " i=" << i
                           << " seed=" << seed;
    }
    acc += x[i];
    if (kind == ScanKind::inclusive) {
      ASSERT_EQ(y[i], acc) << "n=" << n << " sub_tiles=" << sub_tiles << " i=" << i
                           << " seed=" << seed;
    }
  }
}

/// n random int32 in [-1000, 1000] on the host, the same on the device, and an output buffer.
std::tuple<std::vector<std::int32_t>, cuda::DeviceBuffer<std::int32_t>,
           cuda::DeviceBuffer<std::int32_t>>
random_ints(std::int64_t n, std::mt19937& rng) {
  std::vector<std::int32_t> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<std::int32_t>(rng() % 2001) - 1000;
  cuda::DeviceBuffer<std::int32_t> in(x.size()), out(x.size());
  cuda::copy_to_device(in.data(), x.data(), x.size() * sizeof(std::int32_t));
  cuda::synchronize_device();
  return {std::move(x), std::move(in), std::move(out)};
}

/// int32 inputs (n = 100001) whose exact sum first overflows at a known index, on the device:
/// 2^30 everywhere (inclusive: index 1, exclusive: 2), ones (never), ones with INT32_MAX at 70000
/// (late in a full tile) and at 99999 (in a partial last tile of either engine).
struct OverflowInputs {
  struct Case {
    std::vector<std::int32_t> host;
    cuda::DeviceBuffer<std::int32_t> device;
  };
  static constexpr std::size_t kCount = 100001;
  Case big = make(1 << 30), small = make(1), late = make(1, 70000), last = make(1, 99999);
  cuda::DeviceBuffer<std::int32_t> out{kCount};

  static Case make(std::int32_t value, std::size_t max_at = kCount) {
    Case c{std::vector<std::int32_t>(kCount, value), cuda::DeviceBuffer<std::int32_t>(kCount)};
    if (max_at < kCount) c.host[max_at] = INT32_MAX;
    cuda::copy_to_device(c.device.data(), c.host.data(), kCount * sizeof(std::int32_t));
    cuda::synchronize_device();
    return c;
  }
};

// The exact engine's kernels leave the workspace's counters and tile flags zero for the next
// launch (no memset between launches; checked after every launch): every tile size, arrays
// growing and shrinking, exact scans and compactions on one workspace, and overflow reports that
// must not outlive their launch.
TEST(ScanEngineGpu, ExactEngineEveryTileSizeOnOneWorkspaceWithoutMemsets) {
  GPUKIT_REQUIRE_GPU();
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  cuda::Stream stream;
  ScanWorkspace workspace;
  cuda::DeviceBuffer<long long> kept(1);
  int round = 0;
  const std::int64_t large = (std::int64_t{1} << (gpukit::testing::quick_tests() ? 18 : 22)) + 3;
  for (const std::int64_t n :
       {std::int64_t{300001}, std::int64_t{1}, std::int64_t{4097}, large, std::int64_t{65536},
        std::int64_t{16383}, std::int64_t{1} << 20, std::int64_t{70001}}) {
    auto [x, in, out] = random_ints(n, rng);
    for (int sub_tiles = 0; sub_tiles <= engine::kSubTiles; ++sub_tiles) {
      const ScanKind kind = (round++ % 2 == 0) ? ScanKind::inclusive : ScanKind::exclusive;
      check_exact_sum(x, in, out, sub_tiles, kind, workspace, stream, seed);
      // A compaction on the same workspace between scans.
      cuda::fill_bytes_async(out.data(), 0xA5, x.size() * sizeof(std::int32_t), stream.handle());
      engine::compact_agent::launch(KeepPositive{}, in.data(), out.data(), n, kept.data(),
                                    workspace, stream.handle(), sub_tiles);
      stream.synchronize();
      expect_workspace_left_clean(workspace, n, sub_tiles, "compaction", seed);
      std::vector<std::int32_t> expected;
      for (const std::int32_t v : x) {
        if (v > 0) expected.push_back(v);
      }
      long long count = -1;
      cuda::copy_to_host(&count, kept.data(), sizeof count);
      ASSERT_EQ(count, static_cast<long long>(expected.size()))
          << "compaction n=" << n << " sub_tiles=" << sub_tiles << " seed=" << seed;
      std::vector<std::int32_t> y(expected.size());
      cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(std::int32_t));
      ASSERT_EQ(y, expected) << "compaction n=" << n << " sub_tiles=" << sub_tiles
                             << " seed=" << seed;
    }
  }
  // Overflow reports: each launch clears the last one's. 2^30 everywhere overflows at index 1
  // (inclusive); later first overflows (70000, 99999) must not be masked by an earlier report.
  OverflowInputs o;
  for (int sub_tiles = 1; sub_tiles <= engine::kSubTiles; ++sub_tiles) {
    check_exact_sum(o.big.host, o.big.device, o.out, sub_tiles, ScanKind::inclusive, workspace,
                    stream, seed, 1);
    check_exact_sum(o.small.host, o.small.device, o.out, sub_tiles, ScanKind::inclusive, workspace,
                    stream, seed);
    check_exact_sum(o.big.host, o.big.device, o.out, sub_tiles, ScanKind::exclusive, workspace,
                    stream, seed, 2);
    check_exact_sum(o.late.host, o.late.device, o.out, sub_tiles, ScanKind::inclusive, workspace,
                    stream, seed, 70000);
    check_exact_sum(o.last.host, o.last.device, o.out, sub_tiles, ScanKind::inclusive, workspace,
                    stream, seed, 99999);
  }
}

// Counts the operands it sees that are poison (negative: element n + k holds -(k + 1)), and
// records the furthest one.
struct PoisonSensingSum {
  using Input = int;
  using Acc = int;
  unsigned* poison_seen;  // [0] how many, [1] the largest k + 1
  __host__ __device__ Acc identity() const { return 0; }
  __device__ Acc load(int x) const {
    if (x < 0) {
      atomicAdd(poison_seen, 1u);
      atomicMax(poison_seen + 1, static_cast<unsigned>(-x));
    }
    return x;
  }
  __host__ __device__ Acc operator()(Acc x, Acc y) const { return x + y; }
};

TEST(ScanEngineGpu, NoElementPastTheEndReachesTheOperation) {
  GPUKIT_REQUIRE_GPU();
  cuda::Stream stream;
  ScanWorkspace workspace;
  cuda::DeviceBuffer<unsigned> poison_seen(2);
  for (const Engine engine : {Engine::deterministic, Engine::exact, Engine::pipelined}) {
    if (engine == Engine::pipelined && !pipelined_available()) continue;
    for (const std::int64_t n : {1, 127, 4095, 4097, 8191, 8193, 100001}) {
      std::vector<int> buffer(static_cast<std::size_t>(n) + 8192);
      for (std::size_t i = 0; i < buffer.size(); ++i) {
        buffer[i] = std::int64_t(i) < n ? int(i % 3) : -int(i - std::size_t(n) + 1);
      }
      cuda::DeviceBuffer<int> in(buffer.size()), out(static_cast<std::size_t>(n));
      cuda::copy_to_device(in.data(), buffer.data(), buffer.size() * sizeof(int));
      cuda::fill_bytes_async(out.data(), 0xA5, out.size() * sizeof(int), stream.handle());
      cuda::fill_bytes_async(poison_seen.data(), 0, 2 * sizeof(unsigned), stream.handle());
      // A pageable copy may still be in flight when cudaMemcpy returns; the stream does not wait
      // for the legacy stream.
      cuda::synchronize_device();
      const PoisonSensingSum op{poison_seen.data()};
      launch_engine(engine, op, in.data(), out.data(), n, ScanKind::inclusive, workspace,
                    stream.handle());
      stream.synchronize();
      std::array<unsigned, 2> seen = {1, 1};
      cuda::copy_to_host(seen.data(), poison_seen.data(), sizeof seen);
      EXPECT_EQ(seen[0], 0u) << engine_name(engine) << " n=" << n << ", furthest element seen: n + "
                             << seen[1] - 1;
      // Every element against the running sum (the output was poisoned: 0xA5A5A5A5 is negative).
      std::vector<int> y(static_cast<std::size_t>(n));
      cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(int));
      std::int64_t expected = 0, wrong = 0, first_wrong = -1;
      for (std::int64_t i = 0; i < n; ++i) {
        expected += i % 3;
        if (y[static_cast<std::size_t>(i)] != expected && wrong++ == 0) first_wrong = i;
      }
      EXPECT_EQ(wrong, 0) << engine_name(engine) << " n=" << n << ", first wrong at "
                          << first_wrong;
    }
  }
}

// --- the pipelined engine: every type and operation of the API ---------------------------------

template <class T>
T random_value(std::mt19937& rng, ScanOp op) {
  if constexpr (std::is_floating_point_v<T>) {
    const std::uint32_t r = rng() % 1000;
    if (r == 0) return std::numeric_limits<T>::quiet_NaN();
    if (r < 4) return r % 2 ? T(-0.0) : T(0.0);  // signed zeros: min and max tell them apart
    return static_cast<T>(static_cast<int>(rng() % 200001) - 100000) / T(64);
  } else if (op == ScanOp::product) {
    return static_cast<T>(rng() % 7 == 0 ? 1 : 1 + rng() % 5);  // wraps: exact modulo 2^w
  } else if (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int>(rng() % 2001) - 1000);
  } else {
    return static_cast<T>(rng() % 1000);
  }
}

/// Same bits, so that NaN == NaN and -0.0 != +0.0.
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// The pipelined engine (of shape Policy) on `op` (a functor of scan_ops.hpp, as the API passes it)
/// against the same functor folded on the host, element by element.
template <class T, class Policy = sm90::ExactScanPolicySm90, class Op>
void check_pipelined(const Op& op, ScanOp which, std::int64_t n, ScanKind kind,
                     ScanWorkspace& workspace, cuda::Stream& stream, std::mt19937& rng,
                     std::uint64_t seed, const char* name) {
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = random_value<T>(rng, which);
  cuda::DeviceBuffer<T> in(std::max<std::size_t>(x.size(), 1)), out(in.size());
  if (n > 0) cuda::copy_to_device(in.data(), x.data(), x.size() * sizeof(T));
  cuda::synchronize_device();
  cuda::fill_bytes_async(out.data(), 0xA5, in.size() * sizeof(T), stream.handle());
  ASSERT_TRUE(sm90::launch<Policy>(op, in.data(), out.data(), n, kind, workspace, stream.handle()));
  stream.synchronize();
  EXPECT_EQ(device::scan_overflow_index(workspace), -1) << name << " n=" << n << " seed=" << seed;
  std::vector<T> y(x.size());
  if (n > 0) cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(T));
  typename Op::Acc acc = canonical_scan::initial_value(op);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (kind == ScanKind::exclusive) {
      ASSERT_TRUE(same_bits(y[i], static_cast<T>(op.store(acc))))
          << name << " exclusive n=" << n << " i=" << i << " seed=" << seed;
    }
    acc = op(acc, op.load(x[i]));
    if (kind == ScanKind::inclusive) {
      ASSERT_TRUE(same_bits(y[i], static_cast<T>(op.store(acc))))
          << name << " inclusive n=" << n << " i=" << i << " seed=" << seed;
    }
  }
}

template <class T>
void check_pipelined_every_operation(const char* type_name, const std::vector<std::int64_t>& sizes,
                                     std::mt19937& rng, std::uint64_t seed) {
  cuda::Stream stream;
  ScanWorkspace workspace;
  std::vector<ScanOp> ops = {ScanOp::min, ScanOp::max};
  if constexpr (std::is_integral_v<T>) {
    ops.push_back(ScanOp::sum);
    ops.push_back(ScanOp::product);
  }
  for (const ScanOp which : ops) {
    for (const std::int64_t n : sizes) {
      for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
        const std::string name = std::string(type_name) + " op " + std::to_string(int(which));
        detail::with_scan_op<T, /*kExact=*/true>(which, [&](auto op) {
          check_pipelined<T>(op, which, n, kind, workspace, stream, rng, seed, name.c_str());
        });
      }
    }
  }
}

TEST(ScanEngineGpu, PipelinedEngineEveryTypeAndOperationMatchesTheSequentialFold) {
  GPUKIT_REQUIRE_GPU();
  if (!pipelined_available()) GPUKIT_GPU_SKIP("the pipelined engine needs sm_90");
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  // Tiles are 32 KB: 8192 4-byte or 4096 8-byte elements; sizes around them, partial chunks at
  // the end (odd counts), and more tiles than the GPU has blocks.
  std::vector<std::int64_t> sizes = {0,    1,     2,     31,     32,           33,
                                     1023, 1025,  4095,  4097,   8191,         8192,
                                     8193, 65535, 65537, 300001, (1 << 21) + 3};
  if (!gpukit::testing::quick_tests()) {
    sizes.push_back((1 << 23) - 1);
    sizes.push_back(static_cast<std::int64_t>(rng() % (1 << 22)) + 1);
  }
  check_pipelined_every_operation<std::int32_t>("int32", sizes, rng, seed);
  check_pipelined_every_operation<std::uint32_t>("uint32", sizes, rng, seed);
  check_pipelined_every_operation<std::int64_t>("int64", sizes, rng, seed);
  check_pipelined_every_operation<float>("float", sizes, rng, seed);
  check_pipelined_every_operation<double>("double", sizes, rng, seed);
}

/// The CheckedIntSum above, declared commutative: the reducers' column-first path.
struct CommutativeCheckedIntSum : CheckedIntSum {
  static constexpr bool kCommutative = true;
};
// Named here because nvcc does not count the engine's requires-expression as a use (#177-D).
static_assert(CommutativeCheckedIntSum::kCommutative);

/// Scans x on the pipelined engine; checks every output, the overflow report and that the
/// workspace is left clean (tiles of 8192 int32).
template <class Op>
void check_pipelined_sum(const Op& op, const std::vector<std::int32_t>& x,
                         const cuda::DeviceBuffer<std::int32_t>& in,
                         cuda::DeviceBuffer<std::int32_t>& out, ScanKind kind,
                         ScanWorkspace& workspace, cuda::Stream& stream, std::uint64_t seed,
                         std::int64_t first_overflow = -1) {
  const auto n = static_cast<std::int64_t>(x.size());
  cuda::fill_bytes_async(out.data(), 0xA5, x.size() * sizeof(std::int32_t), stream.handle());
  ASSERT_TRUE(sm90::launch(op, in.data(), out.data(), n, kind, workspace, stream.handle()));
  stream.synchronize();
  EXPECT_EQ(device::scan_overflow_index(workspace), first_overflow)
      << "pipelined n=" << n << " seed=" << seed;
  expect_status_left_clean(
      workspace, sm90::tile_count<sm90::PipelineShape<sm90::ExactScanPolicySm90>, std::int32_t>(n),
      "pipelined, n=" + std::to_string(n) + " seed=" + std::to_string(seed));
  if (first_overflow >= 0) return;
  std::vector<std::int32_t> y(x.size());
  cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(std::int32_t));
  long long acc = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (kind == ScanKind::exclusive) {
      ASSERT_EQ(y[i], acc) << "pipelined n=" << n << " i=" << i << " seed=" << seed;
    }
    acc += x[i];
    if (kind == ScanKind::inclusive) {
      ASSERT_EQ(y[i], acc) << "pipelined n=" << n << " i=" << i << " seed=" << seed;
    }
  }
}

// The pipelined engine leaves the workspace as it found it (no memset between launches), also
// between launches of the exact engine and compactions on the same workspace, reports the first
// overflowing index (in a full tile and in the partial last one) and declines misaligned data.
/// Shapes of the pipelined engine other than the default, on int32 sums (packed status words) and
/// int64 sums (split ones): small stages, so that a block takes many tiles and every ring of
/// stages and slots wraps many times; the second copy right after the first with the look-back
/// right after the fold (lags 0); a look-back that waits for more folded tiles than the copies'
/// lag (the most the shape allows); four consumer warps.
template <class Policy>
void check_pipelined_shape(const char* shape, std::mt19937& rng, std::uint64_t seed) {
  cuda::Stream stream;
  ScanWorkspace workspace;
  for (const std::int64_t n : {1, 2047, 2049, 300001, (1 << 22) + 5}) {
    for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
      const std::string name = std::string(shape) + " int32 sum";
      detail::with_scan_op<std::int32_t, /*kExact=*/true>(ScanOp::sum, [&](auto op) {
        check_pipelined<std::int32_t, Policy>(op, ScanOp::sum, n, kind, workspace, stream, rng,
                                              seed, name.c_str());
      });
      const std::string wide = std::string(shape) + " int64 sum";
      detail::with_scan_op<std::int64_t, /*kExact=*/true>(ScanOp::sum, [&](auto op) {
        check_pipelined<std::int64_t, Policy>(op, ScanOp::sum, n, kind, workspace, stream, rng,
                                              seed, wide.c_str());
      });
    }
  }
}

TEST(ScanEngineGpu, PipelinedEngineOtherShapesMatchTheSequentialFold) {
  GPUKIT_REQUIRE_GPU();
  if (!pipelined_available()) GPUKIT_GPU_SKIP("the pipelined engine needs sm_90");
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  check_pipelined_shape<test_shapes::SmallStagesNoLag>("8 KB, lags 0", rng, seed);
  check_pipelined_shape<test_shapes::SmallStagesLongLookbackLag>(
      "8 KB, look-back lag 5, four consumers", rng, seed);
}

TEST(ScanEngineGpu, PipelinedEngineSharesOneWorkspaceWithoutMemsetsAndReportsOverflows) {
  GPUKIT_REQUIRE_GPU();
  if (!pipelined_available()) GPUKIT_GPU_SKIP("the pipelined engine needs sm_90");
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  cuda::Stream stream;
  ScanWorkspace workspace;
  cuda::DeviceBuffer<long long> kept(1);
  int round = 0;
  for (const std::int64_t n :
       {std::int64_t{300001}, std::int64_t{1}, std::int64_t{8193}, (std::int64_t{1} << 22) + 5,
        std::int64_t{65536}, std::int64_t{16383}}) {
    auto [x, in, out] = random_ints(n, rng);
    const ScanKind kind = (round++ % 2 == 0) ? ScanKind::inclusive : ScanKind::exclusive;
    check_pipelined_sum(CommutativeCheckedIntSum{}, x, in, out, kind, workspace, stream, seed);
    check_exact_sum(x, in, out, 0, kind, workspace, stream, seed);
    check_pipelined_sum(CheckedIntSum{}, x, in, out, kind, workspace, stream, seed);
    engine::compact_agent::launch(KeepPositive{}, in.data(), out.data(), n, kept.data(), workspace,
                                  stream.handle());
    stream.synchronize();
    expect_workspace_left_clean(workspace, n, 0, "compaction", seed);
    check_pipelined_sum(CommutativeCheckedIntSum{}, x, in, out, kind, workspace, stream, seed);
  }
  // Overflows: at index 1 (everything 2^30), none, at 2 (exclusive), late in a full tile, and in
  // the partial last tile; each launch clears the last one's report.
  OverflowInputs o;
  for (const bool commutative : {true, false}) {
    const auto check = [&](const OverflowInputs::Case& x, ScanKind kind,
                           std::int64_t first_overflow) {
      if (commutative) {
        check_pipelined_sum(CommutativeCheckedIntSum{}, x.host, x.device, o.out, kind, workspace,
                            stream, seed, first_overflow);
      } else {
        check_pipelined_sum(CheckedIntSum{}, x.host, x.device, o.out, kind, workspace, stream, seed,
                            first_overflow);
      }
    };
    check(o.big, ScanKind::inclusive, 1);
    check(o.small, ScanKind::inclusive, -1);
    check(o.big, ScanKind::exclusive, 2);
    check(o.late, ScanKind::inclusive, 70000);
    check(o.last, ScanKind::inclusive, 99999);
  }
  // Not 16-byte aligned: declined, nothing launched.
  const auto n = static_cast<std::int64_t>(OverflowInputs::kCount);
  EXPECT_FALSE(sm90::launch(CheckedIntSum{}, o.small.device.data() + 1, o.out.data(), n - 1,
                            ScanKind::inclusive, workspace, stream.handle()));
  EXPECT_FALSE(sm90::launch(CheckedIntSum{}, o.small.device.data(), o.out.data() + 2, n - 2,
                            ScanKind::inclusive, workspace, stream.handle()));
}

// int64 sums carry 128-bit prefixes: a split status (flags, then aggregate and inclusive arrays
// after them). A launch with fewer tiles writes its value arrays where a launch with more tiles
// keeps flags, so the workspace must not count that area clean afterwards: exact and pipelined
// launches of several sizes alternate on one workspace, each checked against the host.
TEST(ScanEngineGpu, SplitStatusLaunchesOfEverySizeShareOneWorkspace) {
  GPUKIT_REQUIRE_GPU();
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<unsigned>(seed));
  cuda::Stream stream;
  ScanWorkspace workspace;
  const detail::ExactScanSum<std::int64_t> op;
  for (int round = 0; round < 3; ++round) {
    for (const std::int64_t n :
         {std::int64_t{300001}, std::int64_t{5000}, std::int64_t{1} << 20, std::int64_t{70001}}) {
      std::vector<std::int64_t> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = static_cast<std::int64_t>(rng() % 2001) - 1000;
      cuda::DeviceBuffer<std::int64_t> in(x.size()), out(x.size());
      cuda::copy_to_device(in.data(), x.data(), x.size() * sizeof(std::int64_t));
      cuda::synchronize_device();
      for (const Engine engine : {Engine::exact, Engine::pipelined}) {
        if (engine == Engine::pipelined && !pipelined_available()) continue;
        const ScanKind kind = (n + round) % 2 ? ScanKind::inclusive : ScanKind::exclusive;
        cuda::fill_bytes_async(out.data(), 0xA5, x.size() * sizeof(std::int64_t), stream.handle());
        launch_engine(engine, op, in.data(), out.data(), n, kind, workspace, stream.handle());
        stream.synchronize();
        std::vector<std::int64_t> y(x.size());
        cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(std::int64_t));
        std::int64_t acc = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (kind == ScanKind::exclusive) {
            ASSERT_EQ(y[i], acc) << engine_name(engine) << " n=" << n << " i=" << i
                                 << " round=" << round << " seed=" << seed;
          }
          acc += x[i];
          if (kind == ScanKind::inclusive) {
            ASSERT_EQ(y[i], acc) << engine_name(engine) << " n=" << n << " i=" << i
                                 << " round=" << round << " seed=" << seed;
          }
        }
      }
    }
  }
}

// --- one scan past 2^31 elements ---------------------------------------------------------------

// x[i] = 1 + (i % 3 == 0): the inclusive sum is (i + 1) + (i / 3 + 1), below 2^32 for every i
// here, and an error in any tile's carry shows at every later element.
__global__ void fill_ones_and_twos(std::uint32_t* x, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    x[i] = 1u + (i % 3 == 0 ? 1u : 0u);
  }
}

__global__ void count_wrong_prefixes(const std::uint32_t* y, std::int64_t n,
                                     unsigned long long* wrong, unsigned long long* first_wrong) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const auto expected = static_cast<std::uint32_t>((i + 1) + (i / 3 + 1));
    if (y[i] != expected) {
      atomicAdd(wrong, 1ull);
      atomicMin(first_wrong, static_cast<unsigned long long>(i));
    }
  }
}

TEST(ScanEngineGpu, InPlaceSumOverMoreThan2To31Elements) {
  GPUKIT_REQUIRE_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 7;
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  if (free_bytes < std::size_t(n) * sizeof(std::uint32_t) + (std::size_t{1} << 30)) {
    GPUKIT_GPU_SKIP("needs 9 GB of free device memory");
  }
  cuda::Stream stream;
  ScanWorkspace workspace;
  cuda::DeviceBuffer<std::uint32_t> x(static_cast<std::size_t>(n));
  cuda::DeviceBuffer<unsigned long long> counters(2);
  fill_ones_and_twos<<<1024, 256, 0, stream.handle()>>>(x.data(), n);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  // gpukit's exact uint32 sum, through the API (in place, overflow checked).
  scan_on_device(x.data(), x.data(), n, ScanOp::sum, ScanKind::inclusive, workspace,
                 stream.handle());
  const std::array<unsigned long long, 2> initial = {0ull, ~0ull};
  cuda::copy_to_device(counters.data(), initial.data(), sizeof initial);
  count_wrong_prefixes<<<1024, 256, 0, stream.handle()>>>(x.data(), n, counters.data(),
                                                          counters.data() + 1);
  stream.synchronize();
  std::array<unsigned long long, 2> result{};
  cuda::copy_to_host(result.data(), counters.data(), sizeof result);
  EXPECT_EQ(result[0], 0ull) << "first wrong element at " << result[1];
}

}  // namespace
}  // namespace gpukit::primitives
