#pragma once
// The GPU random-number generators side by side, behind `gpukit bench rng` and its tests:
// gpukit's own (the flat Philox streams of generate.hpp with either normal transform, and the
// many independent MT19937s of mt19937_streams.hpp) and the vendor rows, cuRAND's host API
// (Philox4_32_10, MTGP32, MT19937, XORWOW).
//
// An entry makes a generator object once for a seed (cuRAND's set-up, MTGP32's parameter tables
// and the like are not part of the timed work); each fill continues that generator's sequence.
// gpukit's Philox generators continue at the next stream offset, so consecutive fills are the
// pieces of one flat stream; gpukit's MT19937 generator fills with 4096 independent streams (the
// seed's 4096 twisters, stream-major: out[s * count / 4096 + k], the remainder from stream 4096),
// starting at the next unused stream on each fill.
//
// cuRAND's own rules hold for its rows: normal fills need an even count, uniforms lie in (0, 1].

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/variant_info.hpp"

namespace gpukit::rng {

/// What a fill produces (element type in parentheses).
enum class RandomOutput {
  bits32,          // random 32-bit words (std::uint32_t)
  uniform_float,   // uniforms (float)
  uniform_double,  // uniforms (double)
  normal_float,    // standard normals (float)
  normal_double,   // standard normals (double)
};

/// The element size of `output` in bytes.
std::size_t random_output_bytes(RandomOutput output);
/// "bits32", "uniform float", ...
std::string_view random_output_name(RandomOutput output);

class DeviceGenerator {
 public:
  virtual ~DeviceGenerator() = default;
  /// Whether fill() produces `output`.
  virtual bool produces(RandomOutput output) const = 0;
  /// Fills `count` elements of `output` at `device_out` (device memory of the current device),
  /// asynchronously on `stream`. InvalidInput when !produces(output) or the count breaks the
  /// generator's rules (above).
  virtual void fill(RandomOutput output, void* device_out, std::int64_t count,
                    StreamHandle stream) = 0;
};

struct GeneratorVariant {
  /// Role vendor: a cuRAND row. Traffic: one value written per sample, none read.
  VariantInfo info;
  /// A generator for `seed` on the current device.
  std::unique_ptr<DeviceGenerator> (*make)(std::uint64_t seed) = nullptr;
};

/// gpukit's generators first, then cuRAND's; empty in a build without CUDA.
std::span<const GeneratorVariant> generator_variants();
/// DeviceUnavailable without CUDA, InvalidInput listing the names for an unknown one.
const GeneratorVariant& find_generator_variant(std::string_view name);

}  // namespace gpukit::rng
