#pragma once
// Shared by the reduction tests: random inputs per (type, op) that make each op's result
// meaningful and exactly checkable where the arithmetic allows, and the error bound of the
// fixed tree for floating sums.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"

namespace gpukit::primitives::testing {

/// Sizes from design.md: the edges of warps, blocks, lanes and tiles, and 2^k +- 1.
inline std::vector<std::int64_t> awkward_sizes() {
  std::vector<std::int64_t> sizes = {0,    1,    2,    31,   32,   33,    127,   128,  129,
                                     1023, 1024, 1025, 4095, 4097, 16383, 16384, 16385};
  for (int k : {15, 17, 20}) {
    sizes.push_back((std::int64_t{1} << k) - 1);
    sizes.push_back((std::int64_t{1} << k) + 1);
  }
  std::mt19937_64 rng(20240607);
  for (int i = 0; i < 3; ++i) sizes.push_back(std::int64_t(rng() % 300000) + 1);
  return sizes;
}

inline std::vector<ReduceOp> ops_for(bool integral) {
  std::vector<ReduceOp> ops = {ReduceOp::sum, ReduceOp::product, ReduceOp::min, ReduceOp::max};
  if (integral) {
    for (ReduceOp op : {ReduceOp::bit_and, ReduceOp::bit_or, ReduceOp::bit_xor}) ops.push_back(op);
  }
  return ops;
}

/// Random data for (T, op), seeded explicitly (the seed is part of every failure message):
/// - sums: integers over the type's range (int64 within +-2^40 so 2^20 terms cannot overflow);
///   floats of mixed sign and magnitude, or, with `exact_sums`, small integers (|x| <= 8) whose
///   partial sums stay below 2^24, so every order of addition gives the exact sum;
/// - products: +-1 with an occasional 2 or 1/2 (integers: 3), so the exact product stays in
///   range and every tree gives the same value;
/// - and: all ones with an occasional cleared bit, so the result is not trivially zero.
template <class T>
std::vector<T> make_data(std::int64_t n, ReduceOp op, std::uint64_t seed, bool exact_sums = false) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  std::mt19937_64 rng(seed);
  std::vector<T> data(static_cast<std::size_t>(n));
  for (T& x : data) {
    const std::uint64_t r = rng();
    if (op == ReduceOp::product) {
      const bool big = r % 1024 == 0;
      const T sign = (r >> 20) & 1 ? T(1) : T(std::is_signed_v<T> ? -1 : 1);
      if constexpr (std::is_floating_point_v<T>) {
        x = big ? sign * ((r >> 21) & 1 ? T(2) : T(0.5)) : sign;
      } else {
        x = big ? T(3) : sign;
      }
    } else if constexpr (std::is_integral_v<T>) {
      if (op == ReduceOp::bit_and) {
        const Bits all = ~Bits(0);
        const Bits bits = r % 64 == 0 ? Bits(all ^ (Bits(1) << ((r >> 8) % (8 * sizeof(T))))) : all;
        x = static_cast<T>(bits);
      } else if constexpr (std::is_same_v<T, std::int64_t>) {
        x = static_cast<T>(static_cast<std::int64_t>(r) >> 23);  // +-2^40
      } else {
        x = static_cast<T>(r);
      }
    } else if (exact_sums) {
      x = static_cast<T>(static_cast<int>(r % 17) - 8);
    } else {
      const double magnitude = std::ldexp(double((r >> 11) & 0xFFFFF) / 0x100000, int(r % 20) - 10);
      x = static_cast<T>((r >> 40) & 1 ? -magnitude : magnitude);
    }
  }
  return data;
}

/// Bound on |tree sum - exact| for the fixed tree: every term passes through at most
/// kRows + log2(kLanes) = 26 additions per level, each adding at most eps * (partial sum), so the
/// error is below levels * 26 * eps * sum|x| (Higham's bound for a tree of that depth).
template <class T>
double sum_error_bound(const std::vector<T>& data) {
  double abs_sum = 0;
  for (T x : data) abs_sum += std::fabs(double(x));
  int levels = 1;
  for (std::int64_t n = canonical::kTile; n < static_cast<std::int64_t>(data.size());
       n *= canonical::kTile)
    ++levels;
  return 2.0 * levels * 26 * std::numeric_limits<T>::epsilon() * abs_sum + 1e-300;
}

template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::memcmp(&a, &b, sizeof a) == 0;
  } else {
    return a == b;
  }
}

}  // namespace gpukit::primitives::testing
