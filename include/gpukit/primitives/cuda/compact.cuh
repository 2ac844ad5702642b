#pragma once
// Single-pass stream compaction on the exact scan engine's machinery (detail/tile_io.cuh,
// detail/tile_state.cuh): counts are integers, so the classic decoupled look-back applies. This
// header is CUDA source (include it from .cu files only); it is public so that a CUDA user can
// instantiate it with a predicate of their own.
//
// One block a tile of up to 64 KB (four sub-tiles of 4096 elements of 4 bytes), taken from an
// atomic counter when the block starts, all of it loaded at once (cp.async), as the scan does.
// Pass 1: each lane reads its consecutive elements from the swizzled buffer and marks the kept
// ones; a warp shuffle scan of the counts and one barrier give every thread its offset. Warp 0
// publishes the tile's count and looks back for the number kept before the tile. Pass 2: the
// kept elements are packed, in order, into the front of the tile's (consumed) buffer, and the
// block copies them out with consecutive threads on consecutive addresses, so the writes
// coalesce however sparse the kept elements are.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpukit/primitives/cuda/detail/caller_storage.cuh"
#include "gpukit/primitives/cuda/detail/compact_agent.cuh"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::device {

/// Workspace bytes a compaction of `count` elements of T needs.
template <class T>
std::size_t compact_workspace_bytes(std::int64_t count) {
  return detail::compact_agent::workspace_bytes<T>(count);
}

/// Copies the elements x of `input` with keep(x) true, in order, to the front of `output`
/// (device memory, disjoint from the input) and writes their number to `kept_total` (device),
/// on `stream`. `keep` is a device-callable predicate on T; T's size is 4, 8 or 16 bytes. One
/// kernel launch, no memset, when the workspace's last user was this engine or an exact scan
/// engine with at least as many tiles.
template <class T, class Keep>
void compact(Keep keep, const T* input, T* output, std::int64_t count, long long* kept_total,
             ScanWorkspace& workspace, cudaStream_t stream) {
  detail::compact_agent::launch(keep, input, output, count, kept_total, workspace, stream);
}

/// The same with the caller's temporary storage (CUB's two-phase contract): with `temp_storage`
/// null, sets `temp_storage_bytes` to the bytes a compaction of `count` elements needs and does
/// nothing else; else compacts with the `temp_storage_bytes` at `temp_storage` (device memory on
/// a 16-byte boundary; throws InvalidInput when too small), which may hold anything: the call
/// zeroes what it needs zero with one memset on `stream`.
template <class T, class Keep>
void compact(void* temp_storage, std::size_t& temp_storage_bytes, Keep keep, const T* input,
             T* output, std::int64_t count, long long* kept_total, cudaStream_t stream) {
  if (temp_storage == nullptr) {
    temp_storage_bytes = compact_workspace_bytes<T>(count);
    return;
  }
  detail::CallerScanStorage storage("compact", temp_storage, temp_storage_bytes);
  detail::compact_agent::launch(keep, input, output, count, kept_total, storage, stream);
}

}  // namespace gpukit::primitives::device
