#pragma once
// The benchmark harness behind `gpukit bench <case>`: timing (CUDA events on the device, steady
// clock on the CPU), rows that carry the bytes they move, and the derived columns of the seeds'
// tables (GB/s, % of the measured limit, step and cumulative speedup, ratio to the vendor row),
// and each row's verification against an independent reference: a measured row that is not
// verified makes `gpukit bench` exit 8 (require_verified).

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/bandwidth.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/variant_info.hpp"

namespace gpukit::bench {

struct BenchConfig {
  Context context;
  std::int64_t size = 0;              // elements; 0 = the case's default
  std::vector<std::string> variants;  // empty = every registered variant
  std::string precision = "both";     // float | double | both
  int warmup = 3;
  int repeat = 20;
};

/// Milliseconds per call of `work` (which queues work on `stream`), `repeat` samples timed with
/// CUDA events after `warmup` untimed calls. Calls shorter than 0.5 ms are timed in batches of
/// back-to-back calls (each sample: batch time / batch size), so that the host's launch latency
/// is not counted as device time. A batch sample is device time only while the device is the
/// slower side: when one call's host-side work (argument checks, size queries, launches) takes
/// longer than its kernel, the batch runs at the host's pace and the sample is that host time.
std::vector<double> time_on_stream(StreamHandle stream, int warmup, int repeat,
                                   const std::function<void()>& work);
/// The same for host work (blocking), timed with std::chrono::steady_clock.
std::vector<double> time_on_host(int warmup, int repeat, const std::function<void()>& work);

double median(std::vector<double> samples);

struct Row {
  std::string variant;
  std::string description;
  std::string seed_reference;
  double elements = 0;  // elements processed per run
  double bytes = 0;     // bytes read once + written once per run
  double flops = 0;     // floating-point operations per run (0: not counted)
  std::vector<double> samples_ms;
  bool ladder = true;   // takes part in the step / cumulative speedup columns
  bool vendor = false;  // the vendor library's row (the "vs vendor" column divides by it)
  /// Whether this row's result agreed with an independent reference (a different algorithm, a
  /// closed form or a higher-precision path, never the code under test), within a derived bound.
  /// Every bench sets it through verify(); a measured row left false fails the run.
  bool verified = false;
  std::string note;     // what was compared and how far apart, plus any remark
  std::string skipped;  // why the row was not measured (then it has no samples)

  /// Records the verification: `passed`, and `what` (the reference and the error) as the note.
  void verify(bool passed, std::string what);
  double median_ms() const;
};

struct Table {
  std::string title;
  std::string element_name = "elem";  // unit of elements/s, e.g. "options"
  double limit_gbps = 0;              // the measured limit the "% limit" column divides by
  std::string limit_name;             // e.g. "D2D copy"
  /// For arithmetic-bound tables (GEMM): the peak the "% peak" column divides TFLOP/s by, and
  /// what it is. A table with a peak prints TFLOP/s and % peak instead of GB/s and % limit.
  double peak_tflops = 0;
  std::string peak_name;
  std::vector<Row> rows;
};

/// The current time in UTC, ISO 8601 to the second ("2026-11-25T07:15:02Z").
std::string utc_timestamp();

struct Report {
  /// When the run started (the report was made): utc_timestamp().
  std::string date = utc_timestamp();
  std::string case_name;
  std::string command_line;
  Context context;
  std::optional<DeviceInfo> device;
  CurrentClocks clocks;
  double copy_bandwidth_gbps = 0;  // measured at the start of the run
  std::optional<TransferBandwidth> transfer;
  std::vector<Table> tables;

