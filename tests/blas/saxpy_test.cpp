// The public API (axpy on host data) on every backend: the CPU (OpenBLAS) and CUDA (the chunked
// host pipeline and the default variant). Every element of fresh random data at awkward sizes and
// misaligned offsets against the exact reference (saxpy_reference.hpp) into poisoned outputs,
// under the backend's rounding rule: CUDA fuses (bitwise round(alpha * x + y)); OpenBLAS may fuse
// or not, per element (one of the two exact roundings). The variants one by one on the device:
// saxpy_gpu_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/core/error.hpp"
#include "saxpy_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::blas {
namespace {

using gpukit::testing::EveryBackendTypedTest;
using gpukit::testing::TestSeed;
using testing::axpy_sizes;
using testing::poison;
using testing::random_alpha;
using testing::random_values;
using testing::same_bits;

template <class Case>
class SaxpyTest : public EveryBackendTypedTest<Case> {
 protected:
  static AxpyRounding rounding() {
    return Case::backend == Backend::cpu ? AxpyRounding::fused_or_separate : AxpyRounding::fused;
  }
};
TYPED_TEST_SUITE_P(SaxpyTest);

// Host arrays that start `offset` elements into their storage, so that no 16-byte alignment is
// assumed anywhere; the output is poisoned.
template <class T>
struct HostArrays {
  std::vector<T> x_storage, y_storage, out_storage;
  std::span<const T> x, y;
  std::span<T> out;
  HostArrays(const std::vector<T>& xs, const std::vector<T>& ys, std::size_t x_offset,
             std::size_t y_offset, std::size_t out_offset)
      : x_storage(xs.size() + x_offset),
        y_storage(ys.size() + y_offset),
        out_storage(ys.size() + out_offset, poison<T>()) {
    std::copy(xs.begin(), xs.end(), x_storage.begin() + static_cast<std::ptrdiff_t>(x_offset));
    std::copy(ys.begin(), ys.end(), y_storage.begin() + static_cast<std::ptrdiff_t>(y_offset));
    x = std::span<const T>(x_storage).subspan(x_offset);
    y = std::span<const T>(y_storage).subspan(y_offset);
    out = std::span<T>(out_storage).subspan(out_offset);
  }
};

TYPED_TEST_P(SaxpyTest, EveryElementOfRandomDataIsTheExactRounding) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  struct Offsets {
    std::size_t x, y, out;
  };
  for (const std::int64_t n : axpy_sizes()) {
    for (const Offsets o : {Offsets{0, 0, 0}, Offsets{1, 1, 1}, Offsets{3, 1, 2}}) {
      // The largest size once, misaligned (the binary128 reference of double is slow).
      if (n > 4097 && o.x == 0) continue;
      const std::uint64_t s = seed.value() + static_cast<std::uint64_t>(n);
      const auto xs = random_values<T>(n, s), ys = random_values<T>(n, s + 1);
      const T alpha = random_alpha<T>(s);
      HostArrays<T> a(xs, ys, o.x, o.y, o.out);
      axpy<T>(this->context(), alpha, a.x, a.y, a.out);
      const AxpyCheck check = check_axpy_result<T>(alpha, xs, ys, a.out, this->rounding());
      EXPECT_TRUE(check.passed()) << "n=" << n << " offsets " << o.x << "," << o.y << "," << o.out
                                  << ": " << check.bad_count << " wrong, first at "
                                  << check.first_bad;
    }
  }
}

