#include "bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/io/atomic_file.hpp"

namespace gpukit::bench {

std::vector<double> time_on_stream(StreamHandle stream, int warmup, int repeat,
                                   const std::function<void()>& work) {
  cuda::Event start, stop;
  for (int i = 0; i < warmup; ++i) work();
  // Short calls are timed in batches of back-to-back launches (nvbench's "batch" timing): one
  // call between two events would measure the host's launch latency, not the device. A batch
  // lasts at least kMinBatchMs; each sample is the batch's time divided by its size.
  constexpr double kMinBatchMs = 0.5;
  start.record(stream);
  work();
  stop.record(stream);
  stop.synchronize();
  const double single_ms = cuda::Event::elapsed_ms(start, stop);
  const int batch = single_ms >= kMinBatchMs
                        ? 1
                        : static_cast<int>(std::min(1000.0, std::ceil(kMinBatchMs / single_ms)));
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(repeat));
  for (int i = 0; i < repeat; ++i) {
    start.record(stream);
    for (int b = 0; b < batch; ++b) work();
    stop.record(stream);
    stop.synchronize();
    samples.push_back(cuda::Event::elapsed_ms(start, stop) / batch);
  }
  return samples;
}

std::vector<double> time_on_host(int warmup, int repeat, const std::function<void()>& work) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(repeat));
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return samples;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

double Row::median_ms() const { return median(samples_ms); }

void Row::verify(bool passed, std::string what) {
  verified = passed;
  note = std::move(what);
}

std::vector<std::string> Report::unverified_rows() const {
  std::vector<std::string> rows;
  for (const Table& t : tables)
    for (const Row& r : t.rows)
      if (r.skipped.empty() && !r.verified)
        rows.push_back(fmt::format("{}: {}", t.title, r.variant));
  return rows;
}

void require_verified(const Report& report) {
  const std::vector<std::string> rows = report.unverified_rows();
  if (rows.empty()) return;
  std::string list;
  for (const std::string& r : rows) list += "\n  " + r;
  throw Error(ErrorKind::check_failed,
              fmt::format("bench {}: {} row{} failed verification (see the \"check\" column):{}",
                          report.case_name, rows.size(), rows.size() == 1 ? "" : "s", list));
}

bool variant_selected(const BenchConfig& config, std::string_view name) {
  return config.variants.empty() ||
         std::find(config.variants.begin(), config.variants.end(), name) != config.variants.end();
}

Row variant_row(const VariantInfo& info, const WorkloadShape& shape, std::string label) {
  Row row;
  row.variant = label.empty() ? std::string(info.name) : std::move(label);
  row.description = std::string(info.description);
  row.seed_reference = std::string(info.seed_reference);
  row.vendor = info.vendor();
  row.ladder = !info.vendor();
  row.elements = shape.elements;
  const double outputs = shape.output_elements < 0 ? shape.elements : shape.output_elements;
  const TrafficModel& t = info.traffic;
  row.bytes =
      (t.reads_per_element * shape.elements + t.writes_per_element * outputs) * shape.value_bytes +
      t.extra_read_bytes_per_element * shape.elements;
  row.flops = t.flops_per_element * shape.elements;
  return row;
}

Table device_table(const Report& report, std::string title) {
  Table table;
  table.title = std::move(title);
  table.limit_gbps = report.copy_bandwidth_gbps;
  table.limit_name = "D2D copy";
  return table;
}

void measure_limits(Report& report, bool with_transfers) {
  if (report.context.backend != Backend::cuda) return;
  report.device = query_device(report.context.cuda_device);
  report.copy_bandwidth_gbps = measure_device_copy_bandwidth_gbps(report.context.cuda_device);
  if (with_transfers) report.transfer = measure_transfer_bandwidth(report.context.cuda_device);
  report.clocks = read_current_clocks(*report.device);
}

