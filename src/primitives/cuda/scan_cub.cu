// The vendor row: CUB's DeviceScan (CCCL 3.0, shipped with CUDA 13.0). Sums go through
// InclusiveSum / ExclusiveSum on T itself, so integer sums wrap as CUB's do; the other operations
// through the generic InclusiveScanInit / ExclusiveScan with gpukit's functors applied to T, so
// products wrap without signed-overflow undefined behaviour and min/max follow gpukit's NaN and
// signed-zero policy. Both kinds start from the operation's identity: InclusiveScan alone copies
// x[0] to y[0] untouched, so a NaN there would keep its payload and sign instead of becoming the
// canonical NaN that identity ⊕ x[0] gives; InclusiveScanInit with the identity applies the op.
//
// ExclusiveSum starts from T{} = +0.0, as gpukit's sums do (scan.hpp).
//
// 64-bit counts: DeviceScan takes any integral num_items type and picks its offset type from it
// (cub/detail/choose_offset.cuh: 32-bit unsigned for types of 4 bytes, unsigned long long for
// 8), so passing the int64 count scans 2^31 elements and more in one call; no chunking.
// In place (input == output) is supported, as DeviceScan documents.

#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"
#include "primitives/cuda/scan_launchers.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

/// A scan_ops functor as CUB's binary operation on T: load both operands, combine, store. Every
/// non-sum Acc here has T's width, so the round trip through T loses nothing.
template <class Op>
struct ValueScanOp {
  using T = typename Op::Input;
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return Op::store(Op{}(Op::load(a), Op::load(b)));
  }
};

/// CUB's two-phase call: `scan(temp, bytes)` first asks for the temporary storage's size, then
/// runs in the workspace's memory. `name` names the CUB function in the error.
template <class Scan>
void run_with_temp_storage(const char* name, ScanWorkspace& workspace, const Scan& scan) {
  std::size_t temp_bytes = 0;
  cudaError_t status = scan(nullptr, temp_bytes);
  if (status == cudaSuccess) status = scan(workspace.reserve(temp_bytes), temp_bytes);
  if (status != cudaSuccess) {
    gpukit::cuda::detail::throw_cuda_error(status, name, __FILE__, __LINE__);
  }
}

template <class T>
void cub_sum(const T* input, T* output, std::int64_t count, ScanKind kind, ScanWorkspace& workspace,
             StreamHandle stream) {
  if (kind == ScanKind::inclusive) {
    run_with_temp_storage(
        "cub::DeviceScan::InclusiveSum", workspace, [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::InclusiveSum(temp, bytes, input, output, count, stream);
        });
  } else {
    run_with_temp_storage(
        "cub::DeviceScan::ExclusiveSum", workspace, [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveSum(temp, bytes, input, output, count, stream);
        });
  }
}

template <class Op>
void cub_generic(const typename Op::Input* input, typename Op::Input* output, std::int64_t count,
                 ScanKind kind, ScanWorkspace& workspace, StreamHandle stream) {
  using T = typename Op::Input;
  const T identity = Op::store(Op::identity());
  if (kind == ScanKind::inclusive) {
    run_with_temp_storage(
        "cub::DeviceScan::InclusiveScanInit", workspace, [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::InclusiveScanInit(temp, bytes, input, output, ValueScanOp<Op>{},
                                                    identity, count, stream);
        });
  } else {
    run_with_temp_storage(
        "cub::DeviceScan::ExclusiveScan", workspace, [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveScan(temp, bytes, input, output, ValueScanOp<Op>{},
                                                identity, count, stream);
        });
  }
}

}  // namespace

template <class T>
void launch_cub_scan(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                     ScanWorkspace& workspace, StreamHandle stream) {
  if (count < 0) throw InvalidInput("scan cub: negative count " + std::to_string(count));
  if (count == 0) return;
  switch (op) {
    case ScanOp::sum:
      cub_sum(input, output, count, kind, workspace, stream);
      return;
    case ScanOp::product:
      cub_generic<detail::ScanProduct<T>>(input, output, count, kind, workspace, stream);
      return;
    case ScanOp::min:
      cub_generic<detail::ScanMin<T>>(input, output, count, kind, workspace, stream);
      return;
    case ScanOp::max:
      cub_generic<detail::ScanMax<T>>(input, output, count, kind, workspace, stream);
      return;
  }
  throw InvalidInput("scan cub: unknown scan operation");
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_cub_scan)

}  // namespace gpukit::primitives::cuda_detail
