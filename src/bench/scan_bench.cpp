#include "bench/scan_bench.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
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

// An array on the device, the CPU backend's scan of it, and an output buffer.
template <class T>
struct ScanWorkload {
  std::int64_t n = 0;
  cuda::DeviceBuffer<T> input, output;
  std::vector<T> expected;
};

template <class T>
ScanWorkload<T> make_workload(std::int64_t n, const Context& /*context*/, ScanKind kind) {
  const std::vector<T> host = bench_data<T>(n);
  ScanWorkload<T> w;
  w.n = n;
  w.input = cuda::DeviceBuffer<T>(static_cast<std::size_t>(n));
  w.output = cuda::DeviceBuffer<T>(static_cast<std::size_t>(n));
  w.input.copy_from_host(host);
  w.expected.resize(host.size());
  // The sequential loop: a different algorithm from every variant and from the CPU backend's
  // tiles; the data's prefixes are exact, so every element must match bit for bit.
  primitives::scan_sequential<T>(host, w.expected, ScanOp::sum, kind);
  return w;
}

// Verifies the variant once (poisoned output, every element), then times it.
template <class T>
Row time_scan(const BenchConfig& config, const ScanVariant& v, ScanWorkload<T>& w, ScanKind kind,
              ScanWorkspace& workspace, cuda::Stream& stream, std::string label = {}) {
  const auto run = [&] {
    v.launch(w.input.data(), w.output.data(), w.n, ScanOp::sum, kind, workspace, stream.handle());
  };
  cuda::fill_bytes_async(w.output.data(), 0xA5, static_cast<std::size_t>(w.n) * sizeof(T),
                         stream.handle());
  run();
  stream.synchronize();
  std::vector<T> result(static_cast<std::size_t>(w.n));
  w.output.copy_to_host(result);
  Row row;
  row.variant = label.empty() ? std::string(v.name) : label;
  row.description = std::string(v.description);
  row.seed_reference = std::string(v.seed_reference);
  row.elements = static_cast<double>(w.n);
  row.bytes = 2.0 * static_cast<double>(w.n) * sizeof(T);  // one read, one write
  row.vendor = v.vendor;
  row.ladder = !v.vendor;
  const bool ok = same_bits(result, w.expected);
  row.verify(
      ok, ok ? "ok: every element = the sequential loop's" : "MISMATCH with the sequential loop");
  row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, run);
  return row;
}

// The seed's loop (004: scanned[i] = scanned[i-1] + input[i-1]), one thread, in float.
void seed_cpu_scan(const std::vector<float>& input, std::vector<float>& scanned) {
  scanned[0] = 0;
  for (std::size_t i = 1; i < input.size(); ++i) scanned[i] = scanned[i - 1] + input[i - 1];
}

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
    ScanWorkload<float> w = make_workload<float>(n, config.context, ScanKind::exclusive);
    std::vector<float> input(static_cast<std::size_t>(n)),
        scanned(input.size(), std::numeric_limits<float>::quiet_NaN());
    w.input.copy_to_host(input);
    Row cpu;
    cpu.variant = fmt::format("cpu-seed-loop {}", n);
    cpu.description = "the seed's sequential loop, one core";
    cpu.seed_reference = "004: scan on the CPU";
    cpu.elements = static_cast<double>(n);
    cpu.bytes = 2.0 * static_cast<double>(n) * sizeof(float);
    cpu.ladder = false;
    cpu.samples_ms =
        time_on_host(1, std::min(config.repeat, 5), [&] { seed_cpu_scan(input, scanned); });
    const bool cpu_ok = same_bits(scanned, w.expected);
    cpu.verify(cpu_ok, cpu_ok ? "ok: every element = the library's sequential scan"
                              : "MISMATCH with the library's sequential scan");
    const double cpu_ms = cpu.median_ms();
    table.rows.push_back(std::move(cpu));
    for (const ScanVariant* v : {&multi_block, &engine}) {
      if (!variant_selected(config, v->name)) continue;
      Row row = time_scan(config, *v, w, ScanKind::exclusive, workspace, stream,
                          fmt::format("{} {}", v->name, n));
      row.ladder = false;
      row.note += fmt::format(", {:.1f}x the CPU loop", cpu_ms / row.median_ms());
      table.rows.push_back(std::move(row));
    }
  }
  report.tables.push_back(std::move(table));
}

