// Host matrices on the GPU. A GEMM moves O(n^2) bytes for O(n^3) flops, so its host path needs no
// overlap of copies with the products; what it needs is copies at the link's speed. Pageable
// cudaMemcpy runs at a fraction of it (the driver copies through a small pinned bounce buffer
// and waits), so each matrix crosses through the staging area's two pinned slots in 16 MiB chunks
// on the chunked host pipeline (core/chunked_host_pipeline.hpp): while one chunk crosses PCIe,
// the CPU packs the next into the other slot.

#include "blas/cuda/gemm_host_pipeline.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::blas::detail {

namespace {

constexpr std::int64_t kChunkBytes = std::int64_t{1} << 24;

using gpukit::detail::HostChunk;
using gpukit::detail::StagingSlot;

void stage_to_device(void* device, const void* host, std::size_t bytes, int threads,
                     std::array<StagingSlot, 2>& slots) {
  const gpukit::detail::ChunkPlan plan(static_cast<std::int64_t>(bytes), kChunkBytes);
  auto start = [&](StagingSlot& slot, const HostChunk& chunk) {
    const auto size = static_cast<std::size_t>(chunk.size);
    gpukit::detail::parallel_copy(slot.pinned_in.data(),
                                  static_cast<const unsigned char*>(host) + chunk.begin, size,
                                  threads);
    cuda::copy_to_device_async(static_cast<unsigned char*>(device) + chunk.begin,
                               slot.pinned_in.data(), size, slot.stream.handle());
  };
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start,
                                            [](StagingSlot&, const HostChunk&) {});
}

void stage_to_host(void* host, const void* device, std::size_t bytes, int threads,
                   std::array<StagingSlot, 2>& slots) {
  const gpukit::detail::ChunkPlan plan(static_cast<std::int64_t>(bytes), kChunkBytes);
  auto start = [&](StagingSlot& slot, const HostChunk& chunk) {
    cuda::copy_to_host_async(slot.pinned_out.data(),
                             static_cast<const unsigned char*>(device) + chunk.begin,
                             static_cast<std::size_t>(chunk.size), slot.stream.handle());
  };
  auto finish = [&](StagingSlot& slot, const HostChunk& chunk) {
    gpukit::detail::parallel_copy(static_cast<unsigned char*>(host) + chunk.begin,
                                  slot.pinned_out.data(), static_cast<std::size_t>(chunk.size),
                                  threads);
  };
  gpukit::detail::run_chunked_host_pipeline(plan, slots, start, finish);
}

}  // namespace

template <class T>
void gemm_through_device(const Context& context, GemmPlan& plan, T alpha, std::span<const T> a,
                         std::span<const T> b, T beta, std::span<T> c) {
  const GemmProblem& p = plan.problem();
  if (p.m == 0 || p.n == 0) return;
  cuda::set_device(context.cuda_device);
  const bool reads_operands = p.k > 0 && alpha != T(0);
  const auto a_bytes = static_cast<std::size_t>(p.a_elements()) * sizeof(T);
  const auto b_bytes = static_cast<std::size_t>(p.b_elements()) * sizeof(T);
  const auto c_bytes = static_cast<std::size_t>(p.c_elements()) * sizeof(T);
  cuda::DeviceBuffer<T> d_a(reads_operands ? static_cast<std::size_t>(p.a_elements()) : 0);
  cuda::DeviceBuffer<T> d_b(reads_operands ? static_cast<std::size_t>(p.b_elements()) : 0);
  cuda::DeviceBuffer<T> d_c(static_cast<std::size_t>(p.c_elements()));
  // C's padding (a leading dimension above the packed one) comes back as it went: copy C in when
  // it has padding, even where beta = 0 means its values are not read.
  const std::int64_t packed_ldc =
      std::max<std::int64_t>(1, p.layout == Layout::row_major ? p.n : p.m);
  const bool c_in = beta != T(0) || p.effective_ldc() != packed_ldc;
  const int threads = context.effective_cpu_threads();
  {
    const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
    auto& slots = gpukit::detail::staging_area(context.cuda_device, kChunkBytes, kChunkBytes).slots;
    if (reads_operands) {
      stage_to_device(d_a.data(), a.data(), a_bytes, threads, slots);
      stage_to_device(d_b.data(), b.data(), b_bytes, threads, slots);
    }
    if (c_in) stage_to_device(d_c.data(), c.data(), c_bytes, threads, slots);
  }
  cuda::Stream stream;
  plan.run(alpha, d_a.data(), d_b.data(), beta, d_c.data(), stream.handle());
  stream.synchronize();
  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  auto& slots = gpukit::detail::staging_area(context.cuda_device, kChunkBytes, kChunkBytes).slots;
  stage_to_host(c.data(), d_c.data(), c_bytes, threads, slots);
}

template void gemm_through_device<float>(const Context&, GemmPlan&, float, std::span<const float>,
                                         std::span<const float>, float, std::span<float>);
template void gemm_through_device<double>(const Context&, GemmPlan&, double,
                                          std::span<const double>, std::span<const double>, double,
                                          std::span<double>);

}  // namespace gpukit::blas::detail