  /// The tables as text, one line a row.
  void print(std::ostream& out) const;
  /// Everything, every sample included, plus device, clocks, git revision, date (ISO 8601, UTC)
  /// and command line; each row carries "verified" (boolean) and, when it was not measured,
  /// "skipped" (the reason).
  void write_json(const std::string& path) const;
  /// "table title: variant" of every measured row that is not verified (empty: all verified).
  std::vector<std::string> unverified_rows() const;
};

/// The size of the run a variant is timed on, which its traffic model turns into bytes and flops.
struct WorkloadShape {
  double elements = 0;          // input elements per run
  double output_elements = -1;  // output elements per run; negative: as many as inputs
  double value_bytes = 0;       // bytes of one value of the element type
};

/// A row for the registry entry `info` run on `shape`: its name (or `label`), description, seed
/// slide, vendor and ladder flags, and the bytes and flops its traffic model gives for the shape.
Row variant_row(const VariantInfo& info, const WorkloadShape& shape, std::string label = {});

/// The outcome of running a variant once against an independent reference.
struct Check {
  bool passed = false;
  std::string note;  // what was compared and how far apart
};

/// What a case's bench provides to time a registry entry on the device: the stream it runs on,
/// the shape of one run, `launch(entry)` queueing one run on the stream, and `check(entry)`
/// running it once into poisoned outputs and comparing with an independent reference.
template <class Workload, class Entry>
concept DeviceWorkloadFor = requires(Workload& w, const Entry& entry) {
  { w.stream() } -> std::convertible_to<StreamHandle>;
  { w.shape() } -> std::convertible_to<WorkloadShape>;
  { w.check(entry) } -> std::convertible_to<Check>;
  w.launch(entry);
};

/// A CPU-backend row in the registry shape: what it is (`info`, as every registry entry says it)
/// and the blocking host call that runs it once (`launch`, typed by the bench's host workload).
template <class Launcher>
struct HostVariant {
  VariantInfo info;
  Launcher launch;
};

/// What a case's bench provides to time an entry on the host: the shape of one run,
/// `launch(entry)` running it once (blocking), and `check(entry)` running it once into poisoned
/// outputs and comparing with an independent reference. It has no stream.
template <class Workload, class Entry>
concept HostWorkloadFor = requires(Workload& w, const Entry& entry) {
  { w.shape() } -> std::convertible_to<WorkloadShape>;
  { w.check(entry) } -> std::convertible_to<Check>;
  w.launch(entry);
}
&&!requires(Workload & w) { w.stream(); };

/// Host rows take at most this many samples after one warm-up run: a CPU run at the bench sizes
/// takes 10 ms to a second, and five samples give a stable median at that length.
inline constexpr int kHostRepeat = 5;

/// One measured row: the entry is checked once, then timed, on the device by time_on_stream (CUDA
/// events) or on the host by time_on_host (at most kHostRepeat samples after one warm-up run);
/// bytes, GB/s and TFLOP/s follow from its traffic model (`label` replaces the name in the table).
/// A host row stands beside the device ladder, not on it: it takes no step or cumulative speedup.
template <class Entry, class Workload>
requires DeviceWorkloadFor<Workload, Entry> || HostWorkloadFor<Workload, Entry> Row time_variant(
    const BenchConfig& config, const Entry& entry, Workload& workload, std::string label = {}) {
  Check check = workload.check(entry);
  Row row = variant_row(entry.info, workload.shape(), std::move(label));
  row.verify(check.passed, std::move(check.note));
  if constexpr (DeviceWorkloadFor<Workload, Entry>) {
    row.samples_ms = time_on_stream(workload.stream(), config.warmup, config.repeat,
                                    [&] { workload.launch(entry); });
  } else {
    row.ladder = false;
    row.samples_ms = time_on_host(std::min(config.warmup, 1), std::min(config.repeat, kHostRepeat),
                                  [&] { workload.launch(entry); });
  }
  return row;
}

/// Throws Error(check_failed) naming the unverified rows when any measured row of `report` is not
/// verified (`gpukit bench` then exits 8, after printing the tables and writing the JSON).
void require_verified(const Report& report);

/// Whether --variants selects `name` (an empty list selects every variant).
bool variant_selected(const BenchConfig& config, std::string_view name);

/// An empty table whose "% limit" column divides by the D2D copy bandwidth measured this run.
Table device_table(const Report& report, std::string title);

/// Measures the device's ceilings into `report` (no-op for a CPU context).
void measure_limits(Report& report, bool with_transfers);

/// A benchmarkable case study: `gpukit bench <name>`.
struct BenchCase {
  std::string name;
  std::string description;
  std::function<void(const BenchConfig&, Report&)> run;
  std::string size_unit;      // what --size counts ("options", ...); empty: the case takes no size
  std::int64_t max_size = 0;  // the largest --size (1 is the smallest)
  /// The names --variants accepts (empty: the case has no variants to select).
  std::function<std::vector<std::string>()> variant_names;
};
std::span<const BenchCase> bench_cases();

/// The git revision the binary was built from ("unknown" outside a checkout).
const char* git_revision() noexcept;

}  // namespace gpukit::bench
