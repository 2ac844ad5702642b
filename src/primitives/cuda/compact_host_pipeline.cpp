// Host data compacted on the GPU: chunks run on the chunked host pipeline the scan's host path
// uses too (core/chunked_host_pipeline.hpp). Each chunk is compacted on its own and only its kept
// elements come back; the host appends them in chunk order, so the result is stable. While the CPU
// packs chunk k and appends chunk k-2's survivors, chunk k-1 crosses PCIe and is compacted on the
// other slot.

#include "primitives/cuda/compact_host_pipeline.hpp"

#include <algorithm>
#include <array>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "primitives/cuda/compact_launchers.hpp"

namespace gpukit::primitives::detail {

namespace {

constexpr std::int64_t kChunkElementsTarget = std::int64_t{1} << 24;

}  // namespace

template <class T>
std::int64_t compact_through_device(const Context& context, std::span<const T> input,
                                    std::span<T> output, KeepPredicate keep) {
  const auto count = static_cast<std::int64_t>(input.size());
  if (count == 0) return 0;
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();
  const gpukit::detail::ChunkPlan plan(count, kChunkElementsTarget);
  const std::size_t chunk_bytes = static_cast<std::size_t>(plan.chunk_size()) * sizeof(T);

  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  auto& slots = gpukit::detail::staging_area(context.cuda_device, chunk_bytes, chunk_bytes).slots;
  std::array<ScanWorkspace, 2> workspaces;
  cuda::DeviceBuffer<std::int64_t> device_kept(2);
  cuda::PinnedBuffer<std::int64_t> kept(2);

  std::int64_t written = 0;
  auto start = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    const auto s = static_cast<std::size_t>(c.index % 2);
    const std::size_t bytes = static_cast<std::size_t>(c.size) * sizeof(T);
    T* pinned_in = reinterpret_cast<T*>(slot.pinned_in.data());
    gpukit::detail::parallel_copy(pinned_in, input.data() + c.begin, bytes, threads);
    cuda::copy_to_device_async(slot.device_in.data(), pinned_in, bytes, slot.stream.handle());
    cuda_detail::launch_compact_single_pass(reinterpret_cast<const T*>(slot.device_in.data()),
                                            reinterpret_cast<T*>(slot.device_out.data()), c.size,
                                            keep, device_kept.data() + s, workspaces[s],
                                            slot.stream.handle());
    cuda::copy_to_host_async(kept.data() + s, device_kept.data() + s, sizeof(std::int64_t),
                             slot.stream.handle());
  };
  // The pipeline finishes chunks in order, so appending here keeps the result stable.
  auto finish = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    const std::int64_t n = kept.data()[c.index % 2];  // in pinned memory: the stream is done
    if (n > 0) {
      cuda::copy_to_host_async(slot.pinned_out.data(), slot.device_out.data(),
                               static_cast<std::size_t>(n) * sizeof(T), slot.stream.handle());
      slot.stream.synchronize();
      gpukit::detail::parallel_copy(output.data() + written, slot.pinned_out.data(),
                                    static_cast<std::size_t>(n) * sizeof(T), threads);
    }
    written += n;
  };
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start, finish);
  return written;
}

#define GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE(T)                                  \
  template std::int64_t compact_through_device<T>(const Context&, std::span<const T>, \
                                                  std::span<T>, KeepPredicate);
GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE(std::int32_t)
GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE(std::int64_t)
GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE(std::uint32_t)
GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE(float)
GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE(double)
#undef GPUKIT_INSTANTIATE_COMPACT_THROUGH_DEVICE

}  // namespace gpukit::primitives::detail
