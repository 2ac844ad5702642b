// gpukit demo: a short tour of every case study on the default device.

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/bench/black_scholes_seed_demo.hpp"
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
    fmt::print("\ndemo: {} case stud{} run, {} failed\n", 1, "y", failures);
    if (failures) throw Error(ErrorKind::check_failed, "demo: a case study's check failed");
  });
}

}  // namespace gpukit::cli
