#include "bench/rng_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/rng/generate.hpp"
#include "gpukit/rng/generator_variants.hpp"
#include "gpukit/rng/mt19937_streams.hpp"

namespace gpukit::bench {

namespace {

using rng::DeviceGenerator;
using rng::GeneratorVariant;
using rng::RandomOutput;

constexpr std::uint64_t kSeed = 20260521;
constexpr std::int64_t kCheckCount = std::int64_t{1} << 20;  // multiple of 4096 (MT streams)
constexpr std::size_t kFillBytes = std::size_t{1} << 30;

constexpr RandomOutput kOutputs[] = {RandomOutput::normal_float, RandomOutput::uniform_float,
                                     RandomOutput::normal_double, RandomOutput::uniform_double,
                                     RandomOutput::bits32};

// The CPU backend's first kCheckCount elements of a gpukit generator's first fill.
template <class T>
std::vector<T> cpu_reference(const GeneratorVariant& v, RandomOutput output, int threads) {
  const Context cpu = Context::cpu(threads);
  std::vector<T> out(static_cast<std::size_t>(kCheckCount));
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    if (v.info.name == "mt19937-streams") {
      rng::generate_mt19937_streams(cpu, out, kCheckCount / 4096, kSeed);
    } else {
      rng::generate_bits(cpu, out, kSeed);
    }
  } else {
    const bool normal =
        output == RandomOutput::normal_float || output == RandomOutput::normal_double;
    if (normal) {
      rng::generate_normal<T>(cpu, out, kSeed, 0,
                              v.info.name == "philox-inverse-cdf"
                                  ? rng::NormalTransform::inverse_cdf
                                  : rng::NormalTransform::box_muller);
    } else {
      rng::generate_uniform<T>(cpu, out, kSeed);
    }
  }
  return out;
}

struct Verdict {
  bool ok;
  std::string what;
};

// The sample's distribution against its exact moments: every value in range, mean and variance
// within 6 standard errors of the exact ones (uniform on [0, 1]: 1/2 and 1/12, the variance's
// standard error sqrt((1/80 - 1/144) / n); normal: 0 and 1, sqrt(2 / n); 32-bit words scaled by
// 2^-32 are uniform). The independent reference for generators whose bits no CPU code here
// reproduces (cuRAND's) and for the CPU rows; 6 standard errors fail a correct generator about
// once in 10^8 runs.
template <class T>
Verdict check_moments(const std::vector<T>& x, RandomOutput output) {
  const bool normal = output == RandomOutput::normal_float || output == RandomOutput::normal_double;
  const double scale = std::is_integral_v<T> ? 0x1p-32 : 1.0;
  const double n = static_cast<double>(x.size());
  double sum = 0, sum_sq = 0;
  std::size_t out_of_range = 0;
  for (const T value : x) {
    const double v = static_cast<double>(value) * scale;
    if (!std::isfinite(v) || (!normal && (v < 0 || v > 1))) ++out_of_range;
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / n;
  const double variance = (sum_sq - sum * mean) / (n - 1);
  const double exact_mean = normal ? 0.0 : 0.5, exact_variance = normal ? 1.0 : 1.0 / 12;
  const double mean_error = 6 * std::sqrt(exact_variance / n);
  const double variance_error = 6 * std::sqrt((normal ? 2.0 : 1.0 / 80 - 1.0 / 144) / n);
  const bool ok = out_of_range == 0 && std::abs(mean - exact_mean) <= mean_error &&
                  std::abs(variance - exact_variance) <= variance_error;  // false for NaN
  return {ok, fmt::format("{}: {} samples, mean {:.5f} (exact {}), variance {:.5f} (exact {:.5f}), "
                          "6 std err {:.1e} / {:.1e}{}",
                          ok ? "ok" : "OFF", x.size(), mean, exact_mean, variance, exact_variance,
                          mean_error, variance_error,
                          out_of_range ? fmt::format(", {} out of range", out_of_range) : "")};
}

template <class T>
std::vector<T> first_fill(const GeneratorVariant& v, RandomOutput output, cuda::Stream& stream) {
  std::unique_ptr<DeviceGenerator> generator = v.make(kSeed);
  cuda::DeviceBuffer<T> device(static_cast<std::size_t>(kCheckCount));
  cuda::fill_bytes_async(device.data(), 0xFF, device.size() * sizeof(T), stream.handle());
  generator->fill(output, device.data(), kCheckCount, stream.handle());
  stream.synchronize();
  std::vector<T> gpu(static_cast<std::size_t>(kCheckCount));
  device.copy_to_host(gpu);
  return gpu;
}

// gpukit's generators: the GPU's first kCheckCount values against the CPU backend's, bit for
// bit, or, for normals (the platforms' log, sqrt and sin/cos, or the inverse CDF's polynomial,
// each a few ulp), within 16 ulp of the value's magnitude (at least 1).
template <class T>
Verdict compare_with_cpu(const GeneratorVariant& v, RandomOutput output, int threads,
                         cuda::Stream& stream) {
  const std::vector<T> gpu = first_fill<T>(v, output, stream);
  const std::vector<T> cpu = cpu_reference<T>(v, output, threads);
  const bool normal = output == RandomOutput::normal_float || output == RandomOutput::normal_double;
  std::int64_t differ = 0, beyond = 0;
  double worst = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) != 0) {
      ++differ;
      const double d = std::abs(static_cast<double>(gpu[i]) - static_cast<double>(cpu[i]));
      worst = std::max(worst, d);
      double bound = 0;
      if constexpr (std::is_floating_point_v<T>) {
        bound = 16 * std::numeric_limits<T>::epsilon() *
                std::max(1.0, std::abs(static_cast<double>(cpu[i])));
      }
      if (!normal || !(d <= bound)) ++beyond;  // NaN counts as beyond
    }
  }
  if (differ == 0) return {true, fmt::format("ok: first {} = CPU bits", kCheckCount)};
  return {beyond == 0,
          fmt::format("{}: {} of first {} differ from the CPU's, by <= {:.2g}{}",
                      beyond == 0 ? "ok" : "MISMATCH", differ, kCheckCount, worst,
                      normal ? fmt::format(" ({} beyond 16 ulp)", beyond) : std::string())};
}

