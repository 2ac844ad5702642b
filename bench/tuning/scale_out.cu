// Scale-out across the GPUs of one host (docs/scale-out.md, issues 22 and 31's speed bars): each
// workload on 1 GPU through the library's one-device path, then on N GPUs through the library's
// scale-out call or shape (gpukit/scale_out: a worker lane a GPU, kept between calls), with the
// N-GPU result checked bit for bit against the 1-GPU one before its time is reported.
//
//   european  Monte Carlo European calls, float, `--european-options` x `--european-paths`
//             (default 4 x 2^34 = 2^36 paths), scale_out::price_monte_carlo_book (fixed blocks,
//             merged on the host in block order): strong-scaling efficiency T1 / (N TN), bar 0.97
//   barrier   down-and-out calls, 252 discrete dates, float, 4 x 2^30 = 2^32 paths: the same,
//             bar 0.95
//   bs        a Black-Scholes book of 2^31 float options, host to host (pageable host arrays,
//             each GPU's pinned pipeline; scale_out's rows, each worker lane its rows), against
//             what the host can feed: the smaller of N times one GPU's throughput and the host
//             feed, the same threads copying the same bytes between the pageable arrays and
//             pinned buffers with no GPU (measured in the same run), bar 0.85
//   reduce    a float sum of 2^34 elements already on the GPUs (2^34 / N on each): aggregate
//             bandwidth against the sum of each GPU's own (reduce_on_device on its share, timed
//             alone), bar 0.90; each GPU's partials also folded alone against reduce_on_device
//   poisson   the distributed Poisson solver over slabs (`--poisson-*` knobs; also under mpirun,
//             a GPU a rank) against the single-GPU solver, each configuration checked against a
//             manufactured solution first, with its all-to-all timed alone beside it
//             (scale_out_poisson.cpp)
//
// Times are host wall clock around the whole call (host to host for mc and bs, launch to the
// host's result for reduce, whole solves for poisson): median of --repeat runs after untimed ones.
//
//   gpukit_tune_scale --gpus=1,2,all --cases=european,barrier,bs,reduce,poisson
//   gpukit_tune_scale --gpus=1,2 --cases=bs --bs-chunk-options=2^20
//   mpirun -np 2 gpukit_tune_scale --cases=poisson --poisson-shape=512x512x512

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel_copy.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/partition.hpp"
#include "gpukit/distributed/workers.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_partials.hpp"
#include "gpukit/scale_out/job.hpp"
#include "gpukit/scale_out/monte_carlo.hpp"
#include "gpukit/scale_out/rows.hpp"
#include "scale_out_poisson.hpp"
#include "tuning_common.hpp"

