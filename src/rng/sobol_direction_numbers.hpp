#pragma once
// Internal: Joe and Kuo's new-joe-kuo-6.21201 direction numbers (the generated
// sobol_direction_numbers.cpp; scripts/generate_sobol_direction_numbers.py says how they are
// laid out and where they come from).

#include <cstdint>

#include "gpukit/rng/sobol.hpp"

namespace gpukit::rng::detail {

/// Per dimension (0-based; 0 is van der Corput's): the primitive polynomial's degree s (0 for
/// dimension 0) and its inner coefficients a_1 .. a_{s-1} as a word (a_1 the highest bit).
extern const std::uint8_t kSobolDegree[kSobolMaxDimensions];
extern const std::uint32_t kSobolCoefficients[kSobolMaxDimensions];
/// m_1 .. m_s of every dimension in turn (dimension d's start: the sum of the degrees before it).
extern const std::uint32_t kSobolInitialNumbers[];

}  // namespace gpukit::rng::detail
