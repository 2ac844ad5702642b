// Independent MT19937 streams: argument checks and dispatch, to the CPU backend (cpu/: one
// Mt19937 per stream) or to the one-twister-per-block kernel (cuda/).

#include "gpukit/rng/mt19937_streams.hpp"

#include <limits>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "rng/cpu/rng_launchers.hpp"

#if GPUKIT_HAVE_CUDA
#include "rng/cuda/rng_launchers.hpp"
#endif

namespace gpukit::rng {

namespace {

void check_shape(std::int64_t stream_count, std::int64_t per_stream) {
  if (stream_count < 0 || per_stream < 0) {
    throw InvalidInput("MT19937 streams: negative stream count or stream length");
  }
  if (per_stream > 0 && stream_count > std::numeric_limits<std::int64_t>::max() / per_stream) {
    throw InvalidInput("MT19937 streams: stream count x stream length overflows int64");
  }
}

}  // namespace

void generate_mt19937_streams(const Context& context, std::span<std::uint32_t> out,
                              std::int64_t per_stream, std::uint64_t seed,
                              std::uint64_t first_stream) {
  if (out.empty()) return;
  const auto total = static_cast<std::int64_t>(out.size());
  if (per_stream <= 0 || total % per_stream != 0) {
    throw InvalidInput("MT19937 streams: the output size " + std::to_string(total) +
                       " is not a positive multiple of the stream length " +
                       std::to_string(per_stream));
  }
  const std::int64_t stream_count = total / per_stream;
  if (context.backend == Backend::cuda) {
    cuda::set_device(context.cuda_device);
    cuda::DeviceBuffer<std::uint32_t> device(out.size());
    cuda::Stream stream;
    generate_mt19937_streams_on_device(device.data(), stream_count, per_stream, seed, first_stream,
                                       stream.handle());
    cuda::copy_to_host_async(out.data(), device.data(), out.size_bytes(), stream.handle());
    stream.synchronize();
    return;
  }
  cpu_detail::mt19937_streams(out.data(), stream_count, per_stream, seed, first_stream,
                              context.effective_cpu_threads());
}

void generate_mt19937_streams_on_device(std::uint32_t* device_out, std::int64_t stream_count,
                                        std::int64_t per_stream, std::uint64_t seed,
                                        std::uint64_t first_stream, StreamHandle stream) {
  check_shape(stream_count, per_stream);
#if GPUKIT_HAVE_CUDA
  cuda_detail::launch_mt19937_streams(device_out, stream_count, per_stream, seed, first_stream,
                                      stream);
#else
  (void)device_out, (void)seed, (void)first_stream, (void)stream;
  throw DeviceUnavailable("MT19937 streams: this gpukit was built without CUDA");
#endif
}

}  // namespace gpukit::rng
