#pragma once
// Internal: the CUDA scan launchers (defined in the .cu files of this folder), callable from plain
// C++. Every launcher scans `count` elements at `input` into `output` (device memory) on `stream`
// and waits for nothing.

#include <cstdint>

#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_variants.hpp"

namespace gpukit::primitives::cuda_detail {

/// The one-block scans hold the whole array in one block's shared memory.
inline constexpr std::int64_t kOneBlockMaxCount = 2048;

// The seed's scans (scan_seed_kernels.cu): one block, double-buffered (Hillis-Steele); one block,
// up-sweep and down-sweep (work-efficient); the same with one pad word per 32; and tiles scanned,
// their sums scanned, added back (multi-block).
template <class T>
ScanLaunch<T> launch_hillis_steele;
template <class T>
ScanLaunch<T> launch_work_efficient;
template <class T>
ScanLaunch<T> launch_work_efficient_padded;
template <class T>
ScanLaunch<T> launch_multi_block;
// The deterministic single-pass engine (scan_decoupled.cu): the canonical bracketing.
template <class T>
ScanLaunch<T> launch_decoupled_lookback;
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
template <class T>
ScanLaunch<T> launch_exact_lookback;
// The API's default (scan_pipelined.cuh): exact operations from 32 MB up on the pipelined engine
// (sm_90, aligned pointers), everything else as launch_exact_lookback.
template <class T>
ScanLaunch<T> launch_pipelined_lookback;

// CUB's DeviceScan, the vendor row (scan_cub.cu).
template <class T>
ScanLaunch<T> launch_cub_scan;

}  // namespace gpukit::primitives::cuda_detail
