// The CPU backend of the flat streams: whole Philox blocks on OpenMP threads, each block stored by
// the code the CUDA kernel runs (flat_stream_fill.hpp).

#include "rng/cpu/rng_launchers.hpp"

#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::rng::cpu_detail {

// An element on one thread: 9.6 ns for a double uniform (gpukit_tune_cpu_threads costs at idle,
// 2^22 of them: 9.3, 9.8). The thread rule's figure.
constexpr double kNsPerElement = 9.6;

template <class T, detail::StreamKind kKind>
void fill_flat_stream(std::span<T> out, std::uint64_t seed, std::uint64_t offset, int threads) {
  const auto count = static_cast<std::int64_t>(out.size());
  const detail::BlockRange blocks = detail::blocks_covering<T>(offset, count);
  T* data = out.data();
  const int team = cpu_threads_for({count, kNsPerElement, blocks.count}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t i = 0; i < blocks.count; ++i) {
    detail::store_block<T, kKind>(data, offset, count, seed,
                                  blocks.first + static_cast<std::uint64_t>(i));
  }
}

using detail::StreamKind;
#define GPUKIT_INSTANTIATE_FILL(T, kind) \
  template void fill_flat_stream<T, kind>(std::span<T>, std::uint64_t, std::uint64_t, int);
GPUKIT_INSTANTIATE_FILL(std::uint32_t, StreamKind::bits)
GPUKIT_INSTANTIATE_FILL(float, StreamKind::uniform)
GPUKIT_INSTANTIATE_FILL(double, StreamKind::uniform)
GPUKIT_INSTANTIATE_FILL(float, StreamKind::normal_box_muller)
GPUKIT_INSTANTIATE_FILL(double, StreamKind::normal_box_muller)
GPUKIT_INSTANTIATE_FILL(float, StreamKind::normal_inverse_cdf)
GPUKIT_INSTANTIATE_FILL(double, StreamKind::normal_inverse_cdf)
#undef GPUKIT_INSTANTIATE_FILL

}  // namespace gpukit::rng::cpu_detail
