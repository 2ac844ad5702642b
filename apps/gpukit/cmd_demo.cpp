// gpukit demo: a short tour of every case study on the default device.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_common.hpp"
#include "gpukit/bench/black_scholes_seed_demo.hpp"
#include "gpukit/bench/reduce_demo.hpp"
#include "gpukit/bench/scan_demo.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::cli {

void register_demo(CLI::App& app) {
  auto* command = app.add_subcommand("demo", "Run the seed-style demo of every case study");
  auto options = std::make_shared<DeviceOptions>();
  add_device_options(*command, *options);
  command->callback([options] {
    const Context context = resolve_context(*options);
    int failures = 0;
    fmt::print("== Black-Scholes (seed 000, slides 3-15) ==\n");
    // The seed's size: one million options.
    failures +=
        !print_black_scholes_demo(bench::run_black_scholes_seed_demo(context, 1000000, 2008));
    fmt::print("\n== Parallel reduction (seeds 000 slides 63-96, 001, 003) ==\n");
    // The seed's size: 2^22 elements.
    const bench::ReduceDemo reduce = bench::run_reduce_demo(context, std::int64_t{1} << 22, 2007);
    fmt::print(
        "{} random int32, sum on {}: {} ({:.2f} ms with the copies); sequential reference {}\n"
        "{} random floats in [-1, 1), deterministic sum: {} (CPU backend: {}, bits {}); "
        "sequential long double reference {:.9g}\n"
        "check: {}\n",
        reduce.count, context.describe(), reduce.int_sum, reduce.device_ms, reduce.int_reference,
        reduce.count, reduce.float_sum, reduce.float_cpu, reduce.passed() ? "equal" : "DIFFERENT",
        reduce.float_reference, reduce.passed() ? "PASSED" : "FAILED");
    failures += !reduce.passed();
    fmt::print("\n== Prefix scan and stream compaction (seed 004) ==\n");
    // The seed's homework size: 16,777,216 elements.
    const bench::ScanDemo scan = bench::run_scan_demo(context, std::int64_t{1} << 24, 2011);
    fmt::print(
        "exclusive sum of {}: {}\n"
        "{} random floats in [-1, 1), inclusive sum on {}: {:.2f} ms with the copies; bits equal "
        "to the CPU backend: {}; max |difference| from the sequential loop {:.3g}\n"
        "compaction (keep positive): {} kept, sequential reference {}, elements {}\n"
        "check: {}\n",
        fmt::join(scan.example, " "), fmt::join(scan.example_scan, " "), scan.count,
        context.describe(), scan.device_ms, scan.float_bits_equal ? "yes" : "NO",
        scan.max_abs_vs_sequential, scan.kept, scan.kept_reference,
        scan.kept_equal ? "equal" : "DIFFERENT", scan.passed() ? "PASSED" : "FAILED");
    failures += !scan.passed();
    fmt::print("\ndemo: {} case studies run, {} failed\n", 3, failures);
    if (failures) throw Error(ErrorKind::check_failed, "demo: a case study's check failed");
  });
}

}  // namespace gpukit::cli
