#include "gpukit/core/bandwidth.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit {

namespace {

// Median milliseconds of `repeat` timed calls of `work` on `stream`, after one warm-up call.
double median_ms(const cuda::Stream& stream, int repeat, const std::function<void()>& work) {
  cuda::Event start, stop;
  work();
  stream.synchronize();
  std::vector<double> samples;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    start.record(stream.handle());
    work();
    stop.record(stream.handle());
    stop.synchronize();
    samples.push_back(cuda::Event::elapsed_ms(start, stop));
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

double gbps(std::size_t bytes, double ms) { return static_cast<double>(bytes) / (ms * 1e6); }

}  // namespace

double measure_device_copy_bandwidth_gbps(int device, std::size_t bytes, int repeat) {
  cuda::set_device(device);
  cuda::Stream stream;
  cuda::DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  cuda::fill_bytes_async(src.data(), 0x5A, bytes, stream.handle());
  const double ms = median_ms(stream, repeat, [&] {
    cuda::copy_device_to_device_async(dst.data(), src.data(), bytes, stream.handle());
  });
  return gbps(2 * bytes, ms);
}

TransferBandwidth measure_transfer_bandwidth(int device, std::size_t bytes, int repeat) {
  cuda::set_device(device);
  cuda::Stream stream;
  cuda::DeviceBuffer<unsigned char> on_device(bytes);
  cuda::PinnedBuffer<unsigned char> pinned(bytes);
  std::vector<unsigned char> pageable(bytes, 0x5A);
  std::memset(pinned.data(), 0x5A, bytes);
  auto h = stream.handle();
  TransferBandwidth result;
  result.host_to_device_pinned_gbps =
      gbps(bytes, median_ms(stream, repeat, [&] {
             cuda::copy_to_device_async(on_device.data(), pinned.data(), bytes, h);
           }));
  result.device_to_host_pinned_gbps =
      gbps(bytes, median_ms(stream, repeat, [&] {
             cuda::copy_to_host_async(pinned.data(), on_device.data(), bytes, h);
           }));
  // Pageable copies are staged by the driver and return only when done, as in the seed.
  result.host_to_device_pageable_gbps =
      gbps(bytes, median_ms(stream, repeat, [&] {
             cuda::copy_to_device_async(on_device.data(), pageable.data(), bytes, h);
           }));
  result.device_to_host_pageable_gbps =
      gbps(bytes, median_ms(stream, repeat, [&] {
             cuda::copy_to_host_async(pageable.data(), on_device.data(), bytes, h);
           }));
  return result;
}

double measure_host_copy_bandwidth_gbps(std::size_t bytes, int repeat, int threads) {
  const int t = threads > 0 ? threads : omp_get_max_threads();
  // Not std::vector: its value-initialization would touch every page from one thread.
  std::unique_ptr<unsigned char[]> src(new unsigned char[bytes]), dst(new unsigned char[bytes]);
  const auto n_chunks = static_cast<std::int64_t>(t);
  const std::size_t chunk =
      (bytes + static_cast<std::size_t>(n_chunks) - 1) / static_cast<std::size_t>(n_chunks);
  // Each thread copies the same part every time, so its pages stay near it.
  const auto copy = [&](bool fill) {
#pragma omp parallel for schedule(static, 1) num_threads(t)
    for (std::int64_t c = 0; c < n_chunks; ++c) {
      const std::size_t begin = std::min(bytes, static_cast<std::size_t>(c) * chunk);
      const std::size_t end = std::min(bytes, begin + chunk);
      if (fill) std::memset(src.get() + begin, 0x5A, end - begin);
      std::memcpy(dst.get() + begin, src.get() + begin, end - begin);
    }
  };
  copy(/*fill=*/true);
  std::vector<double> samples;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    copy(/*fill=*/false);
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return gbps(2 * bytes, samples[samples.size() / 2]);
}

}  // namespace gpukit
