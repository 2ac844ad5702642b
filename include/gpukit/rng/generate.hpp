#pragma once
// Filling buffers with the flat Philox streams (flat_stream.hpp): random 32-bit words, uniforms in
// (0, 1) and standard normals, in host memory on the CPU or a CUDA device, or in device memory.
//
// out[j] is element offset + j of the stream of `seed`, so a stream can be produced in pieces
// (consecutive offsets) and the result never depends on the backend, the thread count, the grid
// or the chunking. Words and uniforms are bitwise identical on the CPU and the GPU; normals differ
// by the last bits of the platforms' log and sin/cos as described in normal.hpp (float normals:
// equal but for rare one-ulp cases; double normals: within a few ulps; inverse-CDF normals of the
// central 85% of uniforms: equal).
//
// Throws InvalidInput when offset + size would pass 2^64 elements, DeviceUnavailable for a CUDA
// context without a usable device (or in a CPU-only build), OutOfMemory or CudaError.

#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/rng/normal.hpp"

namespace gpukit::rng {

/// Random 32-bit words.
void generate_bits(const Context& context, std::span<std::uint32_t> out, std::uint64_t seed,
                   std::uint64_t offset = 0);

/// Uniforms in (0, 1); Real is float or double.
template <class Real>
void generate_uniform(const Context& context, std::span<Real> out, std::uint64_t seed,
                      std::uint64_t offset = 0);

/// Standard normals; Real is float or double.
template <class Real>
void generate_normal(const Context& context, std::span<Real> out, std::uint64_t seed,
                     std::uint64_t offset = 0,
                     NormalTransform transform = NormalTransform::box_muller);

/// The same into `count` elements at `device_out` (device memory of the current device) on
/// `stream`: checks the arguments, enqueues the kernel and returns without waiting
/// (docs/design-notes.md); `device_out` must stay valid until the stream has run it.
void generate_bits_on_device(std::uint32_t* device_out, std::int64_t count, std::uint64_t seed,
                             std::uint64_t offset, StreamHandle stream);
template <class Real>
void generate_uniform_on_device(Real* device_out, std::int64_t count, std::uint64_t seed,
                                std::uint64_t offset, StreamHandle stream);
template <class Real>
void generate_normal_on_device(Real* device_out, std::int64_t count, std::uint64_t seed,
                               std::uint64_t offset, NormalTransform transform,
                               StreamHandle stream);

}  // namespace gpukit::rng
