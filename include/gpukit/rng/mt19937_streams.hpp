#pragma once
// Many independent Mersenne Twisters: the seed's GPU generator idea (seed 000, slides 20-21: 4096
// twisters, one per thread, with Dynamic Creator parameters) as one MT19937 stream per
// (seed, stream), where a stream is typically an option.
//
// Stream s of `seed` is Mt19937 seeded by init_by_array({seed bits 0-31, seed bits 32-63,
// s bits 0-31, s bits 32-63}) (mt19937_stream_key). The streams share MT19937's parameters and
// differ in their starting points, which are distinct but not provably non-overlapping; at period
// 2^19937 - 1 an overlap within any feasible run has negligible probability. (Dynamic Creator
// instead gives each twister its own recurrence; cuRAND's MTGP32 is the vendor row for this idea.)
//
// On the GPU each CUDA block runs one twister with its 624-word state in shared memory and
// regenerates it in three parallel phases of at most 227 words (the recurrence's word i needs
// word i + 397, so 624 - 397 = 227 words depend only on the previous state), then tempers and
// stores 624 outputs at once. The CPU runs the same streams with Mt19937, one per OpenMP
// iteration; both give the same words. Use at least a few streams per SM for full speed.

#include <cstdint>
#include <span>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/host_device.hpp"

namespace gpukit::rng {

/// The init_by_array key of stream `stream` of `seed`.
GPUKIT_HD_INLINE void mt19937_stream_key(std::uint64_t seed, std::uint64_t stream,
                                         std::uint32_t (&key)[4]) {
  key[0] = static_cast<std::uint32_t>(seed);
  key[1] = static_cast<std::uint32_t>(seed >> 32);
  key[2] = static_cast<std::uint32_t>(stream);
  key[3] = static_cast<std::uint32_t>(stream >> 32);
}

/// Fills `out`, stream-major: out[s * per_stream + k] is output k of stream first_stream + s,
/// for out.size() / per_stream streams. InvalidInput unless per_stream > 0 divides out.size()
/// (an empty `out` is always valid).
void generate_mt19937_streams(const Context& context, std::span<std::uint32_t> out,
                              std::int64_t per_stream, std::uint64_t seed,
                              std::uint64_t first_stream = 0);

/// The same into stream_count x per_stream words at `device_out` (device memory of the current
/// device) on `stream`: enqueues and returns without waiting (docs/design-notes.md);
/// `device_out` must stay valid until the stream has run it.
void generate_mt19937_streams_on_device(std::uint32_t* device_out, std::int64_t stream_count,
                                        std::int64_t per_stream, std::uint64_t seed,
                                        std::uint64_t first_stream, StreamHandle stream);

}  // namespace gpukit::rng
