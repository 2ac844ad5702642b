#pragma once
// Scans on the device: three single-pass engines (Merrill and Garland 2016, "Single-pass Parallel
// Prefix Scan with Decoupled Look-back") that differ in what they promise and where they run.
// This header is CUDA source (include it from .cu files only); it is public so that a CUDA user can
// instantiate the engines with an operation of their own: gpukit::primitives::Operation
// (operation.hpp: Input, Acc, identity, load, operator(); `store`, `fits`, `initial` and
// `clamp_carry` optional).
// Elements are combined strictly in order, so the operation need not be commutative.
// - deterministic_scan: any associative operation, floating-point sums included; the same bits
//   every run, equal to the CPU's canonical scan (scan_canonical.hpp).
// - exact_scan: operations whose result does not depend on the bracketing (integer sums, products
//   modulo 2^w, min, max, bitwise operations); faster, any GPU.
// - exact_scan_sm90: the same results as exact_scan, pipelined through sm_90's bulk copies; takes
//   16-byte aligned data on sm_90 and later, and says when it cannot take a call.
// Every engine records the first output index that fails `op.fits` in its workspace's overflow
// report (scan_overflow_index reads it). A workspace is used by one stream at a time.
//
// deterministic_scan.
//
// One launch. Persistent blocks take 4096-element tiles in order from an atomic counter, so a
// tile only ever waits on tiles already taken by running blocks. A block loads its tile with
// 16-byte loads into registers (warp w owns elements [512w, 512w + 512), four rows of 32 lanes x
// 4 elements), scans it in registers and warp shuffles in the canonical order, and publishes the
// tile's aggregate. Its first warp then finds the tile's exclusive prefix as the canonical
// bracketing defines it: the Kogge-Stone scan of the aggregates of the tile's group of 32 (the
// earlier tiles of the group, read in one coalesced load), on top of the inclusive prefix Q of
// the previous group. Q is published by each group's last tile; when it is not there yet, the
// warp takes the nearest published Q and adds the later groups' sums (their 32 aggregates summed
// by the same shuffle tree) left to right. Every prefix is thus a fixed function
// of the input whatever the timing: the result is bitwise deterministic and equals the CPU's
// canonical scan. One load of 32 group prefixes finds the nearest published one, and each
// group after it costs one coalesced load and five shuffles. Status
// entries pack a validity flag with a payload of up to 62 bits (one atomic 64-bit word) when the
// accumulator allows it; wider accumulators use a flag word plus a value, ordered by
// release/acquire.
//
// exact_scan.
// Why a second engine. deterministic_scan brackets tiles in a fixed tree so that floating-point
// sums give the same bits on every run; that costs a block up to ten microseconds of waiting per
// tile (docs/case-studies/scan.md). An exact operation gives the same result for every bracketing,
// so here a tile's exclusive prefix is whatever the look-back finds first: the inclusive prefix of
// the nearest predecessor that has published one, combined with the aggregates of the tiles
// between. Floating-point sums and products keep the deterministic engine.
//
// The kernel, one block a tile of up to 64 KB (four sub-tiles of 4096 int32: 256 threads x 4
// chunks of 16 bytes):
// - a block takes its tile from an atomic counter when it starts, so tiles are taken in the order
//   blocks run and a tile only ever waits on tiles of running blocks (no deadlock, whatever the
//   scheduling). A block never holds a tile it is not working on: an early ticket (prefetching
//   the next tile of a persistent block) makes every later tile wait for the holder's current
//   one, and the waits chain (measured: 14% of copy bandwidth);
// - the whole tile's 64 KB of loads are in flight at once (cp.async, one group per sub-tile),
//   three blocks an SM: enough bytes in flight to cover the look-back of the others. They land
//   striped (lane l, chunk 32k + l: coalesced) in a swizzled layout that lets each lane read its
//   16 consecutive elements (blocked) without bank conflicts;
// - pass 1, each sub-tile as it lands: each thread folds its elements, a warp shuffle scan
//   combines the threads; one barrier; warp 0 publishes the tile's aggregate, looks back over 32
//   predecessors a round trip (one status word each: flag and value in 64 bits when the
//   accumulator allows it; it waits only for the tiles after the nearest inclusive prefix),
//   reduces the window in tile order and publishes the inclusive prefix; one barrier;
// - pass 2, each sub-tile: the outputs from the elements (read again from shared memory), back
//   through the buffer (blocked in, striped out) to 16-byte streaming stores;
// - the last block to finish returns the tile counter and the tiles' flags to zero, so a launch
//   is one kernel with no memset before it (LaunchControl).
// Arrays below 384 sub-tiles (1.5 M int32) take fewer sub-tiles a tile (detail::sub_tiles_for).
// The tile I/O: detail/tile_io.cuh; the look-back and launch control: detail/tile_state.cuh.
//
// exact_scan_sm90.
// The pipelined single-pass scan for exact operations on sm_90 and later: exact_scan's
// decoupled look-back (the same status words, look-back, launch control, overflow report and
// workspace layout: detail/tile_state.cuh) run by persistent, warp-specialised blocks that stream
// tiles through shared-memory stages filled by bulk copies (one instruction a tile, completing on
// an mbarrier). Every tile is copied twice: once to be folded, and again, from L2, to be scanned.
//
// Why. A tile's prefix exists only once every earlier tile's aggregate is out and a look-back has
// found them, about 7 us after the tile's own aggregate on the H200 (the slowest of the other
// blocks, then round trips to L2 under load). A stage that holds the tile until then bounds the
// bandwidth. In this engine's first form each tile had one stage from its copy to its scan (six
// of 32 KB a block): a stage lived 13 us, 4 of them waiting for DRAM, and the scan ran at 87-90%
// of the copy bandwidth; a seventh stage put one more tile ahead of every prefix and gained
// little. Copied twice, the DRAM copy and the fold get stages of their own that no prefix holds
// up, and the stages that wait for prefixes are filled from L2:
// - the producer (one lane) takes a tile from the atomic counter when a fold stage is free and
//   bulk-copies it there (from DRAM, L2 evict-last); `lag` tiles later it copies the same tile
//   again (an L2 hit, evict-first) into a scan stage;
// - the reducer warps fold each tile the moment its first copy lands, free the fold stage and
//   publish the aggregate;
// - the look-back warp finds each tile's exclusive prefix once the block's next `lookback_lag`
// tiles
//   are folded too, when it rarely has to wait for a predecessor, and walks back at most to the
//   block's own previous tile, whose inclusive prefix it knows; it publishes the inclusive prefix;
// - the consumer warps, one segment of the tile each, read their rows from the scan stage (which
//   frees it for the next copy), scan them from the prefix and store 16-byte streaming rows.
// Measured in a traced prototype: a fold stage is held 5 us a tile, a scan stage 8 us. The stages
// start on a 128-byte boundary: at the 16-byte boundary that the static shared memory left, the
// same kernels ran 3-8% slower (docs/case-studies/scan.md).
//
// Deadlock freedom is the exact engine's: a tile is taken only by a running block, and its
// aggregate depends on nothing but its own copy (the reducers wait for nothing else, and the
// producer takes a ticket only when the tile kSlots back has been scanned, which needs only
// earlier tiles' aggregates).
//
// Measured on the H200 (int32 exact sum, docs/case-studies/scan.md): 94.1-94.4% of the
// device-to-device copy bandwidth at 2^28 and 2^30, 1.29x CUB (the first form: 87%, or 90.3-90.5%
// with its stages aligned).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpukit/primitives/cuda/detail/caller_storage.cuh"
#include "gpukit/primitives/cuda/detail/deterministic_scan_agent.cuh"
#include "gpukit/primitives/cuda/detail/exact_scan_agent.cuh"
#include "gpukit/primitives/cuda/detail/exact_scan_sm90_agent.cuh"
#include "gpukit/primitives/operation.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::device {

