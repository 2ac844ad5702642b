// The `poisson` case of gpukit_tune_scale (scale_out.cu): the distributed spectral solver
// (gpukit/scale_out/poisson.hpp) over 1, 2, 4... GPUs of one process (the NCCL engine, or the
// peer-copy engine) or over MPI ranks (one GPU each), against the single-GPU solver (the library's
// default variant). Every configuration is checked first: its solution against the exact solution
// of a manufactured problem (two separable trigonometric terms, so no whole-grid host reference is
// needed), every element within poisson_agreement_bound, and, where the single-GPU solver fits,
// against the single-GPU solution within the same bound. Then timed with host wall clocks around
// whole solves (the distributed solve synchronizes its parts; median of --repeat after
// --poisson-warmup): data already on the GPUs (device path) and, with --poisson-host=1, host data
// in and out (pageable copies included). Beside each distributed row, the all-to-all it makes
// twice a solve, timed alone through the same gpukit::distributed::DeviceExchange with the same
// blocks: its bytes between distinct parts, its time and bandwidth, and the share of the solve
// that two of them take (the bar: a 2-GPU solve set beside its all-to-all bytes over the
// all-to-all bandwidth measured in the same run).
//
//   gpukit_tune_scale --cases=poisson --poisson-shape=1024x1024x1024 --gpus=1,2,4 --repeat=5
//   mpirun -np 2 gpukit_tune_scale --cases=poisson --poisson-shape=512x512x512  (a GPU a rank)
//
// One line per configuration, then the table (rank 0 prints under MPI).

#include "scale_out_poisson.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/device_exchange.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/scale_out/poisson.hpp"
#include "scale_out/slab_layout.hpp"

