#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/bandwidth.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit {
namespace {

TEST(DeviceMemoryGpu, RoundTripThroughDeviceAndPinnedMemory) {
  GPUKIT_REQUIRE_GPU();
  const std::size_t n = 1000003;
  std::vector<int> host(n), back(n, -1);
  std::iota(host.begin(), host.end(), 17);
  cuda::DeviceBuffer<int> a(n), b(n);
  cuda::Stream stream;
  cuda::PinnedBuffer<int> pinned(n);
  a.copy_from_host(host);
  cuda::copy_device_to_device_async(b.data(), a.data(), n * sizeof(int), stream.handle());
  cuda::copy_to_host_async(pinned.data(), b.data(), n * sizeof(int), stream.handle());
  stream.synchronize();
  std::copy(pinned.data(), pinned.data() + n, back.begin());
  EXPECT_EQ(back, host);
}

TEST(DeviceMemoryGpu, ImpossibleAllocationIsOutOfMemoryWithTheBytes) {
  GPUKIT_REQUIRE_GPU();
  const std::size_t huge = std::size_t{1} << 50;  // 1 PiB
  try {
    cuda::DeviceBuffer<char> buffer(huge);
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.bytes_requested(), huge);
  }
  // The failure must not poison later CUDA calls.
  cuda::DeviceBuffer<char> small(16);
  EXPECT_NE(small.data(), nullptr);
}

TEST(DeviceMemoryGpu, EventsTimeQueuedWork) {
  GPUKIT_REQUIRE_GPU();
  cuda::Stream stream;
  cuda::Event start, stop;
  cuda::DeviceBuffer<char> a(64 << 20), b(64 << 20);
  start.record(stream.handle());
  cuda::copy_device_to_device_async(b.data(), a.data(), a.size(), stream.handle());
  stop.record(stream.handle());
  stop.synchronize();
  EXPECT_GT(cuda::Event::elapsed_ms(start, stop), 0.0f);
}

TEST(DeviceQueryGpu, ReportsAPlausibleDevice) {
  GPUKIT_REQUIRE_GPU();
  const DeviceInfo info = query_device(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.total_memory_bytes, std::size_t{1} << 30);
  EXPECT_GT(info.theoretical_bandwidth_gbps(), 100.0);
  const double copy = measure_device_copy_bandwidth_gbps(0, std::size_t{256} << 20, 3);
  EXPECT_GT(copy, 0.0);
  EXPECT_LT(copy, 1.2 * info.theoretical_bandwidth_gbps()) << "a copy cannot beat the bus";
}

}  // namespace
}  // namespace gpukit
