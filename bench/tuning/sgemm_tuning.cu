// SGEMM tile shapes: the warp-tiled SIMT kernel (gemm_simt.cu) under several block tiles, K
// steps, thread tiles and warp arrangements, single- and double-buffered, against cublasSgemm on
// the same data (C = A B, row-major, float32). Every shape's C is checked first: sampled elements
// against a long-double dot product, each within gemm_error_bound. The library's shapes
// (warp-tiled, and double-buffered's two, chosen by double_buffered_takes_large_tiles) are the ones
// this driver measured fastest.
//
//   gpukit_tune_sgemm --shapes=8192x8192x8192,4097x4097x4097,1000x3000x700

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_tuning_check.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/context.hpp"
#include "tuning_common.hpp"

// The kernels' source, compiled into this driver so that every tile shape can be instantiated;
// its launchers then come from this translation unit instead of the library's copy (the same
// source).
#include "blas/cuda/gemm_simt.cu"

namespace {

namespace blas = gpukit::blas;
namespace detail = gpukit::blas::cuda_detail;
using gpukit::tuning::Timing;

template <class Shape, bool kDoubleBuffer>
struct Entry {
  static void run(const blas::GemmLaunch& launch) {
    detail::launch_warp_tiled_kernel<Shape, kDoubleBuffer>(launch, "tuning");
  }
  static std::string name() {
    return std::to_string(Shape::block_m) + "x" + std::to_string(Shape::block_n) + "x" +
           std::to_string(Shape::block_k) + " t" + std::to_string(Shape::thread_m) + "x" +
           std::to_string(Shape::thread_n) + " w" + std::to_string(Shape::block_m / Shape::warp_m) +
           "x" + std::to_string(Shape::block_n / Shape::warp_n) + (kDoubleBuffer ? " db" : "");
  }
};

// <block_k, thread_m, thread_n, warps_m, warps_n, min blocks an SM>
using S128x128x8 = detail::WarpTiledShape<8, 8, 8, 2, 4, 2>;
using S128x128x16 = detail::WarpTiledShape<16, 8, 8, 2, 4, 2>;
using S128x256x8 = detail::WarpTiledShape<8, 8, 16, 2, 4, 1>;
using S256x128x8 = detail::WarpTiledShape<8, 16, 8, 2, 4, 1>;
using S128x128x8Uncapped = detail::WarpTiledShape<8, 8, 8, 2, 4, 1>;
using S256x64x16 = detail::WarpTiledShape<16, 8, 8, 4, 2, 2>;
using S64x128x16 = detail::WarpTiledShape<16, 8, 8, 1, 4, 3>;
// Four warps of 64 x 64 (8 x 16 a thread) in 128 x 128 tiles, two blocks an SM; two warps in 64 x
// 128 tiles, four blocks an SM.
using S128x128x8W2x2 = detail::WarpTiledShape<8, 8, 16, 2, 2, 2>;
using S128x128x16W2x2 = detail::WarpTiledShape<16, 8, 16, 2, 2, 2>;
using S64x128x8W1x2 = detail::WarpTiledShape<8, 8, 16, 1, 2, 4>;
// Smaller tiles for problems of a few waves: 64 x 128 x 8 (four blocks an SM), 128 x 64 x 16,
// 64 x 64 x 16 (two warps, six blocks an SM), 64 x 128 x 16 with two warps of 64 x 64.
using S64x128x8 = detail::WarpTiledShape<8, 8, 8, 1, 4, 4>;
using S128x64x16 = detail::WarpTiledShape<16, 8, 8, 2, 2, 3>;
using S64x64x16 = detail::WarpTiledShape<16, 8, 8, 1, 2, 6>;
using S64x128x16W1x2 = detail::WarpTiledShape<16, 8, 16, 1, 2, 4>;

// Every shape, single- and double-buffered, against cublasSgemm on one M x N x K problem.
void time_problem(const gpukit::tuning::Knobs& knobs, std::int64_t m, std::int64_t n,
                  std::int64_t k) {
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(2 * gpukit::tuning::uniform01(1, i) - 1);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(2 * gpukit::tuning::uniform01(2, i) - 1);
  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  GPUKIT_TUNING_CHECK(cudaMalloc(&d_a, a.size() * sizeof(float)));
  GPUKIT_TUNING_CHECK(cudaMalloc(&d_b, b.size() * sizeof(float)));
  GPUKIT_TUNING_CHECK(cudaMalloc(&d_c, static_cast<std::size_t>(m * n) * sizeof(float)));
  GPUKIT_TUNING_CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  GPUKIT_TUNING_CHECK(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  GPUKIT_TUNING_CHECK(cudaStreamCreate(&stream));
  blas::GemmLaunch launch;
  launch.m = m, launch.n = n, launch.k = k;
  launch.a = d_a, launch.lda = k;
  launch.b = d_b, launch.ldb = n;
  launch.c = d_c, launch.ldc = n;
  launch.stream = stream;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  std::printf("\n%ld x %ld x %ld\n%-26s %10s %9s %9s %11s\n", long(m), long(n), long(k), "shape",
              "median ms", "TFLOP/s", "vs cuBLAS", "err/bound");
  blas::GemmProblem problem;
  problem.m = m, problem.n = n, problem.k = k;
  double vendor_ms = 0;
  auto measure = [&](const std::string& name, auto&& run) {
    const double worst = gpukit::tuning::worst_sampled_error(problem, a, b, d_c, stream, run);
    const Timing t = gpukit::tuning::time_calls(stream, int(knobs.integer("warmup")),
                                                int(knobs.integer("repeat")), run);
    std::printf("%-26s %10.4f %9.1f %9.3f %11.3g%s\n", name.c_str(), t.median_ms,
                flops / t.median_ms * 1e-9, vendor_ms > 0 ? vendor_ms / t.median_ms : 1.0, worst,
                worst <= 1 ? "" : "  MISMATCH");
    return t.median_ms;
  };
  blas::GemmPlan cublas(gpukit::Context::cuda(), problem, "cublas");
  vendor_ms = measure("cublasSgemm", [&] { cublas.run(1.0f, d_a, d_b, 0.0f, d_c, stream); });
  auto both = [&]<class Shape>() {
    measure(Entry<Shape, false>::name(), [&] { Entry<Shape, false>::run(launch); });
    measure(Entry<Shape, true>::name(), [&] { Entry<Shape, true>::run(launch); });
  };
  both.template operator()<S128x128x8>();
  both.template operator()<S128x128x16>();
  both.template operator()<S128x256x8>();
  both.template operator()<S256x128x8>();
  both.template operator()<S128x128x8Uncapped>();
  both.template operator()<S256x64x16>();
  both.template operator()<S64x128x16>();
  both.template operator()<S128x128x8W2x2>();
  both.template operator()<S128x128x16W2x2>();
  both.template operator()<S64x128x8W1x2>();
  both.template operator()<S64x128x8>();
  both.template operator()<S128x64x16>();
  both.template operator()<S64x64x16>();
  both.template operator()<S64x128x16W1x2>();
  GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
  GPUKIT_TUNING_CHECK(cudaFree(d_a));
  GPUKIT_TUNING_CHECK(cudaFree(d_b));
  GPUKIT_TUNING_CHECK(cudaFree(d_c));
}

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    const gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_sgemm",
        {{"shapes", "8192x8192x8192|problems, MxNxK, comma-separated"},
         {"warmup", "2|untimed calls"},
         {"repeat", "7|timed samples"}});
    gpukit::tuning::print_device(knobs.summary());
    for (const std::string& shape : knobs.words("shapes")) {
      long m = 0, n = 0, k = 0;
      if (std::sscanf(shape.c_str(), "%ldx%ldx%ld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
        throw std::invalid_argument("--shapes takes MxNxK items; got " + shape);
      }
      time_problem(knobs, m, n, k);
    }
  });
}
