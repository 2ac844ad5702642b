#pragma once
// Internal: the CUDA compaction launchers (compact_kernels.cu), callable from plain C++.

#include <cstdint>

#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/compact_variants.hpp"

namespace gpukit::primitives::cuda_detail {

template <class T>
CompactLaunch<T> launch_compact_single_pass;
template <class T>
CompactLaunch<T> launch_compact_cub;

}  // namespace gpukit::primitives::cuda_detail
