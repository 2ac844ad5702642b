// gpukit demo: a short tour of every case study on the default device.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/black_scholes_seed_demo.hpp"
#include "bench/gemm_demo.hpp"
#include "bench/monte_carlo_demo.hpp"
#include "bench/poisson_demo.hpp"
#include "bench/reduce_demo.hpp"
#include "bench/saxpy_demo.hpp"
#include "bench/scan_demo.hpp"
#include "cli_common.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::cli {

void register_demo(CLI::App& app) {
  auto* command = app.add_subcommand(
      "demo", "A short tour: the demo of every case study, each checked against a CPU reference");
  auto options = std::make_shared<DeviceOptions>();
  add_device_options(*command, *options);
  command->callback([options] {
    const Context context = resolve_context(*options);
    int failures = 0;
    fmt::print("== Black-Scholes (the 2008 NVIDIA case studies, slides 3-15) ==\n");
    // The case study's size: one million options.
    failures +=
        !print_black_scholes_demo(bench::run_black_scholes_seed_demo(context, 1000000, 2008));
    fmt::print("\n== Parallel reduction (the 2008 NVIDIA case studies, slides 63-96) ==\n");
    // The case study's size: 2^22 elements.
    const bench::ReduceDemo reduce = bench::run_reduce_demo(context, std::int64_t{1} << 22, 2007);
    fmt::print(
        "{} random int32, sum on {}: {} ({:.2f} ms with the copies); sequential reference {}\n"
        "{} random floats in [-1, 1), deterministic sum: {}; sequential long double reference "
        "{:.9g}, |difference| {:.3g} (bound {:.3g}){}\n"
        "check: {}\n",
        reduce.count, context.describe(), reduce.int_sum, reduce.device_ms, reduce.int_reference,
        reduce.count, reduce.float_sum, reduce.float_check.reference, reduce.float_check.difference,
        reduce.float_check.bound,
        reduce.on_gpu ? fmt::format("; bits equal to the CPU backend: {}",
                                    reduce.float_bits_equal_cpu ? "yes" : "NO")
                      : std::string(),
        reduce.passed() ? "PASSED" : "FAILED");
    failures += !reduce.passed();
    fmt::print("\n== Prefix scan and stream compaction (ME964 lectures, work-efficient scan) ==\n");
    // The lectures' homework size: 16,777,216 elements.
    const bench::ScanDemo scan = bench::run_scan_demo(context, std::int64_t{1} << 24, 2011);
    fmt::print(
        "exclusive sum of {}: {}\n"
        "{} random floats in [-1, 1), inclusive sum on {}: {:.2f} ms with the copies; against a "
        "long double running sum: max |difference| {:.3g}, worst {:.3g} of its bound{}\n"
        "compaction (keep positive): {} kept, sequential reference {}, elements {}\n"
        "check: {}\n",
        fmt::join(scan.example, " "), fmt::join(scan.example_scan, " "), scan.count,
        context.describe(), scan.device_ms, scan.float_check.max_abs, scan.float_check.worst_ratio,
        scan.on_gpu ? fmt::format("; bits equal to the CPU backend: {}",
                                  scan.float_bits_equal_cpu ? "yes" : "NO")
                    : std::string(),
        scan.kept, scan.kept_reference, scan.kept_equal ? "equal" : "DIFFERENT",
        scan.passed() ? "PASSED" : "FAILED");
    failures += !scan.passed();
    fmt::print("\n== Monte Carlo option pricing (the 2008 NVIDIA case studies, slides 16-39) ==\n");
    // The case study's run at a tour's size (`gpukit mc --demo` has its 200M paths per option).
    const bench::MonteCarloDemo mc = bench::run_monte_carlo_demo(context, 16, std::int64_t{1} << 20,
                                                                 finance::Precision::float64, 2008);
    double worst_in_std_errors = 0;
    for (std::size_t i = 0; i < mc.mc.size(); ++i) {
      worst_in_std_errors =
          std::max(worst_in_std_errors, std::abs(mc.mc[i] - mc.black_scholes[i]) / mc.std_error[i]);
    }
    const bool mc_passed = worst_in_std_errors < 5;
    fmt::print(
        "{} European calls x {} paths (double) on {}: {:.2f} ms; first MC {:.6f} vs "
        "Black-Scholes {:.6f}; largest |MC - BS| {:.2f} standard errors\n"
        "check: {}\n",
        mc.options, mc.paths, mc.device, mc.seconds * 1e3, mc.mc[0], mc.black_scholes[0],
        worst_in_std_errors, mc_passed ? "PASSED" : "FAILED");
    failures += !mc_passed;
    fmt::print("\n== Spectral Poisson solver (the 2008 NVIDIA case studies, slides 40-62) ==\n");
    const bench::PoissonDemo poisson = bench::run_poisson_demo(context, 64);
    fmt::print(
        "the case study's MATLAB test (slide 43), N = 64 ({}): computed {:.6f}, reference {:.6f}, "
        "Linf {:.6e}, L2 {:.6e} (slide 43: 0.975879, 0.975882, 2.404194e-05, 9.412790e-08)\n"
        "check: {}\n",
        poisson.variant, poisson.computed, poisson.reference, poisson.linf, poisson.l2,
        poisson.passed() ? "PASSED" : "FAILED");
    failures += !poisson.passed();
    fmt::print("\n== SAXPY, the end-to-end example (CS 152, GPU architecture lecture) ==\n");
    // Host arrays, copies in, the seed's kernel, the copy back: 2^24 floats.
    const bench::SaxpyDemo saxpy = bench::run_saxpy_demo(context, std::int64_t{1} << 24, 152);
    fmt::print(
        "y = {} x + y on {} random floats, {}: {}\n"
        "every element against the exact reference: {} wrong; relative L1 {:.3g}\n"
        "check: {}\n",
        saxpy.alpha, saxpy.count, context.describe(),
        saxpy.on_gpu
            ? fmt::format("copies in {:.2f} ms, kernel {:.3f} ms, copy back {:.2f} ms: the copies "
                          "are {:.1f}% of the {:.2f} ms",
                          saxpy.to_device_ms, saxpy.kernel_ms, saxpy.from_device_ms,
                          100 * saxpy.transfer_share(), saxpy.total_ms())
            : fmt::format("OpenBLAS {:.2f} ms (no copies on the CPU)", saxpy.kernel_ms),
        saxpy.check.bad_count, saxpy.check.metrics.relative_l1,
        saxpy.passed() ? "PASSED" : "FAILED");
    failures += !saxpy.passed();
    fmt::print(
        "\n== Matrix multiplication (CS 152, Matrix Multiplication Performance Engineering) ==\n");
    // The seed's problem, C = A B in float32, at a tour's size (the seed's is 16384: `gpukit bench
    // gemm` runs it).
    const bench::GemmDemo gemm = bench::run_gemm_demo(context, 512, 2023);
    fmt::print(
        "C = A B, {0} x {0} x {0}, on {1}; every element against the long double reference:\n",
        gemm.edge, context.describe());
    for (const bench::GemmDemoRow& row : gemm.rows) {
      fmt::print("  {:<26} {:<6} {:9.3f} ms {:8.2f} TFLOP/s  worst error {:.3f} of its bound{}\n",
                 row.variant, row.precision, row.ms, row.tflops, row.check.worst_error_over_bound,
                 row.check.passed()
                     ? ""
                     : fmt::format(", {} outside", count_text(row.check.failures, "element")));
    }
    fmt::print("check: {}\n", gemm.passed() ? "PASSED" : "FAILED");
    failures += !gemm.passed();
    fmt::print("\ndemo: {} case studies run, {} failed\n", 7, failures);
    if (failures) throw Error(ErrorKind::check_failed, "demo: a case study's check failed");
  });
}

}  // namespace gpukit::cli
