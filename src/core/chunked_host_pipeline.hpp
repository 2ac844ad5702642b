#pragma once
// Internal: the one chunked host pipeline every "host data on the GPU" path runs on (scan,
// compaction, reduction, Black-Scholes). A host array is cut into chunks; chunk k goes through
// staging slot k % 2 (core/staging_area.hpp: a stream, pinned and device buffers), so that while
// the CPU packs chunk k into one slot, chunk k-1 crosses PCIe and is computed on the other slot's
// stream, and the two copy directions overlap. What a chunk does on its stream (copies, kernels,
// events) is the caller's; the order of chunks, the reuse of slots and the waits are here.
//
// No CUDA header: the driver only asks a slot for `stream.synchronize()`, so the bookkeeping is
// tested on the CPU with recording slots (tests/core/chunked_host_pipeline_test.cpp).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "gpukit/core/error.hpp"

namespace gpukit::detail {

/// One chunk of a host array: elements [begin, begin + size) of it, the index-th chunk.
struct HostChunk {
  std::int64_t index = 0;
  std::int64_t begin = 0;
  std::int64_t size = 0;
};

/// `count` elements in chunks of `chunk_size()` elements, the last one partial; no chunk for
/// zero elements. Chunk k starts at k * chunk_size(), so a caller whose chunks must start on tile
/// boundaries passes a `max_chunk` that is a whole number of tiles.
class ChunkPlan {
 public:
  ChunkPlan(std::int64_t count, std::int64_t max_chunk)
      : count_(count), chunk_(std::min(max_chunk, count)) {
    if (count < 0 || max_chunk <= 0)
      throw InvalidInput("a chunk plan needs count >= 0 and max_chunk > 0");
  }

  std::int64_t count() const { return count_; }
  /// The largest chunk (what one staging slot must hold); 0 for zero elements.
  std::int64_t chunk_size() const { return chunk_; }
  std::int64_t chunk_count() const { return chunk_ == 0 ? 0 : (count_ + chunk_ - 1) / chunk_; }
  HostChunk chunk(std::int64_t k) const {
    const std::int64_t begin = k * chunk_;
    return {k, begin, std::min(chunk_, count_ - begin)};
  }

 private:
  std::int64_t count_;
  std::int64_t chunk_;
};

/// Whether run_chunked_host_pipeline() waits for the last two chunks before returning.
enum class LastChunks {
  finish,          // wait for each and call `finish` on it, in chunk order
  leave_in_flight  // return at once: the caller orders its next work after them itself
};

/// Runs `plan` through two staging slots. For chunk k, in order: if slot k % 2 holds chunk k-2,
/// its stream is synchronized and `finish(slot, chunk k-2)` drains it (on the host: copy results
/// out of pinned memory); then `start(slot, chunk k)` packs the chunk and enqueues its copies and
/// kernels on the slot's stream. Chunks are therefore finished in chunk order, which a caller
/// appending results (compaction) relies on. With LastChunks::finish, every chunk is finished
/// when this returns; with leave_in_flight, `finish` is never called for the last two chunks.
/// Exceptions from `start` or `finish` propagate; work already enqueued is left in flight (the
/// staging area waits for it before its next user).
template <class Slot, class Start, class Finish>
void run_chunked_host_pipeline(const ChunkPlan& plan, std::array<Slot, 2>& slots, Start&& start,
                               Finish&& finish, LastChunks last = LastChunks::finish) {
  std::array<std::optional<HostChunk>, 2> in_flight;
  auto drain = [&](std::size_t s) {
    if (!in_flight[s]) return;
    slots[s].stream.synchronize();
    finish(slots[s], *in_flight[s]);
    in_flight[s].reset();
  };
  const std::int64_t chunks = plan.chunk_count();
  for (std::int64_t k = 0; k < chunks; ++k) {
    const auto s = static_cast<std::size_t>(k % 2);
    drain(s);  // chunk k-2 used this slot
    const HostChunk chunk = plan.chunk(k);
    start(slots[s], chunk);
    in_flight[s] = chunk;
  }
  if (last == LastChunks::leave_in_flight) return;
  drain(static_cast<std::size_t>(chunks % 2));        // chunk chunks-2
  drain(static_cast<std::size_t>((chunks + 1) % 2));  // chunk chunks-1
}

}  // namespace gpukit::detail