namespace {

namespace pde = gpukit::pde;
namespace cuda = gpukit::cuda;
namespace distributed = gpukit::distributed;
namespace scale_out = gpukit::scale_out;
using Communicator = distributed::Communicator;

pde::PoissonGrid parse_shape(const std::string& text) {
  pde::PoissonGrid grid;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t x = text.find('x', start);
    grid.shape.push_back(std::stoll(text.substr(start, x == std::string::npos ? x : x - start)));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (grid.rank() != 2 && grid.rank() != 3) throw std::invalid_argument("shape " + text);
  return grid;
}

// u = prod_a sin(2 pi m1_a x_a) + 0.5 prod_a cos(2 pi m2_a x_a + 0.3), f = lap u, periods 1.
// Both terms oscillate along every axis, so both are mean-zero and u is the mean-gauge solution.
struct Manufactured {
  std::vector<std::vector<double>> term1, term2;  // per axis, per index
  double k2_1 = 0, k2_2 = 0;
  explicit Manufactured(const pde::PoissonGrid& g) {
    const int m1[3] = {1, 2, 3}, m2[3] = {3, 1, 2};
    for (int a = 0; a < g.rank(); ++a) {
      const std::int64_t n = g.shape[static_cast<std::size_t>(a)];
      std::vector<double> t1(static_cast<std::size_t>(n)), t2(t1.size());
      for (std::int64_t i = 0; i < n; ++i) {
        const double x = double(i) / double(n);
        t1[static_cast<std::size_t>(i)] = std::sin(2 * std::numbers::pi * m1[a] * x);
        t2[static_cast<std::size_t>(i)] = std::cos(2 * std::numbers::pi * m2[a] * x + 0.3);
      }
      term1.push_back(std::move(t1));
      term2.push_back(std::move(t2));
      k2_1 += std::pow(2 * std::numbers::pi * m1[a], 2);
      k2_2 += std::pow(2 * std::numbers::pi * m2[a], 2);
    }
  }
  // Terms 1 and 2 at flat index i.
  std::pair<double, double> at(const pde::PoissonGrid& g, std::int64_t i) const {
    double p1 = 1, p2 = 0.5;
    for (int a = g.rank() - 1; a >= 0; --a) {
      const std::int64_t n = g.shape[static_cast<std::size_t>(a)];
      const auto j = static_cast<std::size_t>(i % n);
      i /= n;
      p1 *= term1[static_cast<std::size_t>(a)][j];
      p2 *= term2[static_cast<std::size_t>(a)][j];
    }
    return {p1, p2};
  }
  double u(const pde::PoissonGrid& g, std::int64_t i) const {
    const auto [a, b] = at(g, i);
    return a + b;
  }
  double f(const pde::PoissonGrid& g, std::int64_t i) const {
    const auto [a, b] = at(g, i);
    return -k2_1 * a - k2_2 * b;
  }
};

// f at flat indices first, first + 1, ...; returns max |f| of the rounded values.
template <class Real>
double fill_f(const pde::PoissonGrid& g, const Manufactured& m, std::int64_t first,
              std::span<Real> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  double max_f = 0;
#pragma omp parallel for schedule(static) reduction(max : max_f)
  for (std::int64_t i = 0; i < n; ++i) {
    const Real v = static_cast<Real>(m.f(g, first + i));
    out[static_cast<std::size_t>(i)] = v;
    max_f = std::max(max_f, std::fabs(double(v)));
  }
  return max_f;
}

struct Errors {
  double exact = 0;    // max |u - u_exact|
  double single = -1;  // max |u - u_single GPU|, -1 when not compared
  double max_u = 0;    // max |u_exact|
};

template <class Real>
Errors errors_of(const pde::PoissonGrid& g, const Manufactured& m, std::int64_t first,
                 std::span<const Real> u, const std::vector<Real>* single) {
  const auto n = static_cast<std::int64_t>(u.size());
  double exact = 0, vs_single = 0, max_u = 0;
#pragma omp parallel for schedule(static) reduction(max : exact, vs_single, max_u)
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = double(u[static_cast<std::size_t>(i)]);
    const double w = m.u(g, first + i);
    exact = std::max(exact, std::fabs(v - w));
    max_u = std::max(max_u, std::fabs(w));
    if (single != nullptr)
      vs_single = std::max(vs_single,
                           std::fabs(v - double((*single)[static_cast<std::size_t>(first + i)])));
  }
  return {exact, single != nullptr ? vs_single : -1, max_u};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Row {
  int gpus = 1;
  std::string engine;
  double device_ms = 0, host_ms = 0;
  double gib_per_gpu = 0;
  Errors errors;
  double bound = 0;           // poisson_agreement_bound of the problem
  double alltoall_ms = 0;     // one transpose's exchange alone (0: not measured)
  double alltoall_bytes = 0;  // its bytes between distinct parts, over the whole job
  std::string note;
};

struct Settings {
  int warmup = 1, repeat = 5, host_repeat = 3;
  bool host = true;
};

// The single-GPU solver on cuda:0; its solution kept in `single` when `keep`.
template <class Real>
Row run_single(const pde::PoissonGrid& g, const Manufactured& m, const Settings& s,
               std::vector<Real>* single) {
  Row row;
  row.gpus = 1;
  try {
    pde::PoissonPlan<Real> plan(gpukit::Context::cuda(0), g);
    row.engine = std::string(plan.variant()) + " (1 GPU)";
    row.gib_per_gpu = double(plan.device_bytes()) / double(1ull << 30);
    const auto n = static_cast<std::size_t>(g.size());
    std::vector<Real> f(n), u(n);
    const double max_f = fill_f<Real>(g, m, 0, f);
    cuda::Stream stream;
    cuda::DeviceBuffer<Real> d(n);
    d.copy_from_host(f);
    std::vector<double> times;
    for (int r = 0; r < s.warmup + s.repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      plan.solve_on_device(d.data(), d.data(), stream.handle());
      stream.synchronize();
      if (r >= s.warmup) times.push_back(seconds_since(t0) * 1e3);
    }
    row.device_ms = median(times);
    plan.solve(f, u);
    row.errors = errors_of<Real>(g, m, 0, u, nullptr);
    row.bound = pde::poisson_agreement_bound<Real>(g, max_f, row.errors.max_u);
    if (s.host) {
      times.clear();
      for (int r = 0; r < s.host_repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        plan.solve(f, u);
        times.push_back(seconds_since(t0) * 1e3);
      }
      row.host_ms = median(times);
    }
    if (single != nullptr) *single = std::move(u);
  } catch (const std::exception& e) {
    row.engine = "single GPU";
    row.note = std::string("refused: ") + e.what();
  }
  return row;
}

// One forward transpose of the solve's blocks (scale_out/slab_layout.hpp) through a
// DeviceExchange of `engine` on `devices`, alone: the median time of --repeat exchanges after the
// warm-up, and the bytes that cross between distinct parts (over every rank). Collective.
template <class Real>
void time_alltoall(Communicator& comm, const pde::PoissonGrid& g, const std::vector<int>& devices,
                   distributed::ExchangeEngine engine, const Settings& s, Row& row) {
  constexpr std::size_t kComplex = 2 * sizeof(Real);
  std::vector<std::unique_ptr<cuda::Stream>> streams;
  std::vector<gpukit::StreamHandle> handles;
  for (const int d : devices) {
    cuda::set_device(d);
    streams.push_back(std::make_unique<cuda::Stream>());
    handles.push_back(streams.back()->handle());
  }
  distributed::DeviceExchange exchange(comm, engine, devices, handles);
  const gpukit::scale_out::detail::SlabLayout L(g, exchange.parts());
  std::vector<cuda::DeviceBuffer<std::byte>> send, work;
  std::vector<distributed::DeviceSend> sends;
  std::vector<distributed::DeviceReceive> receives;
  double crossing = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const int p = exchange.first_part() + static_cast<int>(i);
    cuda::set_device(devices[i]);
    send.emplace_back(std::max<std::size_t>(1, std::size_t(L.send_elements(p)) * kComplex));
    work.emplace_back(std::max<std::size_t>(1, std::size_t(L.work_elements(p)) * kComplex));
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const int p = exchange.first_part() + static_cast<int>(i);
    for (int q = 0; q < exchange.parts(); ++q) {
      const auto out = L.block(p, q, true), in = L.block(q, p, true);
      sends.push_back({static_cast<int>(i), q, send[i].data() + out.source_offset * kComplex,
                       std::size_t(out.count) * kComplex});
      receives.push_back({static_cast<int>(i), q, work[i].data() + in.destination_offset * kComplex,
                          std::size_t(in.count) * kComplex});
      if (q != p) crossing += double(out.count) * kComplex;
    }
  }
  std::vector<double> times;
  for (int r = 0; r < s.warmup + s.repeat; ++r) {
    comm.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    exchange.exchange(sends, receives);
    for (const auto& stream : streams) stream->synchronize();
    comm.barrier();
    if (r >= s.warmup) times.push_back(seconds_since(t0) * 1e3);
  }
  row.alltoall_ms = median(times);
  double all = 0;
  for (const std::int64_t bits : comm.all_gather(std::bit_cast<std::int64_t>(crossing)))
    all += std::bit_cast<double>(bits);
  row.alltoall_bytes = all;
}

