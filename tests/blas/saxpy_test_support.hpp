#pragma once
// Shared by the SAXPY tests: random data at awkward sizes, the poison pattern, and the cases
// where the two roundings of alpha * x + y differ or where a wider sum lands on a tie.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace gpukit::blas::testing {

/// 0, 1, 3, the warp's edges, a size no power of two divides, a page plus one, and 2^20 + 3.
inline std::vector<std::int64_t> axpy_sizes() {
  return {0, 1, 3, 31, 33, 1000, 4097, (std::int64_t{1} << 20) + 3};
}

/// `n` values, each a uniform [-1, 1) times 2^k with k uniform in [-12, 12]: products and sums
/// whose two roundings (fused, separate) often differ, and no zero (a zero hides nothing).
template <class T>
std::vector<T> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> unit(T(-1), T(1));
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& value : v) {
    do {
      value = std::ldexp(unit(rng), exponent(rng));
    } while (value == T(0));
  }
  return v;
}

/// An alpha that is no power of two (so alpha * x is rarely exact in T).
template <class T>
T random_alpha(std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0xA1FA);
  return std::uniform_real_distribution<T>(T(1.1), T(3.9))(rng) * (rng() % 2 != 0 ? T(1) : T(-1));
}

/// All bits set: a NaN in every element type, which no correct output equals bit for bit.
template <class T>
T poison() {
  T value;
  std::memset(&value, 0xFF, sizeof value);
  return value;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// One element where alpha * x + y, computed exactly, lies just above a tie of T while its sum
/// rounded to the reference's wider type is the tie itself: fused gives `fused`, separate
/// rounding (and a naive wider-type reference) the even neighbour below.
/// float: alpha * x = 2^16 + 2^-30 (8392705 x 16769026 = 2^47 + 2), y = 2^40.
/// double: alpha * x = 2^7 + r 2^-98 (A X = 2^105 + r, r < 2^44), y = 2^60.
template <class T>
struct TieCase {
  T alpha, x, y, fused, separate;
};
template <class T>
TieCase<T> tie_case() {
  if constexpr (sizeof(T) == 4) {
    return {std::ldexp(8392705.0f, -16), std::ldexp(16769026.0f, -15), std::ldexp(1.0f, 40),
            std::ldexp(1.0f, 40) + std::ldexp(1.0f, 17), std::ldexp(1.0f, 40)};
  } else {
    return {std::ldexp(4503599674730857.0, -52), std::ldexp(9007199160020271.0, -46),
            std::ldexp(1.0, 60), std::ldexp(1.0, 60) + std::ldexp(1.0, 8), std::ldexp(1.0, 60)};
  }
}

/// Special values: every pair of them is an element of x and y (NaN, +-inf, +-0, 1, the largest
/// finite value).
template <class T>
std::vector<T> special_values() {
  return {std::numeric_limits<T>::quiet_NaN(),
          std::numeric_limits<T>::infinity(),
          -std::numeric_limits<T>::infinity(),
          T(0),
          -T(0),
          T(1),
          std::numeric_limits<T>::max()};
}

}  // namespace gpukit::blas::testing
