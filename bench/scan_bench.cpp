#include "bench/scan_bench.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_random.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/compact_variants.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_variants.hpp"

namespace gpukit::bench {

namespace {

using primitives::CompactVariant;
using primitives::KeepPredicate;
using primitives::ScanKind;
using primitives::ScanOp;
using primitives::ScanVariant;
using primitives::ScanWorkspace;

// The seed's table (004, from Harris, Sengupta and Owens 2007): 1024 to 16,777,216 elements.
constexpr std::int64_t kSeedSizes[] = {1024,    32768,   65536,   131072,  262144,  524288,
                                       1048576, 2097152, 4194304, 8388608, 16777216};
constexpr std::int64_t kLadderSize = 2048;  // the one-block scans' largest array

// Integers in [-8, 8]: any scan of them is exact in int32 and in float below 2^24 / 17, and the
// exclusive scans do not overflow at 2^30 elements (|prefix| < 2^31 for this random walk).
template <class T>
std::vector<T> bench_data(std::int64_t n) {
  std::vector<T> data(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    data[static_cast<std::size_t>(i)] =
        static_cast<T>(int(hash_index(static_cast<std::uint64_t>(i)) % 17) - 8);
  }
  return data;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// An array on the device, its sequential scan, and an output buffer. Each row scans it once into a
// poisoned output, checked at every element, then is timed.
template <class T>
class ScanWorkload {
 public:
  ScanWorkload(std::int64_t n, ScanKind kind, ScanWorkspace& workspace, cuda::Stream& stream)
      : n_(n),
        kind_(kind),
        workspace_(workspace),
        stream_(stream),
        input_(static_cast<std::size_t>(n)),
        output_(static_cast<std::size_t>(n)) {
    const std::vector<T> host = bench_data<T>(n);
    input_.copy_from_host(host);
    expected_.resize(host.size());
    // The sequential loop: a different algorithm from every variant and from the CPU backend's
    // tiles; the data's prefixes are exact, so every element must match bit for bit.
    primitives::scan_sequential<T>(host, expected_, ScanOp::sum, kind);
  }

  const cuda::DeviceBuffer<T>& input() const { return input_; }
  const std::vector<T>& expected() const { return expected_; }

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(n_), .value_bytes = sizeof(T)};
  }
  void launch(const ScanVariant& v) {
    v.launch(input_.data(), output_.data(), n_, ScanOp::sum, kind_, workspace_, stream_.handle());
  }
  Check check(const ScanVariant& v) {
    cuda::fill_bytes_async(output_.data(), 0xA5, static_cast<std::size_t>(n_) * sizeof(T),
                           stream_.handle());
    launch(v);
    stream_.synchronize();
    std::vector<T> result(static_cast<std::size_t>(n_));
    output_.copy_to_host(result);
    const bool ok = same_bits(result, expected_);
    return {ok,
            ok ? "ok: every element = the sequential loop's" : "MISMATCH with the sequential loop"};
  }

 private:
  std::int64_t n_;
  ScanKind kind_;
  ScanWorkspace& workspace_;
  cuda::Stream& stream_;
  cuda::DeviceBuffer<T> input_, output_;
  std::vector<T> expected_;
};

// Random int32 of either sign on the device, kept where positive (about half), and the
// sequential compaction's result. Each row compacts it once into a poisoned output, checked at
// every kept element, then is timed.
class CompactWorkload {
 public:
  CompactWorkload(std::int64_t n, ScanWorkspace& workspace, cuda::Stream& stream)
      : n_(n),
        workspace_(workspace),
        stream_(stream),
        input_(static_cast<std::size_t>(n)),
        output_(static_cast<std::size_t>(n)),
        count_(1) {
    std::vector<std::int32_t> host(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      host[static_cast<std::size_t>(i)] =
          static_cast<std::int32_t>(hash_index(static_cast<std::uint64_t>(i) + 12345));
    }
    expected_.resize(host.size());
    expected_.resize(static_cast<std::size_t>(
        primitives::compact_sequential<std::int32_t>(host, expected_, KeepPredicate::positive)));
    input_.copy_from_host(host);
  }

