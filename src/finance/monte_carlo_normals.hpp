#pragma once
// Internal: the Monte Carlo paths' standard normals, shared by the CPU backend and the CUDA
// kernels: Philox4x32-10 with its key schedule computed once per lane, the stream's counter
// layout, and Box-Muller on each quad's four words (in float kernels optionally with the
// hardware's approximate functions, the fast:: wrappers).

#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/philox.hpp"
#include "gpukit/rng/uniform.hpp"

namespace gpukit::finance::mc {

/// Philox4x32-10's ten round keys, computed once per lane instead of once per call.
struct PhiloxSchedule {
  rng::Uint32x2 round_key[10];
};

GPUKIT_HD_INLINE PhiloxSchedule philox_schedule(rng::Uint32x2 key) {
  PhiloxSchedule s;
  for (int round = 0; round < 10; ++round) {
    s.round_key[round] = key;
    key.word[0] += rng::detail::kPhiloxKeyIncrement0;
    key.word[1] += rng::detail::kPhiloxKeyIncrement1;
  }
  return s;
}

/// rng::philox4x32_10 with a precomputed schedule (the same words).
GPUKIT_HD_INLINE rng::Uint32x4 philox(rng::Uint32x4 counter, const PhiloxSchedule& s) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    counter = rng::detail::philox4x32_round(counter, s.round_key[round]);
  }
  return counter;
}

#if defined(__CUDA_ARCH__)
namespace fast {
// The MUFU approximations without the subnormal fix-ups of the non-.ftz forms: their inputs here
// are never subnormal, and an output that would be is 0 to the payoff.
__device__ __forceinline__ float log2(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float exp2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float sqrt(float x) {
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float sin(float x) {
  float r;
  asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float cos(float x) {
  float r;
  asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// rng::uniform_float's value, (m + 1/2) 2^-23, without an integer-to-float conversion (a quarter-
// rate instruction): 1 + m 2^-23 by its bits, minus 1 - 2^-24; both exact.
__device__ __forceinline__ float uniform(std::uint32_t word) {
  return __fsub_rn(__uint_as_float(0x3F800000u + (word >> 9)), 0x1.fffffep-1f);
}
// rng::uniform_double's value the same way: 1 + m 2^-52 minus 1 - 2^-53.
__device__ __forceinline__ double uniform(std::uint32_t high, std::uint32_t low) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(high) << 20) | (low >> 12);
  return __dsub_rn(__longlong_as_double(static_cast<long long>(0x3FF0000000000000ull | bits)),
                   0x1.fffffffffffffp-1);
}
}  // namespace fast
#endif

/// Philox's counter for quad `quad` at step word `step` of the stream whose key has bits 0-31
/// `option` and bits 32-63 `stream_high` (monte_carlo.hpp): words 1 and 3, which the first round
/// only XORs, carry the key, so a stream key costs no multiply. Quads stay below 2^32
/// (kMonteCarloMaxPaths); with stream_high 0 this is rng::philox_counter(option, quad, step).
GPUKIT_HD_INLINE rng::Uint32x4 stream_counter(std::uint32_t option, std::uint32_t stream_high,
                                              std::uint32_t quad, std::uint32_t step) {
  return {{quad, stream_high, step, option}};
}

/// The four standard normals of quad `quad` of the stream (option, stream_high) at step `step`
/// (paths 4q .. 4q+3).
/// kFast (float kernels only): the hardware's approximate log2, sqrt, sin and cos on the same
/// uniforms.
template <bool kFast>
GPUKIT_HD_INLINE void quad_normals(const PhiloxSchedule& keys, std::uint32_t option,
                                   std::uint32_t stream_high, std::uint32_t quad,
                                   std::uint32_t step, float z[4]) {
  const rng::Uint32x4 w = philox(stream_counter(option, stream_high, quad, step), keys);
#if defined(__CUDA_ARCH__)
  if constexpr (kFast) {
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      const float u1 = fast::uniform(w.word[2 * pair]);
      const float u2 = fast::uniform(w.word[2 * pair + 1]);
      // -2 ln u1 = -2 ln 2 log2 u1; the approximate log2 may round to >= 0 next to u1 = 1.
      const float radius =
          fast::sqrt(fmaxf(__fmul_rn(fast::log2(u1), -1.38629436111989061883f), 0.0f));
      // cos(2 pi u) = -cos(2 pi u - pi): the approximate sine and cosine are accurate on [-pi, pi].
      const float angle = __fmaf_rn(6.28318530717958647692f, u2, -3.14159265358979323846f);
      z[2 * pair] = __fmul_rn(-radius, fast::cos(angle));
      z[2 * pair + 1] = __fmul_rn(-radius, fast::sin(angle));
    }
  } else
#endif
  {
    for (int pair = 0; pair < 2; ++pair) {
      const rng::NormalPair<float> n = rng::box_muller(rng::uniform_float(w.word[2 * pair]),
                                                       rng::uniform_float(w.word[2 * pair + 1]));
      z[2 * pair] = n.first;
      z[2 * pair + 1] = n.second;
    }
  }
}

template <bool kFast>
GPUKIT_HD_INLINE void quad_normals(const PhiloxSchedule& keys, std::uint32_t option,
                                   std::uint32_t stream_high, std::uint32_t quad,
                                   std::uint32_t step, double z[4]) {
  for (std::uint32_t block = 0; block < 2; ++block) {
    const rng::Uint32x4 w =
        philox(stream_counter(option, stream_high, quad, 2 * step + block), keys);
#if defined(__CUDA_ARCH__)
    const rng::NormalPair<double> n =
        rng::box_muller(fast::uniform(w.word[0], w.word[1]), fast::uniform(w.word[2], w.word[3]));
#else
    const rng::NormalPair<double> n = rng::box_muller(rng::uniform_double(w.word[0], w.word[1]),
                                                      rng::uniform_double(w.word[2], w.word[3]));
#endif
    z[2 * block] = n.first;
    z[2 * block + 1] = n.second;
  }
}

}  // namespace gpukit::finance::mc
