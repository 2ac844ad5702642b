#include "bench/gemm_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_random.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/blas/gemm_variants.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::bench {

namespace {

using blas::GemmPlan;
using blas::GemmPrecision;
using blas::GemmProblem;
using blas::GemmVariant;

constexpr std::int64_t kSeedTableEdge = 16384;  // the seed's 16,384 x 16,384 matrices
constexpr std::int64_t kMaxCpuEdge = 1024;
// Elements of C compared with the long-double reference per row: a full reference of a 16384^3
// product would take hours, a sample of rows and columns spread by a hash takes milliseconds and
// still catches a wrong tile, transpose or edge (each sampled element is a full K-long sum).
constexpr int kSampledElements = 256;

// Uniform in [-1, 1), element i of matrix `salt` a function of (salt, i) alone.
std::vector<float> bench_matrix(std::int64_t count, std::uint64_t salt) {
  std::vector<float> x(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint64_t z = hash_index(static_cast<std::uint64_t>(i) ^ (salt << 56));
    x[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<double>(z >> 11) * 0x1p-52 - 1);
  }
  return x;
}

// Row-major, no transposes, packed: the seed's problem, C = A B.
GemmProblem square_problem(std::int64_t m, std::int64_t n, std::int64_t k,
                           GemmPrecision precision) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k, p.precision = precision;
  return p;
}

// Compares kSampledElements elements of C (row-major, packed, beta = 0) with a long-double dot
// product of the same inputs, each within gemm_error_bound.
template <class T>
Check sampled_check(const GemmProblem& p, const std::vector<T>& a, const std::vector<T>& b,
                    const std::vector<T>& c) {
  const blas::GemmCheck check =
      blas::check_gemm_sampled<T>(p, T(1), a, b, T(0), {}, c, kSampledElements);
  return {check.passed(),
          fmt::format("{}: {} sampled elements against a long double dot product, worst "
                      "error/bound {:.3g}{}",
                      check.passed() ? "ok" : "MISMATCH", kSampledElements,
                      check.worst_error_over_bound,
                      check.passed() ? "" : fmt::format(", {} outside", check.failures))};
}

// A problem's inputs on the device and one plan per variant (made on first use, reused when
// timed): check() runs into a C poisoned with 0xFF bytes (NaN) and compares sampled elements.
template <class T>
class GemmWorkload {
 public:
  GemmWorkload(const GemmProblem& problem, cuda::Stream& stream)
      : problem_(problem), stream_(stream) {
    const std::vector<float> a = bench_matrix(problem.m * problem.k, 1);
    const std::vector<float> b = bench_matrix(problem.k * problem.n, 2);
    a_.assign(a.begin(), a.end());
    b_.assign(b.begin(), b.end());
    d_a_ = cuda::DeviceBuffer<T>(a_.size());
    d_b_ = cuda::DeviceBuffer<T>(b_.size());
    d_c_ = cuda::DeviceBuffer<T>(static_cast<std::size_t>(problem.m * problem.n));
    d_a_.copy_from_host(a_);
    d_b_.copy_from_host(b_);
  }

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    // "Elements" are multiply-adds (M N K), so that flops_per_element = 2 gives 2 M N K.
    return {.elements = static_cast<double>(problem_.m) * static_cast<double>(problem_.n) *
                        static_cast<double>(problem_.k),
            .output_elements = static_cast<double>(problem_.m) * static_cast<double>(problem_.n),
            .value_bytes = sizeof(T)};
  }
  void launch(const GemmVariant& v) {
    plan(v).run(T(1), d_a_.data(), d_b_.data(), T(0), d_c_.data(), stream_.handle());
  }
  Check check(const GemmVariant& v) {
    cuda::fill_bytes_async(d_c_.data(), 0xFF, d_c_.size_bytes(), stream_.handle());
    launch(v);
    stream_.synchronize();
    std::vector<T> c(d_c_.size());
    d_c_.copy_to_host(c);
    return sampled_check<T>(problem_, a_, b_, c);
  }

 private:
  GemmPlan& plan(const GemmVariant& v) {
    const std::string name(v.info.name);
    auto it = plans_.find(name);
    if (it == plans_.end())
      it = plans_.emplace(name, GemmPlan(Context::cuda(), problem_, name)).first;
    return it->second;
  }

  GemmProblem problem_;
  cuda::Stream& stream_;
  std::vector<T> a_, b_;
  cuda::DeviceBuffer<T> d_a_, d_b_, d_c_;
  std::map<std::string, GemmPlan> plans_;
};

