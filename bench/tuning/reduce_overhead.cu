// Reduce launch overhead: what one call of the deterministic reduce engine costs beyond its
// bytes, against CUB and a bare streaming kernel of the engine's shape (loads and adds only), in
// three clocks: back-to-back launches on a stream (CUDA events), calls captured in a CUDA graph
// (the launch path's host cost removed), and the host's time to enqueue one call. Every
// configuration's result is checked against the library's CPU reduce before it is timed.
// The graph, enqueue and bare-kernel figures of docs/journal/reduce-notebook.md were taken
// with a development program of this kind.
//
//   gpukit_tune_reduce --sizes=2^20,2^24,2^30 --type=int32 --modes=stream,graph,enqueue

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "tuning_common.hpp"

namespace {

namespace prim = gpukit::primitives;
using gpukit::tuning::Timing;

/// The streaming floor: a grid-stride loop of 16-byte read-only loads that adds int32 lanes, one
/// 64-bit atomic a thread at the end (the sum is exact, so it can be checked).
__global__ void bare_sum_kernel(const int* data, std::int64_t count, unsigned long long* result) {
  const std::int64_t vectors = count / 4;
  const auto* v = reinterpret_cast<const int4*>(data);
  long long sum = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += stride) {
    const int4 x = __ldg(v + i);
    sum += std::int64_t(x.x) + x.y + x.z + x.w;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::int64_t i = vectors * 4; i < count; ++i) sum += data[i];
  }
  atomicAdd(result, static_cast<unsigned long long>(sum));
}

template <class T>
struct Bench {
  using Result = prim::reduce_result_t<T>;
  std::int64_t n = 0;
  const T* data = nullptr;
  Result* result = nullptr;  // device
  cudaStream_t stream = nullptr;
  prim::ReduceWorkspace workspace;
  prim::ReduceOptions options;
  void* cub_storage = nullptr;
  std::size_t cub_bytes = 0;
  int bare_blocks = 0, bare_threads = 256;

  void engine() {
    prim::reduce_on_device_async<T>(data, n, prim::ReduceOp::sum, result, workspace, stream,
                                    options);
  }
  void cub() {
    GPUKIT_TUNING_CHECK(cub::DeviceReduce::Sum(cub_storage, cub_bytes, data, result, n, stream));
  }
  // Adds to *result, which nobody reads while it is timed (the check starts it from a known
  // value), so that no memset is timed with the kernel.
  void bare() {
    bare_sum_kernel<<<bare_blocks, bare_threads, 0, stream>>>(
        reinterpret_cast<const int*>(data), n, reinterpret_cast<unsigned long long*>(result));
    GPUKIT_TUNING_CHECK(cudaGetLastError());
  }
};

/// Host milliseconds to enqueue one call (median of `repeat` batches of 64 calls, each batch
/// then drained, so the launch queue never fills).
Timing time_enqueue(cudaStream_t stream, int warmup, int repeat,
                    const std::function<void()>& work) {
  for (int i = 0; i < warmup; ++i) work();
  GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> samples;
  constexpr int kCalls = 64;
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) work();
    const auto stop = std::chrono::steady_clock::now();
    GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
    samples.push_back(std::chrono::duration<double, std::milli>(stop - start).count() / kCalls);
  }
  std::sort(samples.begin(), samples.end());
  Timing t;
  const std::size_t m = samples.size();
  t.median_ms = m % 2 ? samples[m / 2] : 0.5 * (samples[m / 2 - 1] + samples[m / 2]);
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  t.batch = kCalls;
  return t;
}

/// Milliseconds per call of `work` captured `calls` times into one CUDA graph.
Timing time_graph(cudaStream_t stream, int warmup, int repeat, int calls,
                  const std::function<void()>& work) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GPUKIT_TUNING_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) work();
  GPUKIT_TUNING_CHECK(cudaStreamEndCapture(stream, &graph));
  GPUKIT_TUNING_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  Timing t = gpukit::tuning::time_calls(
      stream, warmup, repeat, [&] { GPUKIT_TUNING_CHECK(cudaGraphLaunch(exec, stream)); });
  t.median_ms /= calls;
  t.min_ms /= calls;
  t.max_ms /= calls;
  t.batch *= calls;
  GPUKIT_TUNING_CHECK(cudaGraphExecDestroy(exec));
  GPUKIT_TUNING_CHECK(cudaGraphDestroy(graph));
  return t;
}