template <class T>
Verdict check_variant(const GeneratorVariant& v, RandomOutput output, int threads,
                      cuda::Stream& stream) {
  if (v.info.vendor()) {
    Verdict m = check_moments(first_fill<T>(v, output, stream), output);
    m.what = "vendor; " + m.what;
    return m;
  }
  return compare_with_cpu<T>(v, output, threads, stream);
}

Verdict check_row(const GeneratorVariant& v, RandomOutput output, int threads,
                  cuda::Stream& stream) {
  switch (output) {
    case RandomOutput::bits32:
      return check_variant<std::uint32_t>(v, output, threads, stream);
    case RandomOutput::uniform_float:
    case RandomOutput::normal_float:
      return check_variant<float>(v, output, threads, stream);
    case RandomOutput::uniform_double:
    case RandomOutput::normal_double:
      return check_variant<double>(v, output, threads, stream);
  }
  return {false, "unknown output"};
}

// Fills of one output into the 1 GiB device buffer by the generator of the row being timed (made
// by the caller, so that its set-up is not timed); each row is checked against the CPU backend or,
// for cuRAND, the distribution's moments, then timed.
class FillWorkload {
 public:
  FillWorkload(RandomOutput output, std::int64_t count, void* buffer, int threads,
               cuda::Stream& stream)
      : output_(output), count_(count), buffer_(buffer), threads_(threads), stream_(stream) {}

  std::unique_ptr<DeviceGenerator> generator;

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(count_),
            .value_bytes = static_cast<double>(rng::random_output_bytes(output_))};
  }
  void launch(const GeneratorVariant& /*v*/) {
    generator->fill(output_, buffer_, count_, stream_.handle());
  }
  Check check(const GeneratorVariant& v) {
    const Verdict verdict = check_row(v, output_, threads_, stream_);
    return {verdict.ok, verdict.what};
  }

 private:
  RandomOutput output_;
  std::int64_t count_;
  void* buffer_;
  int threads_;
  cuda::Stream& stream_;
};

