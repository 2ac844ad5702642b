// The SAXPY / DAXPY benchmark. Every row runs in place, y = alpha * x + y, as BLAS defines axpy:
// each moves the same 3 values an element (x and y read, y written), and cuBLAS's row is timed as
// cuBLAS runs, with no copy of y (its launcher copies only for an output that is not y, which the
// bench never asks for). Each row is first checked: y is restored from a pristine copy, the
// variant runs once, and every element is compared with the exact reference (alpha * x is never
// zero here, so a variant that writes nothing fails).

#include "bench/saxpy_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_random.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/blas/saxpy_variants.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::bench {

namespace {

using blas::AxpyRounding;
using blas::SaxpyVariant;

constexpr std::int64_t kFloatLadderSize = std::int64_t{1} << 28;   // the "float 2^28"
constexpr std::int64_t kDoubleLadderSize = std::int64_t{1} << 27;  // the same 1 GiB an array
constexpr std::int64_t kMaxCpuSize = std::int64_t{1} << 25;

template <class T>
constexpr T kAlpha = T(1.7);  // no power of two: alpha * x is rarely exact

// Element i of x (salt 0) or y (salt 1): uniform in [-1, 1) times 2^k, k in [-8, 7], from a hash
// of i alone, so 2^28 elements are generated in parallel in a fraction of a second.
template <class T>
std::vector<T> bench_values(std::int64_t n, std::uint64_t salt) {
  std::vector<T> v(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t z = hash_index(2 * static_cast<std::uint64_t>(i) + salt);
    const T unit = static_cast<T>(static_cast<double>(z >> 11) * 0x1p-53 * 2.0 - 1.0);
    v[static_cast<std::size_t>(i)] = std::ldexp(unit, static_cast<int>(z & 15) - 8);
  }
  return v;
}

// The exact results, computed once (the double reference is slow) and compared bitwise with each
// row; where a row's rounding rule also allows the separate rounding, a mismatch is looked at
// again under that rule.
template <class T>
struct Expected {
  std::vector<T> x, y, fused;
  explicit Expected(std::int64_t n)
      : x(bench_values<T>(n, 0)), y(bench_values<T>(n, 1)), fused(x.size()) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      fused[k] = blas::axpy_exact(kAlpha<T>, x[k], y[k]);
    }
  }
  // The number of elements of `result` the rule does not allow, and the first one.
  Check compare(std::span<const T> result, AxpyRounding rounding) const {
    const auto n = static_cast<std::int64_t>(result.size());
    std::int64_t bad = 0, first = n, separate = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad, separate) reduction(min : first)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (std::memcmp(&result[k], &fused[k], sizeof(T)) == 0) continue;
      if (blas::axpy_element_ok(kAlpha<T>, x[k], y[k], result[k], rounding)) {
        ++separate;  // allowed: the separate rounding
        continue;
      }
      ++bad;
      first = std::min(first, i);
    }
    if (bad > 0) {
      return {false, fmt::format("MISMATCH: {} of {} elements not the exact rounding, first at {}",
                                 bad, n, first)};
    }
    return {true, separate == 0 ? fmt::format("ok: every element = round(a*x+y), exact reference")
                                : fmt::format("ok: exact reference; {} elements rounded a*x first",
                                              separate)};
  }
};

// Device x, y and a pristine y; one launch updates y in place.
template <class T>
class AxpyWorkload {
 public:
  AxpyWorkload(const Expected<T>& expected, cuda::Stream& stream)
      : expected_(expected),
        stream_(stream),
        n_(static_cast<std::int64_t>(expected.x.size())),
        x_(expected.x.size()),
        y_(expected.x.size()),
        y_pristine_(expected.x.size()) {
    x_.copy_from_host(expected.x);
    y_pristine_.copy_from_host(expected.y);
  }

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(n_), .value_bytes = sizeof(T)};
  }
  void launch(const SaxpyVariant& v) {
    v.launch<T>(kAlpha<T>, x_.data(), y_.data(), y_.data(), n_, stream_.handle());
  }
  Check check(const SaxpyVariant& v) {
    cuda::copy_device_to_device_async(y_.data(), y_pristine_.data(), y_.size_bytes(),
                                      stream_.handle());
    launch(v);
    stream_.synchronize();
    std::vector<T> result(static_cast<std::size_t>(n_));
    y_.copy_to_host(result);
    return expected_.compare(result, v.rounding);
  }

 private:
  const Expected<T>& expected_;
  cuda::Stream& stream_;
  std::int64_t n_;
  cuda::DeviceBuffer<T> x_, y_, y_pristine_;
};

