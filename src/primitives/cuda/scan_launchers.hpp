#pragma once
// Internal: the CUDA scan launchers (defined in the .cu files of this folder), callable from plain
// C++. Every launcher scans `count` elements at `input` into `output` (device memory) on `stream`
// and waits for nothing.

#include <cstdint>

#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::cuda_detail {

#define GPUKIT_DECLARE_SCAN_LAUNCHER(name)                                           \
  template <class T>                                                                 \
  void name(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind, \
            ScanWorkspace& workspace, StreamHandle stream);

#define GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(name, T) \
  template void name<T>(const T*, T*, std::int64_t, ScanOp, ScanKind, ScanWorkspace&, StreamHandle);
#define GPUKIT_INSTANTIATE_SCAN_LAUNCHER(name)              \
  GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(name, std::int32_t)  \
  GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(name, std::int64_t)  \
  GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(name, std::uint32_t) \
  GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(name, float)         \
  GPUKIT_INSTANTIATE_SCAN_LAUNCHER_FOR(name, double)

/// The one-block scans hold the whole array in one block's shared memory.
inline constexpr std::int64_t kOneBlockMaxCount = 2048;

// The seed's scans (scan_seed_kernels.cu).
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_hillis_steele)          // one block, double-buffered
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_work_efficient)         // one block, up-sweep/down-sweep
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_work_efficient_padded)  // the same, one pad word per 32
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_multi_block)            // scan tiles, scan sums, add back
// The deterministic single-pass engine (scan_decoupled.cu): the canonical bracketing.
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_decoupled_lookback)
/// The engine in pieces, for data that arrives in chunks (the host path): `carry_in` (device, an
/// accumulator of the op, null for the first chunk) is the previous chunk's `total_out`; chunks
/// must start on boundaries of 32-tile groups so that the tiles, and so the bits, are the
/// one-launch ones.
/// `index_base` offsets the overflow report's indices.
template <class T>
std::size_t decoupled_carry_bytes(ScanOp op);
/// Workspace bytes one launch over `count` elements needs (reserve them before clearing the
/// overflow report: a growth does not keep the old contents).
template <class T>
std::size_t decoupled_workspace_bytes(ScanOp op, std::int64_t count);
template <class T>
void launch_decoupled_chunk(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                            ScanWorkspace& workspace, StreamHandle stream, const void* carry_in,
                            void* total_out, std::int64_t index_base);
/// Zeroes the workspace's overflow report (reserving room for it first).
void clear_scan_overflow_report(ScanWorkspace& workspace, StreamHandle stream);
/// The first overflowing index the report holds, or -1; call after the stream is complete.
std::int64_t scan_overflow_index(const ScanWorkspace& workspace);

// Exact operations (integers, floating-point min and max) on the classic decoupled look-back,
// one block a tile (scan_exact.cu); floating-point sums and products on launch_decoupled_lookback.
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_exact_lookback)
// The API's default (scan_pipelined.cuh): exact operations from 32 MB up on the pipelined engine
// (sm_90, aligned pointers), everything else as launch_exact_lookback.
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_pipelined_lookback)

// CUB's DeviceScan, the vendor row (scan_cub.cu).
GPUKIT_DECLARE_SCAN_LAUNCHER(launch_cub_scan)

}  // namespace gpukit::primitives::cuda_detail