// The datasheet's dense peak of a Hopper GPU (H100 SXM, and the H200, which has the same SMs and
// clocks): 66.9 TFLOP/s float32 (SIMT) and float64 (tensor cores), 494.7 tf32, 989.4 bf16, for
// 132 SMs, scaled by the device's SM count (an H100 PCIe has 114). 0 (no "% peak" column) for
// other GPUs, whose rates gpukit does not tabulate.
double dense_peak_tflops(const Report& report, GemmPrecision precision) {
  if (!report.device || report.device->compute_major != 9 || report.device->compute_minor != 0)
    return 0;
  const double per_sm = [&] {
    switch (precision) {
      case GemmPrecision::float32:
      case GemmPrecision::float64:
        return 66.9;
      case GemmPrecision::tf32:
        return 494.7;
      case GemmPrecision::bf16:
        return 989.4;
    }
    return 0.0;
  }() / 132;
  return per_sm * report.device->sm_count;
}

void set_peak(Table& table, const Report& report, GemmPrecision precision) {
  table.peak_tflops = dense_peak_tflops(report, precision);
  table.peak_name =
      fmt::format("the datasheet's dense {} peak", blas::gemm_precision_name(precision));
}

// GEMM rows: their bytes under the design's rule (A and B read once, C written once), not the
// per-element traffic model (which has no term for A and B).
Row gemm_row(Row row, const GemmProblem& p) {
  row.bytes = blas::gemm_bytes(p, /*reads_c=*/false);
  return row;
}

void seed_table(const BenchConfig& config, Report& report, std::int64_t edge) {
  // The naive kernel takes seconds a run at 16384^3: a few samples say enough.
  BenchConfig few = config;
  few.warmup = std::min(config.warmup, 1);
  few.repeat = std::min(config.repeat, 3);
  cuda::Stream stream;
  const GemmProblem p = square_problem(edge, edge, edge, GemmPrecision::float32);
  GemmWorkload<float> w(p, stream);
  Table table = device_table(
      report, fmt::format("Matrix multiplication, the seed's table (003): {0} x {0} float32, C = "
                          "A B (RTX 2080 Ti, 13.5 TFLOP/s peak: MatrixMult0 0.521, MatrixMult1 "
                          "1.728, MatrixMult2 2.229 TFLOP/s)",
                          edge));
  table.element_name = "mul-add";
  set_peak(table, report, GemmPrecision::float32);
  for (const GemmVariant& v : blas::gemm_variants()) {
    if (!v.float32 || !variant_selected(config, v.info.name)) continue;
    table.rows.push_back(gemm_row(time_variant(few, v, w), p));
  }
  report.tables.push_back(std::move(table));
}

// The top of each ladder: the rows of the largest problems, where a run of an early step takes
// seconds.
constexpr std::string_view kLadderTops[] = {"double-buffered", "wgmma-persistent-l2", "cublas"};

// The vendor comparisons: every variant beyond the seed's (the seed's kernels are in the seed
// table) against cuBLAS, per precision, at the sizes; only the tops of the ladders when
// `tops_only`.
template <class T>
void vendor_table(const BenchConfig& config, Report& report, const GemmProblem& p,
                  bool tops_only = false) {
  cuda::Stream stream;
  GemmWorkload<T> w(p, stream);
  Table table =
      device_table(report, fmt::format("Matrix multiplication against cuBLAS: {}", p.describe()));
  table.element_name = "mul-add";
  set_peak(table, report, p.precision);
  for (const GemmVariant& v : blas::gemm_variants()) {
    if (!v.computes(p.precision) || v.info.seed_reference.starts_with("003") ||
        !variant_selected(config, v.info.name))
      continue;
    if (tops_only && std::find(std::begin(kLadderTops), std::end(kLadderTops), v.info.name) ==
                         std::end(kLadderTops))
      continue;
    table.rows.push_back(gemm_row(time_variant(config, v, w), p));
  }
  report.tables.push_back(std::move(table));
}

