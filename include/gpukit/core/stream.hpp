#pragma once
// RAII CUDA stream and event.

#include <utility>

#include "gpukit/core/cuda_handles.hpp"

namespace gpukit::cuda {

/// Blocks until all work queued on `stream` is done; throws CudaError on a kernel fault.
void synchronize_stream(StreamHandle stream);

/// A non-blocking stream (does not synchronize with the legacy default stream).
class Stream {
 public:
  Stream();
  Stream(Stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  StreamHandle handle() const noexcept { return handle_; }
  /// Blocks until all work queued on the stream is done; throws CudaError on a kernel fault.
  void synchronize() const;
  /// Makes later work on this stream wait for `event` (recorded on any stream).
  void wait(EventHandle event) const;

 private:
  StreamHandle handle_ = nullptr;
};

/// A timing-capable event.
class Event {
 public:
  Event();
  Event(Event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  EventHandle handle() const noexcept { return handle_; }
  void record(StreamHandle stream) const;
  void synchronize() const;
  /// Milliseconds between two recorded events (both must have completed).
  static float elapsed_ms(const Event& start, const Event& stop);

 private:
  EventHandle handle_ = nullptr;
};

}  // namespace gpukit::cuda
