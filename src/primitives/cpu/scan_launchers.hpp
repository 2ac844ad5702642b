#pragma once
// Internal: the CPU backend of scan (scan_kernels.cpp), parallel to cuda/scan_launchers.hpp: the
// canonical tiles (gpukit/primitives/scan_canonical.hpp) on OpenMP threads.

#include <span>

#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::cpu_detail {

/// Scans `input` into `output` (host memory, the same size) on `threads` OpenMP threads;
/// InvalidInput naming the first overflowing element where an integer sum overflows. The arguments
/// are checked by the caller.
template <class T>
void scan_on_cpu(int threads, std::span<const T> input, std::span<T> output, ScanOp op,
                 ScanKind kind);

}  // namespace gpukit::primitives::cpu_detail