void device_tables(const BenchConfig& config, Report& report) {
  cuda::Stream stream;
  cuda::DeviceBuffer<std::uint8_t> buffer(kFillBytes);
  for (const RandomOutput output : kOutputs) {
    const std::size_t bytes = rng::random_output_bytes(output);
    const auto count =
        config.size > 0 ? config.size : static_cast<std::int64_t>(kFillBytes / bytes);
    if (static_cast<std::size_t>(count) * bytes > kFillBytes) {
      throw InvalidInput(fmt::format("bench rng: --size {} is over the 1 GiB buffer", count));
    }
    Table table = device_table(
        report, fmt::format("Random numbers: {} {} into device memory (GB/s counts the write)",
                            count, rng::random_output_name(output)));
    table.element_name = "samples";
    FillWorkload fills(output, count, buffer.data(), config.context.cpu_threads, stream);
    for (const GeneratorVariant& v : rng::generator_variants()) {
      if (!variant_selected(config, v.info.name)) continue;
      fills.generator = v.make(kSeed);
      if (!fills.generator->produces(output)) continue;
      Row row = time_variant(config, v, fills);
      row.ladder = false;
      // Of the cuRAND rows, the like-for-like generator is the one the "vendor" column divides by.
      row.vendor = v.info.name == "curand-philox";
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
}

// The CPU backend's rows, in the registry shape (harness.hpp, HostVariant): a host call that fills
// a span with kSeed's stream.
template <class T>
using CpuFill = void (*)(const Context&, std::span<T>);

template <class T>
void cpu_uniform(const Context& cpu, std::span<T> out) {
  rng::generate_uniform<T>(cpu, out, kSeed);
}
template <class T>
void cpu_normal(const Context& cpu, std::span<T> out) {
  rng::generate_normal<T>(cpu, out, kSeed);
}
void cpu_normal_inverse_cdf(const Context& cpu, std::span<double> out) {
  rng::generate_normal<double>(cpu, out, kSeed, 0, rng::NormalTransform::inverse_cdf);
}
void cpu_mt19937_streams(const Context& cpu, std::span<std::uint32_t> out) {
  rng::generate_mt19937_streams(cpu, out, static_cast<std::int64_t>(out.size()) / 4096, kSeed);
}

// Samples are written, nothing is read.
constexpr TrafficModel kFillTraffic = {.reads_per_element = 0, .writes_per_element = 1};

constexpr HostVariant<CpuFill<float>> kCpuUniformFloat = {
    .info = {.name = "philox uniform float",
             .description = "flat Philox stream",
             .seed_reference = "CPU backend",
             .traffic = kFillTraffic,
             .deterministic = true},
    .launch = cpu_uniform<float>,
};
constexpr HostVariant<CpuFill<float>> kCpuNormalFloat = {
    .info = {.name = "philox normal float",
             .description = "Box-Muller",
             .seed_reference = "CPU backend",
             .traffic = kFillTraffic,
             .deterministic = true},
    .launch = cpu_normal<float>,
};
constexpr HostVariant<CpuFill<double>> kCpuNormalDouble = {
    .info = {.name = "philox normal double",
             .description = "Box-Muller",
             .seed_reference = "CPU backend",
             .traffic = kFillTraffic,
             .deterministic = true},
    .launch = cpu_normal<double>,
};
constexpr HostVariant<CpuFill<double>> kCpuInverseCdfDouble = {
    .info = {.name = "philox-inverse-cdf normal double",
             .description = "AS241",
             .seed_reference = "CPU backend",
             .traffic = kFillTraffic,
             .deterministic = true},
    .launch = cpu_normal_inverse_cdf,
};
constexpr HostVariant<CpuFill<std::uint32_t>> kCpuMt19937Words = {
    .info = {.name = "mt19937-streams words",
             .description = "4096 MT19937 streams",
             .seed_reference = "CPU backend",
             .traffic = kFillTraffic,
             .deterministic = true},
    .launch = cpu_mt19937_streams,
};

// n samples into host memory, poisoned before the check (NaN, all ones) so that an unwritten
// value fails it; the check compares the first kCheckCount values at most with their
// distribution's moments.
template <class T>
class CpuFillWorkload {
 public:
  CpuFillWorkload(std::int64_t n, const Context& cpu, RandomOutput output)
      : out_(static_cast<std::size_t>(n)), cpu_(cpu), output_(output) {}

  WorkloadShape shape() const {
    return {.elements = static_cast<double>(out_.size()), .value_bytes = sizeof(T)};
  }
  void launch(const HostVariant<CpuFill<T>>& v) { v.launch(cpu_, out_); }
  Check check(const HostVariant<CpuFill<T>>& v) {
    if constexpr (std::is_integral_v<T>) {
      std::fill(out_.begin(), out_.end(), std::numeric_limits<T>::max());
    } else {
      std::fill(out_.begin(), out_.end(), std::numeric_limits<T>::quiet_NaN());
    }
    launch(v);
    const auto head_size =
        std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(out_.size()), kCheckCount);
    const Verdict verdict =
        check_moments(std::vector<T>(out_.begin(), out_.begin() + head_size), output_);
    return {verdict.ok, verdict.what};
  }

 private:
  std::vector<T> out_;
  Context cpu_;
  RandomOutput output_;
};

template <class T>
Row cpu_fill_row(const BenchConfig& config, const HostVariant<CpuFill<T>>& entry, std::int64_t n,
                 RandomOutput output) {
  CpuFillWorkload<T> w(n, Context::cpu(config.context.cpu_threads), output);
  return time_variant(config, entry, w);
}

void cpu_table(const BenchConfig& config, Report& report) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  const std::int64_t n =
      config.size > 0 ? std::min<std::int64_t>(config.size, 1 << 26) : std::int64_t{1} << 24;
  Table table;
  table.title = fmt::format(
      "Random numbers on the CPU backend: {} samples into host memory ({} "
      "threads)",
      n, cpu.effective_cpu_threads());
  table.element_name = "samples";
  table.rows.push_back(cpu_fill_row(config, kCpuUniformFloat, n, RandomOutput::uniform_float));
  table.rows.push_back(cpu_fill_row(config, kCpuNormalFloat, n, RandomOutput::normal_float));
  table.rows.push_back(cpu_fill_row(config, kCpuNormalDouble, n, RandomOutput::normal_double));
  table.rows.push_back(cpu_fill_row(config, kCpuInverseCdfDouble, n, RandomOutput::normal_double));
  if (n % 4096 == 0) {
    table.rows.push_back(cpu_fill_row(config, kCpuMt19937Words, n, RandomOutput::bits32));
  }
  report.tables.push_back(std::move(table));
}

}  // namespace

void run_rng_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    device_tables(config, report);
  }
  cpu_table(config, report);
}

}  // namespace gpukit::bench
