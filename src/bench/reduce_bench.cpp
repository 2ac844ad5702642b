#include "bench/reduce_bench.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_random.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_variants.hpp"

namespace gpukit::bench {

namespace {

using primitives::reduce_result_t;
using primitives::ReduceOp;
using primitives::ReduceOptions;
using primitives::ReduceVariant;
using primitives::ReduceWorkspace;

constexpr std::int64_t kSeedTableSize = std::int64_t{1} << 22;   // "2^22 ints" (000, 001)
constexpr std::int64_t kCs152TableSize = std::int64_t{1} << 30;  // "2^30 elements" (003)
constexpr std::int64_t kMaxCpuSize = std::int64_t{1} << 26;

// Random data whose sum every addition order computes exactly (floats: +-1, +-2, so partial sums
// stay far below 2^24), so that each variant's result can be checked for equality. Generated in
// parallel (splitmix64 per element) so 2^30 elements take a fraction of a second.
template <class T>
std::vector<T> bench_data(std::int64_t n) {
  std::vector<T> data(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t z = hash_index(static_cast<std::uint64_t>(i));
    if constexpr (std::is_floating_point_v<T>) {
      data[static_cast<std::size_t>(i)] = static_cast<T>(int(z % 2 + 1) * ((z >> 8) & 1 ? 1 : -1));
    } else {
      data[static_cast<std::size_t>(i)] = static_cast<T>(z);
    }
  }
  return data;
}

// Data on the device with its expected sum: the sequential loop's (a different algorithm from
// every variant and from the CPU backend's tiles; exact for these data, so equality is the bound).
template <class T>
struct DeviceWorkload {
  std::int64_t n = 0;
  cuda::DeviceBuffer<T> data;
  reduce_result_t<T> expected{};
};

template <class T>
DeviceWorkload<T> make_device_workload(std::int64_t n, const Context& /*context*/) {
  const std::vector<T> host = bench_data<T>(n);
  DeviceWorkload<T> w;
  w.n = n;
  w.data = cuda::DeviceBuffer<T>(static_cast<std::size_t>(n));
  w.data.copy_from_host(host);
  w.expected = primitives::reduce_sequential<T>(host, ReduceOp::sum);
  return w;
}

template <class T>
Row time_variant(const BenchConfig& config, const ReduceVariant& v, const DeviceWorkload<T>& w,
                 ReduceWorkspace& workspace, cuda::Stream& stream, const ReduceOptions& options,
                 std::string label = {}) {
  cuda::DeviceBuffer<reduce_result_t<T>> d_result(1);
  const auto run = [&] {
    v.launch(w.data.data(), w.n, ReduceOp::sum, d_result.data(), workspace, stream.handle(),
             options);
  };
  cuda::fill_bytes_async(d_result.data(), 0xFF, sizeof(reduce_result_t<T>), stream.handle());
  run();
  stream.synchronize();
  reduce_result_t<T> result{};
  cuda::copy_to_host(&result, d_result.data(), sizeof result);
  Row row;
  row.variant = label.empty() ? std::string(v.name) : label;
  row.description = std::string(v.description);
  row.seed_reference = std::string(v.seed_reference);
  row.elements = static_cast<double>(w.n);
  row.bytes = static_cast<double>(w.n) * sizeof(T);
  row.vendor = v.vendor;
  row.ladder = !v.vendor;
  row.verify(result == w.expected,
             result == w.expected
                 ? fmt::format("ok: = the sequential sum {}", w.expected)
                 : fmt::format("MISMATCH {} vs the sequential sum {}", result, w.expected));
  row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, run);
  return row;
}

void seed_table(const BenchConfig& config, Report& report, std::int64_t n) {
  const DeviceWorkload<std::int32_t> w = make_device_workload<std::int32_t>(n, config.context);
  ReduceWorkspace workspace;
  cuda::Stream stream;
  const bool fits_in_l2 =
      report.device && static_cast<std::size_t>(n) * 4 < report.device->l2_cache_bytes;
  Table table = device_table(
      report, fmt::format("Reduction, the seed's table (000/001): {} int32, sum into int64, 128 "
                          "threads per block for kernels 1-7{}",
                          n, fits_in_l2 ? " (the input fits in L2)" : ""));
  for (const ReduceVariant& v : primitives::reduce_variants()) {
    if (!variant_selected(config, v.name) || v.seed_reference.starts_with("003")) continue;
    table.rows.push_back(time_variant(config, v, w, workspace, stream, {}));
  }
  report.tables.push_back(std::move(table));
}

void cs152_table(const BenchConfig& config, Report& report, std::int64_t n) {
  const DeviceWorkload<std::int32_t> w = make_device_workload<std::int32_t>(n, config.context);
  ReduceWorkspace workspace;
  cuda::Stream stream;
  Table table = device_table(
      report, fmt::format("Reduction, the CS 152 table (003, methods 0-5): {} int32, sum into "
                          "int64, 1024 threads per block",
                          n));
  // The lecture's order: method 0, then its methods 1, 1b, 2, 3 (the seed's kernels 1-4 at
  // 1024 threads), then methods 4 and 5, then the Hopper steps and CUB.
  struct Step {
    std::string_view variant;
    std::string_view label;
    int block_threads;
  };
  const Step steps[] = {
      {"consecutive-work-blocks", "m0 consecutive-work-blocks", 0},
      {"interleaved-divergent", "m1 interleaved-divergent", 1024},
      {"interleaved-bank-conflicts", "m1b interleaved-bank-conflicts", 1024},
      {"sequential-addressing", "m2 sequential-addressing", 1024},
      {"first-add-during-load", "m3 first-add-during-load", 1024},
      {"work-blocks-tree", "m4 work-blocks-tree", 0},
      {"grid-stride-consecutive", "m5 grid-stride-consecutive", 0},
      {"vector-loads", "vector-loads", 0},
      {"warp-shuffle-one-pass", "warp-shuffle-one-pass", 0},
      {"deterministic-tiles", "deterministic-tiles", 0},
      {"cub", "cub", 0},
  };
  for (const Step& step : steps) {
    if (!variant_selected(config, step.variant)) continue;
    const ReduceVariant& v = primitives::find_reduce_variant(step.variant);
    ReduceOptions options;
    options.block_threads = step.block_threads;
    table.rows.push_back(
        time_variant(config, v, w, workspace, stream, options, std::string(step.label)));
  }
  report.tables.push_back(std::move(table));
}

template <class T>
void size_sweep(const BenchConfig& config, Report& report, std::vector<std::int64_t> sizes,
                const char* type_name) {
  const ReduceVariant& engine = primitives::default_reduce_variant();
  const ReduceVariant& cub = primitives::find_reduce_variant("cub");
  ReduceWorkspace workspace;
  cuda::Stream stream;
  for (std::int64_t n : sizes) {
    const DeviceWorkload<T> w = make_device_workload<T>(n, config.context);
    Table table;
    table.title =
        fmt::format("Reduction: the default variant against CUB, {} {} sum", n, type_name);
    table.limit_gbps = report.copy_bandwidth_gbps;
    table.limit_name = "D2D copy";
    Row row = time_variant(config, engine, w, workspace, stream, {});
    row.ladder = false;
    table.rows.push_back(std::move(row));
    if constexpr (std::is_floating_point_v<T>) {
      ReduceOptions accurate;
      accurate.accurate_sum = true;
      Row acc = time_variant(config, engine, w, workspace, stream, accurate,
                             std::string(engine.name) + " accurate");
      acc.ladder = false;
      acc.description = "the same tree accumulating in double (the accurate mode)";
      table.rows.push_back(std::move(acc));
    }
    Row vendor = time_variant(config, cub, w, workspace, stream, {});
    vendor.ladder = false;
    table.rows.push_back(std::move(vendor));
    report.tables.push_back(std::move(table));
  }
}

template <class T>
Row cpu_row(const BenchConfig& config, std::int64_t n, const char* type_name) {
  const std::vector<T> data = bench_data<T>(n);
  const Context cpu = Context::cpu(config.context.cpu_threads);
  const auto expected = primitives::reduce_sequential<T>(data, ReduceOp::sum);
  reduce_result_t<T> result{};
  Row row;
  row.variant = fmt::format("cpu-openmp-{}", type_name);
  row.description = "the fixed tiles on OpenMP threads (the same tree as the GPU)";
  row.seed_reference = "CPU backend";
  row.elements = static_cast<double>(n);
  row.bytes = static_cast<double>(n) * sizeof(T);
  row.ladder = false;
  row.samples_ms = time_on_host(1, std::min(config.repeat, 5),
                                [&] { result = primitives::reduce<T>(cpu, data, ReduceOp::sum); });
  row.verify(result == expected,
             fmt::format("{} vs the sequential sum {} ({} threads)",
                         result == expected ? "ok" : fmt::format("MISMATCH {}", result), expected,
                         cpu.effective_cpu_threads()));
  return row;
}

}  // namespace

void run_reduce_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    seed_table(config, report, config.size > 0 ? config.size : kSeedTableSize);
    cs152_table(config, report, config.size > 0 ? config.size : kCs152TableSize);
    std::vector<std::int64_t> sizes;
    if (config.size > 0) {
      sizes = {config.size};
    } else {
      for (int k = 20; k <= 30; k += 2) sizes.push_back(std::int64_t{1} << k);
    }
    size_sweep<std::int32_t>(config, report, sizes, "int32");
    size_sweep<float>(config, report, sizes, "float");
  }
  const std::int64_t cpu_n = std::min(config.size > 0 ? config.size : kMaxCpuSize, kMaxCpuSize);
  Table cpu_table;
  cpu_table.title = fmt::format("Reduction on the CPU backend: {} elements, sum", cpu_n);
  cpu_table.rows.push_back(cpu_row<std::int32_t>(config, cpu_n, "int32"));
  cpu_table.rows.push_back(cpu_row<float>(config, cpu_n, "float"));
  report.tables.push_back(std::move(cpu_table));
}

}  // namespace gpukit::bench
