// Every registered CUDA axpy variant, float and double, against the exact reference
// (saxpy_reference.hpp) under the variant's rounding rule, at awkward sizes, with x, y and out at
// equal and at different misalignments, out of place and in place; outputs poisoned, with guard
// elements on both sides that must stay poisoned (a head or tail written out of bounds fails);
// NaN and infinities; the fused tie. And axpy_on_device's checks. The public host-data API on
// every backend: saxpy_test.cpp.

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/blas/saxpy_variants.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "saxpy_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::blas {
namespace {

using gpukit::testing::TestSeed;
using testing::axpy_sizes;
using testing::poison;
using testing::random_alpha;
using testing::random_values;
using testing::same_bits;

constexpr std::size_t kGuard = 8;  // poisoned elements before and after each output

// Device copies of x and y and a poisoned output, each `offset` elements past a 256-byte aligned
// allocation (plus the guard); with `in_place`, the output is y.
template <class T>
struct DeviceArrays {
  cuda::DeviceBuffer<T> x_buffer, y_buffer, out_buffer;
  T *x = nullptr, *y = nullptr, *out = nullptr;
  std::size_t n = 0;
  DeviceArrays(const std::vector<T>& xs, const std::vector<T>& ys, std::size_t x_offset,
               std::size_t y_offset, std::size_t out_offset, bool in_place)
      : n(xs.size()) {
    const std::vector<T> poisoned(n + 2 * kGuard + 4, poison<T>());
    auto place = [&](cuda::DeviceBuffer<T>& buffer, const std::vector<T>& values,
                     std::size_t offset) {
      buffer = cuda::DeviceBuffer<T>(poisoned.size());
      buffer.copy_from_host(poisoned);
      T* start = buffer.data() + kGuard + offset;
      if (!values.empty()) cuda::copy_to_device(start, values.data(), values.size() * sizeof(T));
      return start;
    };
    x = place(x_buffer, xs, x_offset);
    y = place(y_buffer, ys, y_offset);
    out = in_place ? y : place(out_buffer, {}, out_offset);
  }
  // The output and its guards (guard elements on each side).
  std::vector<T> output_with_guards() const {
    std::vector<T> v(n + 2 * kGuard);
    cuda::copy_to_host(v.data(), out - kGuard, v.size() * sizeof(T));
    return v;
  }
};

// Runs `v` and checks every element and both guards; returns a description of the first failure.
template <class T>
std::string run_and_check(const SaxpyVariant& v, T alpha, const std::vector<T>& xs,
                          const std::vector<T>& ys, std::size_t x_offset, std::size_t y_offset,
                          std::size_t out_offset, bool in_place, cuda::Stream& stream) {
  DeviceArrays<T> d(xs, ys, x_offset, y_offset, out_offset, in_place);
  v.launch<T>(alpha, d.x, d.y, d.out, static_cast<std::int64_t>(xs.size()), stream.handle());
  stream.synchronize();
  const std::vector<T> all = d.output_with_guards();
  for (std::size_t g = 0; g < kGuard; ++g) {
    if (!same_bits(all[g], poison<T>()) || !same_bits(all[kGuard + xs.size() + g], poison<T>()))
      return "wrote outside the output";
  }
  const std::span<const T> result(all.data() + kGuard, xs.size());
  const AxpyCheck check = check_axpy_result<T>(alpha, xs, ys, result, v.rounding);
  if (!check.passed()) {
    return std::to_string(check.bad_count) + " elements wrong, first at " +
           std::to_string(check.first_bad);
  }
  return {};
}

template <class T>
class SaxpyGpuTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SaxpyGpuTest, ElementTypes);

TYPED_TEST(SaxpyGpuTest, EveryVariantGivesItsExactRoundingOnRandomData) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const TestSeed seed;
  cuda::Stream stream;
  struct Layout {
    std::size_t x, y, out;
    bool in_place;
  };
  // Equal misalignments take the vector paths (with a head); different ones fall back.
  const Layout layouts[] = {{0, 0, 0, false}, {1, 1, 1, false}, {3, 3, 3, false}, {1, 0, 2, false},
                            {0, 0, 0, true},  {2, 2, 0, true},  {1, 3, 0, true}};
  for (const std::int64_t n : axpy_sizes()) {
    const std::uint64_t s = seed.value() + static_cast<std::uint64_t>(n);
    const auto xs = random_values<T>(n, s), ys = random_values<T>(n, s + 1);
    const T alpha = random_alpha<T>(s);
    for (const SaxpyVariant& v : saxpy_variants()) {
      for (const Layout& l : layouts) {
        // The largest size in three layouts (equal and different misalignments, in place).
        if (n > 4097 && !(l.x == 1 && l.y == 1) && !(l.x == 1 && l.out == 2) &&
            !(l.in_place && l.x == 2))
          continue;
        const std::string failure =
            run_and_check<T>(v, alpha, xs, ys, l.x, l.y, l.out, l.in_place, stream);
        EXPECT_TRUE(failure.empty())
            << v.info.name << " n=" << n << " offsets " << l.x << "," << l.y << "," << l.out
            << (l.in_place ? " in place" : "") << ": " << failure;
      }
    }
  }
}

