// Host data on the GPU: chunks of whole tiles run on the chunked host pipeline that the
// Black-Scholes, scan and compaction paths use too (core/chunked_host_pipeline.hpp), so that while
// the CPU packs chunk k into one slot (all threads), chunk k-1 crosses PCIe and is reduced from the
// other slot on its own stream. Each chunk's tile sums land in one device array at the chunk's tile
// offset; one last launch reduces them. The tree is the fixed one, so the result is bitwise the CPU
// backend's and the single-launch device path's.

#include "primitives/cuda/reduce_host_pipeline.hpp"

#include <algorithm>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "primitives/cuda/reduce_launchers.hpp"

namespace gpukit::primitives::detail {

namespace {

// 64 MiB of float per slot: large enough that a copy runs at full PCIe speed.
constexpr std::int64_t kChunkElementsTarget = std::int64_t{1} << 24;
static_assert(kChunkElementsTarget % canonical::kTile == 0, "chunks must hold whole tiles");

}  // namespace

template <class T>
reduce_result_t<T> reduce_through_device(const Context& context, std::span<const T> data,
                                         ReduceOp op, const ReduceOptions& options,
                                         bool& overflow) {
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();
  const auto count = static_cast<std::int64_t>(data.size());
  // Staging room for a chunk of whole tiles (the chunks themselves end at `count`).
  const std::int64_t chunk_capacity =
      std::min(kChunkElementsTarget,
               canonical::tile_count(std::max<std::int64_t>(count, 1)) * canonical::kTile);
  const std::int64_t total_tiles = std::max<std::int64_t>(canonical::tile_count(count), 1);
  const std::size_t acc_bytes =
      cuda_detail::deterministic_accumulator_size<T>(op, options.accurate_sum, count);

  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  auto& slots = gpukit::detail::staging_area(
                    context.cuda_device, static_cast<std::size_t>(chunk_capacity) * sizeof(T), 0)
                    .slots;
  cuda::DeviceBuffer<unsigned char> tile_sums(static_cast<std::size_t>(total_tiles) * acc_bytes);
  // The result and the overflow flag, 16-byte aligned.
  cuda::DeviceBuffer<unsigned char> outcome(32);

  const gpukit::detail::ChunkPlan plan(count, kChunkElementsTarget);
  auto start = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    T* pinned = reinterpret_cast<T*>(slot.pinned_in.data());
    T* device = reinterpret_cast<T*>(slot.device_in.data());
    gpukit::detail::parallel_copy(pinned, data.data() + c.begin,
                                  static_cast<std::size_t>(c.size) * sizeof(T), threads);
    cuda::copy_to_device_async(device, pinned, static_cast<std::size_t>(c.size) * sizeof(T),
                               slot.stream.handle());
    cuda_detail::launch_deterministic_chunk(device, c.size, op, options.accurate_sum, count,
                                            tile_sums.data(), c.begin / canonical::kTile,
                                            slot.stream.handle());
  };
  // Nothing comes back per chunk: the tile sums stay on the device for the last launch.
  auto finish = [](gpukit::detail::StagingSlot&, const gpukit::detail::HostChunk&) {};
  // The last launch runs on slot 0's stream, after its chunks; slot 1's are waited for here.
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start, finish,
                                            gpukit::detail::LastChunks::leave_in_flight);
  slots[1].stream.synchronize();
  auto* result = reinterpret_cast<reduce_result_t<T>*>(outcome.data());
  auto* overflow_flag = reinterpret_cast<int*>(outcome.data() + 16);
  cuda_detail::launch_deterministic_levels<T>(tile_sums.data(), canonical::tile_count(count), op,
                                              options.accurate_sum, count, result, overflow_flag,
                                              slots[0].stream.handle());
  reduce_result_t<T> value{};
  int overflow_value = 0;
  cuda::copy_to_host_async(&value, result, sizeof value, slots[0].stream.handle());
  cuda::copy_to_host_async(&overflow_value, overflow_flag, sizeof overflow_value,
                           slots[0].stream.handle());
  slots[0].stream.synchronize();
  overflow = overflow_value != 0;
  return value;
}

