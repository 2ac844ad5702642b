#pragma once
// Internal: the CUDA compaction launchers (compact_kernels.cu), callable from plain C++.

#include <cstdint>

#include "gpukit/primitives/compact.hpp"

namespace gpukit::primitives::cuda_detail {

template <class T>
void launch_compact_single_pass(const T* input, T* output, std::int64_t count, KeepPredicate keep,
                                std::int64_t* device_count, ScanWorkspace& workspace,
                                StreamHandle stream);
template <class T>
void launch_compact_cub(const T* input, T* output, std::int64_t count, KeepPredicate keep,
                        std::int64_t* device_count, ScanWorkspace& workspace, StreamHandle stream);

}  // namespace gpukit::primitives::cuda_detail