TYPED_TEST_P(SaxpyTest, InPlaceOnYAndWithXAsY) {
  using T = typename TypeParam::Element;
  const TestSeed seed;
  for (const std::int64_t n : axpy_sizes()) {
    if (n > 4097) continue;  // large arrays in place: ArraysOfSeveralChunksInPlace
    const auto xs = random_values<T>(n, seed.value()), ys = random_values<T>(n, seed.value() + 7);
    const T alpha = random_alpha<T>(seed.value());
    std::vector<T> y = ys;
    axpy<T>(this->context(), alpha, xs, y, y);  // y = alpha * x + y
    EXPECT_TRUE(check_axpy_result<T>(alpha, xs, ys, y, this->rounding()).passed()) << "n=" << n;
    std::vector<T> z = ys;
    axpy<T>(this->context(), alpha, z, z, z);  // z = alpha * z + z
    EXPECT_TRUE(check_axpy_result<T>(alpha, ys, ys, z, this->rounding()).passed()) << "n=" << n;
  }
}

TYPED_TEST_P(SaxpyTest, AFusedTieIsBrokenByTheExactValue) {
  using T = typename TypeParam::Element;
  const auto tie = testing::tie_case<T>();
  // Enough copies that the CUDA path runs its vector body, not only its scalar edges.
  const std::vector<T> x(1001, tie.x), y(1001, tie.y);
  std::vector<T> out(x.size(), poison<T>());
  axpy<T>(this->context(), tie.alpha, x, y, out);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (this->rounding() == AxpyRounding::fused) {
      ASSERT_TRUE(same_bits(out[i], tie.fused)) << i << ": " << out[i];
    } else {
      ASSERT_TRUE(same_bits(out[i], tie.fused) || same_bits(out[i], tie.separate))
          << i << ": " << out[i];
    }
  }
}

TYPED_TEST_P(SaxpyTest, NanAndInfinitiesPropagate) {
  using T = typename TypeParam::Element;
  const auto specials = testing::special_values<T>();
  std::vector<T> x, y;
  for (const T a : specials) {
    for (const T b : specials) x.push_back(a), y.push_back(b);
  }
  for (const T alpha :
       {T(2), -T(0.5), std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()}) {
    std::vector<T> out(x.size(), poison<T>());
    axpy<T>(this->context(), alpha, x, y, out);
    const AxpyCheck check = check_axpy_result<T>(alpha, x, y, out, this->rounding());
    EXPECT_TRUE(check.passed()) << "alpha " << alpha << ": first wrong element " << check.first_bad;
    // Spelled out for the first pairs: NaN in x or y gives NaN; inf + -inf gives NaN.
    EXPECT_TRUE(std::isnan(out[0]));                        // NaN x, NaN y
    EXPECT_TRUE(std::isnan(out[1 * specials.size() + 0]));  // inf x, NaN y
    EXPECT_TRUE(std::isnan(out[0 * specials.size() + 5]));  // NaN x, 1 y
    if (alpha == T(2)) {
      EXPECT_TRUE(std::isnan(out[1 * specials.size() + 2]));                        // 2 inf - inf
      EXPECT_EQ(out[6 * specials.size() + 3], std::numeric_limits<T>::infinity());  // 2 max + 0
    }
  }
}

TYPED_TEST_P(SaxpyTest, AlphaZeroReturnsYBitForBitAndDoesNotReadX) {
  using T = typename TypeParam::Element;
  const auto specials = testing::special_values<T>();
  std::vector<T> x, y;
  for (const T a : specials) {
    for (const T b : specials) x.push_back(a), y.push_back(b);
  }
  for (const T alpha : {T(0), -T(0)}) {
    std::vector<T> out(x.size(), poison<T>());
    axpy<T>(this->context(), alpha, x, y, out);
    for (std::size_t i = 0; i < out.size(); ++i)
      ASSERT_TRUE(same_bits(out[i], y[i])) << i << ": " << out[i] << " vs y " << y[i];
    std::vector<T> in_place = y;
    axpy<T>(this->context(), alpha, x, in_place, in_place);
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(same_bits(in_place[i], y[i])) << i;
  }
}

