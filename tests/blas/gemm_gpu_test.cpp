// Every CUDA GEMM variant of the registry (gemm_variants.hpp), one by one through a GemmPlan on
// device data, in every precision it computes: ragged shapes x both layouts x transposes x padded
// leading dimensions against the long-double reference within gemm_error_bound (the derivation
// is in gemm_test.cpp's header and gemm.hpp), exact integer products, beta = 0 over a C poisoned
// with NaN (0xFF bytes), a plan run twice giving the same bits, rows past gridDim.y's limit, and
// double-buffered's large tiles (the ragged shapes take its small ones).
// A new registry entry is tested here with no new test code.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "blas/cuda/gemm_launchers.hpp"
#include "gemm_test_support.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/blas/gemm_variants.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "test_seed.hpp"

namespace gpukit::blas {
namespace {

using gpukit::testing::TestSeed;
using testing::GemmCase;
using testing::GemmInputs;
using testing::GemmRunner;
using testing::Values;

// Runs one variant: A, B and C (with its padding) to the device, the device C poisoned with 0xFF
// bytes (a NaN pattern) first where beta = 0, the plan run on a stream, C back.
template <class T>
GemmRunner<T> on_device(const std::string& variant) {
  return [variant](const GemmInputs<T>& in, std::vector<T>& c) {
    const GemmProblem& p = in.problem;
    GemmPlan plan(Context::cuda(), p, variant);
    cuda::DeviceBuffer<T> d_a(in.a.size()), d_b(in.b.size()), d_c(c.size());
    d_a.copy_from_host(in.a);
    d_b.copy_from_host(in.b);
    d_c.copy_from_host(c);
    cuda::Stream stream;
    if (in.beta == T(0)) {
      // Poison C's elements (not its padding, which must come back as it went).
      const std::int64_t ldc = p.effective_ldc();
      const std::int64_t outer = p.layout == Layout::row_major ? p.m : p.n;
      const std::int64_t inner = p.layout == Layout::row_major ? p.n : p.m;
      for (std::int64_t o = 0; o < outer; ++o) {
        cuda::fill_bytes_async(d_c.data() + o * ldc, 0xFF,
                               static_cast<std::size_t>(inner) * sizeof(T), stream.handle());
      }
    }
    plan.run(in.alpha, d_a.data(), d_b.data(), in.beta, d_c.data(), stream.handle());
    stream.synchronize();
    d_c.copy_to_host(c);
  };
}

class GemmVariantTest : public ::testing::Test {
 protected:
  void SetUp() override { GPUKIT_REQUIRE_GPU(); }
};

// The variants this device runs: every one on an H100 or H200, where the GPU check runs (the
// sm_90a ones need compute capability 9.0; GPUKIT_REQUIRE_GPU turns their absence into a failure
// there).
std::vector<const GemmVariant*> runnable_variants() {
  std::vector<const GemmVariant*> runnable;
  for (const GemmVariant& variant : gemm_variants()) {
    const std::string why_not = gemm_variant_device_support(variant, 0);
    if (why_not.empty()) {
      runnable.push_back(&variant);
    } else if (::gpukit::testing::gpu_required()) {
      ADD_FAILURE() << why_not;
    }
  }
  return runnable;
}

// The float-stored precisions a variant computes (float32, tf32, bf16).
std::vector<GemmPrecision> float_precisions(const GemmVariant& variant) {
  std::vector<GemmPrecision> precisions;
  for (const GemmPrecision q : {GemmPrecision::float32, GemmPrecision::tf32, GemmPrecision::bf16}) {
    if (variant.computes(q)) precisions.push_back(q);
  }
  return precisions;
}

TEST_F(GemmVariantTest, EveryVariantMatchesTheReferenceOnRaggedShapesLayoutsAndTransposes) {
  ASSERT_FALSE(gemm_variants().empty());
  const TestSeed seed;
  std::uint64_t stream = seed.value();
  for (const GemmVariant* v : runnable_variants()) {
    const GemmVariant& variant = *v;
    for (const GemmPrecision precision : testing::kPrecisions) {
      if (!variant.computes(precision)) continue;
      testing::with_storage_type(precision, [&]<class T>() {
        for (const GemmCase& shape : testing::ragged_cases()) {
          for (const Layout layout : testing::kLayouts) {
            for (const bool ta : {false, true}) {
              for (const bool tb : {false, true}) {
                const std::int64_t pad = (ta == tb) ? 5 : 0;
                const GemmProblem p = testing::make_problem(shape, layout, ta, tb, precision, pad);
                const bool plain = (shape.k + tb) % 2 == 0;
                const auto in = testing::make_inputs<T>(
                    p, plain ? T(1) : T(-1.25), plain ? T(0) : T(0.5), Values::uniform, ++stream);
                testing::expect_gemm_matches_reference<T>(
                    in, Values::uniform, on_device<T>(std::string(variant.info.name)),
                    std::string(variant.info.name));
              }
            }
          }
        }
      });
    }
  }
}

// gemm_on_device through the calling thread's cached plan: testing::one_field_changes on device
// data, queued on two streams in turn (the plan waits for its last stream before it serves the
// other), C holding NaN where beta = 0 (make_inputs), each product checked against the reference.
TEST_F(GemmVariantTest, TheDeviceApiReplacesTheThreadsPlanWhenTheProblemChanges) {
  std::uint64_t seed = TestSeed().value();
  cuda::Stream streams[2];
  int turn = 0;
  const GemmRunner<float> on_device_api = [&](const GemmInputs<float>& in, std::vector<float>& c) {
    cuda::DeviceBuffer<float> d_a(in.a.size()), d_b(in.b.size()), d_c(c.size());
    d_a.copy_from_host(in.a);
    d_b.copy_from_host(in.b);
    d_c.copy_from_host(c);
    const cuda::Stream& stream = streams[turn++ % 2];
    gemm_on_device<float>(Context::cuda(), in.problem, in.alpha, d_a.data(), d_b.data(), in.beta,
                          d_c.data(), stream.handle());
    stream.synchronize();
    d_c.copy_to_host(c);
  };
  for (const GemmProblem& p : testing::one_field_changes()) {
    SCOPED_TRACE(p.describe());
    for (const float beta : {0.0f, -0.5f}) {
      const auto in = testing::make_inputs<float>(p, 1.5f, beta, Values::uniform, ++seed);
      testing::expect_gemm_matches_reference<float>(in, Values::uniform, on_device_api,
                                                    "gemm_on_device");
    }
  }
}

TEST_F(GemmVariantTest, TheDeviceApiNeedsACudaContext) {
  EXPECT_THROW(gemm_on_device<float>(Context::cpu(), GemmProblem{}, 1.0f, nullptr, nullptr, 0.0f,
                                     nullptr, StreamHandle{}),
               DeviceUnavailable);
}

TEST_F(GemmVariantTest, EveryVariantGivesExactIntegerProducts) {
  const TestSeed seed;
  std::uint64_t stream = seed.value();
  for (const GemmVariant* v : runnable_variants()) {
    const GemmVariant& variant = *v;
    for (const GemmPrecision precision : testing::kPrecisions) {
      if (!variant.computes(precision)) continue;
      testing::with_storage_type(precision, [&]<class T>() {
        for (const GemmCase shape :
             {GemmCase{33, 31, 1000}, GemmCase{64, 64, 64}, GemmCase{1, 1, 4097}}) {
          for (const Layout layout : testing::kLayouts) {
            const GemmProblem p = testing::make_problem(shape, layout, false, true, precision, 0);
            const auto in =
                testing::make_inputs<T>(p, T(2), T(-3), Values::small_integers, ++stream);
            testing::expect_gemm_matches_reference<T>(in, Values::small_integers,
                                                      on_device<T>(std::string(variant.info.name)),
                                                      std::string(variant.info.name));
          }
        }
      });
    }
  }
}

TEST_F(GemmVariantTest, DeterministicVariantsGiveTheSameBitsRunAfterRun) {
  for (const GemmVariant* variant : runnable_variants()) {
    if (!variant->info.deterministic) continue;
    for (const GemmPrecision precision : float_precisions(*variant)) {
      GemmProblem p;
      p.m = 257, p.n = 130, p.k = 513, p.precision = precision;
      const auto in = testing::make_inputs<float>(p, 1.0f, 0.0f, Values::uniform, 11);
      std::vector<float> first = in.c0, second = in.c0;
      on_device<float>(std::string(variant->info.name))(in, first);
      on_device<float>(std::string(variant->info.name))(in, second);
      EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)))
          << variant->info.name << " " << gemm_precision_name(precision);
    }
  }
}

