#include "bench/reduce_bench.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
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
// Each row sums it once into a poisoned (0xFF) result, then is timed; `options` is the row's.
template <class T>
class SumWorkload {
 public:
  SumWorkload(std::int64_t n, ReduceWorkspace& workspace, cuda::Stream& stream)
      : n_(n), workspace_(workspace), stream_(stream), result_(1) {
    const std::vector<T> host = bench_data<T>(n);
    data_ = cuda::DeviceBuffer<T>(static_cast<std::size_t>(n));
    data_.copy_from_host(host);
    expected_ = primitives::reduce_sequential<T>(host, ReduceOp::sum);
  }

  ReduceOptions options;

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(n_), .value_bytes = sizeof(T)};
  }
  void launch(const ReduceVariant& v) {
    v.launch(data_.data(), n_, ReduceOp::sum, result_.data(), workspace_, stream_.handle(),
             options);
  }
  Check check(const ReduceVariant& v) {
    cuda::fill_bytes_async(result_.data(), 0xFF, sizeof(reduce_result_t<T>), stream_.handle());
    launch(v);
    stream_.synchronize();
    reduce_result_t<T> result{};
    cuda::copy_to_host(&result, result_.data(), sizeof result);
    return {result == expected_,
            result == expected_
                ? fmt::format("ok: = the sequential sum {}", expected_)
                : fmt::format("MISMATCH {} vs the sequential sum {}", result, expected_)};
  }

 private:
  std::int64_t n_;
  ReduceWorkspace& workspace_;
  cuda::Stream& stream_;
  cuda::DeviceBuffer<T> data_;
  cuda::DeviceBuffer<reduce_result_t<T>> result_;
  reduce_result_t<T> expected_{};
};

void seed_table(const BenchConfig& config, Report& report, std::int64_t n) {
  ReduceWorkspace workspace;
  cuda::Stream stream;
  SumWorkload<std::int32_t> w(n, workspace, stream);
  const bool fits_in_l2 =
      report.device && static_cast<std::size_t>(n) * 4 < report.device->l2_cache_bytes;
  Table table = device_table(
      report, fmt::format("Reduction, the seed's table (000/001): {} int32, sum into int64, 128 "
                          "threads per block for kernels 1-7{}",
                          n, fits_in_l2 ? " (the input fits in L2)" : ""));
  for (const ReduceVariant& v : primitives::reduce_variants()) {
    if (!variant_selected(config, v.info.name) || v.info.seed_reference.starts_with("003"))
      continue;
    table.rows.push_back(time_variant(config, v, w));
  }
  report.tables.push_back(std::move(table));
}

void cs152_table(const BenchConfig& config, Report& report, std::int64_t n) {
  ReduceWorkspace workspace;
  cuda::Stream stream;
  SumWorkload<std::int32_t> w(n, workspace, stream);
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
    w.options = ReduceOptions{};
    w.options.block_threads = step.block_threads;
    table.rows.push_back(time_variant(config, v, w, std::string(step.label)));
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
    SumWorkload<T> w(n, workspace, stream);
    Table table;
    table.title =
        fmt::format("Reduction: the default variant against CUB, {} {} sum", n, type_name);
    table.limit_gbps = report.copy_bandwidth_gbps;
    table.limit_name = "D2D copy";
    Row row = time_variant(config, engine, w);
    row.ladder = false;
    table.rows.push_back(std::move(row));
    if constexpr (std::is_floating_point_v<T>) {
      w.options.accurate_sum = true;
      Row acc = time_variant(config, engine, w, std::string(engine.info.name) + " accurate");
      w.options = ReduceOptions{};
      acc.ladder = false;
      acc.description = "the same tree accumulating in double (the accurate mode)";
      table.rows.push_back(std::move(acc));
    }
    Row vendor = time_variant(config, cub, w);
    vendor.ladder = false;
    table.rows.push_back(std::move(vendor));
    report.tables.push_back(std::move(table));
  }
}

// The CPU backend's sum: the fixed tiles on OpenMP threads.
template <class T>
using CpuReduce = reduce_result_t<T> (*)(const Context&, std::span<const T>);

template <class T>
reduce_result_t<T> cpu_sum(const Context& context, std::span<const T> data) {
  return primitives::reduce<T>(context, data, ReduceOp::sum);
}

template <class T>
constexpr HostVariant<CpuReduce<T>> kCpuReduce = {
    .info = {.name = "cpu-openmp",
             .description = "the fixed tiles on OpenMP threads (the same tree as the GPU)",
             .seed_reference = "CPU backend",
             .traffic = {.reads_per_element = 1},
             .deterministic = true},
    .launch = cpu_sum<T>,
};

// Host data with its expected sum (the sequential loop's); the check poisons the result first.
template <class T>
class CpuSumWorkload {
 public:
  CpuSumWorkload(std::int64_t n, const Context& cpu)
      : data_(bench_data<T>(n)),
        cpu_(cpu),
        expected_(primitives::reduce_sequential<T>(data_, ReduceOp::sum)) {}

  WorkloadShape shape() const {
    return {.elements = static_cast<double>(data_.size()), .value_bytes = sizeof(T)};
  }
  void launch(const HostVariant<CpuReduce<T>>& v) { result_ = v.launch(cpu_, data_); }
  Check check(const HostVariant<CpuReduce<T>>& v) {
    result_ = poisoned_result();
    launch(v);
    const bool ok = result_ == expected_;
    return {ok, fmt::format("{} vs the sequential sum {} ({} threads)",
                            ok ? "ok" : fmt::format("MISMATCH {}", result_), expected_,
                            cpu_.effective_cpu_threads())};
  }

 private:
  static reduce_result_t<T> poisoned_result() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::quiet_NaN();
    } else {
      return std::numeric_limits<reduce_result_t<T>>::max();
    }
  }

  std::vector<T> data_;
  Context cpu_;
  reduce_result_t<T> expected_;
  reduce_result_t<T> result_{};
};

template <class T>
Row cpu_row(const BenchConfig& config, std::int64_t n, const char* type_name) {
  CpuSumWorkload<T> w(n, Context::cpu(config.context.cpu_threads));
  return time_variant(config, kCpuReduce<T>, w, fmt::format("cpu-openmp-{}", type_name));
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
