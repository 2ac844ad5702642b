// The generator registry behind `gpukit bench rng`: every generator, for every output it makes,
// fills a poisoned buffer at awkward sizes, twice in a row, and
//  - gpukit's generators give exactly the CPU backend's sequence (words and uniforms bitwise,
//    normals within the distances normal.hpp states), the second fill continuing the first;
//  - cuRAND's give values in range whose mean and variance match the distribution;
// and nothing past the end is written.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/rng/generate.hpp"
#include "gpukit/rng/generator_variants.hpp"
#include "gpukit/rng/mt19937_streams.hpp"

namespace gpukit::rng {
namespace {

constexpr std::uint64_t kSeed = 0x5eed0fa11;
constexpr std::size_t kGuard = 8;
// Even (cuRAND's normals come in pairs); the large one crosses the MT generator's 4096 streams.
const std::int64_t kSizes[] = {2, 30, 1026, 3 * 4096 + 10, (std::int64_t{1} << 20) + 4098};
constexpr RandomOutput kOutputs[] = {RandomOutput::bits32, RandomOutput::uniform_float,
                                     RandomOutput::uniform_double, RandomOutput::normal_float,
                                     RandomOutput::normal_double};

bool is_normal(RandomOutput o) {
  return o == RandomOutput::normal_float || o == RandomOutput::normal_double;
}

// Two consecutive fills of `count` from one generator, each into a buffer poisoned with 0xFF;
// returns them as doubles (words as their value) after checking the guards stayed poisoned.
template <class T>
std::vector<std::vector<T>> two_fills(const GeneratorVariant& v, RandomOutput output,
                                      std::int64_t count) {
  std::unique_ptr<DeviceGenerator> generator = v.make(kSeed);
  cuda::Stream stream;
  std::vector<std::vector<T>> fills;
  for (int f = 0; f < 2; ++f) {
    const std::size_t total = static_cast<std::size_t>(count) + kGuard;
    cuda::DeviceBuffer<T> device(total);
    cuda::fill_bytes_async(device.data(), 0xFF, total * sizeof(T), stream.handle());
    generator->fill(output, device.data(), count, stream.handle());
    stream.synchronize();
    std::vector<T> host(total);
    device.copy_to_host(host);
    for (std::size_t i = static_cast<std::size_t>(count); i < total; ++i) {
      std::uint8_t bytes[sizeof(T)];
      std::memcpy(bytes, &host[i], sizeof(T));
      EXPECT_TRUE(std::all_of(bytes, bytes + sizeof(T), [](std::uint8_t b) { return b == 0xFF; }))
          << v.info.name << ": wrote past the end at " << i;
    }
    host.resize(static_cast<std::size_t>(count));
    fills.push_back(std::move(host));
  }
  return fills;
}

// What the CPU backend gives for fill `f` (0 or 1) of `count` from gpukit generator `v`.
template <class T>
std::vector<T> cpu_fill(const GeneratorVariant& v, RandomOutput output, std::int64_t count, int f) {
  const Context cpu = Context::cpu();
  std::vector<T> out(static_cast<std::size_t>(count));
  const auto offset = static_cast<std::uint64_t>(f * count);
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    if (v.info.name == "mt19937-streams") {
      const std::int64_t per_stream = count / 4096, remainder = count % 4096;
      const std::uint64_t first = static_cast<std::uint64_t>(f) * 4097;
      std::span<std::uint32_t> all(out);
      if (per_stream > 0) {
        generate_mt19937_streams(cpu, all.first(static_cast<std::size_t>(per_stream * 4096)),
                                 per_stream, kSeed, first);
      }
      if (remainder > 0) {
        generate_mt19937_streams(cpu, all.last(static_cast<std::size_t>(remainder)), remainder,
                                 kSeed, first + 4096);
      }
    } else {
      generate_bits(cpu, std::span<std::uint32_t>(out), kSeed, offset);
    }
  } else if (is_normal(output)) {
    generate_normal<T>(cpu, out, kSeed, offset,
                       v.info.name == "philox-inverse-cdf" ? NormalTransform::inverse_cdf
                                                           : NormalTransform::box_muller);
  } else {
    generate_uniform<T>(cpu, out, kSeed, offset);
  }
  return out;
}

template <class T>
void check_gpukit_generator(const GeneratorVariant& v, RandomOutput output, std::int64_t count) {
  const auto fills = two_fills<T>(v, output, count);
  for (int f = 0; f < 2; ++f) {
    const std::vector<T> expected = cpu_fill<T>(v, output, count, f);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const T got = fills[static_cast<std::size_t>(f)][i];
      if (is_normal(output)) {
        // normal.hpp: float normals equal but for rare one-ulp cases, double within a few ulps
        // (Box-Muller's log and sin/cos differ between the platforms' libraries).
        const double tolerance = 8 * std::numeric_limits<T>::epsilon() *
                                 std::max(1.0, std::abs(static_cast<double>(expected[i])));
        ASSERT_NEAR(got, expected[i], tolerance)
            << v.info.name << " fill " << f << " element " << i << " of " << count;
      } else {
        ASSERT_EQ(got, expected[i]) << v.info.name << " fill " << f << " element " << i;
      }
    }
  }
}

