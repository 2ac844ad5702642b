#include <string>
#include <vector>

#include "bench/black_scholes_bench.hpp"
#include "bench/gemm_bench.hpp"
#include "bench/harness.hpp"
#include "bench/implied_volatility_bench.hpp"
#include "bench/monte_carlo_bench.hpp"
#include "bench/poisson_bench.hpp"
#include "bench/reduce_bench.hpp"
#include "bench/rng_bench.hpp"
#include "bench/saxpy_bench.hpp"
#include "bench/scan_bench.hpp"
#include "gpukit/blas/gemm_variants.hpp"
#include "gpukit/blas/saxpy_variants.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"
#include "gpukit/pde/poisson_variants.hpp"
#include "gpukit/primitives/compact_variants.hpp"
#include "gpukit/primitives/reduce_variants.hpp"
#include "gpukit/primitives/scan_variants.hpp"
#include "gpukit/rng/generator_variants.hpp"

namespace gpukit::bench {

namespace {

template <class Registry>
std::vector<std::string> names_of(const Registry& registry) {
  std::vector<std::string> names;
  for (const auto& v : registry) names.emplace_back(v.info.name);
  return names;
}

}  // namespace

std::span<const BenchCase> bench_cases() {
  // One entry per case study; a case's variants come from its own registry. The largest --size
  // of each keeps its buffers within one 80 GB GPU and the host's memory.
  static const BenchCase cases[] = {
      {"black_scholes", "Black-Scholes European options (seed 000, slides 3-15)",
       run_black_scholes_bench, "options", std::int64_t{1} << 29,
       [] { return names_of(finance::black_scholes_variants()); }},
      {"implied_volatility",
       "implied volatility of a realistic option chain (issue 32), with the pricing kernel on the "
       "same book",
       run_implied_volatility_bench, "quotes", std::int64_t{1} << 28,
       [] { return std::vector<std::string>{}; }},
      {"monte_carlo", "Monte Carlo European and barrier options (seed 000, slides 16-39; seed 003)",
       run_monte_carlo_bench, "", 0, [] { return std::vector<std::string>{}; }},
      {"reduce", "parallel reduction (seeds 000 slides 63-96, 001, 003)", run_reduce_bench,
       "elements", std::int64_t{1} << 32, [] { return names_of(primitives::reduce_variants()); }},
      {"scan", "prefix scan and stream compaction (seed 004)", run_scan_bench, "elements",
       std::int64_t{1} << 32,
       [] {
         std::vector<std::string> names = names_of(primitives::scan_variants());
         for (std::string& n : names_of(primitives::compact_variants())) names.push_back(n);
         return names;
       }},
      {"rng", "random numbers: Philox and MT19937 against cuRAND (seed 000, slides 20-22)",
       run_rng_bench, "samples", std::int64_t{1} << 27,
       [] { return names_of(rng::generator_variants()); }},
      {"poisson", "spectral Poisson solver (seed 000, slides 40-62)", run_poisson_bench,
       "points along each axis of a square 2D grid", 32768,
       [] { return names_of(pde::poisson_variants()); }},
      {"saxpy", "SAXPY / DAXPY, y = alpha x + y (seed 003, the end-to-end example)",
       run_saxpy_bench, "elements", std::int64_t{1} << 30,
       [] { return names_of(blas::saxpy_variants()); }},
      {"gemm", "matrix multiplication (seed 003)", run_gemm_bench,
       "rows and columns of square matrices", 32768,
       [] { return names_of(blas::gemm_variants()); }},
  };
  return cases;
}

}  // namespace gpukit::bench
