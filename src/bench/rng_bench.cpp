#include "bench/rng_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
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
    if (v.name == "mt19937-streams") {
      rng::generate_mt19937_streams(cpu, out, kCheckCount / 4096, kSeed);
    } else {
      rng::generate_bits(cpu, out, kSeed);
    }
  } else {
    const bool normal =
        output == RandomOutput::normal_float || output == RandomOutput::normal_double;
    if (normal) {
      rng::generate_normal<T>(cpu, out, kSeed, 0,
                              v.name == "philox-inverse-cdf" ? rng::NormalTransform::inverse_cdf
                                                             : rng::NormalTransform::box_muller);
    } else {
      rng::generate_uniform<T>(cpu, out, kSeed);
    }
  }
  return out;
}

// "CPU == GPU bits", or how far apart they are (normals: the platforms' log and sin/cos).
template <class T>
std::string compare_with_cpu(const GeneratorVariant& v, RandomOutput output, int threads,
                             cuda::Stream& stream) {
  std::unique_ptr<DeviceGenerator> generator = v.make(kSeed);
  cuda::DeviceBuffer<T> device(static_cast<std::size_t>(kCheckCount));
  generator->fill(output, device.data(), kCheckCount, stream.handle());
  stream.synchronize();
  std::vector<T> gpu(static_cast<std::size_t>(kCheckCount));
  device.copy_to_host(gpu);
  const std::vector<T> cpu = cpu_reference<T>(v, output, threads);
  std::int64_t differ = 0;
  double worst = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) != 0) {
      ++differ;
      worst = std::max(worst, std::abs(static_cast<double>(gpu[i]) - static_cast<double>(cpu[i])));
    }
  }
  if (differ == 0) return fmt::format("ok: first {} = CPU bits", kCheckCount);
  return fmt::format("{} of first {} differ from the CPU's, by <= {:.2g}", differ, kCheckCount,
                     worst);
}

std::string check_note(const GeneratorVariant& v, RandomOutput output, int threads,
                       cuda::Stream& stream) {
  if (v.vendor) return "vendor";
  switch (output) {
    case RandomOutput::bits32:
      return compare_with_cpu<std::uint32_t>(v, output, threads, stream);
    case RandomOutput::uniform_float:
    case RandomOutput::normal_float:
      return compare_with_cpu<float>(v, output, threads, stream);
    case RandomOutput::uniform_double:
    case RandomOutput::normal_double:
      return compare_with_cpu<double>(v, output, threads, stream);
  }
  return {};
}

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
    for (const GeneratorVariant& v : rng::generator_variants()) {
      if (!variant_selected(config, v.name)) continue;
      std::unique_ptr<DeviceGenerator> generator = v.make(kSeed);
      if (!generator->produces(output)) continue;
      Row row;
      row.variant = std::string(v.name);
      row.description = std::string(v.description);
      row.seed_reference = std::string(v.seed_reference);
      row.elements = static_cast<double>(count);
      row.bytes = static_cast<double>(count) * static_cast<double>(bytes);
      row.ladder = false;
      row.vendor = v.name == "curand-philox";  // the like-for-like vendor generator
      row.note = check_note(v, output, config.context.cpu_threads, stream);
      row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, [&] {
        generator->fill(output, buffer.data(), count, stream.handle());
      });
      table.rows.push_back(std::move(row));
    }
    report.tables.push_back(std::move(table));
  }
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
  const auto add = [&](const char* name, const char* description, std::size_t bytes,
                       const std::function<void()>& work) {
    Row row;
    row.variant = name;
    row.description = description;
    row.seed_reference = "CPU backend";
    row.elements = static_cast<double>(n);
    row.bytes = static_cast<double>(n) * static_cast<double>(bytes);
    row.ladder = false;
    row.samples_ms = time_on_host(1, std::min(config.repeat, 5), work);
    table.rows.push_back(std::move(row));
  };
  std::vector<float> floats(static_cast<std::size_t>(n));
  std::vector<double> doubles(static_cast<std::size_t>(n));
  std::vector<std::uint32_t> words(static_cast<std::size_t>(n));
  add("philox uniform float", "flat Philox stream", sizeof(float),
      [&] { rng::generate_uniform<float>(cpu, floats, kSeed); });
  add("philox normal float", "Box-Muller", sizeof(float),
      [&] { rng::generate_normal<float>(cpu, floats, kSeed); });
  add("philox normal double", "Box-Muller", sizeof(double),
      [&] { rng::generate_normal<double>(cpu, doubles, kSeed); });
  add("philox-inverse-cdf normal double", "AS241", sizeof(double), [&] {
    rng::generate_normal<double>(cpu, doubles, kSeed, 0, rng::NormalTransform::inverse_cdf);
  });
  if (n % 4096 == 0) {
    add("mt19937-streams words", "4096 MT19937 streams", sizeof(std::uint32_t),
        [&] { rng::generate_mt19937_streams(cpu, words, n / 4096, kSeed); });
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
