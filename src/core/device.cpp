#include "gpukit/core/device.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "core/cuda/check.hpp"
#endif

namespace gpukit {

bool built_with_cuda() noexcept { return GPUKIT_HAVE_CUDA != 0; }

#if GPUKIT_HAVE_CUDA

namespace {
// cudaGetDeviceCount fails (no driver, no device) on GPU-less machines; that is not an error here.
cudaError_t device_count_status(int& count) noexcept {
  count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    count = 0;
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
  }
  return status;
}
}  // namespace

int cuda_device_count() noexcept {
  int count = 0;
  device_count_status(count);
  return count;
}

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = device_count_status(count);
  if (status == cudaErrorInsufficientDriver)
    return "no usable CUDA driver (none installed, or older than this CUDA 13 build)";
  if (status == cudaErrorNoDevice) return "no CUDA device found";
  if (status != cudaSuccess)
    return fmt::format("no usable CUDA device ({})", cudaGetErrorString(status));
  if (count == 0) return "no CUDA device found";
  return "";
}

DeviceInfo query_device(int ordinal) {
  const int count = cuda_device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw DeviceUnavailable(fmt::format("CUDA device {} does not exist ({} device{} found)",
                                        ordinal, count, count == 1 ? "" : "s"));
  }
  cudaDeviceProp prop{};
  GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_memory_bytes = prop.totalGlobalMem;
  info.l2_cache_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain.
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, ordinal));
  GPUKIT_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_bus_width_bits,
                                           cudaDevAttrGlobalMemoryBusWidth, ordinal));
  char bus_id[32] = {};
  GPUKIT_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal));
  info.pci_bus_id = bus_id;
  return info;
}

#else  // CPU-only build

int cuda_device_count() noexcept { return 0; }
std::string cuda_unavailable_reason() { return "this gpukit was built without CUDA"; }
DeviceInfo query_device(int ordinal) {
  throw DeviceUnavailable(
      fmt::format("CUDA device {} requested, but this gpukit was built without CUDA", ordinal));
}

#endif

double DeviceInfo::theoretical_bandwidth_gbps() const {
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0) / 1e9;
}

CurrentClocks read_current_clocks(const DeviceInfo& device) noexcept {
  // NVML ships with the driver, not the toolkit; loading it at run time keeps the binary
  // startable on machines without a driver.
  CurrentClocks clocks;
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml == nullptr) return clocks;
  using InitFn = int (*)();
  using HandleFn = int (*)(const char*, void**);
  using ClockFn = int (*)(void*, int, unsigned int*);
  auto init = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlShutdown"));
  auto by_bus_id = reinterpret_cast<HandleFn>(dlsym(nvml, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto clock_info = reinterpret_cast<ClockFn>(dlsym(nvml, "nvmlDeviceGetClockInfo"));
  if (init && shutdown && by_bus_id && clock_info && init() == 0) {
    void* handle = nullptr;
    constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;
    unsigned int mhz = 0;
    if (by_bus_id(device.pci_bus_id.c_str(), &handle) == 0) {
      if (clock_info(handle, kNvmlClockSm, &mhz) == 0) clocks.sm_mhz = static_cast<int>(mhz);
      if (clock_info(handle, kNvmlClockMem, &mhz) == 0) clocks.memory_mhz = static_cast<int>(mhz);
    }
    shutdown();
  }
  dlclose(nvml);
  return clocks;
}

}  // namespace gpukit