template <class T>
Row cpu_row(const BenchConfig& config, std::int64_t edge, GemmPrecision precision) {
  const GemmProblem p = square_problem(edge, edge, edge, precision);
  const std::vector<float> a_float = bench_matrix(edge * edge, 1);
  const std::vector<float> b_float = bench_matrix(edge * edge, 2);
  const std::vector<T> a(a_float.begin(), a_float.end()), b(b_float.begin(), b_float.end());
  std::vector<T> c(static_cast<std::size_t>(edge * edge));
  const Context cpu = Context::cpu(config.context.cpu_threads);
  Row row;
  row.variant = fmt::format("openblas-{}", blas::gemm_precision_name(precision));
  row.description = "the CPU backend: OpenBLAS sgemm / dgemm";
  row.seed_reference = "CPU backend";
  row.elements = static_cast<double>(edge) * static_cast<double>(edge) * static_cast<double>(edge);
  row.bytes = blas::gemm_bytes(p, false);
  row.flops = blas::gemm_flops(p);
  row.ladder = false;
  row.samples_ms = time_on_host(1, std::min(config.repeat, 5),
                                [&] { blas::gemm<T>(cpu, p, T(1), a, b, T(0), c); });
  const Check check = sampled_check<T>(p, a, b, c);
  row.verify(check.passed, check.note + fmt::format(" ({} threads)", cpu.effective_cpu_threads()));
  return row;
}

}  // namespace

void run_gemm_bench(const BenchConfig& config, Report& report) {
  measure_limits(report, /*with_transfers=*/false);
  const bool run_float = config.precision != "double";
  const bool run_double = config.precision != "float";
  if (config.context.backend == Backend::cuda) {
    cuda::set_device(config.context.cuda_device);
    if (run_float) seed_table(config, report, config.size > 0 ? config.size : kSeedTableEdge);
    std::vector<std::int64_t> edges = {4096, 8192};
    if (config.size > 0) edges = {config.size};
    for (const std::int64_t edge : edges) {
      if (run_float) {
        for (const GemmPrecision q :
             {GemmPrecision::float32, GemmPrecision::tf32, GemmPrecision::bf16}) {
          vendor_table<float>(config, report, square_problem(edge, edge, edge, q));
        }
      }
      if (run_double) {
        vendor_table<double>(config, report,
                             square_problem(edge, edge, edge, GemmPrecision::float64));
      }
    }
    if (config.size == 0) {
      // 16384^3: the tops of the ladders against cuBLAS.
      constexpr std::int64_t kLarge = 16384;
      if (run_float) {
        for (const GemmPrecision q :
             {GemmPrecision::float32, GemmPrecision::tf32, GemmPrecision::bf16}) {
          vendor_table<float>(config, report, square_problem(kLarge, kLarge, kLarge, q), true);
        }
      }
    }
    if (run_float && config.size == 0) {
      // The ragged rows.
      for (const GemmPrecision q : {GemmPrecision::float32, GemmPrecision::bf16}) {
        vendor_table<float>(config, report, square_problem(4097, 4097, 4097, q));
        vendor_table<float>(config, report, square_problem(1000, 3000, 700, q));
      }
    }
  }
  const std::int64_t cpu_edge = std::min(config.size > 0 ? config.size : kMaxCpuEdge, kMaxCpuEdge);
  Table cpu_table;
  cpu_table.title =
      fmt::format("Matrix multiplication on the CPU backend: {0} x {0} x {0}, C = A B", cpu_edge);
  cpu_table.element_name = "mul-add";
  if (run_float) cpu_table.rows.push_back(cpu_row<float>(config, cpu_edge, GemmPrecision::float32));
  if (run_double) {
    cpu_table.rows.push_back(cpu_row<double>(config, cpu_edge, GemmPrecision::float64));
  }
  report.tables.push_back(std::move(cpu_table));
}

}  // namespace gpukit::bench