// Range, and mean and variance within 6 standard errors (a false alarm about once in 10^8).
template <class T>
void check_vendor_generator(const GeneratorVariant& v, RandomOutput output, std::int64_t count) {
  const auto fills = two_fills<T>(v, output, count);
  for (const auto& values : fills) {
    double sum = 0, sum_sq = 0;
    for (const T value : values) {
      double x = static_cast<double>(value);
      if (output == RandomOutput::bits32) {
        x = x * 0x1p-32;  // as a uniform on [0, 1)
      } else if (is_normal(output)) {
        ASSERT_TRUE(std::isfinite(x)) << v.info.name;
      } else {
        ASSERT_TRUE(x > 0 && x <= 1) << v.info.name << " uniform " << x;
      }
      sum += x;
      sum_sq += x * x;
    }
    const double n = static_cast<double>(values.size());
    const double mean = sum / n, variance = sum_sq / n - mean * mean;
    const double expected_mean = is_normal(output) ? 0.0 : 0.5;
    const double expected_variance = is_normal(output) ? 1.0 : 1.0 / 12;
    // Kurtosis 3 (normal) or 9/5 (uniform) gives the variance estimate's spread.
    const double kurtosis = is_normal(output) ? 3.0 : 1.8;
    EXPECT_NEAR(mean, expected_mean, 6 * std::sqrt(expected_variance / n) + 1e-12) << v.info.name;
    if (n > 1000) {
      EXPECT_NEAR(variance, expected_variance,
                  6 * expected_variance * std::sqrt((kurtosis - 1) / n))
          << v.info.name;
    }
  }
  EXPECT_NE(fills[0], fills[1]) << v.info.name << ": the second fill repeats the first";
}

template <class T>
void check(const GeneratorVariant& v, RandomOutput output, std::int64_t count) {
  if (v.info.vendor()) {
    check_vendor_generator<T>(v, output, count);
  } else {
    check_gpukit_generator<T>(v, output, count);
  }
}

TEST(GeneratorVariantsGpu, EveryGeneratorEveryOutputAtAwkwardSizes) {
  GPUKIT_REQUIRE_GPU();
  ASSERT_GE(generator_variants().size(), 7u);
  for (const GeneratorVariant& v : generator_variants()) {
    const std::unique_ptr<DeviceGenerator> probe = v.make(kSeed);
    for (const RandomOutput output : kOutputs) {
      if (!probe->produces(output)) continue;
      for (const std::int64_t count : kSizes) {
        if (testing::quick_tests() && count > 100000) continue;
        SCOPED_TRACE(std::string(v.info.name) + " " + std::string(random_output_name(output)) +
                     " " + std::to_string(count));
        switch (output) {
          case RandomOutput::bits32:
            check<std::uint32_t>(v, output, count);
            break;
          case RandomOutput::uniform_float:
          case RandomOutput::normal_float:
            check<float>(v, output, count);
            break;
          case RandomOutput::uniform_double:
          case RandomOutput::normal_double:
            check<double>(v, output, count);
            break;
        }
      }
    }
  }
}

TEST(GeneratorVariantsGpu, RefusesWhatAGeneratorCannotDo) {
  GPUKIT_REQUIRE_GPU();
  cuda::DeviceBuffer<double> buffer(8);
  cuda::Stream stream;
  auto mt = find_generator_variant("mt19937-streams").make(kSeed);
  EXPECT_FALSE(mt->produces(RandomOutput::normal_float));
  EXPECT_THROW(mt->fill(RandomOutput::normal_float, buffer.data(), 4, stream.handle()),
               InvalidInput);
  auto curand = find_generator_variant("curand-philox").make(kSeed);
  EXPECT_THROW(curand->fill(RandomOutput::normal_float, buffer.data(), 3, stream.handle()),
               InvalidInput);
  EXPECT_THROW(curand->fill(RandomOutput::uniform_float, buffer.data(), -1, stream.handle()),
               InvalidInput);
}

TEST(GeneratorVariants, UnknownNameIsRefusedWithTheKnownOnes) {
  try {
    find_generator_variant("no-such-generator");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("curand-philox"), std::string::npos) << e.what();
  } catch (const DeviceUnavailable&) {
    EXPECT_TRUE(generator_variants().empty());  // a build without CUDA
  }
}

}  // namespace
}  // namespace gpukit::rng
