// Flat-stream generation: argument checks and dispatch, to the CPU backend (cpu/) or to the CUDA
// kernels (cuda/), for host data through the device in chunks.

#include "gpukit/rng/generate.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "rng/cpu/rng_launchers.hpp"
#include "rng/flat_stream_fill.hpp"

#if GPUKIT_HAVE_CUDA
#include "rng/cuda/rng_launchers.hpp"
#endif

namespace gpukit::rng {

namespace {

using detail::StreamKind;

// Elements per trip through device memory on the host-memory CUDA path (64 MiB of floats).
constexpr std::int64_t kDeviceChunkElements = std::int64_t{1} << 24;

void check_range(std::int64_t count, std::uint64_t offset, const char* what) {
  if (count < 0) throw InvalidInput(std::string(what) + ": negative count");
  if (count > 0 &&
      offset > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(count - 1)) {
    throw InvalidInput(std::string(what) + ": offset + count passes the end of the stream (2^64)");
  }
}

template <class T, StreamKind kKind>
void fill_on_device(T* device_out, std::int64_t count, std::uint64_t seed, std::uint64_t offset,
                    StreamHandle stream) {
#if GPUKIT_HAVE_CUDA
  cuda_detail::launch_fill_flat_stream<T, kKind>(device_out, count, seed, offset, stream);
#else
  (void)device_out, (void)count, (void)seed, (void)offset, (void)stream;
  throw DeviceUnavailable("rng: this gpukit was built without CUDA");
#endif
}

// The host-memory CUDA path: chunks generated on the device and copied back. Random numbers are
// best made where they are used; this path exists for the CLI and the CPU == GPU tests.
template <class T, StreamKind kKind>
void fill_through_device(const Context& context, std::span<T> out, std::uint64_t seed,
                         std::uint64_t offset) {
  cuda::set_device(context.cuda_device);
  const auto count = static_cast<std::int64_t>(out.size());
  const std::int64_t chunk = std::min(count, kDeviceChunkElements);
  cuda::DeviceBuffer<T> device(static_cast<std::size_t>(chunk));
  cuda::Stream stream;
  for (std::int64_t done = 0; done < count; done += chunk) {
    const std::int64_t size = std::min(chunk, count - done);
    fill_on_device<T, kKind>(device.data(), size, seed, offset + static_cast<std::uint64_t>(done),
                             stream.handle());
    cuda::copy_to_host_async(out.data() + done, device.data(),
                             static_cast<std::size_t>(size) * sizeof(T), stream.handle());
    stream.synchronize();
  }
}

template <class T, StreamKind kKind>
void fill(const Context& context, std::span<T> out, std::uint64_t seed, std::uint64_t offset,
          const char* what) {
  check_range(static_cast<std::int64_t>(out.size()), offset, what);
  if (out.empty()) return;
  if (context.backend == Backend::cuda) {
    fill_through_device<T, kKind>(context, out, seed, offset);
  } else {
    cpu_detail::fill_flat_stream<T, kKind>(out, seed, offset, context.effective_cpu_threads());
  }
}

}  // namespace

void generate_bits(const Context& context, std::span<std::uint32_t> out, std::uint64_t seed,
                   std::uint64_t offset) {
  fill<std::uint32_t, StreamKind::bits>(context, out, seed, offset, "generate_bits");
}

template <class Real>
void generate_uniform(const Context& context, std::span<Real> out, std::uint64_t seed,
                      std::uint64_t offset) {
  fill<Real, StreamKind::uniform>(context, out, seed, offset, "generate_uniform");
}

template <class Real>
void generate_normal(const Context& context, std::span<Real> out, std::uint64_t seed,
                     std::uint64_t offset, NormalTransform transform) {
  if (transform == NormalTransform::box_muller) {
    fill<Real, StreamKind::normal_box_muller>(context, out, seed, offset, "generate_normal");
  } else {
    fill<Real, StreamKind::normal_inverse_cdf>(context, out, seed, offset, "generate_normal");
  }
}

void generate_bits_on_device(std::uint32_t* device_out, std::int64_t count, std::uint64_t seed,
                             std::uint64_t offset, StreamHandle stream) {
  check_range(count, offset, "generate_bits_on_device");
  fill_on_device<std::uint32_t, StreamKind::bits>(device_out, count, seed, offset, stream);
}

template <class Real>
void generate_uniform_on_device(Real* device_out, std::int64_t count, std::uint64_t seed,
                                std::uint64_t offset, StreamHandle stream) {
  check_range(count, offset, "generate_uniform_on_device");
  fill_on_device<Real, StreamKind::uniform>(device_out, count, seed, offset, stream);
}

template <class Real>
void generate_normal_on_device(Real* device_out, std::int64_t count, std::uint64_t seed,
                               std::uint64_t offset, NormalTransform transform,
                               StreamHandle stream) {
  check_range(count, offset, "generate_normal_on_device");
  if (transform == NormalTransform::box_muller) {
    fill_on_device<Real, StreamKind::normal_box_muller>(device_out, count, seed, offset, stream);
  } else {
    fill_on_device<Real, StreamKind::normal_inverse_cdf>(device_out, count, seed, offset, stream);
  }
}

#define GPUKIT_INSTANTIATE_GENERATE(Real)                                                          \
  template void generate_uniform<Real>(const Context&, std::span<Real>, std::uint64_t,             \
                                       std::uint64_t);                                             \
  template void generate_normal<Real>(const Context&, std::span<Real>, std::uint64_t,              \
                                      std::uint64_t, NormalTransform);                             \
  template void generate_uniform_on_device<Real>(Real*, std::int64_t, std::uint64_t,               \
                                                 std::uint64_t, StreamHandle);                     \
  template void generate_normal_on_device<Real>(Real*, std::int64_t, std::uint64_t, std::uint64_t, \
                                                NormalTransform, StreamHandle);
GPUKIT_INSTANTIATE_GENERATE(float)
GPUKIT_INSTANTIATE_GENERATE(double)
#undef GPUKIT_INSTANTIATE_GENERATE

}  // namespace gpukit::rng
