// Every registered CUDA compaction variant x type x predicate against the sequential reference
// at awkward sizes with poisoned outputs, and on all-kept / none-kept / alternating inputs. The
// public API on every backend (the CUDA host path included): compact_test.cpp.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/compact_variants.hpp"
#include "scan_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::primitives {
namespace {

using gpukit::testing::TestSeed;
using testing::same_elements;
using testing::scan_sizes;

constexpr KeepPredicate kPredicates[] = {KeepPredicate::nonzero, KeepPredicate::positive,
                                         KeepPredicate::negative, KeepPredicate::finite};

template <class T>
std::vector<T> edge_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (T& v : x) {
    const std::uint64_t r = rng();
    if (r % 8 == 0) {
      v = T(0);
    } else if (r % 8 == 1) {
      if constexpr (std::is_floating_point_v<T>) {
        v = (r >> 8) % 2 ? std::numeric_limits<T>::quiet_NaN() : T(-0.0);
      } else {
        v = std::numeric_limits<T>::lowest();
      }
    } else {
      v = static_cast<T>(static_cast<std::int64_t>(r >> 3) % 1000 -
                         (std::is_signed_v<T> ? 500 : 0));
    }
  }
  return x;
}

// Runs a variant on a device copy with a poisoned output; returns the kept prefix.
template <class T>
std::vector<T> run_variant(const CompactVariant& v, const std::vector<T>& x, KeepPredicate keep,
                           ScanWorkspace& workspace, cuda::Stream& stream) {
  const std::size_t n = x.size();
  cuda::DeviceBuffer<T> in(n + 1), out(n + 1);
  cuda::DeviceBuffer<std::int64_t> count(1);
  if (n > 0) cuda::copy_to_device(in.data(), x.data(), n * sizeof(T));
  cuda::fill_bytes_async(out.data(), 0xA5, (n + 1) * sizeof(T), nullptr);
  cuda::fill_bytes_async(count.data(), 0xA5, sizeof(std::int64_t), nullptr);
  cuda::synchronize_device();
  v.launch(in.data(), out.data(), static_cast<std::int64_t>(n), keep, count.data(), workspace,
           stream.handle());
  stream.synchronize();
  std::int64_t kept = -1;
  cuda::copy_to_host(&kept, count.data(), sizeof kept);
  EXPECT_GE(kept, 0);
  EXPECT_LE(kept, static_cast<std::int64_t>(n));
  std::vector<T> y(static_cast<std::size_t>(std::clamp<std::int64_t>(kept, 0, std::int64_t(n))));
  if (!y.empty()) cuda::copy_to_host(y.data(), out.data(), y.size() * sizeof(T));
  return y;
}

template <class T>
std::vector<T> reference(const std::vector<T>& x, KeepPredicate keep) {
  std::vector<T> y(x.size());
  y.resize(static_cast<std::size_t>(compact_sequential<T>(x, y, keep)));
  return y;
}

template <class T>
class CompactGpuTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, float, double>;
TYPED_TEST_SUITE(CompactGpuTest, ElementTypes);

TYPED_TEST(CompactGpuTest, EveryVariantMatchesTheSequentialReference) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const TestSeed seed;
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : scan_sizes(/*large=*/!gpukit::testing::quick_tests(), seed.value())) {
    const auto x = edge_data<T>(n, seed.value() + static_cast<std::uint64_t>(n));
    for (const KeepPredicate keep : kPredicates) {
      const auto expected = reference(x, keep);
      for (const CompactVariant& v : compact_variants()) {
        EXPECT_TRUE(same_elements(expected, run_variant(v, x, keep, workspace, stream)))
            << v.info.name << " " << keep_predicate_name(keep) << " n=" << n;
      }
    }
  }
}

TEST(CompactGpu, EveryVariantOnAllKeptNoneKeptAndAlternating) {
  GPUKIT_REQUIRE_GPU();
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n :
       {std::int64_t{1}, std::int64_t{4097},
        (std::int64_t{1} << (gpukit::testing::quick_tests() ? 17 : 25)) + 5}) {
    std::vector<float> ones(static_cast<std::size_t>(n), 1.0f), zeros(ones.size(), 0.0f),
        alternating(ones.size());
    for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = float(i % 2);
    for (const auto* x : {&ones, &zeros, &alternating}) {
      const auto expected = reference(*x, KeepPredicate::nonzero);
      for (const CompactVariant& v : compact_variants()) {
        EXPECT_TRUE(
            same_elements(expected, run_variant(v, *x, KeepPredicate::nonzero, workspace, stream)))
            << v.info.name << " n=" << n;
      }
    }
  }
}

}  // namespace
}  // namespace gpukit::primitives