namespace {

namespace fin = gpukit::finance;
namespace prim = gpukit::primitives;
namespace distributed = gpukit::distributed;
using gpukit::Context;

struct Row {
  std::string workload;
  int gpus = 1;
  double seconds = 0;
  double rate = 0;  // work per second, in `unit`
  std::string unit;
  double versus = 0;  // the bar's ratio: efficiency, or throughput / N x one GPU's, ...
  std::string versus_name;
  double bar = 0;  // 0: no bar (report only)
  bool same_bits = true;
};

std::vector<Row> rows;

int host_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// f(i) for i in [0, n) on every host thread (this file is CUDA source: no OpenMP here).
template <class F>
void parallel_for(std::int64_t n, const F& f) {
  const int t = host_threads();
  std::vector<std::thread> threads;
  for (int k = 0; k < t; ++k) {
    threads.emplace_back([&, k] {
      for (std::int64_t i = n * k / t; i < n * (k + 1) / t; ++i) f(i);
    });
  }
  for (std::thread& th : threads) th.join();
}

template <class Work>
double median_seconds(int repeat, Work&& work) {
  work();  // untimed: contexts, allocations, caches
  std::vector<double> samples;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    samples.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// --- Monte Carlo -------------------------------------------------------------------------------

struct McBook {
  std::vector<std::uint8_t> is_put;
  std::vector<double> spot, strike, maturity, barrier;
  std::vector<fin::BarrierType> type;
  std::vector<std::uint32_t> steps;
  fin::MonteCarloBookView view() const {
    fin::MonteCarloBookView v;
    v.count = static_cast<std::int64_t>(spot.size());
    v.is_put = is_put.data(), v.spot = spot.data(), v.strike = strike.data();
    v.maturity = maturity.data();
    v.rate = {nullptr, 0.05}, v.volatility = {nullptr, 0.25}, v.dividend = {nullptr, 0.02};
    v.barrier_type = type.data(), v.barrier = barrier.data(), v.steps = steps.data();
    return v;
  }
};

McBook mc_book(int options, bool barrier) {
  McBook b;
  for (int i = 0; i < options; ++i) {
    b.is_put.push_back(0), b.spot.push_back(100), b.strike.push_back(95 + 5.0 * i);
    b.maturity.push_back(1);
    b.type.push_back(barrier ? fin::BarrierType::down_out : fin::BarrierType::none);
    b.barrier.push_back(barrier ? 90 : 0);
    b.steps.push_back(barrier ? 252 : 1);
  }
  return b;
}

// The job of GPUs 0 .. gpus - 1 in this process, as `--device cuda:0,1,...` makes it (each worker
// the host's share of the cores).
gpukit::scale_out::Job gpus_job(int gpus) {
  std::string device = "cuda:0";
  for (int g = 1; g < gpus; ++g) device.append(",").append(std::to_string(g));
  return gpukit::scale_out::join_job(device, 0);
}

void monte_carlo(const std::string& name, bool barrier, int options_count, std::int64_t paths,
                 double bar, const std::vector<int>& gpu_counts, int repeat) {
  const McBook book = mc_book(options_count, barrier);
  fin::MonteCarloOptions options;
  options.paths = paths;
  options.precision = fin::Precision::float32;
  const double work = double(paths) * options_count * (barrier ? 252.0 : 1.0);
  const std::string unit = barrier ? "G path-steps/s" : "G paths/s";
  fin::MonteCarloBookResult one;
  const double t1 = median_seconds(
      repeat, [&] { one = fin::price_monte_carlo_book(Context::cuda(0), book.view(), options); });
  rows.push_back(
      {name + " (one-device path)", 1, t1, work / t1 * 1e-9, unit, 1.0, "efficiency", 0.0, true});
  for (const int n : gpu_counts) {
    // The library's scale-out call (gpukit mc --device cuda:0,1,... and Python's device lists
    // make it): fixed blocks on a worker lane a GPU, merged on the host in block order. On one
    // GPU it is the one-device call.
    const gpukit::scale_out::Job job = gpus_job(n);
    fin::MonteCarloBookResult many;
    const double tn = median_seconds(repeat, [&] {
      many = gpukit::scale_out::price_monte_carlo_book(job, book.view(), options);
    });
    const bool same = same_bits(many.price, one.price) && same_bits(many.std_error, one.std_error);
    rows.push_back({name + (n == 1 ? " (scale_out, one worker)" : " (scale_out, blocks)"), n, tn,
                    work / tn * 1e-9, unit, t1 / (n * tn), "efficiency", n > 1 ? bar : 0.0, same});
    std::printf("# %s on %d GPU%s: %.4f s, price[0] %.9g +- %.3g%s\n", name.c_str(), n,
                n == 1 ? "" : "s", tn, many.price[0], many.std_error[0],
                same ? "" : "  DIFFERENT BITS FROM ONE GPU");
  }
}

// --- Black-Scholes ---------------------------------------------------------------------------

// What the host can feed: the same threads (each GPU's worker lane and its OpenMP team) copy the
// same bytes between the caller's pageable arrays and pinned buffers of their own (two slots of
// a chunk, as the pipeline stages them: the inputs in, the price out) through the same copy
// routine, with no GPU involved. Options a second over the book.
struct HostFeed {
  double seconds = 0;
  double options_per_second = 0;
};

template <class CopyChunk>
HostFeed host_feed(const gpukit::scale_out::Job& job, std::int64_t n, std::int64_t chunk,
                   int repeat, const CopyChunk& copy_chunk) {
  const gpukit::scale_out::BlockPlan plan = gpukit::scale_out::plan_rows(job, n);
  const std::size_t workers = job.workers.contexts.size();
  // Per worker: two slots of 3 floats and a side byte in, a float out, for `chunk` options.
  std::vector<gpukit::cuda::PinnedBuffer<unsigned char>> pinned;
  for (std::size_t w = 0; w < workers; ++w) {
    pinned.emplace_back(static_cast<std::size_t>(2 * chunk * (4 * sizeof(float) + 1)));
  }
  const double t = median_seconds(repeat, [&] {
    plan.run([&](int w, const Context& context, distributed::BlockRange range,
                 const distributed::ReportProgress&) {
      unsigned char* slots = pinned[static_cast<std::size_t>(w)].data();
      for (std::int64_t at = range.first, k = 0; at < range.end(); at += chunk, ++k) {
        const std::int64_t count = std::min(chunk, range.end() - at);
        copy_chunk(context, at, count, slots + (k % 2) * chunk * (4 * sizeof(float) + 1), chunk);
      }
    });
  });
  return {t, double(n) / t};
}

void black_scholes(std::int64_t n, std::int64_t chunk_options, const std::vector<int>& gpu_counts,
                   int repeat) {
  std::vector<float> spot(static_cast<std::size_t>(n)), strike(spot.size()), maturity(spot.size()),
      price(spot.size());
  std::vector<std::uint8_t> is_put(spot.size());
  parallel_for(n, [&](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    spot[k] = float(5 + 25 * gpukit::tuning::uniform01(1, std::uint64_t(i)));
    strike[k] = float(1 + 99 * gpukit::tuning::uniform01(2, std::uint64_t(i)));
    maturity[k] = float(0.25 + 9.75 * gpukit::tuning::uniform01(3, std::uint64_t(i)));
    is_put[k] = static_cast<std::uint8_t>(i % 2);
    price[k] = -1.0f;  // every page touched before any timing
  });
  fin::BlackScholesOptions options;
  options.chunk_options = chunk_options;
  auto price_range = [&](const Context& context, std::int64_t first, std::int64_t count) {
    const auto at = static_cast<std::size_t>(first);
    const fin::BlackScholesInputs<float> in{count,
                                            spot.data() + at,
                                            strike.data() + at,
                                            maturity.data() + at,
                                            {nullptr, 0.02f},
                                            {nullptr, 0.30f},
                                            {nullptr, 0.0f},
                                            {is_put.data() + at, 0}};
    const fin::BlackScholesOutputs<float> out{price.data() + at};
    fin::price_black_scholes<float>(context, in, out, options);
  };
  // The host's copies of one chunk, as the pipeline makes them (its default chunk when 0).
  const std::int64_t chunk = chunk_options > 0 ? chunk_options : std::int64_t{1} << 22;
  auto copy_chunk = [&](const Context& context, std::int64_t first, std::int64_t count,
                        unsigned char* slot, std::int64_t slot_options) {
    const auto at = static_cast<std::size_t>(first);
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
    auto* real = reinterpret_cast<float*>(slot);
    const gpukit::detail::CopyRange copies[] = {
        {real, spot.data() + at, bytes},
        {real + slot_options, strike.data() + at, bytes},
        {real + 2 * slot_options, maturity.data() + at, bytes},
        {slot + 3 * slot_options * sizeof(float), is_put.data() + at,
         static_cast<std::size_t>(count)},
        {price.data() + at, slot + 3 * slot_options * sizeof(float) + slot_options, bytes}};
    gpukit::detail::parallel_copy_ranges(copies, context.effective_cpu_threads());
  };
  // 3 inputs and a side (a byte) read, the price written
  const double bytes = double(n) * (4 * sizeof(float) + 1);
  const double t1 = median_seconds(repeat, [&] { price_range(Context::cuda(0), 0, n); });
  const std::vector<float> price_one = price;
  rows.push_back({"Black-Scholes 2^31 float, host to host (one-device path)", 1, t1,
                  double(n) / t1 * 1e-9, "G options/s", 1.0, "vs N x 1 GPU", 0.0, true});
  std::printf("# bs on 1 GPU: %.3f s, %.1f GB/s host to host, %lld options a chunk\n", t1,
              bytes / t1 * 1e-9, static_cast<long long>(chunk));
  // What the bar divides by, the most seen so far in this run (the counts come in increasing
  // order): one GPU's throughput (the one-device path, or the rows on one GPU), and the host feed.
  double one_gpu = double(n) / t1, most_feed = 0;
  for (const int g : gpu_counts) {
    const gpukit::scale_out::Job job = gpus_job(g);
    const HostFeed feed = host_feed(job, n, chunk, repeat, copy_chunk);
    most_feed = std::max(most_feed, feed.options_per_second);
    rows.push_back({"host feed: the staged bytes copied pageable <-> pinned, no GPU", g,
                    feed.seconds, feed.options_per_second * 1e-9, "G options/s",
                    feed.options_per_second / (g * one_gpu), "of N x 1 GPU", 0.0, true});
    std::printf("# host feed with %d worker%s: %.3f s, %.1f GB/s of staged bytes\n", g,
                g == 1 ? "" : "s", feed.seconds, bytes / feed.seconds * 1e-9);
    // The library's rows style (gpukit bs --device cuda:0,1,... spreads its book so): each
    // worker lane prices its rows through its GPU's own pinned pipeline.
    const gpukit::scale_out::BlockPlan plan = gpukit::scale_out::plan_rows(job, n);
    std::fill(price.begin(), price.end(), -1.0f);
    const double tn = median_seconds(repeat, [&] {
      plan.run([&](int, const Context& context, distributed::BlockRange r,
                   const distributed::ReportProgress&) { price_range(context, r.first, r.count); });
    });
    const bool same =
        std::memcmp(price.data(), price_one.data(), price.size() * sizeof(float)) == 0;
    const double rate = double(n) / tn;
    if (g == 1) one_gpu = std::max(one_gpu, rate);
    // What the host can feed: the smaller of g single GPUs and the host's own copies.
    const double feedable = std::min(g * one_gpu, most_feed);
    rows.push_back({"Black-Scholes 2^31 float, host to host (rows)", g, tn, rate * 1e-9,
                    "G options/s", rate / feedable, "of min(N x 1 GPU, host feed)",
                    g > 1 ? 0.85 : 0.0, same});
    std::printf(
        "# bs on %d GPU%s: %.3f s, %.1f GB/s host to host, %.3f of N x 1 GPU, %.3f of the host "
        "feed (%.2f G options/s)%s\n",
        g, g == 1 ? "" : "s", tn, bytes / tn * 1e-9, rate / (g * one_gpu), rate / most_feed,
        most_feed * 1e-9, same ? "" : "  DIFFERENT BITS FROM ONE GPU");
  }
}

// --- reduction ---------------------------------------------------------------------------------

__global__ void fill_kernel(float* x, std::int64_t n, std::uint64_t offset) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    // splitmix64 of the element's global index: the same array whatever the split.
    std::uint64_t z = (offset + std::uint64_t(i)) * 0x9E3779B97F4A7C15ull + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = float(double(z >> 11) * 0x1p-53) - 0.5f;
  }
}

