// The API's default scan: the public deterministic engine (gpukit/primitives/cuda/scan.cuh)
// instantiated for gpukit's operations, with exact integer sums (overflow reported through the
// workspace).

#include "gpukit/primitives/cuda/scan.cuh"
#include "primitives/cuda/scan_launchers.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives::cuda_detail {

void clear_scan_overflow_report(ScanWorkspace& workspace, StreamHandle stream) {
  workspace.reserve(device::kScanOverflowReportBytes);
  device::clear_scan_overflow_report(workspace, stream);
}

std::int64_t scan_overflow_index(const ScanWorkspace& workspace) {
  return workspace.data() == nullptr ? -1 : device::scan_overflow_index(workspace);
}

template <class T>
void launch_decoupled_lookback(const T* input, T* output, std::int64_t count, ScanOp op,
                               ScanKind kind, ScanWorkspace& workspace, StreamHandle stream) {
  detail::with_scan_op<T, /*kExact=*/true>(op, [&](auto op_functor) {
    workspace.reserve(device::deterministic_scan_workspace_bytes<decltype(op_functor)>(count));
    device::clear_scan_overflow_report(workspace, stream);
    device::deterministic_scan(op_functor, input, output, count, kind, workspace, stream);
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_decoupled_lookback)

template <class T>
std::size_t decoupled_carry_bytes(ScanOp op) {
  return detail::with_scan_op<T, /*kExact=*/true>(
      op, [](auto op_functor) { return sizeof(typename decltype(op_functor)::Acc); });
}

template <class T>
std::size_t decoupled_workspace_bytes(ScanOp op, std::int64_t count) {
  return detail::with_scan_op<T, /*kExact=*/true>(op, [count](auto op_functor) {
    return device::deterministic_scan_workspace_bytes<decltype(op_functor)>(count);
  });
}

template <class T>
void launch_decoupled_chunk(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                            ScanWorkspace& workspace, StreamHandle stream, const void* carry_in,
                            void* total_out, std::int64_t index_base) {
  detail::with_scan_op<T, /*kExact=*/true>(op, [&](auto op_functor) {
    using Acc = typename decltype(op_functor)::Acc;
    device::deterministic_scan(op_functor, input, output, count, kind, workspace, stream,
                               static_cast<const Acc*>(carry_in), static_cast<Acc*>(total_out),
                               index_base);
  });
}

#define GPUKIT_INSTANTIATE_DECOUPLED_CHUNK(T)                                               \
  template std::size_t decoupled_carry_bytes<T>(ScanOp);                                    \
  template std::size_t decoupled_workspace_bytes<T>(ScanOp, std::int64_t);                  \
  template void launch_decoupled_chunk<T>(const T*, T*, std::int64_t, ScanOp, ScanKind,     \
                                          ScanWorkspace&, StreamHandle, const void*, void*, \
                                          std::int64_t);
GPUKIT_INSTANTIATE_DECOUPLED_CHUNK(std::int32_t)
GPUKIT_INSTANTIATE_DECOUPLED_CHUNK(std::int64_t)
GPUKIT_INSTANTIATE_DECOUPLED_CHUNK(std::uint32_t)
GPUKIT_INSTANTIATE_DECOUPLED_CHUNK(float)
GPUKIT_INSTANTIATE_DECOUPLED_CHUNK(double)
#undef GPUKIT_INSTANTIATE_DECOUPLED_CHUNK

}  // namespace gpukit::primitives::cuda_detail
