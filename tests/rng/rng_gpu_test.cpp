// What only the CUDA backend has: the device-data API (*_on_device) and the kernels one by one.
// The Philox known answers computed by a kernel; the flat streams of words and uniforms written
// on device data bitwise equal to the CPU's at awkward sizes and offsets, for every launch shape;
// 2^22 normals within the distances of normal_ulps_allowed and rarely different in float; AS241
// and Box-Muller on the device at chosen inputs; and the MT19937 kernel's streams word for word at
// every grid. Outputs are poisoned (0xFF) before each run and the elements past the end must stay
// poisoned. The public host API on every backend: generate_test.cpp and mt19937_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/rng/generate.hpp"
#include "gpukit/rng/mt19937_streams.hpp"
#include "gpukit/rng/philox.hpp"
#include "philox_known_answers.hpp"
#include "rng_test_support.hpp"
#include "test_seed.hpp"

#if GPUKIT_HAVE_CUDA
#include "rng/cuda/rng_launchers.hpp"
#endif

namespace gpukit::rng {
namespace {

using testing::same_bits;
using testing::ulp_distance;

constexpr std::size_t kGuard = 16;  // elements past the end that must stay poisoned

const std::int64_t kSizes[] = {0, 1, 2, 3, 5, 31, 32, 33, 1023, 1025, 65537, (1 << 20) + 3};
const std::uint64_t kOffsets[] = {0, 1, 3, (std::uint64_t{1} << 33) + 2};

/// Runs `fill(device_pointer, stream)` into a poisoned buffer of count + kGuard elements and
/// returns all of them.
template <class T, class Fill>
std::vector<T> run_poisoned(std::int64_t count, Fill fill) {
  const std::size_t total = static_cast<std::size_t>(count) + kGuard;
  cuda::DeviceBuffer<T> device(total);
  cuda::Stream stream;
  cuda::fill_bytes_async(device.data(), 0xFF, total * sizeof(T), stream.handle());
  fill(device.data(), stream.handle());
  stream.synchronize();
  std::vector<T> host(total);
  cuda::copy_to_host(host.data(), device.data(), total * sizeof(T));
  return host;
}

template <class T>
bool guard_is_poisoned(const std::vector<T>& with_guard, std::int64_t count) {
  for (std::size_t i = static_cast<std::size_t>(count); i < with_guard.size(); ++i) {
    T poison;
    std::memset(&poison, 0xFF, sizeof poison);
    if (!same_bits(with_guard[i], poison)) return false;
  }
  return true;
}

template <class T>
void expect_bitwise_equal(const std::vector<T>& device, const std::vector<T>& cpu,
                          const std::string& what) {
  ASSERT_GE(device.size(), cpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_TRUE(same_bits(device[i], cpu[i])) << what << " element " << i;
  }
}

// --- flat streams of words and uniforms: bitwise ------------------------------------------------

template <class T>
void check_uniform_stream_on_device(std::int64_t n, std::uint64_t offset, std::uint64_t seed) {
  std::vector<T> cpu(static_cast<std::size_t>(n));
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    generate_bits(Context::cpu(), cpu, seed, offset);
  } else {
    generate_uniform<T>(Context::cpu(), cpu, seed, offset);
  }
  const std::vector<T> device = run_poisoned<T>(n, [&](T* out, StreamHandle stream) {
    if constexpr (std::is_same_v<T, std::uint32_t>) {
      generate_bits_on_device(out, n, seed, offset, stream);
    } else {
      generate_uniform_on_device<T>(out, n, seed, offset, stream);
    }
  });
  const std::string what = "n=" + std::to_string(n) + " offset=" + std::to_string(offset);
  expect_bitwise_equal(device, cpu, what);
  EXPECT_TRUE(guard_is_poisoned(device, n)) << what;
}

TEST(RngGpu, BitsAndUniformsEqualTheCpuBitwise) {
  GPUKIT_REQUIRE_GPU();
  for (std::int64_t n : kSizes) {
    for (std::uint64_t offset : kOffsets) {
      check_uniform_stream_on_device<std::uint32_t>(n, offset, 0x5eed);
      check_uniform_stream_on_device<float>(n, offset, 0x5eed);
      check_uniform_stream_on_device<double>(n, offset, 0x5eed);
    }
  }
}

// --- normals: within stated distances ------------------------------------------------------------

struct Agreement {
  std::size_t differing = 0;
  double worst_ulps = 0;
};

template <class T>
Agreement compare_normals(const std::vector<T>& device, const std::vector<T>& cpu) {
  Agreement a;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const double d = ulp_distance(device[i], cpu[i]);
    a.differing += d > 0;
    a.worst_ulps = std::max(a.worst_ulps, d);
  }
  return a;
}