template <class T>
void run(const gpukit::tuning::Knobs& knobs) {
  using Result = prim::reduce_result_t<T>;
  const int warmup = int(knobs.integer("warmup"));
  const int repeat = int(knobs.integer("repeat"));
  const int graph_calls = int(knobs.integer("graph-calls"));
  const std::vector<std::string> configs = knobs.words("configs");
  const std::vector<std::string> modes = knobs.words("modes");
  for (const std::string& c : configs) {
    if (c != "engine" && c != "cub" && c != "bare")
      throw std::invalid_argument("unknown config " + c + " (engine, cub, bare)");
  }
  for (const std::string& m : modes) {
    if (m != "stream" && m != "graph" && m != "enqueue")
      throw std::invalid_argument("unknown mode " + m + " (stream, graph, enqueue)");
  }
  int sms = 0;
  GPUKIT_TUNING_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  cudaStream_t stream;
  GPUKIT_TUNING_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("%-8s %-8s %12s %7s %24s %9s  %s\n", "config", "mode", "n", "calls",
              "median us (min-max)", "GB/s", "check");
  for (const std::int64_t n : knobs.sizes("sizes")) {
    if (n <= 0) throw std::invalid_argument("sizes must be positive");
    std::vector<T> host(static_cast<std::size_t>(n));
    const auto seed = static_cast<std::uint64_t>(knobs.integer("seed"));
    for (std::size_t i = 0; i < host.size(); ++i) {
      const double u = gpukit::tuning::uniform01(seed, i);
      if constexpr (std::is_integral_v<T>) {
        host[i] = T(int(u * 2001) - 1000);  // in [-1000, 1000]
      } else {
        host[i] = T(2 * u - 1);
      }
    }
    const Result reference =
        prim::reduce<T>(gpukit::Context::cpu(), std::span<const T>(host), prim::ReduceOp::sum);
    double sum_abs = 0;
    for (const T x : host) sum_abs += std::abs(double(x));

    Bench<T> b;
    b.n = n;
    b.stream = stream;
    b.options.block_threads = int(knobs.integer("block-threads"));
    b.options.grid_blocks = int(knobs.integer("grid-blocks"));
    b.bare_threads = int(knobs.integer("bare-threads"));
    b.bare_blocks = int(knobs.integer("bare-blocks"));
    if (b.bare_blocks <= 0) b.bare_blocks = 4 * sms;  // 528 on a 132-SM H100/H200
    T* d_data = nullptr;
    Result* d_result = nullptr;
    GPUKIT_TUNING_CHECK(cudaMalloc(&d_data, host.size() * sizeof(T)));
    GPUKIT_TUNING_CHECK(cudaMalloc(&d_result, sizeof(Result)));
    GPUKIT_TUNING_CHECK(
        cudaMemcpy(d_data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    b.data = d_data;
    b.result = d_result;
    GPUKIT_TUNING_CHECK(cub::DeviceReduce::Sum(nullptr, b.cub_bytes, b.data, b.result, n, stream));
    GPUKIT_TUNING_CHECK(cudaMalloc(&b.cub_storage, b.cub_bytes));

    for (const std::string& c : configs) {
      if (c == "bare" && !std::is_same_v<T, std::int32_t>) continue;  // an int32 kernel
      std::function<void()> work = c == "engine" ? std::function<void()>([&] { b.engine(); })
                                   : c == "cub"  ? std::function<void()>([&] { b.cub(); })
                                                 : std::function<void()>([&] { b.bare(); });
      // Checked first, from a poisoned result (0xFF bytes: -1 as an int64, which the bare kernel
      // adds its sum to): the engine must give the CPU's bits; CUB and the bare kernel add in
      // another order (exact for integers, within n eps sum|x| for floats).
      GPUKIT_TUNING_CHECK(cudaMemsetAsync(d_result, 0xFF, sizeof(Result), stream));
      work();
      GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
      Result got{};
      GPUKIT_TUNING_CHECK(cudaMemcpy(&got, d_result, sizeof(Result), cudaMemcpyDeviceToHost));
      bool ok;
      if constexpr (std::is_integral_v<T>) {
        ok = c == "bare" ? got == reference - 1 : got == reference;
      } else {
        const double bound =
            c == "engine" ? 0.0 : double(n) * std::numeric_limits<T>::epsilon() * sum_abs;
        ok = std::abs(double(got) - double(reference)) <= bound;  // false for NaN
      }
      if (!ok) {
        throw std::runtime_error(c + " at n = " + std::to_string(n) + ": sum " +
                                 std::to_string(double(got)) + ", the CPU reduce gives " +
                                 std::to_string(double(reference)));
      }
      for (const std::string& m : modes) {
        Timing t;
        if (m == "stream") t = gpukit::tuning::time_calls(stream, warmup, repeat, work);
        if (m == "graph") t = time_graph(stream, warmup, repeat, graph_calls, work);
        if (m == "enqueue") t = time_enqueue(stream, warmup, repeat, work);
        char range[64];
        std::snprintf(range, sizeof range, "%.2f (%.2f-%.2f)", 1e3 * t.median_ms, 1e3 * t.min_ms,
                      1e3 * t.max_ms);
        const double gbps =
            m == "enqueue" ? 0 : double(n) * sizeof(T) / (t.median_ms * 1e6);  // read once
        std::printf("%-8s %-8s %12lld %7d %24s %9.0f  %s\n", c.c_str(), m.c_str(),
                    static_cast<long long>(n), t.batch, range, gbps, "matches the CPU reduce");
      }
    }
    GPUKIT_TUNING_CHECK(cudaFree(b.cub_storage));
    GPUKIT_TUNING_CHECK(cudaFree(d_data));
    GPUKIT_TUNING_CHECK(cudaFree(d_result));
  }
  GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_reduce",
        {{"sizes", "2^20,2^24,2^28|elements (comma list; 2^k allowed)"},
         {"type", "int32|int32 or float"},
         {"configs", "engine,cub,bare|engine (deterministic reduce), cub, bare (int32 only)"},
         {"modes",
          "stream,graph,enqueue|stream: events around back-to-back calls; graph: calls "
          "in one CUDA graph; enqueue: host time to queue a call"},
         {"graph-calls", "100|calls captured in the graph"},
         {"block-threads", "0|the engine's threads a block (ReduceOptions; 0: tuned default)"},
         {"grid-blocks", "0|the engine's persistent blocks (ReduceOptions; 0: tuned default)"},
         {"bare-blocks", "0|the bare kernel's blocks (0: 4 an SM)"},
         {"bare-threads", "256|the bare kernel's threads a block"},
         {"warmup", "3|untimed calls before the samples"},
         {"repeat", "21|samples (the median is reported)"},
         {"seed", "1|seed of the data"}});
    gpukit::tuning::print_device(knobs.summary());
    if (knobs.text("type") == "int32") {
      run<std::int32_t>(knobs);
    } else if (knobs.text("type") == "float") {
      run<float>(knobs);
    } else {
      throw std::invalid_argument("--type is int32 or float");
    }
  });
}