TEST_F(GemmVariantTest, DoubleBufferedLargeTilesMatchTheReferenceAtRaggedEdges) {
  // double-buffered runs 128 x 64 tiles on the ragged cases above (a few tiles) and 128 x 256
  // tiles where those fill the SMs' waves: here an edge of 256 s - 3 (partial tiles on both
  // edges, both layouts, every transpose) with s the first that fills this GPU's SMs, and K = 9
  // (a partial k-tile).
  const int sm_count = query_device(0).sm_count;
  EXPECT_FALSE(cuda_detail::double_buffered_takes_large_tiles(1000, 3000, sm_count));
  std::int64_t edge = 0;
  for (std::int64_t s = 1; edge == 0; ++s) {
    if (cuda_detail::double_buffered_takes_large_tiles(256 * s - 3, 256 * s - 3, sm_count)) {
      edge = 256 * s - 3;
    }
  }
  const TestSeed seed;
  std::uint64_t stream = seed.value();
  for (const Layout layout : testing::kLayouts) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const GemmProblem p = testing::make_problem(GemmCase{edge, edge, 9}, layout, ta, tb,
                                                    GemmPrecision::float32, 0);
        const auto in = testing::make_inputs<float>(p, 1.5f, 0.0f, Values::uniform, ++stream);
        testing::expect_gemm_matches_reference<float>(in, Values::uniform,
                                                      on_device<float>("double-buffered"),
                                                      "double-buffered, large tiles");
      }
    }
  }
}