// The distances are normal_ulps_allowed's (rng_test_support.hpp); float normals differ rarely
// too (about 0.1 expected in 2^22 where the exact value lies within ~1e-15 of a rounding boundary).
template <class T>
void check_normal_stream(NormalTransform transform, std::size_t allowed_differing) {
  const double allowed_ulps = testing::normal_ulps_allowed<T>(Backend::cuda, transform);
  const std::int64_t n = std::int64_t{1} << 22;
  const std::uint64_t offset = 5;
  std::vector<T> cpu(static_cast<std::size_t>(n));
  generate_normal<T>(Context::cpu(), cpu, 2718, offset, transform);
  const std::vector<T> device = run_poisoned<T>(n, [&](T* out, StreamHandle stream) {
    generate_normal_on_device<T>(out, n, 2718, offset, transform, stream);
  });
  EXPECT_TRUE(guard_is_poisoned(device, n));
  const Agreement a = compare_normals(device, cpu);
  const std::string what =
      std::string(sizeof(T) == 4 ? "float" : "double") +
      (transform == NormalTransform::box_muller ? " box-muller" : " inverse-cdf");
  std::printf("%s normals, device vs CPU: %zu of %lld differ, worst %.2f ulp\n", what.c_str(),
              a.differing, static_cast<long long>(n), a.worst_ulps);
  EXPECT_LE(a.worst_ulps, allowed_ulps) << what;
  EXPECT_LE(a.differing, allowed_differing) << what;
}

TEST(RngGpu, FloatNormalsEqualTheCpuButForRareOneUlpCases) {
  GPUKIT_REQUIRE_GPU();
  check_normal_stream<float>(NormalTransform::box_muller, 16);
  check_normal_stream<float>(NormalTransform::inverse_cdf, 16);
}

TEST(RngGpu, DoubleNormalsAreWithinAFewUlpsOfTheCpu) {
  GPUKIT_REQUIRE_GPU();
  const std::size_t any = std::numeric_limits<std::size_t>::max();
  check_normal_stream<double>(NormalTransform::box_muller, any);
  check_normal_stream<double>(NormalTransform::inverse_cdf, any);
}

// --- element-wise kernels at chosen inputs (internal launchers) ----------------------------------

#if GPUKIT_HAVE_CUDA

template <class T>
std::vector<T> to_host(const cuda::DeviceBuffer<T>& device) {
  std::vector<T> host(device.size());
  cuda::copy_to_host(host.data(), device.data(), device.size_bytes());
  return host;
}

template <class T>
cuda::DeviceBuffer<T> to_device(const std::vector<T>& host) {
  cuda::DeviceBuffer<T> device(host.size());
  cuda::copy_to_device(device.data(), host.data(), host.size() * sizeof(T));
  cuda::synchronize_device();
  return device;
}