// The distributed solver: `devices` on this process (one per rank under MPI).
template <class Real>
Row run_distributed(Communicator& comm, const pde::PoissonGrid& g, const Manufactured& m,
                    const Settings& s, const std::vector<int>& devices, const std::string& engine,
                    const std::vector<Real>* single) {
  Row row;
  pde::PoissonOptions options;
  options.variant = engine;
  {
    scale_out::DistributedPoissonPlan<Real> plan(gpukit::Context::cuda(devices[0]), g, options,
                                                 comm, devices);
    row.gpus = plan.parts();
    row.engine = std::string(plan.engine());
    row.gib_per_gpu = double(plan.device_bytes(0)) / double(1ull << 30);
    std::vector<std::vector<Real>> f, u;
    std::vector<cuda::DeviceBuffer<Real>> d;
    std::vector<const Real*> in;
    std::vector<Real*> out;
    double max_f = 0;
    for (int i = 0; i < plan.local_parts(); ++i) {
      const scale_out::SlabRange r = plan.slab(i);
      const auto n = static_cast<std::size_t>(r.count * plan.row_elements());
      f.emplace_back(n);
      u.emplace_back(n);
      max_f = std::max(max_f, fill_f<Real>(g, m, r.begin * plan.row_elements(), f.back()));
      cuda::set_device(devices[static_cast<std::size_t>(i)]);
      d.emplace_back(std::max<std::size_t>(n, 1));
      if (n > 0) d.back().copy_from_host(f.back());
      in.push_back(d.back().data());
      out.push_back(d.back().data());
    }
    std::vector<double> times;
    for (int r = 0; r < s.warmup + s.repeat; ++r) {
      comm.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      plan.solve_on_device(in, out);
      comm.barrier();
      if (r >= s.warmup) times.push_back(seconds_since(t0) * 1e3);
    }
    row.device_ms = median(times);
    std::vector<std::span<const Real>> fs;
    std::vector<std::span<Real>> us;
    for (std::size_t i = 0; i < f.size(); ++i) {
      fs.emplace_back(f[i]);
      us.emplace_back(u[i]);
    }
    plan.solve(fs, us);
    Errors mine{0, single != nullptr ? 0.0 : -1.0, 0};
    for (int i = 0; i < plan.local_parts(); ++i) {
      const Errors e = errors_of<Real>(g, m, plan.slab(i).begin * plan.row_elements(),
                                       u[static_cast<std::size_t>(i)], single);
      mine.exact = std::max(mine.exact, e.exact);
      mine.single = std::max(mine.single, e.single);
      mine.max_u = std::max(mine.max_u, e.max_u);
    }
    // The largest values over the ranks (their bits, gathered exactly).
    auto global_max = [&](double mine_value) {
      double largest = 0;
      for (const std::int64_t bits : comm.all_gather(std::bit_cast<std::int64_t>(mine_value)))
        largest = std::max(largest, std::bit_cast<double>(bits));
      return largest;
    };
    row.errors.exact = global_max(mine.exact);
    row.errors.single = mine.single;
    row.errors.max_u = global_max(mine.max_u);
    row.bound = pde::poisson_agreement_bound<Real>(g, global_max(max_f), row.errors.max_u);
    if (s.host) {
      times.clear();
      for (int r = 0; r < s.host_repeat; ++r) {
        comm.barrier();
        const auto t0 = std::chrono::steady_clock::now();
        plan.solve(fs, us);
        comm.barrier();
        times.push_back(seconds_since(t0) * 1e3);
      }
      row.host_ms = median(times);
    }
  }  // the plan's memory is released before the exchange is timed alone
  time_alltoall<Real>(comm, g, devices,
                      row.engine == scale_out::kCufftNcclEngine
                          ? distributed::ExchangeEngine::nccl
                          : distributed::ExchangeEngine::peer_copy,
                      s, row);
  return row;
}

