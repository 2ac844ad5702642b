#pragma once
// The checks behind `gpukit reduce|scan|compact --check`: a result of the API against the
// sequential reference (reduce_sequential, scan_sequential, compact_sequential: one loop in element
// order, sharing no code with the CPU or CUDA engines), within the bound that the engines' fixed
// bracketing guarantees. The CLI prints what they return; the tests share the bounds.

#include <cstdint>
#include <span>

#include "gpukit/core/verify.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives {

template <class T>
struct ReduceCheck {
  reduce_result_t<T> reference{};  // reduce_sequential's result
  double difference = 0;           // |result - reference|; integers: 0 (equal) or 1
  double bound = 0;                // floating point: the bound on difference; integers: 0
  bool passed = false;
};

/// Compares `result`, a reduction of `data` by `op`, with reduce_sequential. Integers must be
/// equal. Floating point: equal, both NaN, or within the fixed tree's bound (reduce_canonical.hpp):
/// 26 roundings a level of 16384-element tiles, each at most eps(T) times the sum of |x|.
/// Cost: two sequential passes over `data`. Tested in tests/primitives/check_test.cpp.
template <class T>
ReduceCheck<T> check_reduce_result(std::span<const T> data, ReduceOp op, reduce_result_t<T> result);

struct ScanCheck {
  std::int64_t first_bad = -1;  // the first element outside its bound; -1: none
  ErrorMetrics metrics;         // the seeds' metrics of the whole result against the reference
  bool passed() const { return first_bad < 0; }
};

/// Compares `result`, the scan of `input` by `op` and `kind`, with scan_sequential, element by
/// element. Integers and floating min/max must be equal (or both NaN); floating sums and products
/// within the canonical bracketing's bound, (26 + i / canonical_scan::kTile) roundings of at most
/// eps(T) times the prefix of |x| (sums) or |reference| (products). Throws InvalidInput when the
/// sizes differ or an integer sum overflows (as scan_sequential). Tested in
/// tests/primitives/check_test.cpp.
template <class T>
ScanCheck check_scan_result(std::span<const T> input, std::span<const T> result, ScanOp op,
                            ScanKind kind);

struct CompactCheck {
  std::int64_t reference_kept = 0;  // the elements compact_sequential keeps
  bool passed = false;              // `kept` holds exactly those, bit for bit, in order
};

/// Compares `kept`, the elements of `input` that `keep` keeps, with compact_sequential, bit for
/// bit (a -0.0 kept as +0.0 fails). Tested in tests/primitives/check_test.cpp.
template <class T>
CompactCheck check_compact_result(std::span<const T> input, std::span<const T> kept,
                                  KeepPredicate keep);

}  // namespace gpukit::primitives