// --- deterministic_scan --------------------------------------------------------------------------

/// Workspace bytes deterministic_scan needs for `count` elements.
template <Operation Op>
std::size_t deterministic_scan_workspace_bytes(std::int64_t count) {
  return detail::deterministic_scan_agent::workspace_bytes<Op>(count);
}

/// Scans `count` elements of `input` into `output` (device memory; the same pointer for in place)
/// on `stream`, inclusive or exclusive per `kind`. `carry_in` (device, may be null) is Q[-1];
/// `total_out` (device, may be null) receives the last group's Q; `index_base` offsets the
/// overflow report's indices (chunks of a longer array). The workspace must hold
/// deterministic_scan_workspace_bytes<Op>(count); its overflow report is not cleared here
/// (clear_scan_overflow_report, once per call of the caller's API).
template <Operation Op, class Output>
void deterministic_scan(const Op& op, const typename Op::Input* input, Output* output,
                        std::int64_t count, ScanKind kind, ScanWorkspace& workspace,
                        cudaStream_t stream, const typename Op::Acc* carry_in = nullptr,
                        typename Op::Acc* total_out = nullptr, std::int64_t index_base = 0) {
  detail::deterministic_scan_agent::launch(op, input, output, count, kind, workspace, stream,
                                           carry_in, total_out, index_base);
}

