// The CPU backend of the MT19937 streams: one Mt19937 per stream on OpenMP threads.

#include <span>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/rng/mt19937.hpp"
#include "gpukit/rng/mt19937_streams.hpp"
#include "rng/cpu/rng_launchers.hpp"

namespace gpukit::rng::cpu_detail {

namespace {

Mt19937 stream_generator(std::uint64_t seed, std::uint64_t stream) {
  std::uint32_t key[4];
  mt19937_stream_key(seed, stream, key);
  return Mt19937(std::span<const std::uint32_t>(key));
}

}  // namespace

void mt19937_streams(std::uint32_t* out, std::int64_t stream_count, std::int64_t per_stream,
                     std::uint64_t seed, std::uint64_t first_stream, int threads) {
  // On one thread: a stream's seeding 4.4 us, a word 6 ns (gpukit_tune_cpu_threads costs at idle:
  // 2^14 streams of one word, 4.39 and 4.36 us; 2^10 streams of 2^10 words, 5.8 and 6.2 ns). The
  // thread rule's figures.
  constexpr double kNsPerStream = 4400, kNsPerWord = 6;
  const int team =
      cpu_threads_for({stream_count, kNsPerStream + kNsPerWord * double(per_stream)}, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (std::int64_t s = 0; s < stream_count; ++s) {
    Mt19937 generator = stream_generator(seed, first_stream + static_cast<std::uint64_t>(s));
    std::uint32_t* stream_out = out + s * per_stream;
    for (std::int64_t k = 0; k < per_stream; ++k) stream_out[k] = generator();
  }
}

}  // namespace gpukit::rng::cpu_detail
