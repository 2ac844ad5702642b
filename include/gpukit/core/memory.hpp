#pragma once
// RAII owners of device memory and page-locked (pinned) host memory, and the copies between
// them. Never managed memory. Allocation failures throw OutOfMemory with the bytes requested;
// other CUDA failures throw CudaError. In a CPU-only build every allocation throws
// DeviceUnavailable.

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::cuda {

namespace detail {
void* device_allocate(std::size_t bytes);
void device_release(void* pointer) noexcept;
void* pinned_allocate(std::size_t bytes);
void pinned_release(void* pointer) noexcept;
}  // namespace detail

/// Makes `ordinal` the calling thread's current device.
void set_device(int ordinal);

/// Asynchronous copies on `stream` (pinned host memory is needed for true asynchrony).
void copy_to_device_async(void* device_dst, const void* host_src, std::size_t bytes,
                          StreamHandle stream);
void copy_to_host_async(void* host_dst, const void* device_src, std::size_t bytes,
                        StreamHandle stream);
void copy_device_to_device_async(void* dst, const void* src, std::size_t bytes,
                                 StreamHandle stream);
/// Fills `bytes` bytes with `byte_value` (tests poison outputs with 0xFF, a NaN pattern).
void fill_bytes_async(void* device_dst, int byte_value, std::size_t bytes, StreamHandle stream);
/// Blocking copies: when they return, the data is at its destination, so work queued afterwards
/// on any stream (non-blocking ones included) sees it. (cudaMemcpy alone may return before the
/// DMA of a pageable source has landed on the device; copy_to_device waits for it.)
void copy_to_device(void* device_dst, const void* host_src, std::size_t bytes);
void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes);
/// Waits for all work on the current device; turns asynchronous kernel faults into CudaError.
void synchronize_device();

/// Owns `count` elements of T in device memory (uninitialized).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count)
      : data_(static_cast<T*>(detail::device_allocate(count * sizeof(T)))), count_(count) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      detail::device_release(data_);
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { detail::device_release(data_); }

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t size_bytes() const noexcept { return count_ * sizeof(T); }

  void copy_from_host(std::span<const T> host) {
    copy_to_device(data_, host.data(), host.size_bytes());
  }
  void copy_to_host(std::span<T> host) const {
    cuda::copy_to_host(host.data(), data_, host.size_bytes());
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Owns `count` elements of T in page-locked host memory (uninitialized).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count)
      : data_(static_cast<T*>(detail::pinned_allocate(count * sizeof(T)))), count_(count) {}
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      detail::pinned_release(data_);
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { detail::pinned_release(data_); }

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  std::span<T> span() const noexcept { return {data_, count_}; }
  T& operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace gpukit::cuda
