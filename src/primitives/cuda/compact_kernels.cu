// Stream compaction on the device: the single-pass engine (gpukit/primitives/cuda/compact.cuh) with
// gpukit's keep predicates, and CUB's DeviceSelect::If with the same predicates as the vendor row.

#include <cub/device/device_select.cuh>

#include "core/cuda/check.hpp"
#include "gpukit/primitives/cuda/compact.cuh"
#include "primitives/compact_predicates.hpp"
#include "primitives/cuda/compact_launchers.hpp"

namespace gpukit::primitives::cuda_detail {

template <class T>
void launch_compact_single_pass(const T* input, T* output, std::int64_t count, KeepPredicate keep,
                                std::int64_t* device_count, ScanWorkspace& workspace,
                                StreamHandle stream) {
  static_assert(sizeof(long long) == sizeof(std::int64_t));
  detail::with_keep_predicate<T>(keep, [&](auto predicate) {
    device::compact(predicate, input, output, count, reinterpret_cast<long long*>(device_count),
                    workspace, stream);
  });
}

template <class T>
void launch_compact_cub(const T* input, T* output, std::int64_t count, KeepPredicate keep,
                        std::int64_t* device_count, ScanWorkspace& workspace, StreamHandle stream) {
  detail::with_keep_predicate<T>(keep, [&](auto predicate) {
    std::size_t temp_bytes = 0;
    GPUKIT_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, input, output, device_count, count,
                                            predicate, stream));
    void* temp = workspace.reserve(temp_bytes);
    GPUKIT_CUDA_CHECK(cub::DeviceSelect::If(temp, temp_bytes, input, output, device_count, count,
                                            predicate, stream));
  });
}

GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, CompactLaunch, launch_compact_single_pass)
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, CompactLaunch, launch_compact_cub)

}  // namespace gpukit::primitives::cuda_detail
