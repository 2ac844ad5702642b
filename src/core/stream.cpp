#include "gpukit/core/stream.hpp"

#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "core/cuda/check.hpp"
#endif

namespace gpukit::cuda {

#if GPUKIT_HAVE_CUDA

Stream::Stream() { GPUKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking)); }
Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cudaStreamDestroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}
Stream::~Stream() {
  if (handle_ != nullptr) cudaStreamDestroy(handle_);
}
void synchronize_stream(StreamHandle stream) { GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); }
void Stream::synchronize() const { synchronize_stream(handle_); }
void Stream::wait(EventHandle event) const {
  GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(handle_, event, 0));
}

Event::Event() { GPUKIT_CUDA_CHECK(cudaEventCreate(&handle_)); }
Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cudaEventDestroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}
Event::~Event() {
  if (handle_ != nullptr) cudaEventDestroy(handle_);
}
void Event::record(StreamHandle stream) const {
  GPUKIT_CUDA_CHECK(cudaEventRecord(handle_, stream));
}
void Event::synchronize() const { GPUKIT_CUDA_CHECK(cudaEventSynchronize(handle_)); }
float Event::elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  GPUKIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.handle_, stop.handle_));
  return ms;
}

#else

namespace {
[[noreturn]] void no_cuda() { throw DeviceUnavailable("this gpukit was built without CUDA"); }
}  // namespace
Stream::Stream() { no_cuda(); }
Stream& Stream::operator=(Stream&&) noexcept { return *this; }
Stream::~Stream() = default;
void synchronize_stream(StreamHandle) { no_cuda(); }
void Stream::synchronize() const { no_cuda(); }
void Stream::wait(EventHandle) const { no_cuda(); }
Event::Event() { no_cuda(); }
Event& Event::operator=(Event&&) noexcept { return *this; }
Event::~Event() = default;
void Event::record(StreamHandle) const { no_cuda(); }
void Event::synchronize() const { no_cuda(); }
float Event::elapsed_ms(const Event&, const Event&) { no_cuda(); }

#endif

}  // namespace gpukit::cuda