TYPED_TEST(SaxpyGpuTest, EveryVariantPropagatesNanAndInfinities) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const auto specials = testing::special_values<T>();
  std::vector<T> xs, ys;
  // Repeated so that the specials reach the vector body as well as the scalar edges.
  for (int repeat = 0; repeat < 40; ++repeat) {
    for (const T a : specials) {
      for (const T b : specials) xs.push_back(a), ys.push_back(b);
    }
  }
  cuda::Stream stream;
  for (const SaxpyVariant& v : saxpy_variants()) {
    for (const T alpha : {T(2), -T(0.5), std::numeric_limits<T>::infinity()}) {
      const std::string failure = run_and_check<T>(v, alpha, xs, ys, 1, 1, 1, false, stream);
      EXPECT_TRUE(failure.empty()) << v.info.name << " alpha " << alpha << ": " << failure;
    }
  }
}

TYPED_TEST(SaxpyGpuTest, FusedVariantsBreakTheTieByTheExactValue) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const auto tie = testing::tie_case<T>();
  const std::vector<T> xs(1001, tie.x), ys(1001, tie.y);
  cuda::Stream stream;
  for (const SaxpyVariant& v : saxpy_variants()) {
    const std::string failure = run_and_check<T>(v, tie.alpha, xs, ys, 0, 0, 0, false, stream);
    EXPECT_TRUE(failure.empty()) << v.info.name << ": " << failure;
  }
}

TEST(SaxpyGpu, OnDeviceChecksItsArgumentsAndAppliesTheAlphaZeroRule) {
  GPUKIT_REQUIRE_GPU();
  cuda::Stream stream;
  const std::vector<float> xs = {std::numeric_limits<float>::quiet_NaN(), 1.0f, -0.0f};
  const std::vector<float> ys = {1.0f, -0.0f, std::numeric_limits<float>::infinity()};
  DeviceArrays<float> d(xs, ys, 0, 0, 0, false);
  EXPECT_THROW(axpy_on_device<float>(2.0f, d.x, d.y, d.out, -1, stream.handle()), InvalidInput);
  EXPECT_THROW(axpy_on_device<float>(2.0f, nullptr, d.y, d.out, 3, stream.handle()), InvalidInput);
  EXPECT_THROW(axpy_on_device<float>(2.0f, d.x, d.y, d.x + 1, 3, stream.handle()), InvalidInput);
  axpy_on_device<float>(0.0f, d.x, d.y, d.out, 3, stream.handle());
  stream.synchronize();
  const std::vector<float> all = d.output_with_guards();
  for (std::size_t i = 0; i < ys.size(); ++i)
    EXPECT_TRUE(same_bits(all[kGuard + i], ys[i])) << i;  // y, bit for bit; x's NaN not read
}

TEST(SaxpyVariants, TheRegistryIsALadderWithTheDefaultOnTopAndTheVendorLast) {
  GPUKIT_REQUIRE_GPU();
  const auto variants = saxpy_variants();
  ASSERT_GE(variants.size(), 5u);
  EXPECT_EQ(variants.front().info.name, "seed");
  EXPECT_TRUE(variants.back().info.vendor());
  EXPECT_EQ(default_saxpy_variant().info.role, VariantRole::best);
  std::set<std::string_view> names;
  for (const SaxpyVariant& v : variants) {
    EXPECT_TRUE(names.insert(v.info.name).second) << v.info.name;
    EXPECT_NE(v.launchers.get<float>(), nullptr);
    EXPECT_NE(v.launchers.get<double>(), nullptr);
    EXPECT_EQ(v.info.traffic.reads_per_element, 2);
    EXPECT_EQ(v.info.traffic.writes_per_element, 1);
  }
  EXPECT_THROW(find_saxpy_variant("no-such-variant"), InvalidInput);
}

}  // namespace
}  // namespace gpukit::blas
