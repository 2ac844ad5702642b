#pragma once
// Internal: the chunked host path of the finance books (Black-Scholes prices, implied
// volatilities): a book's columns in host memory stream through the pinned staging slots of
// core/chunked_host_pipeline.hpp, a chunk of rows at a time, to a kernel and back. While chunk k
// is packed on the CPU, chunk k-1 is copied in, computed and copied out on its own stream, and the
// two copy directions overlap, so throughput is bounded by PCIe (or by the CPU copies into pinned
// memory, which run on all threads), not by device memory size. Each caller lists its columns and
// launches its kernel on a chunk's device copies; the layout, the copies and the waits are here.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::finance::detail {

/// A column that travels to the device: `element_bytes` per row from `host`, row 0 first.
struct BookInputColumn {
  const void* host = nullptr;
  std::size_t element_bytes = 0;
};

/// A column that comes back: `element_bytes` per row into `host`.
struct BookOutputColumn {
  void* host = nullptr;
  std::size_t element_bytes = 0;
};

/// One chunk on the device: its rows' columns in the order the caller listed them (each starts on
/// a 256-byte boundary, so vector loads stay aligned), and the stream its kernel goes on.
struct BookDeviceChunk {
  std::int64_t rows = 0;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  StreamHandle stream = nullptr;
};

/// Streams rows [0, count) of `inputs` through `context`'s device in chunks of at most
/// `chunk_rows` rows: for each chunk, `launch` enqueues the kernel on the chunk's device columns
/// (without waiting), and the outputs are copied back into `outputs`. Returns when every output is
/// in host memory. Nothing for count == 0.
void stream_book_through_device(const Context& context, std::int64_t count, std::int64_t chunk_rows,
                                std::span<const BookInputColumn> inputs,
                                std::span<const BookOutputColumn> outputs,
                                const std::function<void(const BookDeviceChunk&)>& launch);

}  // namespace gpukit::finance::detail
