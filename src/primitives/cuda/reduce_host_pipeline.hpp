#pragma once
// Internal: reduces a host-memory array on a CUDA device, streaming it through pinned buffers.

#include <cstddef>

#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_partials.hpp"

namespace gpukit::primitives::detail {

/// The deterministic engine over chunks of `data` (the same tiles, so the same bits as one
/// launch over the whole array). `overflow` reports an integer sum beyond the result type.
template <class T>
reduce_result_t<T> reduce_through_device(const Context& context, std::span<const T> data,
                                         ReduceOp op, const ReduceOptions& options, bool& overflow);

/// The partials of blocks of `split` (gpukit/primitives/reduce_partials.hpp) for `part`, which
/// starts on a block boundary of the whole array, through the same pipeline: its tile sums
/// (split.level 0), or the level above them (level 1), to `host_partials`.
template <class T>
void partials_through_device(const Context& context, std::span<const T> part, ReduceOp op,
                             const ReduceOptions& options, const ReduceSplit& split,
                             std::span<std::byte> host_partials);

}  // namespace gpukit::primitives::detail
