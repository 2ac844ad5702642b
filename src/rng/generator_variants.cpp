// The generator registry: gpukit's generators as DeviceGenerators over the public on-device
// functions, then cuRAND's (cuda/curand_generators.cu).

#include "gpukit/rng/generator_variants.hpp"

#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_registry.hpp"
#include "gpukit/rng/generate.hpp"
#include "gpukit/rng/mt19937_streams.hpp"

#if GPUKIT_HAVE_CUDA
#include "rng/cuda/curand_generators.hpp"
#endif

namespace gpukit::rng {

std::size_t random_output_bytes(RandomOutput output) {
  switch (output) {
    case RandomOutput::bits32:
      return sizeof(std::uint32_t);
    case RandomOutput::uniform_float:
      return sizeof(float);
    case RandomOutput::uniform_double:
      return sizeof(double);
    case RandomOutput::normal_float:
      return sizeof(float);
    case RandomOutput::normal_double:
      return sizeof(double);
  }
  return 0;
}

std::string_view random_output_name(RandomOutput output) {
  switch (output) {
    case RandomOutput::bits32:
      return "32-bit words";
    case RandomOutput::uniform_float:
      return "uniform float";
    case RandomOutput::uniform_double:
      return "uniform double";
    case RandomOutput::normal_float:
      return "normal float";
    case RandomOutput::normal_double:
      return "normal double";
  }
  return "?";
}

#if GPUKIT_HAVE_CUDA

namespace {

[[noreturn]] void refuse(std::string_view generator, RandomOutput output) {
  throw InvalidInput(std::string(generator) + " does not produce " +
                     std::string(random_output_name(output)));
}

void check_count(std::int64_t count) {
  if (count < 0) throw InvalidInput("random fill: negative count");
}

// The flat Philox stream of `seed`; each fill takes the next `count` elements of its type's
// stream. `transform` picks the normal transform; the inverse-CDF entry makes normals only.
class PhiloxGenerator final : public DeviceGenerator {
 public:
  PhiloxGenerator(std::uint64_t seed, NormalTransform transform, bool normals_only)
      : seed_(seed), transform_(transform), normals_only_(normals_only) {}

  bool produces(RandomOutput output) const override {
    const bool normal =
        output == RandomOutput::normal_float || output == RandomOutput::normal_double;
    return normal || !normals_only_;
  }

  void fill(RandomOutput output, void* device_out, std::int64_t count,
            StreamHandle stream) override {
    check_count(count);
    if (!produces(output)) refuse("philox", output);
    switch (output) {
      case RandomOutput::bits32:
        generate_bits_on_device(static_cast<std::uint32_t*>(device_out), count, seed_, offset_,
                                stream);
        break;
      case RandomOutput::uniform_float:
        generate_uniform_on_device(static_cast<float*>(device_out), count, seed_, offset_, stream);
        break;
      case RandomOutput::uniform_double:
        generate_uniform_on_device(static_cast<double*>(device_out), count, seed_, offset_, stream);
        break;
      case RandomOutput::normal_float:
        generate_normal_on_device(static_cast<float*>(device_out), count, seed_, offset_,
                                  transform_, stream);
        break;
      case RandomOutput::normal_double:
        generate_normal_on_device(static_cast<double*>(device_out), count, seed_, offset_,
                                  transform_, stream);
        break;
    }
    offset_ += static_cast<std::uint64_t>(count);
  }

 private:
  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
  NormalTransform transform_;
  bool normals_only_;
};

// The seed's 4096 twisters (000, slides 20-21) as gpukit's MT19937 streams.
class Mt19937StreamsGenerator final : public DeviceGenerator {
 public:
  static constexpr std::int64_t kStreams = 4096;

  explicit Mt19937StreamsGenerator(std::uint64_t seed) : seed_(seed) {}

  bool produces(RandomOutput output) const override { return output == RandomOutput::bits32; }

  void fill(RandomOutput output, void* device_out, std::int64_t count,
            StreamHandle stream) override {
    check_count(count);
    if (!produces(output)) refuse("mt19937-streams", output);
    auto* out = static_cast<std::uint32_t*>(device_out);
    const std::int64_t per_stream = count / kStreams;
    const std::int64_t remainder = count % kStreams;
    if (per_stream > 0) {
      generate_mt19937_streams_on_device(out, kStreams, per_stream, seed_, next_stream_, stream);
    }
    if (remainder > 0) {
      generate_mt19937_streams_on_device(out + per_stream * kStreams, 1, remainder, seed_,
                                         next_stream_ + kStreams, stream);
    }
    next_stream_ += kStreams + 1;
  }

 private:
  std::uint64_t seed_;
  std::uint64_t next_stream_ = 0;
};

std::unique_ptr<DeviceGenerator> make_philox(std::uint64_t seed) {
  return std::make_unique<PhiloxGenerator>(seed, NormalTransform::box_muller, false);
}
std::unique_ptr<DeviceGenerator> make_philox_inverse_cdf(std::uint64_t seed) {
  return std::make_unique<PhiloxGenerator>(seed, NormalTransform::inverse_cdf, true);
}
std::unique_ptr<DeviceGenerator> make_mt19937_streams(std::uint64_t seed) {
  return std::make_unique<Mt19937StreamsGenerator>(seed);
}

// A generator reads nothing and writes each sample once.
constexpr TrafficModel kWriteOnly{.reads_per_element = 0, .writes_per_element = 1};

constexpr GeneratorVariant kVariants[] = {
    {.info = {.name = "philox",
              .description = "flat Philox4x32-10 stream, 16-byte stores; normals by Box-Muller",
              .seed_reference = "000 slides 20-22 (Box-Muller)",
              .role = VariantRole::step,
              .traffic = kWriteOnly},
     .make = make_philox},
    {.info = {.name = "philox-inverse-cdf",
              .description = "the same stream; normals by the AS241 inverse CDF",
              .seed_reference = "000 slide 22 (the named alternative)",
              .role = VariantRole::step,
              .traffic = kWriteOnly},
     .make = make_philox_inverse_cdf},
    {.info = {.name = "mt19937-streams",
              .description =
                  "4096 independent MT19937 streams, one per block, state in shared memory",
              .seed_reference = "000 slides 20-21",
              .role = VariantRole::step,
              .traffic = kWriteOnly},
     .make = make_mt19937_streams},
    {.info = {.name = "curand-philox",
              .description = "cuRAND host API, PHILOX4_32_10",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kWriteOnly},
     .make = cuda_detail::make_curand_philox},
    {.info = {.name = "curand-mtgp32",
              .description = "cuRAND host API, MTGP32 (Mersenne Twister for GPUs)",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kWriteOnly},
     .make = cuda_detail::make_curand_mtgp32},
    {.info = {.name = "curand-mt19937",
              .description = "cuRAND host API, MT19937",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kWriteOnly},
     .make = cuda_detail::make_curand_mt19937},
    {.info = {.name = "curand-xorwow",
              .description = "cuRAND host API, XORWOW (cuRAND's default)",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kWriteOnly},
     .make = cuda_detail::make_curand_xorwow},
};

}  // namespace

std::span<const GeneratorVariant> generator_variants() { return kVariants; }

#else

std::span<const GeneratorVariant> generator_variants() { return {}; }

#endif

const GeneratorVariant& find_generator_variant(std::string_view name) {
  return find_variant(generator_variants(), name, "random-number generator");
}

}  // namespace gpukit::rng
