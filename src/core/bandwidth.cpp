#include "gpukit/core/bandwidth.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
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

}  // namespace gpukit
