#pragma once
// Internal: host arrays compacted on a CUDA device, in chunks through pinned staging buffers.

#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"
#include "gpukit/primitives/compact.hpp"

namespace gpukit::primitives::detail {

/// Compacts `input` into `output` on the context's device; returns the number kept.
template <class T>
std::int64_t compact_through_device(const Context& context, std::span<const T> input,
                                    std::span<T> output, KeepPredicate keep);

}  // namespace gpukit::primitives::detail