TEST(RngGpu, PhiloxKnownAnswersAndRandomCountersOnTheDevice) {
  GPUKIT_REQUIRE_GPU();
  // The known answers first, then random counters and keys against the host's philox4x32_10.
  std::vector<Uint32x4> counters;
  std::vector<Uint32x2> keys;
  for (const auto& a : testing::kPhiloxKnownAnswers) {
    counters.push_back(a.counter);
    keys.push_back(a.key);
  }
  const gpukit::testing::TestSeed seed;
  std::mt19937_64 engine(seed.value());
  for (int i = 0; i < 100000; ++i) {
    Uint32x4 c;
    Uint32x2 k;
    for (auto& w : c.word) w = static_cast<std::uint32_t>(engine());
    for (auto& w : k.word) w = static_cast<std::uint32_t>(engine());
    counters.push_back(c);
    keys.push_back(k);
  }
  const auto d_counters = to_device(counters);
  const auto d_keys = to_device(keys);
  cuda::DeviceBuffer<Uint32x4> d_out(counters.size());
  cuda::fill_bytes_async(d_out.data(), 0xFF, d_out.size_bytes(), nullptr);
  cuda_detail::launch_philox4x32_10(d_counters.data(), d_keys.data(), d_out.data(),
                                    static_cast<std::int64_t>(counters.size()), nullptr);
  cuda::synchronize_device();
  const std::vector<Uint32x4> out = to_host(d_out);
  for (std::size_t i = 0; i < std::size(testing::kPhiloxKnownAnswers); ++i) {
    EXPECT_EQ(out[i], testing::kPhiloxKnownAnswers[i].ten_rounds) << "known answer " << i;
  }
  for (std::size_t i = 0; i < counters.size(); ++i) {
    ASSERT_EQ(out[i], philox4x32_10(counters[i], keys[i])) << i;
  }
}

TEST(RngGpu, LaunchShapesDoNotChangeTheStream) {
  GPUKIT_REQUIRE_GPU();
  const std::int64_t n = 300001;
  std::vector<double> cpu(n);
  generate_normal<double>(Context::cpu(), cpu, 9, 1, NormalTransform::inverse_cdf);
  std::vector<double> reference;
  for (int grid : {0, 1, 7, 1000}) {
    const std::vector<double> device = run_poisoned<double>(n, [&](double* out, StreamHandle s) {
      cuda_detail::launch_fill_flat_stream<double, detail::StreamKind::normal_inverse_cdf>(
          out, n, 9, 1, s, grid);
    });
    EXPECT_TRUE(guard_is_poisoned(device, n)) << grid;
    if (reference.empty()) {
      reference = device;
    } else {
      expect_bitwise_equal(device, reference, "grid " + std::to_string(grid));
    }
  }
  EXPECT_LE(compare_normals(reference, cpu).worst_ulps, 8.0);
}

// AS241 at probabilities the streams never reach (down to 1e-300): the central region
// (0.075 < p < 0.925: no log) bitwise, the tails within 8 ulps (double; normal_ulps_allowed) and 1
// ulp (float).
TEST(RngGpu, InverseNormalCdfOnTheDeviceMatchesTheCpu) {
  GPUKIT_REQUIRE_GPU();
  std::vector<double> p;
  for (int k = 1; k <= 300; ++k)
    p.push_back(std::pow(10.0, -k)), p.push_back(3 * std::pow(10.0, -k));
  for (int k = 1; k <= 15; ++k) p.push_back(1.0 - std::pow(10.0, -k));
  for (int i = 0; i < 100000; ++i) p.push_back((i + 0.5) / 100000);
  const auto d_p = to_device(p);
  cuda::DeviceBuffer<double> d_x(p.size());
  cuda_detail::launch_inverse_normal_cdf<double>(d_p.data(), d_x.data(),
                                                 static_cast<std::int64_t>(p.size()), nullptr);
  cuda::synchronize_device();
  const std::vector<double> x = to_host(d_x);
  double worst_tail = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double cpu = inverse_normal_cdf(p[i]);
    if (p[i] > 0.075 && p[i] < 0.925) {
      EXPECT_TRUE(same_bits(x[i], cpu)) << "p=" << p[i] << ": " << x[i] << " vs " << cpu;
    } else {
      worst_tail = std::max(worst_tail, ulp_distance(x[i], cpu));
      EXPECT_LE(ulp_distance(x[i], cpu), 8.0) << "p=" << p[i];
    }
  }
  std::printf("inverse_normal_cdf(double) device vs CPU: tails worst %.2f ulp\n", worst_tail);

  std::vector<float> pf;
  for (int k = 1; k <= 37; ++k) pf.push_back(std::pow(10.0f, static_cast<float>(-k)));
  for (int i = 0; i < 100000; ++i) pf.push_back(static_cast<float>((i + 0.5) / 100000));
  const auto d_pf = to_device(pf);
  cuda::DeviceBuffer<float> d_xf(pf.size());
  cuda_detail::launch_inverse_normal_cdf<float>(d_pf.data(), d_xf.data(),
                                                static_cast<std::int64_t>(pf.size()), nullptr);
  cuda::synchronize_device();
  const std::vector<float> xf = to_host(d_xf);
  for (std::size_t i = 0; i < pf.size(); ++i) {
    EXPECT_LE(ulp_distance(xf[i], inverse_normal_cdf(pf[i])), 1.0) << "p=" << pf[i];
  }
}

