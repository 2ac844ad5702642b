#include "bench/black_scholes_bench.hpp"
#include "bench/mc_bench.hpp"
#include "bench/poisson_bench.hpp"
#include "bench/reduce_bench.hpp"
#include "bench/rng_bench.hpp"
#include "bench/scan_bench.hpp"
#include "gpukit/bench/harness.hpp"

namespace gpukit::bench {

std::span<const BenchCase> bench_cases() {
  // One entry per case study; a case's variants come from its own registry.
  static const BenchCase cases[] = {
      {"bs", "Black-Scholes European options (seed 000, slides 3-15)", run_black_scholes_bench},
      {"mc", "Monte Carlo European and barrier options (seed 000, slides 16-39; seed 003)",
       run_monte_carlo_bench},
      {"reduce", "parallel reduction (seeds 000 slides 63-96, 001, 003)", run_reduce_bench},
      {"scan", "prefix scan and stream compaction (seed 004)", run_scan_bench},
      {"rng", "random numbers: Philox and MT19937 against cuRAND (seed 000, slides 20-22)",
       run_rng_bench},
      {"poisson", "spectral Poisson solver (seed 000, slides 40-62)", run_poisson_bench},
  };
  return cases;
}

}  // namespace gpukit::bench
