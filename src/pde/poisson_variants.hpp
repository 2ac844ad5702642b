#pragma once
// The Poisson registry is public: gpukit/pde/poisson_variants.hpp. This name stays for the bench
// (src/bench includes it) until it includes the public header.

#include "gpukit/pde/poisson_variants.hpp"  // IWYU pragma: export
