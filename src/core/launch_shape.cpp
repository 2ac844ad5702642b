#include "core/cuda/launch_shape.hpp"

#if GPUKIT_HAVE_CUDA

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "core/cuda/check.hpp"

namespace gpukit::cuda::detail {

namespace {

std::mutex& cache_mutex() {
  static std::mutex mutex;
  return mutex;
}

int current_device() {
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace

int current_sm_count() {
  static std::map<int, int> cache;
  const int device = current_device();
  const std::lock_guard<std::mutex> lock(cache_mutex());
  auto [it, inserted] = cache.try_emplace(device, 0);
  if (inserted) {
    GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&it->second, cudaDevAttrMultiProcessorCount, device));
  }
  return it->second;
}

int resident_blocks_per_sm(const void* kernel, int threads) {
  static std::map<std::tuple<int, const void*, int>, int> cache;
  const int device = current_device();
  const std::lock_guard<std::mutex> lock(cache_mutex());
  auto [it, inserted] = cache.try_emplace({device, kernel, threads}, 0);
  if (inserted) {
    GPUKIT_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&it->second, kernel, threads, 0));
  }
  return std::max(it->second, 1);
}

}  // namespace gpukit::cuda::detail

#endif
