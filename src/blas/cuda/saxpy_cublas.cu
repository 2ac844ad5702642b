// cuBLAS's axpy, the vendor row. BLAS updates y in place (y = alpha * x + y); for an output that
// is not y, this launcher first copies y into it on the same stream, a device-to-device copy that
// is part of the call's cost. `gpukit bench saxpy` runs every row in place (out = y), so the vendor
// row is timed as cuBLAS itself runs, with no copy, and every row moves the same bytes.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <type_traits>

#include "blas/cuda/cublas_check.hpp"
#include "blas/cuda/saxpy_launchers.hpp"
#include "core/cuda/check.hpp"
#include "gpukit/core/memory.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

// The handles of one host thread, destroyed when the thread ends. For the main thread that is at
// exit, before the CUDA runtime's own teardown (thread-local objects go first), so the device
// memory cuBLAS allocated is given back rather than left for the process's end (which
// compute-sanitizer's leak check reports).
struct ThreadHandles {
  std::map<int, cublasHandle_t> by_device;
  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles&) = delete;
  ThreadHandles& operator=(const ThreadHandles&) = delete;
  ~ThreadHandles() {
    for (const auto& [device, handle] : by_device) {
      if (cudaSetDevice(device) == cudaSuccess) cublasDestroy(handle);
    }
  }
};

// One handle a device and host thread (a cuBLAS handle must not be shared by threads that set
// its stream at the same time), created on first use and kept for the thread's life: creating
// one costs far more than an axpy.
cublasHandle_t handle_for_current_device() {
  thread_local ThreadHandles thread_handles;
  std::map<int, cublasHandle_t>& handles = thread_handles.by_device;
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  auto [it, inserted] = handles.try_emplace(device, nullptr);
  if (inserted) {
    cublasHandle_t handle = nullptr;
    const cublasStatus_t status = cublasCreate(&handle);
    if (status != CUBLAS_STATUS_SUCCESS) {
      handles.erase(it);
      throw CudaError("cublasCreate", cublasGetStatusString(status), __FILE__, __LINE__);
    }
    it->second = handle;
  }
  return it->second;
}

}  // namespace

template <class T>
void launch_axpy_cublas(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                        StreamHandle stream) {
  if (count == 0) return;
  if (out != y) cuda::copy_device_to_device_async(out, y, count * sizeof(T), stream);
  cublasHandle_t handle = handle_for_current_device();
  GPUKIT_CUBLAS_CHECK(cublasSetStream(handle, stream));
  GPUKIT_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));  // alpha: host
  // The 64-bit interface: 2^31 elements and more in one call.
  if constexpr (std::is_same_v<T, float>) {
    GPUKIT_CUBLAS_CHECK(cublasSaxpy_64(handle, count, &alpha, x, 1, out, 1));
  } else {
    GPUKIT_CUBLAS_CHECK(cublasDaxpy_64(handle, count, &alpha, x, 1, out, 1));
  }
}

GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, SaxpyLaunch, launch_axpy_cublas)

}  // namespace gpukit::blas::cuda_detail
