#include "gpukit/core/memory.hpp"

#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "core/cuda/check.hpp"
#endif

namespace gpukit::cuda {

#if GPUKIT_HAVE_CUDA

namespace detail {

void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* pointer = nullptr;
  const cudaError_t status = cudaMalloc(&pointer, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw OutOfMemory("cudaMalloc (device memory)", bytes);
  }
  GPUKIT_CUDA_CHECK(status);
  return pointer;
}

void device_release(void* pointer) noexcept {
  if (pointer != nullptr) cudaFree(pointer);
}

void* pinned_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* pointer = nullptr;
  const cudaError_t status = cudaMallocHost(&pointer, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw OutOfMemory("cudaMallocHost (pinned host memory)", bytes);
  }
  GPUKIT_CUDA_CHECK(status);
  return pointer;
}

void pinned_release(void* pointer) noexcept {
  if (pointer != nullptr) cudaFreeHost(pointer);
}

}  // namespace detail

void set_device(int ordinal) { GPUKIT_CUDA_CHECK(cudaSetDevice(ordinal)); }

void copy_to_device_async(void* device_dst, const void* host_src, std::size_t bytes,
                          StreamHandle stream) {
  if (bytes == 0) return;
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, stream));
}

void copy_to_host_async(void* host_dst, const void* device_src, std::size_t bytes,
                        StreamHandle stream) {
  if (bytes == 0) return;
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, stream));
}

void copy_device_to_device_async(void* dst, const void* src, std::size_t bytes,
                                 StreamHandle stream) {
  if (bytes == 0) return;
  GPUKIT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void fill_bytes_async(void* device_dst, int byte_value, std::size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  GPUKIT_CUDA_CHECK(cudaMemsetAsync(device_dst, byte_value, bytes, stream));
}

void copy_to_device(void* device_dst, const void* host_src, std::size_t bytes) {
  if (bytes == 0) return;
  GPUKIT_CUDA_CHECK(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice));
  // From pageable memory cudaMemcpy returns once the data is staged, not delivered; a kernel on
  // a non-blocking stream could then read the old contents (seen in reduce_engine_gpu_tests).
  GPUKIT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) {
  if (bytes == 0) return;
  GPUKIT_CUDA_CHECK(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost));
}

void synchronize_device() { GPUKIT_CUDA_CHECK(cudaDeviceSynchronize()); }

#else  // CPU-only build: nothing CUDA can be reached.

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw DeviceUnavailable(std::string(what) + ": this gpukit was built without CUDA");
}
}  // namespace

namespace detail {
void* device_allocate(std::size_t) { no_cuda("device memory"); }
void device_release(void*) noexcept {}
void* pinned_allocate(std::size_t) { no_cuda("pinned memory"); }
void pinned_release(void*) noexcept {}
}  // namespace detail

void set_device(int) { no_cuda("cudaSetDevice"); }
void copy_to_device_async(void*, const void*, std::size_t, StreamHandle) { no_cuda("copy"); }
void copy_to_host_async(void*, const void*, std::size_t, StreamHandle) { no_cuda("copy"); }
void copy_device_to_device_async(void*, const void*, std::size_t, StreamHandle) { no_cuda("copy"); }
void fill_bytes_async(void*, int, std::size_t, StreamHandle) { no_cuda("memset"); }
void copy_to_device(void*, const void*, std::size_t) { no_cuda("copy"); }
void copy_to_host(void*, const void*, std::size_t) { no_cuda("copy"); }
void synchronize_device() { no_cuda("synchronize"); }

#endif

}  // namespace gpukit::cuda
