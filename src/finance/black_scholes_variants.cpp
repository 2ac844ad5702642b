#include "gpukit/finance/black_scholes_variants.hpp"

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "finance/cuda/black_scholes_launchers.hpp"
#endif

namespace gpukit::finance {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;
#define GPUKIT_BS_LAUNCHERS(name) &name<float>, &name<double>

// Ladder order: each row is the previous one plus one idea.
constexpr BlackScholesVariant kVariants[] = {
    {"seed", "the seed's kernel: grid-stride loop, 128 blocks x 256 threads, scalar loads",
     "000 slides 8-11", GPUKIT_BS_LAUNCHERS(launch_seed)},
    {"sm-count-grid", "the same loop with the grid sized to fill every SM (occupancy x SMs)",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_sm_count_grid)},
    {"vector-io", "16-byte vector loads and stores (float4 / double2), scalar tail",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_vector_io)},
    {"vector-io-ilp", "two 16-byte vectors per array per thread, all loads issued before use",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_vector_io_ilp)},
    {"streaming", "as vector-io-ilp with evict-first loads and stores (__ldcs/__stcs)",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_streaming)},
    {"exact-grid", "as streaming, one tile per block: an exact grid instead of a grid-stride loop",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_exact_grid)},
    {"lean-math",
     "vector-io with lean call/put arithmetic: rsqrt and reciprocals for sqrt and divisions, "
     "one exponential for both Hull CNDs (F phi(d1) = K phi(d2)), both prices from the two small "
     "tails, lean double exp/log",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_lean_math)},
    {"lean-exact-grid", "lean-math with evict-first accesses and one tile per block (exact grid)",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_lean_exact_grid)},
    {"lean-occupancy",
     "lean-exact-grid capped at 48 registers: 5 blocks (40 warps) per SM; double Hull takes "
     "lean-math's kernel, which prefetches its next tile (prices; Greeks as lean-exact-grid)",
     "beyond the seed", GPUKIT_BS_LAUNCHERS(launch_lean_occupancy)},
};
#undef GPUKIT_BS_LAUNCHERS
constexpr std::string_view kDefaultVariant = "lean-occupancy";
#endif

}  // namespace

std::span<const BlackScholesVariant> black_scholes_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const BlackScholesVariant& default_black_scholes_variant() {
#if GPUKIT_HAVE_CUDA
  return find_black_scholes_variant(kDefaultVariant);
#else
  throw DeviceUnavailable("Black-Scholes CUDA variants: this gpukit was built without CUDA");
#endif
}

const BlackScholesVariant& find_black_scholes_variant(std::string_view name) {
  return find_variant(black_scholes_variants(), name, "Black-Scholes");
}

}  // namespace gpukit::finance
