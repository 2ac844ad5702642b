#pragma once
// Stream compaction (seed 004's list of scan applications): keep the elements that satisfy a
// predicate, in their input order, and return how many were kept. Built on the scan of the
// keep-flags: an element's output index is the exclusive sum of the flags before it.
//
// Predicates (the same on every backend):
// - nonzero: x != 0 (-0.0 is zero and dropped; NaN is nonzero and kept);
// - positive: x > 0; negative: x < 0 (neither keeps NaN or a zero of either sign);
// - finite: not NaN and not +-Inf (every integer is finite).
//
// The C++ API also takes any predicate: compact_if below on the CPU, and device::compact
// (cuda/compact.cuh) on the device.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives {

enum class KeepPredicate { nonzero, positive, negative, finite };

/// "nonzero", "positive", "negative", "finite".
std::string_view keep_predicate_name(KeepPredicate keep);
/// Parses the names above; InvalidInput listing them otherwise.
KeepPredicate parse_keep_predicate(std::string_view name);

/// Copies the kept elements of `input` (host memory) to the front of `output` (at least as long
/// as the input, disjoint from it) on the context's backend; returns their number.
template <class T>
std::int64_t compact(const Context& context, std::span<const T> input, std::span<T> output,
                     KeepPredicate keep);

/// The same for `count` elements in device memory on `stream` with the default single-pass
/// kernel; the number kept goes to `device_count` (device memory); nothing waits.
template <class T>
void compact_on_device_async(const T* device_input, T* device_output, std::int64_t count,
                             KeepPredicate keep, std::int64_t* device_count,
                             ScanWorkspace& workspace, StreamHandle stream);

/// The same, then waits for the stream (it returns a host value: the exception to the
/// `*_on_device` convention, docs/design-notes.md) and returns the number kept. Nothing is in
/// flight on `stream` from this call when it returns.
template <class T>
std::int64_t compact_on_device(const T* device_input, T* device_output, std::int64_t count,
                               KeepPredicate keep, ScanWorkspace& workspace, StreamHandle stream);

/// The reference the tests trust: one loop in element order.
template <class T>
std::int64_t compact_sequential(std::span<const T> input, std::span<T> output, KeepPredicate keep);

/// An element of compact_if (both passes) on one thread: 1.9 ns for a double kept when positive
/// (gpukit_tune_cpu_threads costs at idle, 2^22 doubles: 2.1, 1.7). The thread rule's figure.
inline constexpr double kCompactCpuNsPerElement = 1.9;

/// The generic predicate of the C++ API (CPU, OpenMP): count the kept elements of each block of
/// the input in parallel, prefix-sum the counts, copy each block's kept elements in parallel, on
/// as many threads as the thread rule (core/cpu_threads.hpp) gives for the input's size and
/// `threads` (<= 0: the OpenMP default).
/// `keep(x)` must be a pure function; it sees each element (and nothing past the end) once per
/// pass. Returns the number kept.
template <class T, class Keep>
std::int64_t compact_if(std::span<const T> input, std::span<T> output, Keep keep, int threads = 0) {
  if (output.size() < input.size()) {
    throw InvalidInput("compact: the output is shorter than the input");
  }
  constexpr std::int64_t kBlock = 1 << 16;
  const auto n = static_cast<std::int64_t>(input.size());
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(blocks) + 1, 0);
#if defined(_OPENMP)
  const int team = cpu_threads_for({n, kCompactCpuNsPerElement, blocks}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
#else
  (void)threads;
#endif
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::int64_t kept = 0;
    const std::int64_t end = std::min(n, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < end; ++i) kept += keep(input[std::size_t(i)]) ? 1 : 0;
    offsets[static_cast<std::size_t>(b) + 1] = kept;
  }
  for (std::int64_t b = 0; b < blocks; ++b) {
    offsets[std::size_t(b) + 1] += offsets[std::size_t(b)];
  }
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(team)
#endif
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::int64_t next = offsets[static_cast<std::size_t>(b)];
    const std::int64_t end = std::min(n, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < end; ++i) {
      const T& x = input[std::size_t(i)];
      if (keep(x)) output[std::size_t(next++)] = x;
    }
  }
  return offsets.back();
}

}  // namespace gpukit::primitives
