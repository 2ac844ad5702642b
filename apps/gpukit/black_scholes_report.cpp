#include <cstdio>

#include <fmt/format.h>

#include "bench/black_scholes_seed_demo.hpp"
#include "cli_common.hpp"

namespace gpukit::cli {

bool print_black_scholes_demo(const bench::BlackScholesSeedDemo& demo, std::FILE* out) {
  fmt::print(out, "European Options with Black-Scholes formula ({}) on {}\n",
             count_text(demo.options, "option"), demo.device);
  if (demo.on_gpu) {
    fmt::print(out,
               "Copying input data to GPU mem. Transfer time: {:.3f} msec pageable, {:.3f} msec "
               "pinned.\n",
               demo.h2d_pageable_ms, demo.h2d_pinned_ms);
    fmt::print(out,
               "Executing GPU kernel... the case study's kernel (128x256, Hull CND): {:.4f} msec; "
               "default kernel (erfc CND): {:.4f} msec = {:.1f} G options/s, {:.0f} GB/s.\n",
               demo.kernel_seed_ms, demo.kernel_default_ms, demo.options_per_second() / 1e9,
               demo.kernel_gbps());
    fmt::print(out,
               "Reading back GPU results... Transfer time: {:.3f} msec pageable, {:.3f} msec "
               "pinned.\n",
               demo.d2h_pageable_ms, demo.d2h_pinned_ms);
  } else {
    fmt::print(out,
               "No GPU: pricing in float on the CPU backend... time: {:.3f} msec = {:.1f} M "
               "options/s.\n",
               demo.kernel_default_ms, demo.options_per_second() / 1e6);
  }
  fmt::print(out,
             "Checking the results...\n...running the CPU reference (long double, erfc on long "
             "double, {} threads). CPU time: {:.3f} msec.\n",
             demo.cpu_threads, demo.cpu_reference_ms);
  fmt::print(out, "Comparing the results...\nL1 norm: {:E} Max absolute error: {:E}\n",
             demo.error.relative_l1, demo.error.max_abs);
  const bool passed = demo.check.passed;
  fmt::print(out,
             "check: {} (float vs long double reference: every price within its derived bound, the "
             "worst at {:.3g} of it)\n",
             passed ? "PASS" : "FAIL", demo.check.worst_ratio);
  return passed;
}

}  // namespace gpukit::cli
