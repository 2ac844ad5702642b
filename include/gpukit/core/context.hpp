#pragma once
// Where work runs: the CPU backend with N OpenMP threads, or one CUDA device.

#include <string>
#include <string_view>

namespace gpukit {

enum class Backend { cpu, cuda };

struct Context {
  Backend backend = Backend::cpu;
  int cuda_device = 0;  // CUDA ordinal when backend == cuda
  int cpu_threads = 0;  // OpenMP threads for CPU work; 0 means all cores

  static Context cpu(int threads = 0) { return Context{Backend::cpu, 0, threads}; }
  static Context cuda(int device = 0, int threads = 0) {
    return Context{Backend::cuda, device, threads};
  }
  /// Threads the CPU backend will use (cpu_threads, or the OpenMP default when 0).
  int effective_cpu_threads() const;
  /// "cpu (16 threads)" or "cuda:0 (NVIDIA H200)".
  std::string describe() const;
};

struct DeviceSelection {
  Context context;
  std::string notice;  // one line for stderr when `auto` chose or fell back; empty otherwise
};

/// Resolves `--device auto|cpu|cuda|cuda:N` and `--threads N`.
/// auto: the first CUDA device when one is usable, else the CPU (the notice says which and why).
/// Throws InvalidInput for a malformed spec or negative threads, DeviceUnavailable when `cuda` or
/// `cuda:N` is asked for and that device is not usable (no GPU, no driver, or a CPU-only build).
DeviceSelection select_device(std::string_view spec, int threads = 0);

}  // namespace gpukit
