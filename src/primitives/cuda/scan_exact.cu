// The API's default scan: exact operations (every integer operation, floating-point min and max)
// on the exact engine's classic decoupled look-back (gpukit/primitives/cuda/scan.cuh), with exact
// integer sums whose overflow is reported through the workspace; floating-point sums and products
// on the deterministic engine (scan_decoupled.cu), whose fixed bracketing gives the same bits every
// run.

#include <type_traits>

#include "gpukit/primitives/cuda/scan.cuh"
#include "primitives/cuda/scan_launchers.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives::cuda_detail {

template <class T>
void launch_exact_lookback(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                           ScanWorkspace& workspace, StreamHandle stream) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == ScanOp::sum || op == ScanOp::product) {
      launch_decoupled_lookback(input, output, count, op, kind, workspace, stream);
      return;
    }
  }
  detail::with_scan_op<T, /*kExact=*/true>(op, [&](auto op_functor) {
    device::exact_scan(op_functor, input, output, count, kind, workspace, stream);
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_exact_lookback)

}  // namespace gpukit::primitives::cuda_detail
