#pragma once
// CUDA device discovery. Every function works in a CPU-only build and on a machine without a GPU
// (they report zero devices); none of them throws for "no GPU".

#include <cstddef>
#include <string>

namespace gpukit {

/// True when gpukit was built with its CUDA backend.
bool built_with_cuda() noexcept;

/// Number of usable CUDA devices: 0 in a CPU-only build, without a driver, or without a GPU.
int cuda_device_count() noexcept;

/// Why no CUDA device is usable ("built without CUDA", "no CUDA driver", ...), or "" when one is.
std::string cuda_unavailable_reason();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string pci_bus_id;
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  std::size_t total_memory_bytes = 0;
  std::size_t l2_cache_bytes = 0;
  int sm_clock_khz = 0;      // peak SM clock
  int memory_clock_khz = 0;  // peak memory clock
  int memory_bus_width_bits = 0;
  /// 2 (double data rate) x memory clock x bus width: the datasheet-style upper bound.
  double theoretical_bandwidth_gbps() const;
};

/// Properties of CUDA device `ordinal`. Throws DeviceUnavailable when it does not exist.
DeviceInfo query_device(int ordinal);

/// Current SM and memory clocks in MHz read through NVML (loaded at run time, so its absence is
/// harmless); {-1, -1} when they cannot be read.
struct CurrentClocks {
  int sm_mhz = -1;
  int memory_mhz = -1;
};
CurrentClocks read_current_clocks(const DeviceInfo& device) noexcept;

}  // namespace gpukit