template <class T>
void ladder_table(const BenchConfig& config, Report& report, std::int64_t n,
                  const char* type_name) {
  const Expected<T> expected(n);
  cuda::Stream stream;
  AxpyWorkload<T> w(expected, stream);
  Table table = device_table(
      report, fmt::format("{}: {} {}, y = {} x + y in place (x, y read, y written: {} bytes an "
                          "element)",
                          sizeof(T) == 4 ? "SAXPY, the ladder" : "DAXPY, the ladder", n, type_name,
                          kAlpha<T>, 3 * sizeof(T)));
  for (const SaxpyVariant& v : blas::saxpy_variants()) {
    if (!variant_selected(config, v.info.name)) continue;
    table.rows.push_back(time_variant(config, v, w));
  }
  report.tables.push_back(std::move(table));
}

void size_sweep(const BenchConfig& config, Report& report, const std::vector<std::int64_t>& sizes) {
  const SaxpyVariant& best = blas::default_saxpy_variant();
  const SaxpyVariant& cublas = blas::find_saxpy_variant("cublas");
  cuda::Stream stream;
  for (const std::int64_t n : sizes) {
    const Expected<float> expected(n);
    AxpyWorkload<float> w(expected, stream);
    Table table = device_table(
        report, fmt::format("SAXPY: the default variant against cuBLAS, {} float in place", n));
    for (const SaxpyVariant* v : {&best, &cublas}) {
      Row row = time_variant(config, *v, w);
      row.ladder = false;
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
}

template <class T>
Row cpu_row(const BenchConfig& config, std::int64_t n, const char* type_name) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  const Expected<T> expected(n);
  std::vector<T> y = expected.y;
  blas::axpy<T>(cpu, kAlpha<T>, expected.x, y, y);
  const Check check = expected.compare(y, AxpyRounding::fused_or_separate);
  Row row;
  row.variant = fmt::format("openblas-{}", type_name);
  row.description = "the CPU backend: OpenBLAS cblas_?axpy, y in place";
  row.seed_reference = "CPU backend";
  row.elements = static_cast<double>(n);
  row.bytes = 3.0 * static_cast<double>(n) * sizeof(T);
  row.flops = 2.0 * static_cast<double>(n);
  row.ladder = false;
  row.samples_ms = time_on_host(1, std::min(config.repeat, 10),
                                [&] { blas::axpy<T>(cpu, kAlpha<T>, expected.x, y, y); });
  row.verify(check.passed, fmt::format("{} ({} threads)", check.note, cpu.effective_cpu_threads()));
  return row;
}

}  // namespace

void run_saxpy_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
  const bool floats = config.precision != "double";
  const bool doubles = config.precision != "float";
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    if (floats)
      ladder_table<float>(config, report, config.size > 0 ? config.size : kFloatLadderSize,
                          "float");
    if (doubles) {
      ladder_table<double>(config, report, config.size > 0 ? config.size : kDoubleLadderSize,
                           "double");
    }
    if (floats) {
      std::vector<std::int64_t> sizes;
      if (config.size > 0) {
        sizes = {config.size};
      } else {
        for (int k = 20; k <= 28; k += 2) sizes.push_back(std::int64_t{1} << k);
      }
      size_sweep(config, report, sizes);
    }
  }
  const std::int64_t cpu_n = std::min(config.size > 0 ? config.size : kMaxCpuSize, kMaxCpuSize);
  Table cpu_table;
  cpu_table.title = fmt::format("SAXPY / DAXPY on the CPU backend: {} elements, y in place", cpu_n);
  if (floats) cpu_table.rows.push_back(cpu_row<float>(config, cpu_n, "float"));
  if (doubles) cpu_table.rows.push_back(cpu_row<double>(config, cpu_n, "double"));
  report.tables.push_back(std::move(cpu_table));
}

}  // namespace gpukit::bench
