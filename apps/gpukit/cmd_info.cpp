// gpukit info: backends and devices.

#include <iostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli_common.hpp"
#include "gpukit/core/bandwidth.hpp"
#include "gpukit/core/device.hpp"

namespace gpukit::cli {

void register_info(CLI::App& app) {
  auto* command = app.add_subcommand("info", "List the backends and CUDA devices");
  auto measure = std::make_shared<bool>(false);
  command->add_flag("--measure", *measure,
                    "Also measure the host memory bandwidth and each device's copy and PCIe "
                    "bandwidth");
  command->callback([measure] {
    const Context cpu = Context::cpu();
    fmt::print("backends:\n  cpu   OpenMP, {} threads\n", cpu.effective_cpu_threads());
    if (*measure) {
      const std::size_t bytes = std::size_t{512} << 20;
      const double host = measure_host_copy_bandwidth_gbps(bytes);
      fmt::print(
          "        measured host memory copy {:.1f} GB/s (read + write, {} MiB, {} threads)\n",
          host, bytes >> 20, cpu.effective_cpu_threads());
    }
    if (!built_with_cuda()) {
      fmt::print("  cuda  not built (CPU-only build)\n");
      return;
    }
    const int count = cuda_device_count();
    if (count == 0) {
      fmt::print("  cuda  built; {}\n", cuda_unavailable_reason());
      return;
    }
    fmt::print("  cuda  {} device{}\n", count, count == 1 ? "" : "s");
    for (int d = 0; d < count; ++d) {
      const DeviceInfo info = query_device(d);
      fmt::print(
          "cuda:{}  {}  (compute {}.{}, {} SMs, {:.1f} GiB, L2 {:.0f} MiB, bus {})\n"
          "        theoretical memory bandwidth {:.0f} GB/s ({} MHz x {} bits x 2)\n",
          d, info.name, info.compute_major, info.compute_minor, info.sm_count,
          info.total_memory_bytes / double(1u << 30), info.l2_cache_bytes / double(1u << 20),
          info.pci_bus_id, info.theoretical_bandwidth_gbps(), info.memory_clock_khz / 1000,
          info.memory_bus_width_bits);
      if (*measure) {
        const double copy = measure_device_copy_bandwidth_gbps(d);
        const TransferBandwidth t = measure_transfer_bandwidth(d);
        fmt::print(
            "        measured device-to-device copy {:.0f} GB/s (read + write, {:.0f}% of "
            "theoretical)\n"
            "        measured PCIe: H2D {:.1f} / D2H {:.1f} GB/s pinned, {:.1f} / {:.1f} GB/s "
            "pageable\n",
            copy, 100 * copy / info.theoretical_bandwidth_gbps(), t.host_to_device_pinned_gbps,
            t.device_to_host_pinned_gbps, t.host_to_device_pageable_gbps,
            t.device_to_host_pageable_gbps);
      }
    }
  });
}

}  // namespace gpukit::cli
