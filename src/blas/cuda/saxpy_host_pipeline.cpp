// Host arrays on the GPU: the seed's end-to-end program (copy x and y in, run the kernel, copy the
// result out) on the chunked host pipeline every host path shares (core/chunked_host_pipeline.hpp).
// While the CPU packs chunk k's x and y into one slot's pinned buffer, chunk k-1 crosses PCIe, is
// computed and comes back on the other slot's stream, so the two copy directions overlap. SAXPY
// does 2 flops per 12 bytes that cross PCIe: the copies, not the kernel, set the pace.

#include "blas/cuda/saxpy_host_pipeline.hpp"

#include <array>
#include <cstdint>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/blas/saxpy_variants.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::blas::detail {

namespace {

// 16 MiB of float per array and slot: large enough that a copy runs at full PCIe speed.
constexpr std::int64_t kChunkElements = std::int64_t{1} << 22;

}  // namespace

template <class T>
void axpy_through_device(const Context& context, T alpha, std::span<const T> x,
                         std::span<const T> y, std::span<T> out) {
  const auto count = static_cast<std::int64_t>(x.size());
  if (count == 0) return;
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();
  const gpukit::detail::ChunkPlan plan(count, kChunkElements);
  // x's and y's regions of a slot's input buffer; y's starts on a 256-byte boundary so that both
  // stay 16-byte aligned for the vector kernels.
  const std::int64_t stride = (plan.chunk_size() + 63) / 64 * 64;
  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  auto& slots = gpukit::detail::staging_area(context.cuda_device, 2 * stride * sizeof(T),
                                             plan.chunk_size() * sizeof(T))
                    .slots;
  const SaxpyVariant& variant = default_saxpy_variant();

  auto start = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    const std::size_t bytes = static_cast<std::size_t>(c.size) * sizeof(T);
    T* pinned_in = reinterpret_cast<T*>(slot.pinned_in.data());
    T* device_in = reinterpret_cast<T*>(slot.device_in.data());
    T* device_out = reinterpret_cast<T*>(slot.device_out.data());
    gpukit::detail::parallel_copy(pinned_in, x.data() + c.begin, bytes, threads);
    gpukit::detail::parallel_copy(pinned_in + stride, y.data() + c.begin, bytes, threads);
    cuda::copy_to_device_async(device_in, pinned_in, bytes, slot.stream.handle());
    cuda::copy_to_device_async(device_in + stride, pinned_in + stride, bytes, slot.stream.handle());
    variant.launch<T>(alpha, device_in, device_in + stride, device_out, c.size,
                      slot.stream.handle());
    cuda::copy_to_host_async(slot.pinned_out.data(), device_out, bytes, slot.stream.handle());
  };
  auto finish = [&](gpukit::detail::StagingSlot& slot, const gpukit::detail::HostChunk& c) {
    // out may be y: chunk c's y was packed in start(), before this writes over it.
    gpukit::detail::parallel_copy(out.data() + c.begin, slot.pinned_out.data(),
                                  static_cast<std::size_t>(c.size) * sizeof(T), threads);
  };
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start, finish);
}

template void axpy_through_device<float>(const Context&, float, std::span<const float>,
                                         std::span<const float>, std::span<float>);
template void axpy_through_device<double>(const Context&, double, std::span<const double>,
                                          std::span<const double>, std::span<double>);

}  // namespace gpukit::blas::detail