  std::size_t kept() const { return expected_.size(); }

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(n_),
            .output_elements = static_cast<double>(expected_.size()),
            .value_bytes = sizeof(std::int32_t)};
  }
  void launch(const CompactVariant& v) {
    v.launch(input_.data(), output_.data(), n_, KeepPredicate::positive, count_.data(), workspace_,
             stream_.handle());
  }
  Check check(const CompactVariant& v) {
    cuda::fill_bytes_async(output_.data(), 0xA5,
                           static_cast<std::size_t>(n_) * sizeof(std::int32_t), stream_.handle());
    launch(v);
    stream_.synchronize();
    std::int64_t kept = 0;
    cuda::copy_to_host(&kept, count_.data(), sizeof kept);
    std::vector<std::int32_t> result(static_cast<std::size_t>(n_));
    output_.copy_to_host(result);
    result.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(kept, 0, n_)));
    const bool ok = same_bits(result, expected_);
    return {ok, ok ? "ok: every kept element = the sequential compaction's"
                   : "MISMATCH with the sequential compaction"};
  }

 private:
  std::int64_t n_;
  ScanWorkspace& workspace_;
  cuda::Stream& stream_;
  cuda::DeviceBuffer<std::int32_t> input_, output_;
  cuda::DeviceBuffer<std::int64_t> count_;
  std::vector<std::int32_t> expected_;
};

// The seed's loop (004: scanned[i] = scanned[i-1] + input[i-1]), one thread, in float.
// The CPU rows: a host call scanning floats, in the registry shape (harness.hpp, HostVariant).
using CpuScan = void (*)(const Context&, std::span<const float>, std::span<float>);

// The seed's CPU loop (exclusive, one core; the context is not used).
void seed_cpu_scan(const Context&, std::span<const float> input, std::span<float> scanned) {
  scanned[0] = 0;
  for (std::size_t i = 1; i < input.size(); ++i) scanned[i] = scanned[i - 1] + input[i - 1];
}

void cpu_inclusive_scan(const Context& cpu, std::span<const float> input, std::span<float> output) {
  primitives::scan<float>(cpu, input, output, ScanOp::sum, ScanKind::inclusive);
}

constexpr HostVariant<CpuScan> kSeedCpuLoop = {
    .info = {.name = "cpu-seed-loop",
             .description = "the seed's sequential loop, one core",
             .seed_reference = "004: scan on the CPU",
             .traffic = {.reads_per_element = 1, .writes_per_element = 1}},
    .launch = seed_cpu_scan,
};

constexpr HostVariant<CpuScan> kCpuOpenmp = {
    .info = {.name = "cpu-openmp",
             .description =
                 "canonical tiles: tile sums in parallel, carried, tiles scanned in parallel",
             .seed_reference = "CPU backend",
             .traffic = {.reads_per_element = 1, .writes_per_element = 1},
             .deterministic = true},
    .launch = cpu_inclusive_scan,
};

// Host data and the sequential scan of it; the check scans into a NaN-poisoned output and
// compares every element's bits. `threads` (0: not said) goes into the note.
class CpuScanWorkload {
 public:
  CpuScanWorkload(std::vector<float> input, std::vector<float> expected, const Context& cpu,
                  int threads)
      : input_(std::move(input)),
        expected_(std::move(expected)),
        output_(input_.size()),
        cpu_(cpu),
        threads_(threads) {}

  WorkloadShape shape() const {
    return {.elements = static_cast<double>(input_.size()), .value_bytes = sizeof(float)};
  }
  void launch(const HostVariant<CpuScan>& v) { v.launch(cpu_, input_, output_); }
  Check check(const HostVariant<CpuScan>& v) {
    std::fill(output_.begin(), output_.end(), std::numeric_limits<float>::quiet_NaN());
    launch(v);
    const bool ok = same_bits(output_, expected_);
    return {ok, fmt::format("{} the library's sequential scan{}",
                            ok ? "ok: every element =" : "MISMATCH with",
                            threads_ > 0 ? fmt::format(" ({} threads)", threads_) : "")};
  }

 private:
  std::vector<float> input_, expected_, output_;
  Context cpu_;
  int threads_;
};

void seed_table(const BenchConfig& config, Report& report) {
  Table table = device_table(
      report,
      "Scan, the seed's table (004): float exclusive sum, the seed's CPU loop against "
      "the GPU (device-resident data; the API's default takes the deterministic engine "
      "for a float sum; the note gives the speedup over the CPU loop)");
  ScanWorkspace workspace;
  cuda::Stream stream;
  const ScanVariant& engine = primitives::default_scan_variant();
  const ScanVariant& multi_block = primitives::find_scan_variant("multi-block");
  for (const std::int64_t n : kSeedSizes) {
    if (config.size > 0 && n != config.size) continue;
    ScanWorkload<float> w(n, ScanKind::exclusive, workspace, stream);
    std::vector<float> input(static_cast<std::size_t>(n));
    w.input().copy_to_host(input);
    CpuScanWorkload cpu_work(std::move(input), w.expected(), Context::cpu(), 0);
    Row cpu = time_variant(config, kSeedCpuLoop, cpu_work, fmt::format("cpu-seed-loop {}", n));
    const double cpu_ms = cpu.median_ms();
    table.rows.push_back(std::move(cpu));
    for (const ScanVariant* v : {&multi_block, &engine}) {
      if (!variant_selected(config, v->info.name)) continue;
      Row row = time_variant(config, *v, w, fmt::format("{} {}", v->info.name, n));
      row.ladder = false;
      row.note += fmt::format(", {:.1f}x the CPU loop", cpu_ms / row.median_ms());
      table.rows.push_back(std::move(row));
    }
  }
  report.tables.push_back(std::move(table));
}