namespace {

struct Derived {
  double median_ms, min_ms, max_ms, elements_per_s, gbps, percent_of_limit, tflops, percent_of_peak;
  std::optional<double> step, cumulative, vs_vendor;
};

std::vector<Derived> derive(const Table& table) {
  std::vector<Derived> d;
  const Row* first_ladder = nullptr;
  const Row* previous_ladder = nullptr;
  const Row* vendor = nullptr;
  for (const Row& r : table.rows)
    if (r.vendor) vendor = &r;
  for (const Row& r : table.rows) {
    Derived x{};
    x.median_ms = r.median_ms();
    x.min_ms =
        r.samples_ms.empty() ? 0 : *std::min_element(r.samples_ms.begin(), r.samples_ms.end());
    x.max_ms =
        r.samples_ms.empty() ? 0 : *std::max_element(r.samples_ms.begin(), r.samples_ms.end());
    const double seconds = x.median_ms * 1e-3;
    x.elements_per_s = seconds > 0 ? r.elements / seconds : 0;
    x.gbps = seconds > 0 ? r.bytes / seconds / 1e9 : 0;
    x.tflops = seconds > 0 ? r.flops / seconds / 1e12 : 0;
    x.percent_of_limit = table.limit_gbps > 0 ? 100.0 * x.gbps / table.limit_gbps : 0;
    x.percent_of_peak = table.peak_tflops > 0 ? 100.0 * x.tflops / table.peak_tflops : 0;
    if (r.ladder) {
      if (previous_ladder) x.step = previous_ladder->median_ms() / x.median_ms;
      if (first_ladder) x.cumulative = first_ladder->median_ms() / x.median_ms;
      if (!first_ladder) first_ladder = &r, x.step = 1.0, x.cumulative = 1.0;
      previous_ladder = &r;
    }
    if (vendor && x.median_ms > 0) x.vs_vendor = vendor->median_ms() / x.median_ms;
    d.push_back(x);
  }
  return d;
}

std::string optional_ratio(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}x", *v) : std::string("-");
}

std::string si(double value) {
  if (value >= 1e12) return fmt::format("{:.2f} T", value / 1e12);
  if (value >= 1e9) return fmt::format("{:.2f} G", value / 1e9);
  if (value >= 1e6) return fmt::format("{:.2f} M", value / 1e6);
  return fmt::format("{:.0f} ", value);
}

}  // namespace

void Report::print(std::ostream& out) const {
  fmt::print(out, "gpukit bench {}  (git {})\n", case_name, git_revision());
  if (device) {
    fmt::print(out, "device: {} ({} SMs, {:.1f} GiB, theoretical {:.0f} GB/s)", device->name,
               device->sm_count, device->total_memory_bytes / double(1u << 30),
               device->theoretical_bandwidth_gbps());
    if (clocks.sm_mhz > 0)
      fmt::print(out, ", clocks SM {} / memory {} MHz", clocks.sm_mhz, clocks.memory_mhz);
    fmt::print(out, "\nmeasured device-to-device copy: {:.0f} GB/s (read + write)\n",
               copy_bandwidth_gbps);
    if (transfer)
      fmt::print(out,
                 "measured PCIe: H2D pinned {:.1f} GB/s, D2H pinned {:.1f} GB/s, H2D pageable "
                 "{:.1f} GB/s, D2H pageable {:.1f} GB/s\n",
                 transfer->host_to_device_pinned_gbps, transfer->device_to_host_pinned_gbps,
                 transfer->host_to_device_pageable_gbps, transfer->device_to_host_pageable_gbps);
  }
  fmt::print(out, "cpu: {} threads\n", context.effective_cpu_threads());
  fmt::print(out,
             "timing: median of the samples; GPU rows by CUDA events, a call under 0.5 ms timed "
             "in back-to-back batches (which count a call's host-side cost when the host is the "
             "slower side); CPU rows by a steady clock around each blocking call\n");
  for (const Table& t : tables) {
    const std::vector<Derived> d = derive(t);
    const bool arithmetic = t.peak_tflops > 0;  // TFLOP/s and % peak instead of GB/s, % limit
    fmt::print(out, "\n{}\n", t.title);
    fmt::print(out, "{:<26} {:>10} {:>19} {:>13} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n",
               "variant", "median ms", "min-max ms", fmt::format("{}/s", t.element_name),
               arithmetic ? "TFLOP/s" : "GB/s",
               arithmetic
                   ? std::string("%peak")
                   : fmt::format("%{}", t.limit_name.empty() ? "limit" : t.limit_name.substr(0, 6)),
               "step", "cumul", "vendor", "check", "note");
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const Row& r = t.rows[i];
      const Derived& x = d[i];
      if (!r.skipped.empty()) {
        fmt::print(out, "{:<26} {:>10} {:>19} {:>13} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n",
                   r.variant, "-", "-", "-", "-", "-", "-", "-", "-", "skipped", r.skipped);
        continue;
      }
      fmt::print(out,
                 "{:<26} {:>10.4f} {:>19} {:>13} {:>9.1f} {:>6.1f}% {:>7} {:>7} {:>7} {:>7}  {}\n",
                 r.variant, x.median_ms, fmt::format("{:.4f}-{:.4f}", x.min_ms, x.max_ms),
                 si(x.elements_per_s), arithmetic ? x.tflops : x.gbps,
                 arithmetic ? x.percent_of_peak : x.percent_of_limit, optional_ratio(x.step),
                 optional_ratio(x.cumulative), optional_ratio(x.vs_vendor),
                 r.verified ? "ok" : "FAILED", r.note);
    }
    if (arithmetic) {
      fmt::print(out, "(% of {} = {:.1f} TFLOP/s)\n", t.peak_name, t.peak_tflops);
    } else if (!t.limit_name.empty()) {
      fmt::print(out, "(% of {} = {:.0f} GB/s)\n", t.limit_name, t.limit_gbps);
    }
  }
}

