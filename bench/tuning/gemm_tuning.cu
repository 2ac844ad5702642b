// GEMM raster tuning: the persistent wgmma kernels (wgmma-persistent-l2, wgmma-cluster-multicast)
// with each band height of their tile raster (tile rows, in cluster units, walked column by
// column before the next band) and, for the clusters, each cap on the clusters launched (the
// clusters column says how many ran), against cuBLAS (cublasGemmEx) on the same data, in bf16
// and tf32. Every configuration's C is checked first: sampled elements against a long-double dot
// product, each within gemm_error_bound. The library's default band height
// (kDefaultGroupRows in gemm_wgmma.cu) comes from this driver.
//
//   gpukit_tune_gemm --size=8192 --groups=1,2,4,8,16,32 --precision=bf16,tf32

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "blas/cuda/gemm_launchers.hpp"
#include "blas/cuda/gemm_tensor_operands.hpp"
#include "gemm_tuning_check.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/context.hpp"
#include "tuning_common.hpp"

namespace {

namespace blas = gpukit::blas;
using gpukit::tuning::Timing;

struct Device {
  float* a = nullptr;  // M x K, row-major
  float* b = nullptr;  // N x K, row-major (B transposed: K-major, read in place in tf32)
  float* c = nullptr;
  void* workspace = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    const gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_gemm",
        {{"size", "8192|M = N = K"},
         {"groups", "1,2,4,8,16,32|band heights of the raster, in tile rows (cluster units)"},
         {"precision", "bf16,tf32|precisions to time"},
         {"cluster-caps", "0|caps on the clusters of wgmma-cluster-multicast (0: resident)"},
         {"n-major", "1|also time row-major C = A B (B N-major, copied K-major by the plan)"},
         {"warmup", "3|untimed calls"},
         {"repeat", "15|timed samples"}});
    gpukit::tuning::print_device(knobs.summary());
    const std::int64_t size = knobs.integer("size");
    const std::size_t elements = static_cast<std::size_t>(size * size);
    std::vector<float> a(elements), b(elements);
    for (std::size_t i = 0; i < elements; ++i) {
      a[i] = float(2 * gpukit::tuning::uniform01(1, i) - 1);
      b[i] = float(2 * gpukit::tuning::uniform01(2, i) - 1);
    }
    Device d;
    GPUKIT_TUNING_CHECK(cudaMalloc(&d.a, elements * sizeof(float)));
    GPUKIT_TUNING_CHECK(cudaMalloc(&d.b, elements * sizeof(float)));
    GPUKIT_TUNING_CHECK(cudaMalloc(&d.c, elements * sizeof(float)));
    GPUKIT_TUNING_CHECK(
        cudaMemcpy(d.a, a.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
    GPUKIT_TUNING_CHECK(
        cudaMemcpy(d.b, b.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t stream = nullptr;
    GPUKIT_TUNING_CHECK(cudaStreamCreate(&stream));
    const double flops = 2.0 * double(size) * double(size) * double(size);
    std::printf("%-6s %-26s %6s %8s %10s %9s %9s %11s\n", "prec", "kernel", "group", "clusters",
                "median ms", "TFLOP/s", "vs cuBLAS", "err/bound");
    for (const std::string& name : knobs.words("precision")) {
      const blas::GemmPrecision precision = blas::parse_gemm_precision(name);
      blas::GemmProblem problem;
      problem.m = problem.n = problem.k = size;
      problem.transpose_b = true;
      problem.precision = precision;
      blas::GemmLaunch launch;
      launch.m = launch.n = launch.k = size;
      launch.transpose_b = true;
      launch.a = d.a, launch.lda = size;
      launch.b = d.b, launch.ldb = size;
      launch.c = d.c, launch.ldc = size;
      launch.precision = precision;
      launch.stream = stream;
      const std::size_t workspace_bytes = blas::cuda_detail::k_major_workspace_bytes(
          precision, size, size, size, false, true, size, size);
      GPUKIT_TUNING_CHECK(cudaMalloc(&d.workspace, std::max<std::size_t>(workspace_bytes, 1)));
      launch.workspace = d.workspace;

      int clusters = 0;
      auto measure = [&](const char* kernel, int group, auto&& run, double vendor_ms) {
        clusters = 0;
        const double worst = gpukit::tuning::worst_sampled_error(problem, a, b, d.c, stream, run);
        const Timing t = gpukit::tuning::time_calls(stream, int(knobs.integer("warmup")),
                                                    int(knobs.integer("repeat")), run);
        std::printf("%-6s %-26s %6d %8d %10.4f %9.1f %9.3f %11.3g%s\n", name.c_str(), kernel, group,
                    clusters, t.median_ms, flops / t.median_ms * 1e-9,
                    vendor_ms > 0 ? vendor_ms / t.median_ms : 1.0, worst,
                    worst <= 1 ? "" : "  MISMATCH");
        return t.median_ms;
      };
      blas::GemmPlan cublas(gpukit::Context::cuda(), problem, "cublas");
      const double vendor_ms = measure(
          "cublas", 0, [&] { cublas.run(1.0f, d.a, d.b, 0.0f, d.c, stream); }, 0);
      for (const std::int64_t group : knobs.sizes("groups")) {
        const blas::cuda_detail::WgmmaKnobs persistent{.group_rows = int(group),
                                                       .launched_clusters = &clusters};
        measure(
            "wgmma-persistent-l2", int(group),
            [&] { blas::cuda_detail::launch_wgmma_persistent_l2(launch, persistent); }, vendor_ms);
        for (const std::int64_t cap : knobs.sizes("cluster-caps")) {
          // In cluster units: a band of `group` tile rows is group / 2 pairs.
          const blas::cuda_detail::WgmmaKnobs paired{.group_rows = std::max(1, int(group) / 2),
                                                     .max_clusters = int(cap),
                                                     .launched_clusters = &clusters};
          measure(
              "wgmma-cluster-multicast", int(group),
              [&] { blas::cuda_detail::launch_wgmma_cluster_multicast(launch, paired); },
              vendor_ms);
          measure(
              "clusters, no multicast", int(group),
              [&] { blas::cuda_detail::launch_wgmma_cluster_without_multicast(launch, paired); },
              vendor_ms);
        }
      }
      GPUKIT_TUNING_CHECK(cudaFree(d.workspace));
      if (knobs.integer("n-major")) {
        // Row-major C = A B with B as given (N-major): the plans copy B K-major first (a
        // transposed copy for both precisions); the copy alone, and a plain copy of as many
        // bytes, say what that costs.
        problem.transpose_b = false;
        blas::GemmPlan vendor(gpukit::Context::cuda(), problem, "cublas");
        blas::GemmPlan ours(gpukit::Context::cuda(), problem, "wgmma-persistent-l2");
        const double n_major_vendor_ms = measure(
            "cublas, B N-major", 0, [&] { vendor.run(1.0f, d.a, d.b, 0.0f, d.c, stream); }, 0);
        measure(
            "persistent, B N-major", 0, [&] { ours.run(1.0f, d.a, d.b, 0.0f, d.c, stream); },
            n_major_vendor_ms);
        blas::GemmLaunch copy_only = launch;
        copy_only.transpose_b = false;
        const std::size_t bytes = blas::cuda_detail::k_major_workspace_bytes(
            precision, size, size, size, false, false, size, size);
        GPUKIT_TUNING_CHECK(cudaMalloc(&d.workspace, bytes));
        copy_only.workspace = d.workspace;
        const Timing pack = gpukit::tuning::time_calls(
            stream, int(knobs.integer("warmup")), int(knobs.integer("repeat")),
            [&] { blas::cuda_detail::prepare_k_major_operands(copy_only); });
        const Timing copy =
            gpukit::tuning::time_copy(stream, elements * sizeof(float),
                                      int(knobs.integer("warmup")), int(knobs.integer("repeat")));
        std::printf("%-6s operand copies (A, B) %.4f ms; a float copy of B %.4f ms (%.0f GB/s)\n",
                    name.c_str(), pack.median_ms, copy.median_ms,
                    2.0 * double(elements * sizeof(float)) / copy.median_ms * 1e-6);
        GPUKIT_TUNING_CHECK(cudaFree(d.workspace));
      }
    }
    GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
    GPUKIT_TUNING_CHECK(cudaFree(d.a));
    GPUKIT_TUNING_CHECK(cudaFree(d.b));
    GPUKIT_TUNING_CHECK(cudaFree(d.c));
  });
}