void reduce(std::int64_t total, const std::vector<int>& gpu_counts, int repeat) {
  const prim::ReduceSplit split = prim::reduce_split<float>(total, prim::ReduceOp::sum);
  for (const int g : gpu_counts) {
    const std::vector<distributed::BlockRange> ranges = distributed::split_evenly(split.blocks, g);
    std::vector<gpukit::cuda::DeviceBuffer<float>> data;
    std::vector<std::unique_ptr<gpukit::cuda::Stream>> streams;
    std::vector<prim::ReduceWorkspace> workspaces(static_cast<std::size_t>(g));
    std::vector<std::int64_t> counts;
    try {
      for (int w = 0; w < g; ++w) {
        const distributed::BlockRange r = ranges[static_cast<std::size_t>(w)];
        const std::int64_t first = r.first * split.block_elements;
        const std::int64_t count = std::min(total, r.end() * split.block_elements) - first;
        gpukit::cuda::set_device(w);
        data.emplace_back(static_cast<std::size_t>(count));
        streams.push_back(std::make_unique<gpukit::cuda::Stream>());
        fill_kernel<<<4096, 256, 0, streams.back()->handle()>>>(data.back().data(), count,
                                                                std::uint64_t(first));
        GPUKIT_TUNING_CHECK(cudaGetLastError());
        streams.back()->synchronize();
        counts.push_back(count);
      }
    } catch (const gpukit::OutOfMemory& e) {
      std::printf("# reduce on %d GPU%s skipped: %s\n", g, g == 1 ? "" : "s", e.what());
      continue;
    }
    // Each GPU alone on its share, through the one-device engine.
    double summed_bandwidth = 0;
    bool same = true;
    for (int w = 0; w < g; ++w) {
      const auto k = static_cast<std::size_t>(w);
      gpukit::cuda::set_device(w);
      float alone = 0;
      const double t = median_seconds(repeat, [&] {
        alone = prim::reduce_on_device<float>(data[k].data(), counts[k], prim::ReduceOp::sum,
                                              workspaces[k], streams[k]->handle());
      });
      summed_bandwidth += double(counts[k]) * sizeof(float) / t;
      // Its share's partials folded alone: the bits of the engine's one launch.
      const prim::ReduceSplit own =
          prim::reduce_split<float>(counts[k], prim::ReduceOp::sum, {}, split.level);
      std::vector<std::byte> partials(static_cast<std::size_t>(own.blocks) * own.partial_bytes);
      prim::reduce_partials_on_device<float>(data[k].data(), counts[k], own, 0, prim::ReduceOp::sum,
                                             {}, partials, workspaces[k], streams[k]->handle());
      const float folded = prim::reduce_from_partials<float>(partials, own, prim::ReduceOp::sum);
      same = same && std::memcmp(&folded, &alone, sizeof folded) == 0;
    }
    std::vector<std::byte> partials(static_cast<std::size_t>(split.blocks) * split.partial_bytes);
    float result = 0;
    const double t = median_seconds(repeat, [&] {
      distributed::run_workers(g, [&](int w, const distributed::ReportProgress&) {
        const auto k = static_cast<std::size_t>(w);
        gpukit::cuda::set_device(w);
        const distributed::BlockRange r = ranges[k];
        prim::reduce_partials_on_device<float>(
            data[k].data(), counts[k], split, r.first, prim::ReduceOp::sum, {},
            std::span<std::byte>(partials).subspan(
                static_cast<std::size_t>(r.first) * split.partial_bytes,
                static_cast<std::size_t>(r.count) * split.partial_bytes),
            workspaces[k], streams[k]->handle());
      });
      result = prim::reduce_from_partials<float>(partials, split, prim::ReduceOp::sum);
    });
    const double aggregate = double(total) * sizeof(float) / t;
    rows.push_back({"reduce 2^34 float on the GPUs (partials)", g, t, aggregate * 1e-9, "GB/s",
                    aggregate / summed_bandwidth, "vs summed per-GPU", g > 1 ? 0.90 : 0.0, same});
    std::printf(
        "# reduce on %d GPU%s: %.4f s, %.1f GB/s (each alone: %.1f GB/s summed), sum %.9g"
        "%s\n",
        g, g == 1 ? "" : "s", t, aggregate * 1e-9, summed_bandwidth * 1e-9, result,
        same ? "" : "  A SHARE'S FOLD DIFFERS FROM ITS ONE-LAUNCH REDUCTION");
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun the ranks form one job (the poisson case runs across them).
  const distributed::Environment environment(argc, argv);
  return gpukit::tuning::run_driver([&] {
    gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_scale",
        {{"gpus", "1,2,all|GPU counts to measure (all: every GPU)"},
         {"cases", "european,barrier,bs,reduce|workloads (and poisson)"},
         {"european-options", "4|European rows"},
         {"european-paths", "2^34|paths a European row"},
         {"barrier-options", "4|barrier rows (252 dates)"},
         {"barrier-paths", "2^30|paths a barrier row"},
         {"bs-options", "2^31|options in the Black-Scholes book"},
         {"bs-chunk-options", "0|options a chunk of the pinned pipeline (0: the library's)"},
         {"reduce-elements", "2^34|floats in the reduction"},
         {"repeat", "3|timed runs (median) after one untimed"},
         {"poisson-shape", "1024x1024x1024|grid, axes in .npy order"},
         {"poisson-precision", "float|float or double"},
         {"poisson-engines", "cufft-nccl,cufft-copy|distributed engines at each count"},
         {"poisson-warmup", "1|untimed solves first"},
         {"poisson-host", "1|also time host data in and out (1) or not"},
         {"poisson-host-repeat", "3|timed host-data solves (median)"},
         {"poisson-compare",
          "1|keep the single-GPU solution to compare with (its size in "
          "host memory)"}});
    if (!environment.problem().empty()) throw std::runtime_error(environment.problem());
    distributed::Communicator& comm = distributed::Communicator::world();
    const int available = gpukit::cuda_device_count();
    if (available == 0) throw std::runtime_error("no CUDA device");
    std::set<int> counts;
    for (const std::string& word : knobs.words("gpus")) {
      const int n = word == "all" ? available : std::stoi(word);
      if (n >= 1 && n <= available) counts.insert(n);
    }
    const std::vector<int> gpus(counts.begin(), counts.end());
    const int repeat = static_cast<int>(knobs.integer("repeat"));
    if (comm.distributed()) {
      // Across the ranks of mpirun: only the grid case spreads over ranks.
      for (const std::string& c : knobs.words("cases")) {
        if (c != "poisson") throw std::invalid_argument("under mpirun only --cases=poisson runs");
      }
      if (comm.is_root()) std::printf("# %s\n", knobs.summary().c_str());
      run_poisson_case(knobs, gpus, repeat);
      return;
    }
    std::printf("# %s\n", knobs.summary().c_str());
    for (int d = 0; d < available; ++d) {
      const gpukit::DeviceInfo info = gpukit::query_device(d);
      std::printf("# cuda:%d %s (%s), %d SMs\n", d, info.name.c_str(), info.pci_bus_id.c_str(),
                  info.sm_count);
    }
    std::printf("# host: %d hardware threads\n", host_threads());
    std::fflush(stdout);
    for (const std::string& c : knobs.words("cases")) {
      if (c == "european") {
        monte_carlo("MC European float", false, static_cast<int>(knobs.integer("european-options")),
                    knobs.integer("european-paths"), 0.97, gpus, repeat);
      } else if (c == "barrier") {
        monte_carlo("MC barrier 252 dates float", true,
                    static_cast<int>(knobs.integer("barrier-options")),
                    knobs.integer("barrier-paths"), 0.95, gpus, repeat);
      } else if (c == "bs") {
        black_scholes(knobs.integer("bs-options"), knobs.integer("bs-chunk-options"), gpus, repeat);
      } else if (c == "reduce") {
        reduce(knobs.integer("reduce-elements"), gpus, repeat);
      } else if (c == "poisson") {
        run_poisson_case(knobs, gpus, repeat);
      } else {
        throw std::invalid_argument("unknown case " + c);
      }
      std::fflush(stdout);
    }
    if (rows.empty()) return;  // the poisson case prints its own table
    std::printf("\n| workload | GPUs | time (s) | rate | ratio | bar | same bits as 1 GPU |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    bool all_ok = true;
    for (const Row& r : rows) {
      const bool meets = r.bar == 0 || r.versus >= r.bar;
      all_ok = all_ok && meets && r.same_bits;
      std::printf("| %s | %d | %.4f | %.1f %s | %.3f %s | %s | %s |\n", r.workload.c_str(), r.gpus,
                  r.seconds, r.rate, r.unit.c_str(), r.versus, r.versus_name.c_str(),
                  r.bar == 0 ? "-"
                             : (std::string(meets ? "met" : "MISSED") +
                                " (>= " + std::to_string(r.bar).substr(0, 4) + ")")
                                   .c_str(),
                  r.same_bits ? "yes" : "NO");
    }
    if (!all_ok) throw std::runtime_error("a bar was missed or a result differs (table above)");
  });
}
