#pragma once
// Internal: host arrays scanned on a CUDA device, in chunks through pinned staging buffers.

#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::detail {

/// Scans `input` into `output` on the context's device; returns the first element whose exact
/// integer sum overflows T, or -1.
template <class T>
std::int64_t scan_through_device(const Context& context, std::span<const T> input,
                                 std::span<T> output, ScanOp op, ScanKind kind);

}  // namespace gpukit::primitives::detail