void ladder_table(const BenchConfig& config, Report& report) {
  ScanWorkspace workspace;
  cuda::Stream stream;
  ScanWorkload<float> w(kLadderSize, ScanKind::exclusive, workspace, stream);
  Table table = device_table(
      report, fmt::format("Scan, the seed's ladder (004): {} floats, exclusive sum, every "
                          "variant (the one-block scans end here; latency-bound)",
                          kLadderSize));
  for (const ScanVariant& v : primitives::scan_variants()) {
    if (!variant_selected(config, v.info.name)) continue;
    table.rows.push_back(time_variant(config, v, w));
  }
  report.tables.push_back(std::move(table));
}

template <class T>
void size_sweep(const BenchConfig& config, Report& report, const std::vector<std::int64_t>& sizes,
                const char* type_name) {
  const ScanVariant& engine = primitives::default_scan_variant();
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : sizes) {
    ScanWorkload<T> w(n, ScanKind::inclusive, workspace, stream);
    Table table = device_table(
        report, fmt::format("Scan: the default against CUB, {} {} inclusive sum (GB/s counts "
                            "one read and one write)",
                            n, type_name));
    for (const ScanVariant& v : primitives::scan_variants()) {
      if (v.max_count < n || !variant_selected(config, v.info.name)) continue;
      // The default, the one-block-a-tile exact engine, the deterministic engine (its cost for
      // exact types), the seed's design, CUB.
      const std::string_view name = v.info.name;
      if (&v != &engine && !v.info.vendor() && name != "multi-block" &&
          name != "decoupled-lookback" && name != "exact-lookback") {
        continue;
      }
      Row row = time_variant(config, v, w);
      row.ladder = false;
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
}

void compact_sweep(const BenchConfig& config, Report& report,
                   const std::vector<std::int64_t>& sizes) {
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : sizes) {
    CompactWorkload w(n, workspace, stream);
    Table table = device_table(
        report, fmt::format("Stream compaction: {} int32, keep positive ({} kept; GB/s counts "
                            "the read and the kept elements' write)",
                            n, w.kept()));
    for (const CompactVariant& v : primitives::compact_variants()) {
      if (!variant_selected(config, v.info.name)) continue;
      Row row = time_variant(config, v, w);
      row.ladder = false;
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
}

void cpu_table(const BenchConfig& config, Report& report, std::int64_t n) {
  std::vector<float> data = bench_data<float>(n);
  std::vector<float> reference(data.size());
  primitives::scan_sequential<float>(data, reference, ScanOp::sum, ScanKind::inclusive);
  const Context cpu = Context::cpu(config.context.cpu_threads);
  Table table;
  table.title = fmt::format("Scan on the CPU backend: {} floats, inclusive sum", n);
  CpuScanWorkload w(std::move(data), std::move(reference), cpu, cpu.effective_cpu_threads());
  table.rows.push_back(time_variant(config, kCpuOpenmp, w));
  report.tables.push_back(std::move(table));
}

}  // namespace

void run_scan_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    seed_table(config, report);
    if (config.size == 0) ladder_table(config, report);
    std::vector<std::int64_t> sizes;
    if (config.size > 0) {
      sizes = {config.size};
    } else {
      for (int k = 20; k <= 30; k += 2) sizes.push_back(std::int64_t{1} << k);
    }
    size_sweep<std::int32_t>(config, report, sizes, "int32");
    if (config.size == 0) {
      size_sweep<float>(config, report, {std::int64_t{1} << 24, std::int64_t{1} << 28}, "float");
      compact_sweep(config, report,
                    {std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 28});
    } else {
      compact_sweep(config, report, sizes);
    }
  }
  cpu_table(config, report,
            config.size > 0 ? std::min<std::int64_t>(config.size, 1 << 26) : std::int64_t{1} << 24);
}

}  // namespace gpukit::bench