TEST_F(GemmVariantTest, RowsBeyondTheGridLimitAreComputed) {
  // 65535 blocks of 16 or 32 rows: one more block of rows needs the seed kernels' second launch.
  for (const GemmVariant* variant : runnable_variants()) {
    for (const GemmPrecision precision : float_precisions(*variant)) {
      GemmProblem p;
      p.m = 65535 * 32 + 33, p.n = 3, p.k = 2, p.precision = precision;
      const auto in = testing::make_inputs<float>(p, 1.0f, 0.0f, Values::small_integers, 13);
      testing::expect_gemm_matches_reference<float>(
          in, Values::small_integers, on_device<float>(std::string(variant->info.name)),
          std::string(variant->info.name));
    }
  }
}

TEST_F(GemmVariantTest, TensorCoreVariantsCoverMoreTilesThanTheGridHolds) {
  // 17 x 9 tiles of 128 x 256 (more than an H100's 132 SMs, and 81 pairs for the clusters' 66):
  // the persistent kernels loop over tiles, so the ring's stages and phases carry from one tile
  // to the next; K spans several k-blocks and ends mid-block. Every element is checked.
  const TestSeed seed;
  std::uint64_t stream = seed.value();
  for (const GemmVariant* variant : runnable_variants()) {
    if (variant->workspace != GemmWorkspace::k_major_operands) continue;
    for (const GemmPrecision precision : float_precisions(*variant)) {
      for (const bool tb : {false, true}) {
        const GemmProblem p = testing::make_problem(GemmCase{2100, 2100, 150}, Layout::row_major,
                                                    false, tb, precision, 0);
        const auto in = testing::make_inputs<float>(p, 1.0f, 0.0f, Values::uniform, ++stream);
        testing::expect_gemm_matches_reference<float>(
            in, Values::uniform, on_device<float>(std::string(variant->info.name)),
            std::string(variant->info.name));
      }
    }
  }
}

TEST_F(GemmVariantTest, TensorCoreVariantsRefuseAMisalignedInPlaceOperand) {
  // tf32 reads a K-major float A in place; one element past a 16-byte boundary is refused with
  // a message, not read wrongly.
  GemmProblem p;
  p.m = 40, p.n = 24, p.k = 32, p.precision = GemmPrecision::tf32;
  cuda::DeviceBuffer<float> a(static_cast<std::size_t>(p.m * p.k) + 1), b(p.k * p.n), c(p.m * p.n);
  for (const GemmVariant* variant : runnable_variants()) {
    if (variant->workspace != GemmWorkspace::k_major_operands) continue;
    GemmPlan plan(Context::cuda(), p, variant->info.name);
    try {
      plan.run(1.0f, a.data() + 1, b.data(), 0.0f, c.data());
      ADD_FAILURE() << variant->info.name << " ran on a misaligned A";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("16-byte aligned"), std::string::npos) << e.what();
    }
  }
}

TEST_F(GemmVariantTest, ImpossibleAllocationOfAPlanIsOutOfMemoryWithTheBytes) {
  // A bf16 plan's K-major copies of a 2^20 x 2^16 A and a 2^20 x 2^16 B: 2^38 bytes (256 GiB),
  // more than any GPU has. The plan names the bytes and allocates nothing.
  GemmProblem p;
  p.m = p.n = std::int64_t{1} << 20, p.k = std::int64_t{1} << 16;
  p.precision = GemmPrecision::bf16;
  for (const char* variant : {"cublas", "mma-sync"}) {
    const std::size_t bytes = gemm_workspace_bytes(find_gemm_variant(variant), p);
    EXPECT_GE(bytes, std::size_t{1} << 38) << variant;
    try {
      GemmPlan plan(Context::cuda(), p, variant);
      ADD_FAILURE() << variant << ": a plan of " << bytes << " bytes was made";
    } catch (const OutOfMemory& e) {
      EXPECT_EQ(e.bytes_requested(), bytes) << variant;
      EXPECT_NE(std::string(e.what()).find(std::to_string(bytes)), std::string::npos) << e.what();
    }
  }
}

TEST_F(GemmVariantTest, PlansSayWhatTheyCannotDo) {
  GemmProblem p;
  p.m = p.n = p.k = 8;
  p.precision = GemmPrecision::tf32;
  const GemmSupport support = GemmPlan::can_implement(Context::cuda(), p, "seed-naive");
  EXPECT_FALSE(support.ok);
  EXPECT_EQ(support.reason, "variant 'seed-naive' computes float, double, not tf32");
  EXPECT_THROW(GemmPlan(Context::cuda(), p, "seed-naive"), InvalidInput);
  EXPECT_THROW(GemmPlan(Context::cuda(), p, "no-such-variant"), InvalidInput);
  p.precision = GemmPrecision::bf16;
  const GemmPlan bf16_plan(Context::cuda(), p, "cublas");
  EXPECT_GE(bf16_plan.workspace_bytes(), std::size_t{2 * 8 * 8 * 2});
  p.precision = GemmPrecision::float32;
  EXPECT_EQ(GemmPlan(Context::cuda(), p, "cublas").workspace_bytes(), 0u);
}

}  // namespace
}  // namespace gpukit::blas
