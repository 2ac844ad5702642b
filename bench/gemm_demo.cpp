#include "bench/gemm_demo.hpp"

#include <chrono>
#include <random>
#include <span>
#include <vector>

#include "gpukit/blas/gemm_variants.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::bench {

namespace {

// The seed's three kernels, the top of our SIMT ladder, the top of the tensor-core ladder (in
// bf16) and cuBLAS in both: the rows a reader compares.
struct DemoRow {
  const char* variant;
  blas::GemmPrecision precision;
};
constexpr DemoRow kGpuRows[] = {
    {"seed-naive", blas::GemmPrecision::float32},
    {"seed-register-accumulator", blas::GemmPrecision::float32},
    {"seed-shared-tiles-32", blas::GemmPrecision::float32},
    {"double-buffered", blas::GemmPrecision::float32},
    {"cublas", blas::GemmPrecision::float32},
    {"mma-sync", blas::GemmPrecision::bf16},
    {"wgmma-persistent-l2", blas::GemmPrecision::bf16},
    {"cublas", blas::GemmPrecision::bf16},
};

}  // namespace

GemmDemo run_gemm_demo(const Context& context, std::int64_t edge, std::uint64_t seed) {
  GemmDemo demo;
  demo.edge = edge;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const auto n = static_cast<std::size_t>(edge * edge);
  std::vector<float> a(n), b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = uniform(rng), b[i] = uniform(rng);
  const double flops = 2.0 * double(edge) * double(edge) * double(edge);
  blas::GemmProblem problem;
  problem.m = problem.n = problem.k = edge;
  const std::span<const float> no_c0;
  if (context.backend == Backend::cpu) {
    const auto t0 = std::chrono::steady_clock::now();
    blas::gemm<float>(context, problem, 1.0f, a, b, 0.0f, c);
    GemmDemoRow row;
    row.variant = "openblas";
    row.precision = "float";
    row.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    row.tflops = flops / row.ms * 1e-9;
    row.check = blas::check_gemm<float>(problem, 1.0f, a, b, 0.0f, no_c0, c, context.cpu_threads);
    demo.rows.push_back(row);
    return demo;
  }
  cuda::set_device(context.cuda_device);
  cuda::DeviceBuffer<float> d_a(n), d_b(n), d_c(n);
  d_a.copy_from_host(a);
  d_b.copy_from_host(b);
  cuda::Stream stream;
  for (const DemoRow& spec : kGpuRows) {
    problem.precision = spec.precision;
    if (!blas::GemmPlan::can_implement(context, problem, spec.variant)) continue;
    blas::GemmPlan plan(context, problem, spec.variant);
    plan.run(1.0f, d_a.data(), d_b.data(), 0.0f, d_c.data(), stream.handle());  // warm-up
    cuda::fill_bytes_async(d_c.data(), 0xFF, n * sizeof(float), stream.handle());
    const cuda::Event start, stop;
    start.record(stream.handle());
    plan.run(1.0f, d_a.data(), d_b.data(), 0.0f, d_c.data(), stream.handle());
    stop.record(stream.handle());
    stop.synchronize();
    d_c.copy_to_host(c);
    GemmDemoRow row;
    row.variant = spec.variant;
    row.precision = blas::gemm_precision_name(spec.precision);
    row.ms = cuda::Event::elapsed_ms(start, stop);
    row.tflops = flops / row.ms * 1e-9;
    row.check = blas::check_gemm<float>(problem, 1.0f, a, b, 0.0f, no_c0, c, context.cpu_threads);
    demo.rows.push_back(row);
  }
  return demo;
}

}  // namespace gpukit::bench
