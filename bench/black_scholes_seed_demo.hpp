#pragma once
// The seed's Black-Scholes demo (seed 000, slides 12 and 15): a random book, transfers from
// pageable and pinned memory, the kernel, the CPU reference and the seeds' error metrics.

#include <cstdint>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"

namespace gpukit::bench {

/// The seed's random book (slide 12): S in [5, 30], X in [1, 100], T in [0.25, 10], with the
/// book-wide r = 0.02 and v = 0.30, calls and puts alternating (the seed priced both sides of every
/// option; a book gives each option one). Deterministic in (count, seed) on every platform.
struct GeneratedBook {
  std::vector<double> spot, strike, maturity;
  std::vector<std::uint8_t> is_put;  // row i a put when i is odd
  double rate = 0.02;
  double volatility = 0.30;
};
GeneratedBook generate_seed_book(std::int64_t count, std::uint64_t seed);

struct BlackScholesSeedDemo {
  std::int64_t options = 0;
  bool on_gpu = false;
  std::string device;  // context description
  // GPU only: blocking copies of the 3 input float arrays and the sides (a byte each), and of the
  // prices back, as on slides 12 and 15.
  double h2d_pageable_ms = 0, d2h_pageable_ms = 0, h2d_pinned_ms = 0, d2h_pinned_ms = 0;
  double kernel_seed_ms = 0;     // the seed's kernel (median)
  double kernel_default_ms = 0;  // the default variant (median), or the CPU float time
  double cpu_reference_ms = 0;   // the long double reference and the check (one thread)
  int cpu_threads = 0;
  ErrorMetrics error;  // the float prices of the default variant vs the reference
  /// Every price against finance::black_scholes_reference (long double) within
  /// finance::black_scholes_price_bound<float>.
  finance::BlackScholesCheck check;
  double options_per_second() const { return options / (kernel_default_ms * 1e-3); }
  /// Per option: spot, strike and maturity read (float), its side (a byte), its price written.
  static constexpr double kKernelBytesPerOption = 3 * sizeof(float) + 1 + sizeof(float);
  double kernel_gbps() const { return kKernelBytesPerOption * options / (kernel_default_ms * 1e6); }
};

/// Runs the demo on `context` (GPU: float kernels; CPU: the float CPU path), checked against the
/// long double reference.
BlackScholesSeedDemo run_black_scholes_seed_demo(const Context& context, std::int64_t options,
                                                 std::uint64_t seed);

}  // namespace gpukit::bench
