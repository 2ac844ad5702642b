// Scan tuning: the exact engine's tile size (sub-tiles a tile) and look-back window, the sm_90
// pipelined engine's shape (stage bytes, fold and scan stages, copy lag, consumer warps: named
// policies beside ExactScanPolicySm90), CUB and a device-to-device copy, timed in one process on
// the same int32 data (an exact inclusive or exclusive sum). Every configuration's output is
// checked element by element against the library's CPU scan before it is timed.
// The figures of docs/journal/scan-notebook.md ("What the tuning driver measured", "What each step
// was worth", "What it took") were taken with development drivers of this kind.
//
//   gpukit_tune_scan --sizes=2^20,2^24,2^28 --configs=exact,exact-s2,sm90,cub,copy

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/primitives/cuda/detail/exact_scan_agent.cuh"
#include "gpukit/primitives/cuda/detail/exact_scan_sm90_agent.cuh"
#include "gpukit/primitives/scan.hpp"
#include "primitives/scan_ops.hpp"
#include "tuning_common.hpp"

namespace {

namespace prim = gpukit::primitives;
namespace exact = gpukit::primitives::device::detail::exact_scan_agent;
namespace sm90 = gpukit::primitives::device::detail::exact_scan_sm90_agent;
using gpukit::tuning::Timing;
using Op = gpukit::primitives::detail::ExactScanSum<std::int32_t>;

// Shapes of the pipelined engine besides the default, each one knob away from it (the journal's
// "three scan stages", "two fold and three scan stages with a lag of one", "24 KB stages", and
// four consumer warps: fewer threads a block).
struct Sm90Scan3 : sm90::ExactScanPolicySm90 {
  static constexpr int scan_stages = 3;
};
struct Sm90Fold2Scan3Lag1 : sm90::ExactScanPolicySm90 {
  static constexpr int fold_stages = 2;
  static constexpr int scan_stages = 3;
  static constexpr int lag = 1;
};
struct Sm90Stage24k : sm90::ExactScanPolicySm90 {
  static constexpr int stage_bytes = 24576;
};
struct Sm90Consumers4 : sm90::ExactScanPolicySm90 {
  static constexpr int consumer_warps = 4;
};

struct Config {
  std::string name;
  std::string what;
  // Queues one scan of n elements; false when the engine declines the call.
  std::function<bool(const int*, int*, std::int64_t, prim::ScanKind, prim::ScanWorkspace&,
                     cudaStream_t)>
      run;
};

template <class Policy>
Config sm90_config(std::string name, std::string what) {
  return {std::move(name), std::move(what),
          [](const int* in, int* out, std::int64_t n, prim::ScanKind kind, prim::ScanWorkspace& ws,
             cudaStream_t s) { return sm90::launch<Policy>(Op{}, in, out, n, kind, ws, s); }};
}

template <int kWords>
Config exact_config(std::string name, std::string what, int sub_tiles) {
  return {std::move(name), std::move(what),
          [sub_tiles](const int* in, int* out, std::int64_t n, prim::ScanKind kind,
                      prim::ScanWorkspace& ws, cudaStream_t s) {
            exact::launch<kWords>(Op{}, in, out, n, kind, ws, s, 0, sub_tiles);
            return true;
          }};
}

std::vector<Config> all_configs(void*& cub_storage, std::size_t& cub_bytes) {
  std::vector<Config> c;
  c.push_back(exact_config<1>("exact", "one block a tile, the sub-tile rule", 0));
  for (int s = 1; s <= 4; ++s) {
    c.push_back(exact_config<1>(
        "exact-s" + std::to_string(s),
        std::to_string(s) + " sub-tiles a tile (" + std::to_string(16 * s) + " KB)", s));
  }
  c.push_back(exact_config<2>("exact-w2", "look-back window of 2 status words a lane", 0));
  c.push_back(exact_config<4>("exact-w4", "look-back window of 4 status words a lane", 0));
  c.push_back(sm90_config<sm90::ExactScanPolicySm90>("sm90", "ExactScanPolicySm90 (default)"));
  c.push_back(sm90_config<Sm90Scan3>("sm90-scan3", "three scan stages"));
  c.push_back(sm90_config<Sm90Fold2Scan3Lag1>("sm90-fold2-scan3-lag1",
                                              "two fold, three scan stages, lag 1"));
  c.push_back(sm90_config<Sm90Stage24k>("sm90-stage24k", "24 KB stages"));
  c.push_back(sm90_config<Sm90Consumers4>("sm90-consumers4", "four consumer warps"));
  c.push_back(
      {"cub", "cub::DeviceScan (wrapping int32 sum)",
       [&cub_storage, &cub_bytes](const int* in, int* out, std::int64_t n, prim::ScanKind kind,
                                  prim::ScanWorkspace&, cudaStream_t s) {
         std::size_t need = 0;
         if (kind == prim::ScanKind::inclusive) {
           GPUKIT_TUNING_CHECK(cub::DeviceScan::InclusiveSum(nullptr, need, in, out, n, s));
         } else {
           GPUKIT_TUNING_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, need, in, out, n, s));
         }
         if (need > cub_bytes) {  // grows outside the timed calls (the check runs first)
           GPUKIT_TUNING_CHECK(cudaStreamSynchronize(s));
           GPUKIT_TUNING_CHECK(cudaFree(cub_storage));
           GPUKIT_TUNING_CHECK(cudaMalloc(&cub_storage, need));
           cub_bytes = need;
         }
         if (kind == prim::ScanKind::inclusive) {
           GPUKIT_TUNING_CHECK(cub::DeviceScan::InclusiveSum(cub_storage, need, in, out, n, s));
         } else {
           GPUKIT_TUNING_CHECK(cub::DeviceScan::ExclusiveSum(cub_storage, need, in, out, n, s));
         }
         return true;
       }});
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_scan",
        {{"sizes", "2^20,2^24,2^28|elements (comma list; 2^k allowed)"},
         {"configs",
          "exact,exact-s1,exact-s2,exact-s3,exact-s4,exact-w2,sm90,sm90-scan3,"
          "sm90-fold2-scan3-lag1,sm90-stage24k,sm90-consumers4,cub,copy|what to time (any of "
          "these)"},
         {"kind", "inclusive|inclusive or exclusive"},
         {"warmup", "3|untimed calls before the samples"},
         {"repeat", "21|samples (the median is reported)"},
         {"seed", "1|seed of the int32 data in [-8, 8]"}});
    const auto kind =
        knobs.text("kind") == "exclusive" ? prim::ScanKind::exclusive : prim::ScanKind::inclusive;
    const int warmup = int(knobs.integer("warmup"));
    const int repeat = int(knobs.integer("repeat"));
    gpukit::tuning::print_device(knobs.summary());

    void* cub_storage = nullptr;
    std::size_t cub_bytes = 0;
    const std::vector<Config> configs = all_configs(cub_storage, cub_bytes);
    std::vector<std::string> chosen = knobs.words("configs");
    for (const std::string& name : chosen) {
      bool known = name == "copy";
      for (const Config& c : configs) known = known || c.name == name;
      if (!known) throw std::invalid_argument("unknown config " + name + " (see --help)");
    }

    cudaStream_t stream;
    GPUKIT_TUNING_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    prim::ScanWorkspace workspace;
    std::printf("%-22s %12s %8s %21s %9s %8s %8s  %s\n", "config", "n", "batch",
                "median ms (min-max)", "GB/s", "% copy", "x cub", "what");
    for (const std::int64_t n : knobs.sizes("sizes")) {
      if (n <= 0) throw std::invalid_argument("sizes must be positive");
      std::vector<int> host(static_cast<std::size_t>(n));
      const auto seed = static_cast<std::uint64_t>(knobs.integer("seed"));
      for (std::size_t i = 0; i < host.size(); ++i) {
        host[i] = int(gpukit::tuning::uniform01(seed, i) * 17) - 8;  // in [-8, 8]
      }
      std::vector<int> reference(host.size());
      prim::scan<int>(gpukit::Context::cpu(), std::span<const int>(host), std::span<int>(reference),
                      prim::ScanOp::sum, kind);

      const std::size_t bytes = host.size() * sizeof(int);
      int* d_in = nullptr;
      int* d_out = nullptr;
      GPUKIT_TUNING_CHECK(cudaMalloc(&d_in, bytes));
      GPUKIT_TUNING_CHECK(cudaMalloc(&d_out, bytes));
      GPUKIT_TUNING_CHECK(cudaMemcpy(d_in, host.data(), bytes, cudaMemcpyHostToDevice));
      const double moved_bytes = 2.0 * double(bytes);  // read once, written once
      const Timing copy = gpukit::tuning::time_copy(stream, bytes, warmup, repeat);
      double cub_ms = 0;
      struct Line {
        std::string name, what;
        Timing t;
        bool declined;
      };
      std::vector<Line> lines;
      for (const std::string& name : chosen) {
        if (name == "copy") {
          lines.push_back({"copy", "cudaMemcpyAsync device to device", copy, false});
          continue;
        }
        const Config& c = *std::find_if(configs.begin(), configs.end(),
                                        [&](const Config& x) { return x.name == name; });
        // Checked first, into a poisoned output: every element against the CPU scan.
        GPUKIT_TUNING_CHECK(cudaMemsetAsync(d_out, 0xFF, bytes, stream));
        if (!c.run(d_in, d_out, n, kind, workspace, stream)) {
          lines.push_back({c.name, c.what, {}, true});
          continue;
        }
        GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
        std::vector<int> got(host.size());
        GPUKIT_TUNING_CHECK(cudaMemcpy(got.data(), d_out, bytes, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < got.size(); ++i) {
          if (got[i] != reference[i]) {
            throw std::runtime_error(c.name + " at n = " + std::to_string(n) + ": element " +
                                     std::to_string(i) + " is " + std::to_string(got[i]) +
                                     ", the CPU scan gives " + std::to_string(reference[i]));
          }
        }
        const Timing t = gpukit::tuning::time_calls(
            stream, warmup, repeat, [&] { c.run(d_in, d_out, n, kind, workspace, stream); });
        if (c.name == "cub") cub_ms = t.median_ms;
        lines.push_back({c.name, c.what, t, false});
      }
      for (const Line& l : lines) {
        if (l.declined) {
          std::printf("%-22s %12lld %8s %21s %9s %8s %8s  %s (declined: not sm_90 or no room)\n",
                      l.name.c_str(), static_cast<long long>(n), "-", "-", "-", "-", "-",
                      l.what.c_str());
          continue;
        }
        const double gbps = moved_bytes / (l.t.median_ms * 1e6);
        char range[64];
        std::snprintf(range, sizeof range, "%.4f (%.4f-%.4f)", l.t.median_ms, l.t.min_ms,
                      l.t.max_ms);
        char vs_cub[16] = "-";
        if (cub_ms > 0) std::snprintf(vs_cub, sizeof vs_cub, "%.3fx", cub_ms / l.t.median_ms);
        std::printf("%-22s %12lld %8d %21s %9.0f %7.1f%% %8s  %s\n", l.name.c_str(),
                    static_cast<long long>(n), l.t.batch, range, gbps,
                    100.0 * copy.median_ms / l.t.median_ms, vs_cub, l.what.c_str());
      }
      GPUKIT_TUNING_CHECK(cudaFree(d_in));
      GPUKIT_TUNING_CHECK(cudaFree(d_out));
    }
    GPUKIT_TUNING_CHECK(cudaFree(cub_storage));
    GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
  });
}
