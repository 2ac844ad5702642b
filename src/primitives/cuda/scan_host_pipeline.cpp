// Host data on the GPU: chunks of whole tiles run on the chunked host pipeline that the
// Black-Scholes, reduction and compaction paths share (core/chunked_host_pipeline.hpp). While the
// CPU packs chunk k into one slot, chunk k-1 crosses PCIe, is scanned and comes back on the other
// slot's stream, so the two copy directions overlap. Chunk k's scan waits (an event) for chunk
// k-1's, whose total it carries in; chunks start on boundaries of 32-tile groups, so the tiles, the
// groups and the left fold of the group prefixes are the one-launch ones and the bits equal the
// device path's and the CPU backend's.

#include "primitives/cuda/scan_host_pipeline.hpp"

#include <algorithm>
#include <array>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/scan_canonical.hpp"
#include "primitives/cuda/scan_launchers.hpp"

namespace gpukit::primitives::detail {

namespace {

// 64 MiB of float per slot and direction: large enough that a copy runs at full PCIe speed.
constexpr std::int64_t kChunkElementsTarget = std::int64_t{1} << 24;
static_assert(kChunkElementsTarget % (canonical_scan::kTile * canonical_scan::kGroupTiles) == 0,
              "chunks must hold whole groups of tiles");

}  // namespace

template <class T>
std::int64_t scan_through_device(const Context& context, std::span<const T> input,
                                 std::span<T> output, ScanOp op, ScanKind kind) {
  const auto count = static_cast<std::int64_t>(input.size());
  if (count == 0) return -1;
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();
  const gpukit::detail::ChunkPlan plan(count, kChunkElementsTarget);
  const std::size_t chunk_bytes = static_cast<std::size_t>(plan.chunk_size()) * sizeof(T);

  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  auto& slots = gpukit::detail::staging_area(context.cuda_device, chunk_bytes, chunk_bytes).slots;
  // Each chunk's total, ping-ponged: chunk k reads carry[(k+1)%2] and writes carry[k%2].
  const std::size_t carry_bytes = cuda_detail::decoupled_carry_bytes<T>(op);
  cuda::DeviceBuffer<unsigned char> carries(2 * ((carry_bytes + 15) / 16 * 16));
  auto carry = [&](std::int64_t k) {
    return carries.data() + (k % 2) * static_cast<std::int64_t>((carry_bytes + 15) / 16 * 16);
  };
  ScanWorkspace workspace;
  workspace.reserve(cuda_detail::decoupled_workspace_bytes<T>(op, plan.chunk_size()));
  const std::array<cuda::Event, 2> scanned;  // chunk k's scan is done: k+1 may carry it in
  cuda_detail::clear_scan_overflow_report(workspace, slots[0].stream.handle());
  scanned[1].record(slots[0].stream.handle());  // chunk 0 waits for the clearing

  auto start = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    const std::size_t bytes = static_cast<std::size_t>(c.size) * sizeof(T);
    T* pinned_in = reinterpret_cast<T*>(slot.pinned_in.data());
    T* device_in = reinterpret_cast<T*>(slot.device_in.data());
    T* device_out = reinterpret_cast<T*>(slot.device_out.data());
    gpukit::detail::parallel_copy(pinned_in, input.data() + c.begin, bytes, threads);
    cuda::copy_to_device_async(device_in, pinned_in, bytes, slot.stream.handle());
    slot.stream.wait(scanned[(c.index + 1) % 2].handle());
    cuda_detail::launch_decoupled_chunk(
        device_in, device_out, c.size, op, kind, workspace, slot.stream.handle(),
        c.index == 0 ? nullptr : carry(c.index + 1), carry(c.index), c.begin);
    scanned[c.index % 2].record(slot.stream.handle());
    cuda::copy_to_host_async(slot.pinned_out.data(), device_out, bytes, slot.stream.handle());
  };
  auto finish = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    gpukit::detail::parallel_copy(output.data() + c.begin, slot.pinned_out.data(),
                                  static_cast<std::size_t>(c.size) * sizeof(T), threads);
  };
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start, finish);
  return cuda_detail::scan_overflow_index(workspace);
}

#define GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE(T)                                                \
  template std::int64_t scan_through_device<T>(const Context&, std::span<const T>, std::span<T>, \
                                               ScanOp, ScanKind);
GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE(std::int32_t)
GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE(std::int64_t)
GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE(std::uint32_t)
GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE(float)
GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE(double)
#undef GPUKIT_INSTANTIATE_SCAN_THROUGH_DEVICE

}  // namespace gpukit::primitives::detail