void Report::write_json(const std::string& path) const {
  using nlohmann::json;
  json j;
  j["case"] = case_name;
  j["command_line"] = command_line;
  j["git_revision"] = git_revision();
  j["date"] = date;
  j["backend"] = context.backend == Backend::cuda ? "cuda" : "cpu";
  j["cpu_threads"] = context.effective_cpu_threads();
  if (device) {
    j["device"] = {
        {"name", device->name},
        {"ordinal", device->ordinal},
        {"pci_bus_id", device->pci_bus_id},
        {"compute_capability", fmt::format("{}.{}", device->compute_major, device->compute_minor)},
        {"sm_count", device->sm_count},
        {"total_memory_bytes", device->total_memory_bytes},
        {"l2_cache_bytes", device->l2_cache_bytes},
        {"theoretical_bandwidth_gbps", device->theoretical_bandwidth_gbps()}};
    j["clocks"] = {{"sm_peak_khz", device->sm_clock_khz},
                   {"memory_peak_khz", device->memory_clock_khz},
                   {"sm_current_mhz", clocks.sm_mhz},
                   {"memory_current_mhz", clocks.memory_mhz}};
    j["copy_bandwidth_gbps"] = copy_bandwidth_gbps;
  }
  if (transfer) {
    j["transfer_bandwidth_gbps"] = {{"h2d_pinned", transfer->host_to_device_pinned_gbps},
                                    {"d2h_pinned", transfer->device_to_host_pinned_gbps},
                                    {"h2d_pageable", transfer->host_to_device_pageable_gbps},
                                    {"d2h_pageable", transfer->device_to_host_pageable_gbps}};
  }
  j["tables"] = json::array();
  for (const Table& t : tables) {
    const std::vector<Derived> d = derive(t);
    json jt = {{"title", t.title},
               {"limit_name", t.limit_name},
               {"limit_gbps", t.limit_gbps},
               {"rows", json::array()}};
    if (t.peak_tflops > 0) {
      jt["peak_name"] = t.peak_name;
      jt["peak_tflops"] = t.peak_tflops;
    }
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const Row& r = t.rows[i];
      const Derived& x = d[i];
      json jr = {{"variant", r.variant},
                 {"description", r.description},
                 {"seed_reference", r.seed_reference},
                 {"elements", r.elements},
                 {"bytes", r.bytes},
                 {"samples_ms", r.samples_ms},
                 {"median_ms", x.median_ms},
                 {"min_ms", x.min_ms},
                 {"max_ms", x.max_ms},
                 {"elements_per_s", x.elements_per_s},
                 {"gbps", x.gbps},
                 {"percent_of_limit", x.percent_of_limit},
                 {"flops", r.flops},
                 {"tflops", x.tflops},
                 {"percent_of_peak", x.percent_of_peak},
                 {"verified", r.verified},
                 {"note", r.note},
                 {"vendor", r.vendor}};
      if (!r.skipped.empty()) jr["skipped"] = r.skipped;
      jr["step_speedup"] = x.step ? json(*x.step) : json(nullptr);
      jr["cumulative_speedup"] = x.cumulative ? json(*x.cumulative) : json(nullptr);
      jr["vs_vendor"] = x.vs_vendor ? json(*x.vs_vendor) : json(nullptr);
      jt["rows"].push_back(jr);
    }
    j["tables"].push_back(jt);
  }
  io::write_file_atomically(path, [&](std::ostream& out) { out << j.dump(2) << '\n'; });
}

}  // namespace gpukit::bench
