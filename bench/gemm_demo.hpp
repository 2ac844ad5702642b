#pragma once
// The GEMM demo of `gpukit demo`: the seed's matrix multiplication (seed 003, "Matrix
// Multiplication Performance Engineering", C = A B on square float32 matrices) at a tour's size.
// On a GPU: the seed's three kernels, our best SIMT step and cuBLAS, each timed once after a
// warm-up call (CUDA events) and every element of each C checked against the long-double
// reference (check_gemm); then the best tensor-core variant in bf16 the same way. On the CPU:
// OpenBLAS, checked the same way.

#include <cstdint>
#include <string>
#include <vector>

#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/context.hpp"

namespace gpukit::bench {

struct GemmDemoRow {
  std::string variant;
  std::string precision;
  double ms = 0;
  double tflops = 0;
  blas::GemmCheck check;
};

struct GemmDemo {
  std::int64_t edge = 0;
  std::vector<GemmDemoRow> rows;
  bool passed() const {
    for (const GemmDemoRow& row : rows) {
      if (!row.check.passed()) return false;
    }
    return !rows.empty();
  }
};

/// Runs the demo on `context` with `edge` x `edge` matrices of uniform values in [-1, 1) drawn
/// from `seed`.
GemmDemo run_gemm_demo(const Context& context, std::int64_t edge, std::uint64_t seed);

}  // namespace gpukit::bench