/// The same with the caller's temporary storage (CUB's two-phase contract): with `temp_storage`
/// null, sets `temp_storage_bytes` to the bytes a call over `count` elements needs and does
/// nothing else; else scans with the `temp_storage_bytes` at `temp_storage` (device memory on a
/// 16-byte boundary; throws InvalidInput when too small). Its overflow report is not cleared
/// here either (clear_scan_overflow_report(temp_storage, stream)).
template <Operation Op, class Output>
void deterministic_scan(void* temp_storage, std::size_t& temp_storage_bytes, const Op& op,
                        const typename Op::Input* input, Output* output, std::int64_t count,
                        ScanKind kind, cudaStream_t stream,
                        const typename Op::Acc* carry_in = nullptr,
                        typename Op::Acc* total_out = nullptr, std::int64_t index_base = 0) {
  if (temp_storage == nullptr) {
    temp_storage_bytes = deterministic_scan_workspace_bytes<Op>(count);
    return;
  }
  detail::CallerScanStorage storage("deterministic_scan", temp_storage, temp_storage_bytes);
  detail::deterministic_scan_agent::launch(op, input, output, count, kind, storage, stream,
                                           carry_in, total_out, index_base);
}

// --- the overflow report -------------------------------------------------------------------------

/// Bytes a workspace must hold before clear_scan_overflow_report.
inline constexpr std::size_t kScanOverflowReportBytes = detail::WorkspaceLayout::kStatus;

/// Clears the workspace's overflow report on `stream` (deterministic_scan leaves it to its
/// caller; the exact engines clear it themselves).
inline void clear_scan_overflow_report(ScanWorkspace& workspace, cudaStream_t stream) {
  detail::deterministic_scan_agent::clear_overflow_report(workspace, stream);
}

/// The first overflowing index recorded in the workspace by any of the engines, or -1 (waits for
/// nothing: call after the stream is complete).
inline std::int64_t scan_overflow_index(const ScanWorkspace& workspace) {
  return detail::deterministic_scan_agent::overflow_index(workspace);
}

/// The same for a caller's temporary storage (the two-phase calls).
inline void clear_scan_overflow_report(void* temp_storage, cudaStream_t stream) {
  detail::deterministic_scan_agent::clear_overflow_report(temp_storage, stream);
}
inline std::int64_t scan_overflow_index(const void* temp_storage) {
  return detail::deterministic_scan_agent::overflow_index(temp_storage);
}

// --- exact_scan ----------------------------------------------------------------------------------

/// Workspace bytes exact_scan needs for `count` elements.
template <Operation Op>
std::size_t exact_scan_workspace_bytes(std::int64_t count) {
  return detail::exact_scan_agent::workspace_bytes<Op>(count);
}

