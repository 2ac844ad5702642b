#include "gpukit/core/context.hpp"

#include <omp.h>

#include <charconv>

#include <fmt/format.h>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit {

int Context::effective_cpu_threads() const {
  return cpu_threads > 0 ? cpu_threads : omp_get_max_threads();
}

std::string Context::describe() const {
  if (backend == Backend::cpu) return fmt::format("cpu ({} threads)", effective_cpu_threads());
  return fmt::format("cuda:{} ({})", cuda_device, query_device(cuda_device).name);
}

// The messages name the spec "device", the word of every front door (the CLI's --device,
// Python's device=), not one of them.
DeviceSelection select_device(std::string_view spec, int threads) {
  if (threads < 0) throw InvalidInput(fmt::format("--threads must be >= 0, got {}", threads));
  if (spec == "cpu") return {Context::cpu(threads), ""};
  if (spec == "auto") {
    if (cuda_device_count() > 0) {
      const Context ctx = Context::cuda(0, threads);
      return {ctx, fmt::format("gpukit: using {}", ctx.describe())};
    }
    return {Context::cpu(threads),
            fmt::format("gpukit: {}; using the CPU", cuda_unavailable_reason())};
  }
  int ordinal = 0;
  if (spec.starts_with("cuda:")) {
    const std::string_view digits = spec.substr(5);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() || ordinal < 0)
      throw InvalidInput(fmt::format("device: bad CUDA ordinal in '{}'", spec));
  } else if (spec != "cuda") {
    throw InvalidInput(fmt::format("device must be auto, cpu, cuda or cuda:N, got '{}'", spec));
  }
  const int count = cuda_device_count();
  if (count == 0)
    throw DeviceUnavailable(fmt::format("device {}: {}", spec, cuda_unavailable_reason()));
  if (ordinal >= count)
    throw DeviceUnavailable(
        fmt::format("device {}: only {} CUDA device{} found", spec, count, count == 1 ? "" : "s"));
  return {Context::cuda(ordinal, threads), ""};
}

}  // namespace gpukit
