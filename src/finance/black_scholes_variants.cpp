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

// Spot, strike and maturity read, the option's side (a byte) read, its price written, per option
// (rate and volatility are scalars in the bench's book).
//
// Flops: the work of one option's price on its side in the seed's formulation (price_option with
// Hull's CND, black_scholes_math.hpp; no dividend, as in the bench's book), each add, subtract,
// multiply, divide, sqrt, exp and log counted as one operation (sign flips, |d| and comparisons
// not counted):
//   sqrt(T), sigma sqrt(T)                                        2
//   K = X e^{-rT}: -r T, exp, X *                                 3
//   d1 = log(S / K) / (sigma sqrt T) + 0.5 sigma sqrt T: /, log, /, *, +   5
//   d2 = d1 - sigma sqrt T                                        1
//   each N(d): 1 / (1 + 0.2316419 |d|) 3; -0.5 d d 2, exp 1; the polynomial in Horner form
//     5 multiplies + 4 adds 9; times 1/sqrt(2 pi) and the polynomial 2; 1 - N 1     2 x 18 = 36
//   call = S N(d1) - K N(d2), or put = K N(-d2) - S N(-d1)        3
//                                                          total 50
// One count for every variant, as GEMM's 2mnk is one count for every algorithm: it measures the
// formula's work, not each kernel's instructions (the erfc CND does more, the lean variants
// less), so the TFLOP/s of the rows compare as their times do.
constexpr TrafficModel kPricesOfABook{.reads_per_element = 3,
                                      .writes_per_element = 1,
                                      .flops_per_element = 50,
                                      .extra_read_bytes_per_element = 1};

// Ladder order: each row is the previous one plus one idea.
constexpr BlackScholesVariant kVariants[] = {
    {.info = {.name = "seed",
              .description =
                  "the seed's kernel: grid-stride loop, 128 blocks x 256 threads, scalar loads",
              .seed_reference = "000 slides 8-11",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers = BlackScholesLaunchers::of([]<class Real> { return &launch_seed<Real>; })},
    {.info = {.name = "sm-count-grid",
              .description = "the same loop with the grid sized to fill every SM (occupancy x SMs)",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers =
         BlackScholesLaunchers::of([]<class Real> { return &launch_sm_count_grid<Real>; })},
    {.info = {.name = "vector-io",
              .description = "16-byte vector loads and stores (float4 / double2), scalar tail",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers = BlackScholesLaunchers::of([]<class Real> { return &launch_vector_io<Real>; })},
    {.info = {.name = "vector-io-ilp",
              .description =
                  "two 16-byte vectors per array per thread, all loads issued before use",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers =
         BlackScholesLaunchers::of([]<class Real> { return &launch_vector_io_ilp<Real>; })},
    {.info = {.name = "streaming",
              .description = "as vector-io-ilp with evict-first loads and stores (__ldcs/__stcs)",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers = BlackScholesLaunchers::of([]<class Real> { return &launch_streaming<Real>; })},
    {.info = {.name = "exact-grid",
              .description =
                  "as streaming, one tile per block: an exact grid instead of a grid-stride loop",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers = BlackScholesLaunchers::of([]<class Real> { return &launch_exact_grid<Real>; })},
    {.info = {.name = "lean-math",
              .description =
                  "vector-io with lean call/put arithmetic: rsqrt and reciprocals for sqrt and "
                  "divisions, one exponential for both Hull CNDs (F phi(d1) = K phi(d2)), both "
                  "prices from the two small tails, lean double exp/log",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers = BlackScholesLaunchers::of([]<class Real> { return &launch_lean_math<Real>; })},
    {.info = {.name = "lean-exact-grid",
              .description =
                  "lean-math with evict-first accesses and one tile per block (exact grid)",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPricesOfABook},
     .launchers =
         BlackScholesLaunchers::of([]<class Real> { return &launch_lean_exact_grid<Real>; })},
    {.info = {.name = "lean-occupancy",
              .description = "lean-exact-grid capped at 48 registers: 5 blocks (40 warps) per SM; "
                             "double Hull takes lean-math's kernel, which prefetches its next tile "
                             "(prices; Greeks as lean-exact-grid)",
              .seed_reference = "beyond the seed",
              .role = VariantRole::best,
              .traffic = kPricesOfABook},
     .launchers =
         BlackScholesLaunchers::of([]<class Real> { return &launch_lean_occupancy<Real>; })},
};
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
