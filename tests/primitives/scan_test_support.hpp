#pragma once
// Shared by the scan tests: sizes, random inputs per (type, op) whose every prefix is exactly
// representable (so every bracketing gives the same value and a wrong element cannot hide in a
// tolerance), and an element-by-element comparison that names the first difference.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::testing {

/// Sizes from design.md and the issue: warp, row, tile and block edges, 2^k +- 1, and three random
/// sizes drawn from `seed` (the test's TestSeed, so that a failing size is replayed too).
inline std::vector<std::int64_t> scan_sizes(bool large, std::uint64_t seed) {
  std::vector<std::int64_t> sizes = {0,    1,    2,    31,   32,   33,   127,  128,  129,
                                     1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097};
  for (int k : {13, 15, 17}) {
    sizes.push_back((std::int64_t{1} << k) - 1);
    sizes.push_back((std::int64_t{1} << k) + 1);
  }
  if (large) {
    sizes.push_back((std::int64_t{1} << 20) + 1);
    sizes.push_back(std::int64_t{1} << 24);
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3; ++i) sizes.push_back(std::int64_t(rng() % 300000) + 1);
  return sizes;
}

inline const std::vector<ScanOp>& all_scan_ops() {
  static const std::vector<ScanOp> ops = {ScanOp::sum, ScanOp::product, ScanOp::min, ScanOp::max};
  return ops;
}

/// Fresh random data for (T, op) from `seed` (print it on failure):
/// - sums: integers in [-8, 8] (unsigned: [0, 8]), so every partial sum is exact in float;
///   `full_range` gives integers over the type's range instead (int32 then overflows quickly);
/// - products: +-1 with a rare 2 or 1/2 (integers: any value; products wrap exactly);
/// - min/max: values over the type's range (floats of mixed sign and magnitude).
template <class T>
std::vector<T> make_scan_data(std::int64_t n, ScanOp op, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> data(static_cast<std::size_t>(n));
  // The rare factor keeps |log2 product| a short random walk for any n up to 2^26.
  const std::uint64_t rare = n > (1 << 20) ? 65536 : 1024;
  for (T& x : data) {
    const std::uint64_t r = rng();
    if (op == ScanOp::sum) {
      x = static_cast<T>(std::is_signed_v<T> ? static_cast<int>(r % 17) - 8 : int(r % 9));
    } else if (op == ScanOp::product) {
      if constexpr (std::is_floating_point_v<T>) {
        const T sign = (r >> 20) & 1 ? T(1) : T(-1);
        x = r % rare == 0 ? sign * ((r >> 21) & 1 ? T(2) : T(0.5)) : sign;
      } else {
        x = static_cast<T>(r | 1);  // odd: the wrapped product never collapses to 0
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      const double magnitude = std::ldexp(double((r >> 11) & 0xFFFFF) / 0x100000, int(r % 40) - 20);
      x = static_cast<T>((r >> 40) & 1 ? -magnitude : magnitude);
    } else {
      x = static_cast<T>(r);
    }
  }
  return data;
}

/// Bitwise equality for floats (NaN == NaN, -0.0 != +0.0), == for integers; names the first
/// difference and counts them.
template <class T>
::testing::AssertionResult same_elements(const std::vector<T>& expected,
                                         const std::vector<T>& actual) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure() << "sizes " << expected.size() << " vs " << actual.size();
  }
  std::size_t differences = 0, first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&expected[i], &actual[i], sizeof(T)) != 0) {
      if (differences++ == 0) first = i;
    }
  }
  if (differences == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << differences << " of " << expected.size() << " elements differ; first at " << first
         << ": expected " << +expected[first] << ", got " << +actual[first];
}

/// Poison for outputs: every byte 0xA5 (a large negative integer, a NaN-free float pattern).
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  std::memset(v.data(), 0xA5, n * sizeof(T));
  return v;
}

}  // namespace gpukit::primitives::testing
