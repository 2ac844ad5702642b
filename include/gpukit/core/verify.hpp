#pragma once
// The seeds' accuracy metrics, used by the CLI's --check mode, the benchmarks and the tests.
// All are computed in double whatever the element types.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

#include "gpukit/core/error.hpp"

namespace gpukit {

struct ErrorMetrics {
  double relative_l1 = 0;  // sum|got - ref| / sum|ref|  (the seeds' "L1 norm")
  double relative_l2 = 0;  // sqrt(sum (got - ref)^2 / sum ref^2)
  double max_abs = 0;      // max |got - ref|            (the seeds' "max absolute error")
  std::size_t count = 0;
};

/// Compares `got` with `reference` element by element. A NaN anywhere makes every metric NaN, so
/// a NaN can never pass a threshold. Sizes must match (InvalidInput otherwise). When the
/// reference is all zeros the relative metrics are the absolute sums.
template <class Ref, class Got>
ErrorMetrics compare(std::span<const Ref> reference, std::span<const Got> got) {
  if (reference.size() != got.size())
    throw InvalidInput("compare: reference and result differ in length");
  double sum_abs_diff = 0, sum_abs_ref = 0, sum_sq_diff = 0, sum_sq_ref = 0, max_abs = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double r = static_cast<double>(reference[i]);
    const double d = static_cast<double>(got[i]) - r;
    sum_abs_diff += std::abs(d);
    sum_abs_ref += std::abs(r);
    sum_sq_diff += d * d;
    sum_sq_ref += r * r;
    // std::max would drop a NaN difference; keep it, also against the finite ones after it.
    if (!(std::abs(d) <= max_abs) && !std::isnan(max_abs)) max_abs = std::abs(d);
  }
  ErrorMetrics m;
  m.count = got.size();
  m.relative_l1 = sum_abs_ref > 0 ? sum_abs_diff / sum_abs_ref : sum_abs_diff;
  m.relative_l2 = sum_sq_ref > 0 ? std::sqrt(sum_sq_diff / sum_sq_ref) : std::sqrt(sum_sq_diff);
  m.max_abs = max_abs;
  return m;
}

/// Higham's bound on |computed - exact| for a sum evaluated in T in which every term passes
/// through at most `depth` roundings (additions) on its way to the result:
///     gamma_depth * sum|x|,   gamma_h = h u / (1 - h u),   u = eps(T) / 2 (unit roundoff).
/// The sum's condition enters through sum|x| (against |sum x|): a relative bound, never an
/// absolute one. Returns infinity when depth * u >= 1 (the bound says nothing).
template <class T>
double summation_error_bound(double depth, double sum_abs) {
  const double u = static_cast<double>(std::numeric_limits<T>::epsilon()) / 2;
  const double hu = depth * u;
  if (!(hu < 1)) return std::numeric_limits<double>::infinity();
  return hu / (1 - hu) * sum_abs;
}

}  // namespace gpukit
