#pragma once
// Internal: the CPU backend of compact (compact_kernels.cpp), parallel to
// cuda/compact_launchers.hpp: compact_if (gpukit/primitives/compact.hpp) on OpenMP threads.

#include <cstdint>
#include <span>

#include "gpukit/primitives/compact.hpp"

namespace gpukit::primitives::cpu_detail {

/// Copies the elements of `input` that `keep` keeps to the front of `output` (host memory, at
/// least as large), in order, on `threads` OpenMP threads; returns how many. The arguments are
/// checked by the caller.
template <class T>
std::int64_t compact_on_cpu(int threads, std::span<const T> input, std::span<T> output,
                            KeepPredicate keep);

}  // namespace gpukit::primitives::cpu_detail
