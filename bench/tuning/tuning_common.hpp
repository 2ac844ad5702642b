#pragma once
// What every tuning driver shares: `--knob=value` arguments, CUDA-event timing (median of
// repetitions after untimed warm-up calls, short calls in batches of back-to-back launches so that
// the host's launch latency is not counted), and one printed table. The drivers are the measuring
// tools behind the figures the docs quote; `gpukit bench` stays the tool for the published tables.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpukit::tuning {

/// Throws with the failing call and the caller's file and line.
inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                             ": " + cudaGetErrorString(status));
  }
}
#define GPUKIT_TUNING_CHECK(call) ::gpukit::tuning::check_cuda((call), #call, __FILE__, __LINE__)

/// `--name=value` or `--name value` arguments against a list of known knobs with defaults;
/// `--help` prints the knobs. An unknown knob is an error, so a typo never runs the defaults.
class Knobs {
 public:
  Knobs(int argc, char** argv, std::string program,
        std::vector<std::pair<std::string, std::string>> knobs_with_defaults_and_help)
      : program_(std::move(program)) {
    for (auto& [name, spec] : knobs_with_defaults_and_help) {
      // spec: "default|help text"
      const auto bar = spec.find('|');
      values_[name] = spec.substr(0, bar);
      help_.emplace_back(name, spec);
    }
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        print_help();
        std::exit(0);
      }
      if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument " + arg);
      arg = arg.substr(2);
      std::string value;
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        throw std::invalid_argument("--" + arg + " needs a value");
      }
      if (!values_.count(arg))
        throw std::invalid_argument("unknown knob --" + arg + " (see --help)");
      values_[arg] = value;
    }
  }

  const std::string& text(const std::string& name) const { return values_.at(name); }
  long long integer(const std::string& name) const { return parse_size(text(name)); }
  /// A comma-separated list of sizes; "2^k" is accepted for powers of two.
  std::vector<std::int64_t> sizes(const std::string& name) const {
    std::vector<std::int64_t> out;
    for (const std::string& item : words(name)) out.push_back(parse_size(item));
    return out;
  }
  /// A comma-separated list of words.
  std::vector<std::string> words(const std::string& name) const {
    std::vector<std::string> out;
    std::string item;
    for (const char c : text(name) + ",") {
      if (c == ',') {
        if (!item.empty()) out.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    return out;
  }
  /// The knobs as given, for the header of the printout (so that a table names its command).
  std::string summary() const {
    std::string s = program_;
    for (const auto& [name, value] : values_) s += " --" + name + "=" + value;
    return s;
  }

 private:
  static long long parse_size(const std::string& s) {
    if (s.rfind("2^", 0) == 0) return 1LL << std::stoi(s.substr(2));
    std::size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used != s.size()) throw std::invalid_argument("not a number: " + s);
    return v;
  }
  void print_help() const {
    std::printf("%s: knobs (default in brackets)\n", program_.c_str());
    for (const auto& [name, spec] : help_) {
      const auto bar = spec.find('|');
      std::printf("  --%-14s [%s] %s\n", name.c_str(), spec.substr(0, bar).c_str(),
                  bar == std::string::npos ? "" : spec.substr(bar + 1).c_str());
    }
  }

  std::string program_;
  std::map<std::string, std::string> values_;
  std::vector<std::pair<std::string, std::string>> help_;
};

/// A uniform double in [0, 1) for element i of the stream `seed` (splitmix64 of seed and index):
/// test data for arrays of 2^28 elements and more in a fraction of a second, the same on every
/// run.
inline double uniform01(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1p-53;
}

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int batch = 1;
};

/// Milliseconds per call of `work` (queues one call on `stream`): `warmup` untimed calls, then
/// `repeat` samples, each CUDA events around `batch` back-to-back calls divided by `batch`. The
/// batch is chosen so that a sample lasts about 0.5 ms (at most 64 calls).
template <class Work>
Timing time_calls(cudaStream_t stream, int warmup, int repeat, Work&& work) {
  cudaEvent_t start, stop;
  GPUKIT_TUNING_CHECK(cudaEventCreate(&start));
  GPUKIT_TUNING_CHECK(cudaEventCreate(&stop));
  auto sample = [&](int calls) {
    GPUKIT_TUNING_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < calls; ++i) work();
    GPUKIT_TUNING_CHECK(cudaEventRecord(stop, stream));
    GPUKIT_TUNING_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    GPUKIT_TUNING_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return double(ms) / calls;
  };
  for (int i = 0; i < warmup; ++i) work();
  GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
  Timing t;
  const double one = sample(1);
  t.batch = one >= 0.5 ? 1 : std::clamp(int(std::ceil(0.5 / std::max(one, 1e-4))), 1, 64);
  std::vector<double> samples;
  for (int i = 0; i < std::max(repeat, 1); ++i) samples.push_back(sample(t.batch));
  GPUKIT_TUNING_CHECK(cudaEventDestroy(start));
  GPUKIT_TUNING_CHECK(cudaEventDestroy(stop));
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  t.median_ms = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  return t;
}

/// The device-to-device copy of `bytes` (read once, written once) on `stream`: the limit every
/// streaming driver reports its rows against.
inline Timing time_copy(cudaStream_t stream, std::size_t bytes, int warmup, int repeat) {
  void* a = nullptr;
  void* b = nullptr;
  GPUKIT_TUNING_CHECK(cudaMalloc(&a, bytes));
  GPUKIT_TUNING_CHECK(cudaMalloc(&b, bytes));
  GPUKIT_TUNING_CHECK(cudaMemsetAsync(a, 0, bytes, stream));
  const Timing t = time_calls(stream, warmup, repeat, [&] {
    GPUKIT_TUNING_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  GPUKIT_TUNING_CHECK(cudaFree(a));
  GPUKIT_TUNING_CHECK(cudaFree(b));
  return t;
}

/// The device's name, clocks and SM count for the printout's first lines.
inline void print_device(const std::string& command) {
  int device = 0;
  GPUKIT_TUNING_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GPUKIT_TUNING_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("# %s\n# device %d: %s, %d SMs, sm_%d%d\n", command.c_str(), device, prop.name,
              prop.multiProcessorCount, prop.major, prop.minor);
}

/// Runs a driver's main body and turns an exception into one line on stderr and exit code 1.
template <class Body>
int run_driver(Body&& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

/// Calls run(Real{}) for the --precision knob's value, float or double.
template <class Run>
void for_precision(const std::string& precision, Run&& run) {
  if (precision == "float") {
    run(float{});
  } else if (precision == "double") {
    run(double{});
  } else {
    throw std::invalid_argument("--precision is float or double");
  }
}

}  // namespace gpukit::tuning
