#pragma once
// Internal: the CPU backend of rng (rng_kernels.cpp, mt19937_kernels.cpp), parallel to
// cuda/rng_launchers.hpp: the same flat-stream blocks (flat_stream_fill.hpp) and the same MT19937
// streams, on OpenMP threads.

#include <cstdint>
#include <span>

#include "rng/flat_stream_fill.hpp"

namespace gpukit::rng::cpu_detail {

/// Fills `out` with flat-stream elements offset ... offset + out.size() - 1, whole Philox blocks
/// on `threads` OpenMP threads.
template <class T, detail::StreamKind kKind>
void fill_flat_stream(std::span<T> out, std::uint64_t seed, std::uint64_t offset, int threads);

/// One Mt19937 per stream on `threads` OpenMP threads: stream first_stream + s writes
/// out[s * per_stream + k].
void mt19937_streams(std::uint32_t* out, std::int64_t stream_count, std::int64_t per_stream,
                     std::uint64_t seed, std::uint64_t first_stream, int threads);

}  // namespace gpukit::rng::cpu_detail
