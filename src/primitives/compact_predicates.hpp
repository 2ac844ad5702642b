#pragma once
// Internal: the CLI's keep predicates as host/device functors, so the CPU backend, the reference
// and the kernels decide alike.

#include <cmath>
#include <type_traits>

#include "gpukit/core/error.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/primitives/compact.hpp"

namespace gpukit::primitives::detail {

template <class T, KeepPredicate kKeep>
struct Keep {
  GPUKIT_HD_INLINE bool operator()(T x) const {
    if constexpr (kKeep == KeepPredicate::nonzero) {
      return x != T(0);  // NaN != 0 holds: NaN is kept
    } else if constexpr (kKeep == KeepPredicate::positive) {
      return x > T(0);
    } else if constexpr (kKeep == KeepPredicate::negative) {
      if constexpr (std::is_unsigned_v<T>) {
        return false;
      } else {
        return x < T(0);
      }
    } else {
      if constexpr (std::is_floating_point_v<T>) {
        return x - x == T(0);  // false for NaN and +-Inf (Inf - Inf is NaN)
      } else {
        return true;
      }
    }
  }
};

/// Calls f(Keep<T, keep>{}).
template <class T, class F>
decltype(auto) with_keep_predicate(KeepPredicate keep, F&& f) {
  switch (keep) {
    case KeepPredicate::nonzero:
      return f(Keep<T, KeepPredicate::nonzero>{});
    case KeepPredicate::positive:
      return f(Keep<T, KeepPredicate::positive>{});
    case KeepPredicate::negative:
      return f(Keep<T, KeepPredicate::negative>{});
    case KeepPredicate::finite:
      return f(Keep<T, KeepPredicate::finite>{});
  }
  throw InvalidInput("unknown keep predicate");
}

}  // namespace gpukit::primitives::detail
