#pragma once
// Internal: reduces a host-memory array on a CUDA device, streaming it through pinned buffers.

#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives::detail {

/// The deterministic engine over chunks of `data` (the same tiles, so the same bits as one
/// launch over the whole array). `overflow` reports an integer sum beyond the result type.
template <class T>
reduce_result_t<T> reduce_through_device(const Context& context, std::span<const T> data,
                                         ReduceOp op, const ReduceOptions& options, bool& overflow);

}  // namespace gpukit::primitives::detail