template <class Real>
void run(const gpukit::tuning::Knobs& knobs, Communicator& comm, const std::vector<int>& gpu_counts,
         int repeat) {
  pde::PoissonGrid g = parse_shape(knobs.text("poisson-shape"));
  pde::validate_grid(g);
  const Manufactured m(g);
  Settings s;
  s.warmup = int(knobs.integer("poisson-warmup"));
  s.repeat = repeat;
  s.host_repeat = int(knobs.integer("poisson-host-repeat"));
  s.host = knobs.integer("poisson-host") != 0;
  const int count = gpukit::cuda_device_count();
  if (count == 0) throw std::runtime_error("no CUDA device: " + gpukit::cuda_unavailable_reason());
  const bool root = comm.is_root();
  std::vector<Row> rows;
  std::vector<Real> single;
  auto report = [&](const Row& r) {
    if (!root) return;
    std::printf(
        "# %d GPU%s %-22s device %10.3f ms  host %10.3f ms  %6.2f GiB/GPU  |u-exact| %.3g  "
        "|u-1GPU| %s  all-to-all %.3f ms (%.2f GB)  %s\n",
        r.gpus, r.gpus == 1 ? " " : "s", r.engine.c_str(), r.device_ms, r.host_ms, r.gib_per_gpu,
        r.errors.exact, r.errors.single < 0 ? "-" : std::to_string(r.errors.single).c_str(),
        r.alltoall_ms, r.alltoall_bytes * 1e-9, r.note.c_str());
    std::fflush(stdout);
  };
  if (comm.size() > 1) {
    // One GPU per rank: the local rank's.
    const int device = comm.local_rank() % count;
    rows.push_back(run_distributed<Real>(comm, g, m, s, {device}, "cufft-nccl", nullptr));
    report(rows.back());
  } else {
    const bool compare = knobs.integer("poisson-compare") != 0;
    for (const int gpus : gpu_counts) {
      if (gpus == 1) {
        rows.push_back(run_single<Real>(g, m, s, compare ? &single : nullptr));
        report(rows.back());
        continue;
      }
      std::vector<int> devices(static_cast<std::size_t>(gpus));
      for (int i = 0; i < gpus; ++i) devices[static_cast<std::size_t>(i)] = i;
      for (const std::string& engine : knobs.words("poisson-engines")) {
        try {
          rows.push_back(run_distributed<Real>(comm, g, m, s, devices, engine,
                                               single.empty() ? nullptr : &single));
        } catch (const std::exception& e) {
          Row r;
          r.gpus = gpus;
          r.engine = engine;
          r.note = std::string("failed: ") + e.what();
          rows.push_back(r);
        }
        report(rows.back());
      }
    }
  }
  if (!root) return;
  // Strong scaling against the single GPU's device time where it ran.
  double one = 0;
  for (const Row& r : rows)
    if (r.gpus == 1 && r.note.empty()) one = r.device_ms;
  std::printf(
      "\nPoisson %s %s, %d MPI rank%s; check: every |u - exact| and |u - 1 GPU| within "
      "poisson_agreement_bound; all-to-all: one transpose's blocks through the same exchange, "
      "alone (a solve makes two)\n",
      g.describe().c_str(), sizeof(Real) == 4 ? "float" : "double", comm.size(),
      comm.size() == 1 ? "" : "s");
  std::printf(
      "| GPUs | engine | device data, ms | speedup | efficiency | host data, ms | GiB per GPU | "
      "all-to-all GB | all-to-all ms | all-to-all GB/s | 2 all-to-alls / solve | "
      "max abs error vs exact | vs 1 GPU | bound | check |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  bool all_ok = true;
  for (const Row& r : rows) {
    if (!r.note.empty()) {
      std::printf("| %d | %s | - | - | - | - | - | - | - | - | - | - | - | - | %s |\n", r.gpus,
                  r.engine.c_str(), r.note.c_str());
      if (r.note.rfind("failed", 0) == 0) all_ok = false;
      continue;
    }
    const bool ok =
        r.errors.exact <= r.bound && (r.errors.single < 0 || r.errors.single <= r.bound);
    all_ok = all_ok && ok;
    const double speedup = one > 0 ? one / r.device_ms : 0;
    const bool exchanged = r.alltoall_ms > 0;
    std::printf(
        "| %d | %s | %.3f | %s | %s | %s | %.2f | %s | %s | %s | %s | %.3g | %s | %.3g | %s |\n",
        r.gpus, r.engine.c_str(), r.device_ms,
        one > 0 ? std::to_string(speedup).substr(0, 5).c_str() : "-",
        one > 0 ? std::to_string(speedup / r.gpus).substr(0, 5).c_str() : "-",
        r.host_ms > 0 ? std::to_string(r.host_ms).c_str() : "-", r.gib_per_gpu,
        exchanged ? std::to_string(r.alltoall_bytes * 1e-9).substr(0, 6).c_str() : "-",
        exchanged ? std::to_string(r.alltoall_ms).substr(0, 7).c_str() : "-",
        exchanged ? std::to_string(r.alltoall_bytes * 1e-6 / r.alltoall_ms).substr(0, 7).c_str()
                  : "-",
        exchanged ? std::to_string(2 * r.alltoall_ms / r.device_ms).substr(0, 5).c_str() : "-",
        r.errors.exact, r.errors.single < 0 ? "-" : std::to_string(r.errors.single).c_str(),
        r.bound, ok ? "ok" : "FAILED");
  }
  if (!all_ok) throw std::runtime_error("a Poisson configuration failed its check or its run");
}

}  // namespace

void run_poisson_case(const gpukit::tuning::Knobs& knobs, const std::vector<int>& gpu_counts,
                      int repeat) {
  Communicator& comm = Communicator::world();
  gpukit::tuning::for_precision(knobs.text("poisson-precision"), [&](auto real) {
    run<decltype(real)>(knobs, comm, gpu_counts, repeat);
  });
}
