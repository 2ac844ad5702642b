#pragma once
// Internal: the launchers of the rng kernels (rng_kernels.cu, mt19937_kernels.cu,
// transform_kernels.cu), in plain C++ so the dispatch compiles without nvcc.

#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"
#include "rng/flat_stream_fill.hpp"

namespace gpukit::rng::cuda_detail {

/// Fills count elements at device_out with flat-stream elements offset ... offset + count - 1.
/// grid_blocks = 0 sizes the grid from the SM count; any positive number gives the same values
/// (tests use it to prove so).
template <class T, detail::StreamKind kKind>
void launch_fill_flat_stream(T* device_out, std::int64_t count, std::uint64_t seed,
                             std::uint64_t offset, StreamHandle stream, int grid_blocks = 0);

/// One MT19937 per CUDA block: stream first_stream + s writes device_out[s * per_stream + k].
void launch_mt19937_streams(std::uint32_t* device_out, std::int64_t stream_count,
                            std::int64_t per_stream, std::uint64_t seed, std::uint64_t first_stream,
                            StreamHandle stream, int grid_blocks = 0);

/// Element-wise evaluation of the header-only functions on the device, so tests can compare the
/// device's arithmetic with the CPU's at chosen inputs (known-answer vectors, far tails) that the
/// flat streams never reach. All pointers in device memory.
void launch_philox4x32_10(const Uint32x4* counters, const Uint32x2* keys, Uint32x4* out,
                          std::int64_t count, StreamHandle stream);
template <class Real>
void launch_inverse_normal_cdf(const Real* p, Real* x, std::int64_t count, StreamHandle stream);
template <class Real>
void launch_box_muller(const Real* u1, const Real* u2, Real* first, Real* second,
                       std::int64_t count, StreamHandle stream);

}  // namespace gpukit::rng::cuda_detail
