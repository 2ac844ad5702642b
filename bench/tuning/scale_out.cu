// Scale-out across the GPUs of one host (docs/scale-out.md, issue 22's speed bars): each workload
// on 1 GPU through the library's one-device path, then on N GPUs through the fixed blocks of
// gpukit/distributed (one worker thread a GPU, the results combined on the host in block order),
// with the N-GPU result checked bit for bit against the 1-GPU one before its time is reported.
//
//   european  Monte Carlo European calls, float, `--european-options` x `--european-paths`
//             (default 4 x 2^34 = 2^36 paths): strong-scaling efficiency T1 / (N TN), bar 0.95
//   barrier   down-and-out calls, 252 discrete dates, float, 4 x 2^30 = 2^32 paths: the same
//   bs        a Black-Scholes book of 2^31 float options, host to host (pageable host arrays,
//             the pinned pipeline of each GPU): throughput against N times one GPU's
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

#include "gpukit/core/device.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/partition.hpp"
#include "gpukit/distributed/workers.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_partials.hpp"
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

// The book on GPUs 0 .. gpus - 1 through the fixed blocks, merged on the host.
fin::MonteCarloBookResult mc_on_gpus(const fin::MonteCarloBookView& view,
                                     const fin::MonteCarloOptions& options, int gpus) {
  const fin::MonteCarloBlocks blocks = fin::monte_carlo_blocks(view, options);
  const std::vector<distributed::BlockRange> ranges =
      distributed::split_by_weight(blocks.weight, gpus);
  std::vector<std::vector<fin::MonteCarloBlockMoments>> parts(static_cast<std::size_t>(gpus));
  distributed::run_workers(gpus, [&](int w, const distributed::ReportProgress&) {
    const distributed::BlockRange r = ranges[static_cast<std::size_t>(w)];
    parts[static_cast<std::size_t>(w)] =
        fin::price_monte_carlo_blocks(Context::cuda(w), view, options, r.first, r.count);
  });
  std::vector<fin::MonteCarloBlockMoments> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return fin::monte_carlo_result_from_blocks(view, options, all, gpukit::Backend::cuda);
}

void monte_carlo(const std::string& name, bool barrier, int options_count, std::int64_t paths,
                 const std::vector<int>& gpu_counts, int repeat) {
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
    fin::MonteCarloBookResult many;
    const double tn = median_seconds(repeat, [&] { many = mc_on_gpus(book.view(), options, n); });
    const bool same = same_bits(many.price, one.price) && same_bits(many.std_error, one.std_error);
    rows.push_back({name + " (blocks)", n, tn, work / tn * 1e-9, unit, t1 / (n * tn), "efficiency",
                    n > 1 ? 0.95 : 0.0, same});
    std::printf("# %s on %d GPU%s: %.4f s, price[0] %.9g +- %.3g%s\n", name.c_str(), n,
                n == 1 ? "" : "s", tn, many.price[0], many.std_error[0],
                same ? "" : "  DIFFERENT BITS FROM ONE GPU");
  }
}

// --- Black-Scholes ---------------------------------------------------------------------------

void black_scholes(std::int64_t n, const std::vector<int>& gpu_counts, int repeat) {
  std::vector<float> spot(static_cast<std::size_t>(n)), strike(spot.size()), maturity(spot.size()),
      price(spot.size());
  std::vector<std::uint8_t> is_put(spot.size());
  parallel_for(n, [&](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    spot[k] = float(5 + 25 * gpukit::tuning::uniform01(1, std::uint64_t(i)));
    strike[k] = float(1 + 99 * gpukit::tuning::uniform01(2, std::uint64_t(i)));
    maturity[k] = float(0.25 + 9.75 * gpukit::tuning::uniform01(3, std::uint64_t(i)));
    is_put[k] = static_cast<std::uint8_t>(i % 2);
  });
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
    fin::price_black_scholes<float>(context, in, out);
  };
  const double t1 = median_seconds(repeat, [&] { price_range(Context::cuda(0), 0, n); });
  const std::vector<float> price_one = price;
  // 3 inputs and a side (a byte) read, the price written
  const double bytes = double(n) * (4 * sizeof(float) + 1);
  rows.push_back({"Black-Scholes 2^31 float, host to host (one-device path)", 1, t1,
                  double(n) / t1 * 1e-9, "G options/s", 1.0, "vs N x 1 GPU", 0.0, true});
  std::printf("# bs on 1 GPU: %.3f s, %.1f GB/s host to host\n", t1, bytes / t1 * 1e-9);
  for (const int g : gpu_counts) {
    const std::vector<distributed::BlockRange> ranges = distributed::split_evenly(n, g);
    const int threads = std::max(1, host_threads() / g);
    std::fill(price.begin(), price.end(), -1.0f);
    const double tn = median_seconds(repeat, [&] {
      distributed::run_workers(g, [&](int w, const distributed::ReportProgress&) {
        const distributed::BlockRange r = ranges[static_cast<std::size_t>(w)];
        price_range(Context::cuda(w, threads), r.first, r.count);
      });
    });
    const bool same =
        std::memcmp(price.data(), price_one.data(), price.size() * sizeof(float)) == 0;
    rows.push_back({"Black-Scholes 2^31 float, host to host (rows)", g, tn, double(n) / tn * 1e-9,
                    "G options/s", t1 / (g * tn), "vs N x 1 GPU", 0.0, same});
    std::printf("# bs on %d GPUs: %.3f s, %.1f GB/s host to host%s\n", g, tn, bytes / tn * 1e-9,
                same ? "" : "  DIFFERENT BITS FROM ONE GPU");
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
                    knobs.integer("european-paths"), gpus, repeat);
      } else if (c == "barrier") {
        monte_carlo("MC barrier 252 dates float", true,
                    static_cast<int>(knobs.integer("barrier-options")),
                    knobs.integer("barrier-paths"), gpus, repeat);
      } else if (c == "bs") {
        black_scholes(knobs.integer("bs-options"), gpus, repeat);
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
