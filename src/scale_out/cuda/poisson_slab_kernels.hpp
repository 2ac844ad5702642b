#pragma once
// Internal: the kernels of the distributed Poisson solver's CUDA engine, launched from plain C++
// (poisson_slab_cuda.cpp). Each queues its work on `stream` of the current device.

#include <cstdint>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"

namespace gpukit::scale_out::slab_kernels {

/// u_hat = -f_hat / (n |k|^2) over B = (n0, columns, T) complex Real values at `b` (zero mode
/// 0): |k|^2 = k2_trailing[z] + (k2_split[column_begin + y] + k2_axis0[x]) (the serial CPU
/// backend's order of additions), the multiplier computed in double and rounded once.
template <class Real>
void scale(void* b, std::int64_t n0, std::int64_t columns, std::int64_t t,
           std::int64_t column_begin, const double* k2_axis0, const double* k2_split,
           const double* k2_trailing, double inv_n, StreamHandle stream);

/// The first-level tiles of the canonical tree (reduce_canonical.hpp) that start at
/// `tiles_begin`, the element of global index `first_element` (a multiple of kTile) of an array
/// of `total`: `tiles` results of MeanSumsOp<Real> into `out`, each exactly reduce_tile's
/// expression (so the bits of the CPU's tiles): the deterministic reduction engine's tile pass
/// (gpukit/primitives/cuda/detail/reduce_agent.cuh), which evaluates that expression at the
/// memory's speed.
template <class Real>
void tile_sums(const Real* tiles_begin, std::int64_t tiles, std::int64_t first_element,
               std::int64_t total, pde::detail::MeanSums* out, StreamHandle stream);

/// A rectangle copy of complex Real values on the device: `height` rows of `width` values,
/// `source_pitch` apart, to rows `destination_pitch` apart (all in complex elements). A kernel
/// rather than cudaMemcpy2DAsync, which moved these blocks at 1.65 TB/s (read and written) on an
/// H200 where a plain copy kernel moves 3.5 (2026-11-28, docs/journal).
template <class Real>
void copy_rows(void* destination, std::int64_t destination_pitch, const void* source,
               std::int64_t source_pitch, std::int64_t width, std::int64_t height,
               StreamHandle stream);

/// u[i] -= shift for i < n (the corner gauge).
template <class Real>
void subtract(Real* u, std::int64_t n, Real shift, StreamHandle stream);

}  // namespace gpukit::scale_out::slab_kernels
