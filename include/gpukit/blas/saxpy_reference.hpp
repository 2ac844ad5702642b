#pragma once
// The independent reference for out = alpha * x + y, and the exact check behind
// `gpukit saxpy --check` and the tests. No tolerance: each element is computed exactly in a wider
// type (alpha * x is exact in long double for float and in __float128 for double; the sum is
// carried exactly as a pair by TwoSum) and rounded once to T, so the reference is the correctly
// rounded result, bit for bit. An implementation passes when every element equals what its
// rounding rule allows (NaN: any NaN).

#include <cstdint>
#include <span>

#include "gpukit/core/verify.hpp"

namespace gpukit::blas {

/// How an implementation rounds alpha * x + y.
enum class AxpyRounding {
  /// One fused multiply-add: round(alpha * x + y). Every gpukit CUDA kernel.
  fused,
  /// Per element, round(alpha * x + y) or round(round(alpha * x) + y): libraries that do not
  /// document which (OpenBLAS picks its kernel by CPU model; cuBLAS does not say).
  fused_or_separate,
};

/// The two roundings of alpha * x + y, each computed exactly and rounded once (NaN and infinities
/// as IEEE arithmetic gives them). T is float or double.
template <class T>
struct AxpyExpected {
  T fused;     // round(alpha * x + y)
  T separate;  // round(round(alpha * x) + y)
};
template <class T>
AxpyExpected<T> axpy_expected(T alpha, T x, T y);

/// axpy_expected(alpha, x, y).fused alone, half the work: round(alpha * x + y).
template <class T>
T axpy_exact(T alpha, T x, T y);

/// Whether `result` is what `rounding` allows for alpha * x + y: bitwise equal (so +0 and -0
/// differ), or NaN where the expected value is NaN.
template <class T>
bool axpy_element_ok(T alpha, T x, T y, T result, AxpyRounding rounding);

struct AxpyCheck {
  std::int64_t first_bad = -1;  // the first element the rounding rule does not allow; -1: none
  std::int64_t bad_count = 0;   // how many
  ErrorMetrics metrics;         // the seeds' metrics (L1, max abs) against the fused reference
  bool passed() const { return first_bad < 0; }
};

/// Checks every element of `result` against out = alpha * x + y under `rounding`, including the
/// API's alpha == 0 rule (result must then be y bit for bit). Throws InvalidInput when the sizes
/// differ. Tested in tests/blas/saxpy_reference_test.cpp.
template <class T>
AxpyCheck check_axpy_result(T alpha, std::span<const T> x, std::span<const T> y,
                            std::span<const T> result, AxpyRounding rounding);

}  // namespace gpukit::blas
