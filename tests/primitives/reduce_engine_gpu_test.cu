// The public reduction engine (gpukit/primitives/cuda/reduce.cuh) with operations of a user's own,
// through its host-side launch: a (min, max, count of negatives) triple over int32 against a plain
// fold (exact, so any bracketing must agree), and a float sum of squares against the CPU's
// canonical tree (bitwise: the engine and the CPU evaluate the same expression), at awkward sizes
// and a misaligned start, with the result poisoned before each launch.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/cuda/reduce.cuh"
#include "gpukit/primitives/reduce_canonical.hpp"

namespace gpukit::primitives {
namespace {

struct MinMaxNegatives {
  std::int32_t min, max;
  std::int64_t negatives;
  bool operator==(const MinMaxNegatives&) const = default;
};

struct MinMaxNegativesOp {
  using Input = std::int32_t;
  using Acc = MinMaxNegatives;
  __host__ __device__ static Acc identity() {
    return {std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min(), 0};
  }
  __host__ __device__ static Acc load(Input x) { return {x, x, x < 0 ? 1 : 0}; }
  __host__ __device__ Acc operator()(const Acc& a, const Acc& b) const {
    return {a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max,
            a.negatives + b.negatives};
  }
};

struct SumOfSquaresOp {
  using Input = float;
  using Acc = float;
  __host__ __device__ static Acc identity() { return 0.0f; }
  // Unfused on both sides so that the CPU and the GPU round alike.
  __host__ __device__ static Acc load(Input x) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(x, x);
#else
    return x * x;
#endif
  }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

// Flagged tile sums (up to 5000011: 306 tiles) and folded lanes over two rows of the level above
// (1100 tiles and 5).
const std::int64_t kSizes[] = {
    0, 1, 31, 1025, 16383, 16385, 3 * 16384 + 7, 1 << 20, 5000011, 1100 * 16384 + 5};

template <class Op>
typename Op::Acc run_engine(const std::vector<typename Op::Input>& host, std::size_t skip,
                            ReduceWorkspace& workspace, cuda::Stream& stream) {
  using Acc = typename Op::Acc;
  cuda::DeviceBuffer<typename Op::Input> data(host.size() + 1);
  cuda::copy_to_device(data.data() + skip, host.data(), host.size() * sizeof(host[0]));
  cuda::DeviceBuffer<Acc> result(1);
  cuda::fill_bytes_async(result.data(), 0xA5, sizeof(Acc), stream.handle());
  device::deterministic_reduce<Op>(data.data() + skip, static_cast<std::int64_t>(host.size()),
                                   result.data(), workspace, stream.handle());
  stream.synchronize();
  Acc value;
  cuda::copy_to_host(&value, result.data(), sizeof value);
  return value;
}

TEST(ReduceEngineGpu, UserTripleMatchesAPlainFold) {
  GPUKIT_REQUIRE_GPU();
  std::mt19937 rng(std::random_device{}());
  ReduceWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : kSizes) {
    if (testing::quick_tests() && n > (1 << 20)) continue;
    std::vector<std::int32_t> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = static_cast<std::int32_t>(rng());
    MinMaxNegatives expected = MinMaxNegativesOp::identity();
    for (const std::int32_t v : x)
      expected = MinMaxNegativesOp{}(expected, MinMaxNegativesOp::load(v));
    for (const std::size_t skip : {std::size_t{0}, std::size_t{1}}) {
      const MinMaxNegatives got = run_engine<MinMaxNegativesOp>(x, skip, workspace, stream);
      EXPECT_EQ(got, expected) << "n = " << n << ", start offset " << skip << ": min " << got.min
                               << " max " << got.max << " negatives " << got.negatives;
    }
  }
}

TEST(ReduceEngineGpu, UserFloatSumIsBitwiseTheCpuCanonicalTree) {
  GPUKIT_REQUIRE_GPU();
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  ReduceWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : kSizes) {
    if (testing::quick_tests() && n > (1 << 20)) continue;
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = value(rng);
    const float expected = canonical::reduce_canonical(
        x.data(), n, SumOfSquaresOp{}, [](float v) { return SumOfSquaresOp::load(v); });
    // The sequential sum rounds differently; the canonical tree must be what the engine computes.
    double exact = 0;
    for (const float v : x) exact += static_cast<double>(v) * v;
    for (const std::size_t skip : {std::size_t{0}, std::size_t{1}}) {
      const float got = run_engine<SumOfSquaresOp>(x, skip, workspace, stream);
      std::uint32_t got_bits, expected_bits;
      std::memcpy(&got_bits, &got, 4);
      std::memcpy(&expected_bits, &expected, 4);
      EXPECT_EQ(got_bits, expected_bits)
          << "n = " << n << ", offset " << skip << ": " << got << " vs the CPU tree's " << expected;
      EXPECT_NEAR(got, exact, 1e-5 * std::max(1.0, exact)) << "n = " << n;
    }
  }
}

// A launch captured in a CUDA graph runs again at each replay with the same arguments: the
// flagged hand-off's epoch must still be new each time (it advances on the device), or a replay
// would read the previous replay's tile sums. New data before each replay must give its sum.
TEST(ReduceEngineGpu, GraphReplaysSeeNewData) {
  GPUKIT_REQUIRE_GPU();
  std::mt19937 rng(20261121);  // fixed: a failure names n and the replay
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  ReduceWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : {std::int64_t{1} << 20, std::int64_t{5000011}}) {
    cuda::DeviceBuffer<float> data(static_cast<std::size_t>(n));
    cuda::DeviceBuffer<float> result(1);
    // The first launch outside the capture sizes the workspace (no allocation while capturing).
    device::deterministic_reduce<SumOfSquaresOp>(data.data(), n, result.data(), workspace,
                                                 stream.handle());
    stream.synchronize();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeThreadLocal),
              cudaSuccess);
    device::deterministic_reduce<SumOfSquaresOp>(data.data(), n, result.data(), workspace,
                                                 stream.handle());
    ASSERT_EQ(cudaStreamEndCapture(stream.handle(), &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int replay = 0; replay < 3; ++replay) {
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = value(rng);
      cuda::copy_to_device(data.data(), x.data(), x.size() * sizeof(float));
      cuda::synchronize_device();
      cuda::fill_bytes_async(result.data(), 0xA5, sizeof(float), stream.handle());
      ASSERT_EQ(cudaGraphLaunch(exec, stream.handle()), cudaSuccess);
      stream.synchronize();
      float got;
      cuda::copy_to_host(&got, result.data(), sizeof got);
      const float expected = canonical::reduce_canonical(
          x.data(), n, SumOfSquaresOp{}, [](float v) { return SumOfSquaresOp::load(v); });
      EXPECT_EQ(std::memcmp(&got, &expected, 4), 0)
          << "n = " << n << ", replay " << replay << ": " << got << " vs " << expected;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

TEST(ReduceEngineGpu, NegativeCountIsRefused) {
  GPUKIT_REQUIRE_GPU();
  ReduceWorkspace workspace;
  cuda::DeviceBuffer<float> result(1);
  EXPECT_THROW(
      device::deterministic_reduce<SumOfSquaresOp>(nullptr, -1, result.data(), workspace, nullptr),
      InvalidInput);
}

}  // namespace
}  // namespace gpukit::primitives
