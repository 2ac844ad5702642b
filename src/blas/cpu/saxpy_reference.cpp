// The exact reference of out = alpha * x + y. Shares no code with the engines: a wider type in
// which alpha * x is exact, TwoSum for an exact sum, and one rounding to T decided from that pair.

#include "gpukit/blas/saxpy_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas {

namespace {

// A type in which the product of two T is exact and sums of such products and T values do not
// overflow: long double (64-bit significand, >= 2 x 24) for float, binary128 (113 bits,
// >= 2 x 53) for double.
template <class T>
struct Wide;
template <>
struct Wide<float> {
  using type = long double;
  static_assert(std::numeric_limits<long double>::digits >= 2 * 24,
                "the float reference needs a long double that holds a float product exactly");
};
template <>
struct Wide<double> {
  using type = __float128;
};
template <class T>
using wide_t = typename Wide<T>::type;

template <class W>
bool wide_is_finite(W v) {
  return v == v && v - v == v - v;  // false for NaN and for infinities (inf - inf is NaN)
}

// hi + lo, an exact value with |lo| <= ulp(hi) / 2 in W, rounded once to T (to nearest, ties to
// even). (T)hi alone rounds correctly unless hi lies exactly halfway between two T values and lo
// moves the exact value off that midpoint: then lo's sign decides.
template <class T, class W>
T round_once(W hi, W lo) {
  const T f = static_cast<T>(hi);  // correctly rounded conversion
  if (lo == 0 || static_cast<W>(f) == hi) return f;
  constexpr T kMax = std::numeric_limits<T>::max();
  if (!std::isfinite(f)) {
    // Overflow: hi is at least max + ulp(max) / 2. Exactly there (a tie, rounded to infinity),
    // an exact value just below it rounds to max.
    const W threshold = static_cast<W>(kMax) +
                        (static_cast<W>(kMax) - static_cast<W>(std::nextafter(kMax, T(0)))) / 2;
    if (hi == threshold && lo < 0) return kMax;
    if (hi == -threshold && lo > 0) return -kMax;
    return f;
  }
  // g: f's neighbour on hi's side; hi lies strictly between f and g.
  const T g = std::nextafter(f, static_cast<W>(f) < hi ? std::numeric_limits<T>::infinity()
                                                       : -std::numeric_limits<T>::infinity());
  if (!std::isfinite(g)) return f;  // hi is between max and the overflow threshold
  const W midpoint = (static_cast<W>(f) + static_cast<W>(g)) / 2;  // exact: one bit more than T
  if (hi != midpoint) return f;
  // A tie in hi alone; the exact value hi + lo is on lo's side of it.
  return (lo > 0) == (g > f) ? g : f;
}

// s + e = a + b exactly (Knuth's TwoSum; any binary floating point, round to nearest).
template <class W>
void two_sum(W a, W b, W& s, W& e) {
  s = a + b;
  const W bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// round(p + y) for p and y exact in W.
template <class T, class W>
T round_sum(W p, W y) {
  W s, e;
  two_sum(p, y, s, e);
  if (!wide_is_finite(s)) return static_cast<T>(s);  // NaN and infinities: IEEE's answer
  return round_once<T>(s, e);
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
bool matches(T expected, T result) {
  return std::isnan(expected) ? std::isnan(result) : same_bits(expected, result);
}

template <class T>
T fused_reference(T alpha, T x, T y) {
  using W = wide_t<T>;
  return round_sum<T>(static_cast<W>(alpha) * static_cast<W>(x), static_cast<W>(y));
}

template <class T>
T separate_reference(T alpha, T x, T y) {
  using W = wide_t<T>;
  const W product = static_cast<W>(alpha) * static_cast<W>(x);  // exact (NaN/inf as IEEE)
  const T rounded_product =
      wide_is_finite(product) ? round_once<T>(product, W(0)) : static_cast<T>(product);
  return round_sum<T>(static_cast<W>(rounded_product), static_cast<W>(y));
}

}  // namespace

template <class T>
AxpyExpected<T> axpy_expected(T alpha, T x, T y) {
  return {fused_reference(alpha, x, y), separate_reference(alpha, x, y)};
}

template <class T>
T axpy_exact(T alpha, T x, T y) {
  return fused_reference(alpha, x, y);
}

template <class T>
bool axpy_element_ok(T alpha, T x, T y, T result, AxpyRounding rounding) {
  // The separate rounding only where the fused one does not match: the wide arithmetic is slow
  // (binary128 is done in software).
  if (matches(fused_reference(alpha, x, y), result)) return true;
  return rounding == AxpyRounding::fused_or_separate &&
         matches(separate_reference(alpha, x, y), result);
}

template <class T>
AxpyCheck check_axpy_result(T alpha, std::span<const T> x, std::span<const T> y,
                            std::span<const T> result, AxpyRounding rounding) {
  if (x.size() != y.size() || y.size() != result.size()) {
    throw InvalidInput("axpy check: x, y and the result differ in length (" +
                       std::to_string(x.size()) + ", " + std::to_string(y.size()) + ", " +
                       std::to_string(result.size()) + ")");
  }
  const auto n = static_cast<std::int64_t>(result.size());
  std::int64_t first_bad = n, bad_count = 0;
  double sum_abs_diff = 0, sum_abs_ref = 0, max_abs = 0;
  // Each element on its own, so the threads change nothing but the time (binary128 is slow: 14 ns
  // a float on one thread, gpukit_tune_cpu_threads costs at idle: 11.7, 16.6; the thread rule's
  // figure).
  constexpr double kNsPerElement = 14;
  const int team = cpu_threads_for({n, kNsPerElement}, 0);
#pragma omp parallel for schedule(static) reduction(min : first_bad) \
    reduction(+ : bad_count, sum_abs_diff, sum_abs_ref) reduction(max : max_abs) num_threads(team)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    // The API's alpha == 0 rule: y, bit for bit, whatever x holds.
    const T reference = alpha == T(0) ? y[k] : fused_reference(alpha, x[k], y[k]);
    const bool ok = alpha == T(0) ? same_bits(y[k], result[k])
                                  : axpy_element_ok(alpha, x[k], y[k], result[k], rounding);
    if (!ok) {
      first_bad = std::min(first_bad, i);
      ++bad_count;
    }
    // The metrics over the elements where both are finite (a NaN or an infinity that the rule
    // allows is no error; one it does not allow is counted above).
    if (std::isfinite(reference) && std::isfinite(result[k])) {
      const double d = std::abs(static_cast<double>(result[k]) - static_cast<double>(reference));
      sum_abs_diff += d;
      sum_abs_ref += std::abs(static_cast<double>(reference));
      max_abs = std::max(max_abs, d);
    }
  }
  AxpyCheck check;
  check.first_bad = first_bad < n ? first_bad : -1;
  check.bad_count = bad_count;
  check.metrics.count = result.size();
  check.metrics.relative_l1 = sum_abs_ref > 0 ? sum_abs_diff / sum_abs_ref : sum_abs_diff;
  check.metrics.max_abs = max_abs;
  return check;
}

#define GPUKIT_INSTANTIATE_AXPY_REFERENCE(T)                                         \
  template AxpyExpected<T> axpy_expected<T>(T, T, T);                                \
  template T axpy_exact<T>(T, T, T);                                                 \
  template bool axpy_element_ok<T>(T, T, T, T, AxpyRounding);                        \
  template AxpyCheck check_axpy_result<T>(T, std::span<const T>, std::span<const T>, \
                                          std::span<const T>, AxpyRounding);
GPUKIT_INSTANTIATE_AXPY_REFERENCE(float)
GPUKIT_INSTANTIATE_AXPY_REFERENCE(double)
#undef GPUKIT_INSTANTIATE_AXPY_REFERENCE

}  // namespace gpukit::blas
