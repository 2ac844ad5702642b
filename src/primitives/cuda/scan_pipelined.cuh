#pragma once
// The API's default scan (one file a type instantiates it, so that the heavy kernels compile in
// parallel): exact operations on the pipelined engine (exact_scan_sm90,
// gpukit/primitives/cuda/scan.cuh) from 32 MB of input up, where it is measured faster, and when
// the GPU, the binary and the pointers allow it; otherwise, and below that size, on the
// one-block-a-tile engine (launch_exact_lookback, which also sends floating-point sums and products
// to the deterministic engine).

#include <type_traits>

#include "gpukit/primitives/cuda/scan.cuh"
#include "primitives/cuda/scan_launchers.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives::cuda_detail {

/// Input bytes from which the pipelined engine takes a scan. Measured on the H200 (int32 sums,
/// docs/case-studies/scan.md): at 2^23 elements (32 MB) it ran 1.16x CUB against the
/// one-block-a-tile engine's 0.90x, at 2^22 0.93x against 1.05x.
inline constexpr std::int64_t kPipelinedMinBytes = std::int64_t{32} << 20;

template <class T, class Op>
bool try_pipelined(const Op& op, const T* input, T* output, std::int64_t count, ScanKind kind,
                   ScanWorkspace& workspace, StreamHandle stream) {
  return count * std::int64_t(sizeof(T)) >= kPipelinedMinBytes &&
         device::exact_scan_sm90(op, input, output, count, kind, workspace, stream);
}

template <class T>
void launch_pipelined_lookback(const T* input, T* output, std::int64_t count, ScanOp op,
                               ScanKind kind, ScanWorkspace& workspace, StreamHandle stream) {
  bool launched = false;
  if constexpr (std::is_floating_point_v<T>) {  // min and max only: sums and products round
    if (op == ScanOp::min) {
      launched = try_pipelined(detail::ScanMin<T>{}, input, output, count, kind, workspace, stream);
    } else if (op == ScanOp::max) {
      launched = try_pipelined(detail::ScanMax<T>{}, input, output, count, kind, workspace, stream);
    }
  } else {
    launched = detail::with_scan_op<T, /*kExact=*/true>(op, [&](auto op_functor) {
      return try_pipelined(op_functor, input, output, count, kind, workspace, stream);
    });
  }
  if (!launched) launch_exact_lookback(input, output, count, op, kind, workspace, stream);
}

}  // namespace gpukit::primitives::cuda_detail