/// Scans `count` elements of `input` into `output` (device memory, any alignment of the element
/// types; the same pointer for in place, otherwise disjoint) on `stream`: inclusive or exclusive
/// per `kind`. Clears the workspace's overflow report and records in it the first index (plus
/// `index_base`) whose output fails `op.fits` (scan_overflow_index reads it). The workspace grows
/// to exact_scan_workspace_bytes<Op>(count); one kernel launch, no memset, when the workspace's
/// last user was an exact engine or the compaction engine with at least as many tiles.
template <Operation Op, class Output>
void exact_scan(const Op& op, const typename Op::Input* input, Output* output, std::int64_t count,
                ScanKind kind, ScanWorkspace& workspace, cudaStream_t stream,
                std::int64_t index_base = 0) {
  detail::exact_scan_agent::launch(op, input, output, count, kind, workspace, stream, index_base);
}

/// The same with the caller's temporary storage (CUB's two-phase contract): with `temp_storage`
/// null, sets `temp_storage_bytes` to the bytes a call over `count` elements needs and does
/// nothing else; else scans with the `temp_storage_bytes` at `temp_storage` (device memory on a
/// 16-byte boundary; throws InvalidInput when too small), which may hold anything: the call
/// zeroes what it needs zero with one memset on `stream` (the workspace form skips it when the
/// workspace's last launch left it clean). scan_overflow_index(temp_storage) reads the report.
template <Operation Op, class Output>
void exact_scan(void* temp_storage, std::size_t& temp_storage_bytes, const Op& op,
                const typename Op::Input* input, Output* output, std::int64_t count, ScanKind kind,
                cudaStream_t stream, std::int64_t index_base = 0) {
  if (temp_storage == nullptr) {
    temp_storage_bytes = exact_scan_workspace_bytes<Op>(count);
    return;
  }
  detail::CallerScanStorage storage("exact_scan", temp_storage, temp_storage_bytes);
  detail::exact_scan_agent::launch(op, input, output, count, kind, storage, stream, index_base);
}

// --- exact_scan_sm90 -----------------------------------------------------------------------------

/// Scans as exact_scan does (the same workspace layout and clean-workspace contract, so that the
/// exact engines and the compaction engine share a workspace with no memset between them) and
/// returns true, or returns false having done nothing when this engine cannot take the call: a
/// GPU before sm_90, a binary without sm_90 code, or input or output not 16-byte aligned.
template <Operation Op, class Output>
bool exact_scan_sm90(const Op& op, const typename Op::Input* input, Output* output,
                     std::int64_t count, ScanKind kind, ScanWorkspace& workspace,
                     cudaStream_t stream, std::int64_t index_base = 0) {
  return detail::exact_scan_sm90_agent::launch(op, input, output, count, kind, workspace, stream,
                                               index_base);
}

/// Workspace bytes exact_scan_sm90 needs for `count` elements.
template <Operation Op>
std::size_t exact_scan_sm90_workspace_bytes(std::int64_t count) {
  using Policy = detail::exact_scan_sm90_agent::ExactScanPolicySm90;
  return detail::exact_scan_sm90_agent::workspace_bytes<Policy, Op>(count);
}

/// The same with the caller's temporary storage, as exact_scan's two-phase form: with
/// `temp_storage` null, sets `temp_storage_bytes` and returns true; else returns false having
/// done nothing when this engine cannot take the call, and scans and returns true otherwise.
template <Operation Op, class Output>
bool exact_scan_sm90(void* temp_storage, std::size_t& temp_storage_bytes, const Op& op,
                     const typename Op::Input* input, Output* output, std::int64_t count,
                     ScanKind kind, cudaStream_t stream, std::int64_t index_base = 0) {
  if (temp_storage == nullptr) {
    temp_storage_bytes = exact_scan_sm90_workspace_bytes<Op>(count);
    return true;
  }
  detail::CallerScanStorage storage("exact_scan_sm90", temp_storage, temp_storage_bytes);
  return detail::exact_scan_sm90_agent::launch(op, input, output, count, kind, storage, stream,
                                               index_base);
}

}  // namespace gpukit::primitives::device