// Box-Muller at the quarter turns and the extreme uniforms.
TEST(RngGpu, BoxMullerOnTheDeviceMatchesTheCpu) {
  GPUKIT_REQUIRE_GPU();
  std::vector<double> u1, u2;
  for (double a : {0x1p-53, 1e-10, 0.1, std::exp(-2.0), 0.5, 0.9, 1.0 - 0x1p-53}) {
    for (double b : {0x1p-53, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0 - 0x1p-53, 0.3}) {
      u1.push_back(a), u2.push_back(b);
    }
  }
  const auto d_u1 = to_device(u1);
  const auto d_u2 = to_device(u2);
  cuda::DeviceBuffer<double> d_first(u1.size()), d_second(u1.size());
  cuda_detail::launch_box_muller<double>(d_u1.data(), d_u2.data(), d_first.data(), d_second.data(),
                                         static_cast<std::int64_t>(u1.size()), nullptr);
  cuda::synchronize_device();
  const std::vector<double> first = to_host(d_first), second = to_host(d_second);
  for (std::size_t i = 0; i < u1.size(); ++i) {
    const NormalPair<double> cpu = box_muller(u1[i], u2[i]);
    EXPECT_LE(ulp_distance(first[i], cpu.first), 14.0) << u1[i] << " " << u2[i];
    EXPECT_LE(ulp_distance(second[i], cpu.second), 14.0) << u1[i] << " " << u2[i];
  }
}

TEST(RngGpu, Mt19937StreamsEqualTheCpuWordForWord) {
  GPUKIT_REQUIRE_GPU();
  for (std::int64_t streams : {1, 3, 200}) {
    for (std::int64_t per_stream : {1, 623, 624, 625, 2000}) {
      std::vector<std::uint32_t> cpu(static_cast<std::size_t>(streams * per_stream));
      generate_mt19937_streams(Context::cpu(), cpu, per_stream, 0xabcdef, 17);
      for (int grid : {0, 1, 7}) {
        const std::vector<std::uint32_t> device = run_poisoned<std::uint32_t>(
            streams * per_stream, [&](std::uint32_t* out, StreamHandle s) {
              cuda_detail::launch_mt19937_streams(out, streams, per_stream, 0xabcdef, 17, s, grid);
            });
        const std::string what = std::to_string(streams) + " x " + std::to_string(per_stream) +
                                 " grid " + std::to_string(grid);
        expect_bitwise_equal(device, cpu, what);
        EXPECT_TRUE(guard_is_poisoned(device, streams * per_stream)) << what;
      }
    }
  }
}

#endif  // GPUKIT_HAVE_CUDA

}  // namespace
}  // namespace gpukit::rng