template <class T>
void partials_through_device(const Context& context, std::span<const T> part, ReduceOp op,
                             const ReduceOptions& options, const ReduceSplit& split,
                             std::span<std::byte> host_partials) {
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();
  const auto count = static_cast<std::int64_t>(part.size());
  if (count == 0) return;
  const std::int64_t chunk_capacity =
      std::min(kChunkElementsTarget, canonical::tile_count(count) * canonical::kTile);
  const std::int64_t tiles = canonical::tile_count(count);
  const std::size_t acc_bytes = split.partial_bytes;

  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  auto& slots = gpukit::detail::staging_area(
                    context.cuda_device, static_cast<std::size_t>(chunk_capacity) * sizeof(T), 0)
                    .slots;
  cuda::DeviceBuffer<unsigned char> tile_sums(static_cast<std::size_t>(tiles) * acc_bytes);
  const gpukit::detail::ChunkPlan plan(count, kChunkElementsTarget);
  auto start = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    T* pinned = reinterpret_cast<T*>(slot.pinned_in.data());
    T* device = reinterpret_cast<T*>(slot.device_in.data());
    gpukit::detail::parallel_copy(pinned, part.data() + c.begin,
                                  static_cast<std::size_t>(c.size) * sizeof(T), threads);
    cuda::copy_to_device_async(device, pinned, static_cast<std::size_t>(c.size) * sizeof(T),
                               slot.stream.handle());
    // The whole array's size picks the accumulator, as every block's must agree.
    cuda_detail::launch_deterministic_chunk(device, c.size, op, options.accurate_sum, split.count,
                                            tile_sums.data(), c.begin / canonical::kTile,
                                            slot.stream.handle());
  };
  auto finish = [](gpukit::detail::StagingSlot&, const gpukit::detail::HostChunk&) {};
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start, finish,
                                            gpukit::detail::LastChunks::leave_in_flight);
  slots[1].stream.synchronize();
  const StreamHandle stream = slots[0].stream.handle();
  if (split.level == 0) {
    cuda::copy_to_host_async(host_partials.data(), tile_sums.data(), host_partials.size(), stream);
  } else {
    cuda::DeviceBuffer<unsigned char> groups(host_partials.size());
    cuda_detail::launch_deterministic_groups<T>(tile_sums.data(), tiles, op, options.accurate_sum,
                                                split.count, groups.data(), stream);
    cuda::copy_to_host_async(host_partials.data(), groups.data(), host_partials.size(), stream);
    slots[0].stream.synchronize();  // before `groups` is freed
  }
  slots[0].stream.synchronize();
}

#define GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE(T)                                    \
  template void partials_through_device<T>(const Context&, std::span<const T>, ReduceOp, \
                                           const ReduceOptions&, const ReduceSplit&,     \
                                           std::span<std::byte>);
GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE(std::int32_t)
GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE(std::int64_t)
GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE(std::uint32_t)
GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE(float)
GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE(double)
#undef GPUKIT_INSTANTIATE_PARTIALS_THROUGH_DEVICE

template reduce_result_t<std::int32_t> reduce_through_device(const Context&,
                                                             std::span<const std::int32_t>,
                                                             ReduceOp, const ReduceOptions&, bool&);
template reduce_result_t<std::int64_t> reduce_through_device(const Context&,
                                                             std::span<const std::int64_t>,
                                                             ReduceOp, const ReduceOptions&, bool&);
template reduce_result_t<std::uint32_t> reduce_through_device(const Context&,
                                                              std::span<const std::uint32_t>,
                                                              ReduceOp, const ReduceOptions&,
                                                              bool&);
template reduce_result_t<float> reduce_through_device(const Context&, std::span<const float>,
                                                      ReduceOp, const ReduceOptions&, bool&);
template reduce_result_t<double> reduce_through_device(const Context&, std::span<const double>,
                                                       ReduceOp, const ReduceOptions&, bool&);

}  // namespace gpukit::primitives::detail