TYPED_TEST_P(SaxpyTest, BadArgumentsAreRefusedAndNothingIsWritten) {
  using T = typename TypeParam::Element;
  const std::vector<T> x(10, T(1)), y(11, T(2));
  std::vector<T> out(11, poison<T>());
  try {
    axpy<T>(this->context(), T(2), x, y, out);
    ADD_FAILURE() << "sizes 10 and 11 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("x 10, y 11"), std::string::npos) << e.what();
  }
  for (const T v : out) EXPECT_TRUE(same_bits(v, poison<T>()));
  // The output overlapping x (but not being y): refused before anything runs.
  std::vector<T> buffer(20, T(1));
  const std::span<const T> xs(buffer.data(), 10), ys(y.data(), 10);
  EXPECT_THROW(axpy<T>(this->context(), T(2), xs, ys, std::span<T>(buffer.data() + 5, 10)),
               InvalidInput);
  EXPECT_THROW(axpy<T>(this->context(), T(2), xs, ys, std::span<T>(buffer.data(), 10)),
               InvalidInput);
  for (const T v : buffer) EXPECT_EQ(v, T(1));
}

REGISTER_TYPED_TEST_SUITE_P(SaxpyTest, EveryElementOfRandomDataIsTheExactRounding,
                            InPlaceOnYAndWithXAsY, AFusedTieIsBrokenByTheExactValue,
                            NanAndInfinitiesPropagate, AlphaZeroReturnsYBitForBitAndDoesNotReadX,
                            BadArgumentsAreRefusedAndNothingIsWritten);
GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(SaxpyTest, float, double);

// Scenarios with their own types.
class SaxpyScenarios : public gpukit::testing::EveryBackendTest {};

TEST_P(SaxpyScenarios, ArraysOfSeveralChunksInPlace) {
  // Over three of the CUDA host path's 2^22-element chunks (and a partial one), in place and one
  // element past 16-byte alignment: chunk k's y must be packed before chunk k's result lands on
  // it, and no chunk may see another's data. Float: its reference is fast.
  const TestSeed seed;
  const std::int64_t n = 3 * (std::int64_t{1} << 22) + 5;
  const auto xs = random_values<float>(n, seed.value()),
             ys = random_values<float>(n, seed.value() + 1);
  const float alpha = random_alpha<float>(seed.value());
  std::vector<float> y_storage(ys.size() + 1);
  std::copy(ys.begin(), ys.end(), y_storage.begin() + 1);
  const std::span<float> y = std::span<float>(y_storage).subspan(1);
  axpy<float>(context(), alpha, xs, y, y);
  const auto rounding =
      GetParam() == Backend::cpu ? AxpyRounding::fused_or_separate : AxpyRounding::fused;
  const AxpyCheck check = check_axpy_result<float>(alpha, xs, ys, y, rounding);
  EXPECT_TRUE(check.passed()) << check.bad_count << " wrong, first at " << check.first_bad;
}

TEST_P(SaxpyScenarios, TheBitsDoNotDependOnTheThreadCount) {
  // OpenBLAS left to its own threads rounds the end of each thread's piece differently; the
  // CPU backend's fixed pieces must give one answer for every thread count.
  const TestSeed seed;
  const std::int64_t n = (std::int64_t{1} << 20) + 3;
  const auto xs = random_values<float>(n, seed.value()),
             ys = random_values<float>(n, seed.value() + 1);
  const float alpha = random_alpha<float>(seed.value());
  std::vector<float> first(ys.size(), poison<float>());
  axpy<float>(context(1), alpha, xs, ys, first);
  for (const int threads : {2, 3, 8}) {
    std::vector<float> out(ys.size(), poison<float>());
    axpy<float>(context(threads), alpha, xs, ys, out);
    ASSERT_EQ(0, std::memcmp(first.data(), out.data(), out.size() * sizeof(float)))
        << threads << " threads";
  }
  EXPECT_TRUE(check_axpy_result<float>(alpha, xs, ys, first,
                                       GetParam() == Backend::cpu ? AxpyRounding::fused_or_separate
                                                                  : AxpyRounding::fused)
                  .passed());
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(SaxpyScenarios);

}  // namespace
}  // namespace gpukit::blas