void ladder_table(const BenchConfig& config, Report& report) {
  ScanWorkload<float> w = make_workload<float>(kLadderSize, config.context, ScanKind::exclusive);
  ScanWorkspace workspace;
  cuda::Stream stream;
  Table table = device_table(
      report, fmt::format("Scan, the seed's ladder (004): {} floats, exclusive sum, every "
                          "variant (the one-block scans end here; latency-bound)",
                          kLadderSize));
  for (const ScanVariant& v : primitives::scan_variants()) {
    if (!variant_selected(config, v.name)) continue;
    table.rows.push_back(time_scan(config, v, w, ScanKind::exclusive, workspace, stream));
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
    ScanWorkload<T> w = make_workload<T>(n, config.context, ScanKind::inclusive);
    Table table = device_table(
        report, fmt::format("Scan: the default against CUB, {} {} inclusive sum (GB/s counts "
                            "one read and one write)",
                            n, type_name));
    for (const ScanVariant& v : primitives::scan_variants()) {
      if (v.max_count < n || !variant_selected(config, v.name)) continue;
      // The default, the one-block-a-tile exact engine, the deterministic engine (its cost for
      // exact types), the seed's design, CUB.
      if (&v != &engine && !v.vendor && v.name != "multi-block" && v.name != "decoupled-lookback" &&
          v.name != "exact-lookback") {
        continue;
      }
      Row row = time_scan(config, v, w, ScanKind::inclusive, workspace, stream);
      row.ladder = false;
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
}

// Compaction of random int32 of either sign, keeping the positive ones (about half).
void compact_sweep(const BenchConfig& config, Report& report,
                   const std::vector<std::int64_t>& sizes) {
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : sizes) {
    std::vector<std::int32_t> host(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      host[static_cast<std::size_t>(i)] =
          static_cast<std::int32_t>(hash_index(static_cast<std::uint64_t>(i) + 12345));
    }
    std::vector<std::int32_t> expected(host.size());
    expected.resize(static_cast<std::size_t>(
        primitives::compact_sequential<std::int32_t>(host, expected, KeepPredicate::positive)));
    cuda::DeviceBuffer<std::int32_t> input(host.size()), output(host.size());
    cuda::DeviceBuffer<std::int64_t> count(1);
    input.copy_from_host(host);
    Table table = device_table(
        report, fmt::format("Stream compaction: {} int32, keep positive ({} kept; GB/s counts "
                            "the read and the kept elements' write)",
                            n, expected.size()));
    for (const CompactVariant& v : primitives::compact_variants()) {
      if (!variant_selected(config, v.name)) continue;
      const auto run = [&] {
        v.launch(input.data(), output.data(), n, KeepPredicate::positive, count.data(), workspace,
                 stream.handle());
      };
      cuda::fill_bytes_async(output.data(), 0xA5, host.size() * sizeof(std::int32_t),
                             stream.handle());
      run();
      stream.synchronize();
      std::int64_t kept = 0;
      cuda::copy_to_host(&kept, count.data(), sizeof kept);
      std::vector<std::int32_t> result(host.size());
      output.copy_to_host(result);
      result.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(kept, 0, n)));
      Row row;
      row.variant = std::string(v.name);
      row.description = std::string(v.description);
      row.seed_reference = v.vendor ? "vendor" : "004: stream compaction";
      row.elements = static_cast<double>(n);
      row.bytes = static_cast<double>(n + static_cast<std::int64_t>(expected.size())) *
                  sizeof(std::int32_t);
      row.vendor = v.vendor;
      row.ladder = false;
      const bool ok = same_bits(result, expected);
      row.verify(ok, ok ? "ok: every kept element = the sequential compaction's"
                        : "MISMATCH with the sequential compaction");
      row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, run);
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
}

void cpu_table(const BenchConfig& config, Report& report, std::int64_t n) {
  const std::vector<float> data = bench_data<float>(n);
  std::vector<float> out(data.size(), std::numeric_limits<float>::quiet_NaN()),
      reference(data.size());
  primitives::scan_sequential<float>(data, reference, ScanOp::sum, ScanKind::inclusive);
  const Context cpu = Context::cpu(config.context.cpu_threads);
  Table table;
  table.title = fmt::format("Scan on the CPU backend: {} floats, inclusive sum", n);
  Row row;
  row.variant = "cpu-openmp";
  row.description = "canonical tiles: tile sums in parallel, carried, tiles scanned in parallel";
  row.seed_reference = "CPU backend";
  row.elements = static_cast<double>(n);
  row.bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  row.ladder = false;
  row.samples_ms = time_on_host(1, std::min(config.repeat, 5), [&] {
    primitives::scan<float>(cpu, data, out, ScanOp::sum, ScanKind::inclusive);
  });
  const bool ok = same_bits(out, reference);
  row.verify(ok, fmt::format("{} the sequential scan, every element ({} threads)",
                             ok ? "ok: =" : "MISMATCH with", cpu.effective_cpu_threads()));
  table.rows.push_back(std::move(row));
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
