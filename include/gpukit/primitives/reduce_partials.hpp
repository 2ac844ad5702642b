#pragma once
// A reduction in fixed blocks: the pieces an array is reduced in across GPUs and processes
// (gpukit/distributed), with the bits of reduce() of the whole array.
//
// The canonical tree (reduce_canonical.hpp) cuts the array into tiles of kTile = 16384 elements,
// the tile results into tiles of the level above, and so on. A block is one tile of level
// `level`: kTile elements (level 0) or kTile^2 = 2^28 elements (level 1), the level chosen by the
// array's size alone (reduce_split), never by the number of GPUs or processes. A block's partial
// is the value the tree computes for that tile, whoever computes it; given every block's partial
// in block order, reduce_from_partials runs the levels above and returns reduce()'s result, bit
// for bit, for every operation, type and backend (the tree is fixed and the CPU and GPU evaluate
// it alike).
//
// A partial is the operation's accumulator (a float or double, a 64- or 128-bit integer, a
// double-double), handed over as `partial_bytes` bytes: plain data that processes can exchange;
// the hosts of a job must share the byte order (every x86-64 and AArch64 Linux host does).

#include <cstddef>
#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives {

/// Arrays of at least this many elements are split at level 1 (blocks of 2^28 elements: at
/// least 16 of them, and a 2^34-element array's 64 partials are what crosses to the host);
/// smaller ones at level 0 (blocks of one tile, 16384 elements).
inline constexpr std::int64_t kReduceLevelOneFrom = std::int64_t{1} << 32;

/// The fixed blocks of a reduction of `count` elements.
struct ReduceSplit {
  std::int64_t count = 0;           // elements of the whole array
  int level = 0;                    // the tree level whose tiles are the blocks: 0 or 1
  std::int64_t block_elements = 0;  // 16384 (level 0) or 2^28 (level 1)
  std::int64_t blocks = 0;          // ceil(count / block_elements)
  std::size_t partial_bytes = 0;    // bytes of one block's partial
  /// Blocks of `elements` elements from the start of a block (the last one may be short).
  std::int64_t blocks_of(std::int64_t elements) const {
    return (elements + block_elements - 1) / block_elements;
  }
};

/// The split of a reduction of `count` elements of T with `op` and `options` (the accumulator,
/// hence partial_bytes, depends on all three, as in reduce()). `level` -1 chooses by
/// kReduceLevelOneFrom; 0 or 1 forces that level (level 1 needs more than one tile: a single
/// tile is its own root). Every process of a job must use the same split. Throws InvalidInput as
/// reduce() does for the arguments (a bitwise op on floats, min or max of nothing, a negative
/// count), and for a level it cannot use.
template <class T>
ReduceSplit reduce_split(std::int64_t count, ReduceOp op, const ReduceOptions& options = {},
                         int level = -1);

/// The partials of the blocks that `part` (host memory) covers: elements [first_block *
/// block_elements, + part.size()) of the whole array, whole blocks but the array's last. Writes
/// split.blocks_of(part.size()) partials to `partials` (that many times partial_bytes). On the
/// CPU with OpenMP; on a CUDA context through the chunked pinned pipeline. Throws InvalidInput
/// for a part that does not start on a block or ends inside one before the array's end, or a
/// `partials` of the wrong size; DeviceUnavailable, CudaError, OutOfMemory from the device.
template <class T>
void reduce_partials(const Context& context, std::span<const T> part, const ReduceSplit& split,
                     std::int64_t first_block, ReduceOp op, const ReduceOptions& options,
                     std::span<std::byte> partials);

/// The same for `part_count` elements in the current device's memory, on `stream` (waits for it
/// and returns the partials in host memory: the exception of the `*_on_device` convention,
/// docs/design-notes.md). Reads the part once, as reduce_on_device does; `workspace` holds its
/// tile sums (one stream at a time).
template <class T>
void reduce_partials_on_device(const T* device_part, std::int64_t part_count,
                               const ReduceSplit& split, std::int64_t first_block, ReduceOp op,
                               const ReduceOptions& options, std::span<std::byte> partials,
                               ReduceWorkspace& workspace, StreamHandle stream);

/// reduce()'s result from every block's partial, in block order (split.blocks of them): the
/// levels above on the CPU, then the conversion to the result type and reduce()'s checks
/// (InvalidInput for an integer sum that overflows, min or max of nothing). `threads` 0 = all.
template <class T>
reduce_result_t<T> reduce_from_partials(std::span<const std::byte> partials,
                                        const ReduceSplit& split, ReduceOp op,
                                        const ReduceOptions& options = {}, int threads = 0);

}  // namespace gpukit::primitives
