#include "finance/cuda/book_host_pipeline.hpp"

#include <vector>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::finance::detail {

namespace {

constexpr std::size_t kColumnAlignment = 256;

// Where each column's region starts within a slot's buffer, and the buffer's size.
struct ColumnLayout {
  std::vector<std::size_t> offset;
  std::size_t bytes = 0;

  ColumnLayout(std::int64_t chunk, std::span<const std::size_t> element_bytes) {
    for (const std::size_t size : element_bytes) {
      offset.push_back(bytes);
      const std::size_t region = static_cast<std::size_t>(chunk) * size;
      bytes += (region + kColumnAlignment - 1) / kColumnAlignment * kColumnAlignment;
    }
  }
};

}  // namespace

void stream_book_through_device(const Context& context, std::int64_t count, std::int64_t chunk_rows,
                                std::span<const BookInputColumn> inputs,
                                std::span<const BookOutputColumn> outputs,
                                const std::function<void(const BookDeviceChunk&)>& launch) {
  if (count == 0) return;
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();
  const gpukit::detail::ChunkPlan plan(count, chunk_rows);
  std::vector<std::size_t> input_sizes, output_sizes;
  for (const BookInputColumn& c : inputs) input_sizes.push_back(c.element_bytes);
  for (const BookOutputColumn& c : outputs) output_sizes.push_back(c.element_bytes);
  const ColumnLayout in_layout(plan.chunk_size(), input_sizes);
  const ColumnLayout out_layout(plan.chunk_size(), output_sizes);

  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  gpukit::detail::StagingArea& area =
      gpukit::detail::staging_area(context.cuda_device, in_layout.bytes, out_layout.bytes);
  using gpukit::detail::HostChunk;
  using gpukit::detail::StagingSlot;

  auto start = [&](StagingSlot& slot, const HostChunk& c) {
    // Straight from the caller's arrays into pinned memory: no copy of the book is made first.
    for (std::size_t a = 0; a < inputs.size(); ++a) {
      const std::size_t row_bytes = inputs[a].element_bytes;
      gpukit::detail::parallel_copy(
          slot.pinned_in.data() + in_layout.offset[a],
          static_cast<const unsigned char*>(inputs[a].host) + c.begin * row_bytes,
          static_cast<std::size_t>(c.size) * row_bytes, threads);
    }
    cuda::copy_to_device_async(slot.device_in.data(), slot.pinned_in.data(), in_layout.bytes,
                               slot.stream.handle());
    BookDeviceChunk chunk{c.size, {}, {}, slot.stream.handle()};
    for (std::size_t a = 0; a < inputs.size(); ++a)
      chunk.inputs.push_back(slot.device_in.data() + in_layout.offset[a]);
    for (std::size_t a = 0; a < outputs.size(); ++a)
      chunk.outputs.push_back(slot.device_out.data() + out_layout.offset[a]);
    launch(chunk);
    cuda::copy_to_host_async(slot.pinned_out.data(), slot.device_out.data(), out_layout.bytes,
                             slot.stream.handle());
  };
  auto finish = [&](StagingSlot& slot, const HostChunk& c) {
    for (std::size_t a = 0; a < outputs.size(); ++a) {
      const std::size_t row_bytes = outputs[a].element_bytes;
      gpukit::detail::parallel_copy(
          static_cast<unsigned char*>(outputs[a].host) + c.begin * row_bytes,
          slot.pinned_out.data() + out_layout.offset[a],
          static_cast<std::size_t>(c.size) * row_bytes, threads);
    }
  };
  gpukit::detail::run_chunked_host_pipeline(plan, area.slots, start, finish);
}

}  // namespace gpukit::finance::detail
