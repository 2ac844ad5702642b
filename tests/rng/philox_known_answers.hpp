#pragma once
// Random123's known-answer vectors for Philox4x32 (kat_vectors in the Random123 distribution, as
// quoted in DEShawResearch/Random123-Boost, libs/random/test/test_philox.cpp): typed once, checked
// by the CPU test (philox_test.cpp) and by a kernel on the device (rng_gpu_test.cpp).

#include "gpukit/rng/philox.hpp"

namespace gpukit::rng::testing {

struct PhiloxKnownAnswer {
  Uint32x4 counter;
  Uint32x2 key;
  Uint32x4 ten_rounds;    // philox4x32_10
  Uint32x4 seven_rounds;  // philox4x32_7
};

// Counter and key all zeros, all ones, and the digits of pi.
inline constexpr PhiloxKnownAnswer kPhiloxKnownAnswers[] = {
    {{{0, 0, 0, 0}},
     {{0, 0}},
     {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
     {{0x5f6fb709u, 0x0d893f64u, 0x4f121f81u, 0x4f730a48u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     {{0xffffffffu, 0xffffffffu}},
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
     {{0x5207ddc2u, 0x45165e59u, 0x4d8ee751u, 0x8c52f662u}}},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     {{0xa4093822u, 0x299f31d0u}},
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
     {{0x4dfccabau, 0x190a87f0u, 0xc47362bau, 0xb6b5242au}}},
};

}  // namespace gpukit::rng::testing
