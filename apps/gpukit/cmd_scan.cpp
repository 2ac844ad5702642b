// gpukit scan: the inclusive or exclusive scan of a .npy array, written as a .npy array of the
// same dtype and shape (scanned in C order).

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/primitives/check.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::cli {

namespace {

struct ScanOptionsCli {
  DeviceOptions device;
  std::string input, output;
  std::string op = "sum";
  bool exclusive = false;
  bool check = false;
};

/// --check: every output against the sequential reference within the library's bound; prints the
/// seeds' metrics.
template <class T>
void check_against_reference(std::span<const T> input, std::span<const T> result,
                             primitives::ScanOp op, primitives::ScanKind kind,
                             const std::string& output) {
  const primitives::ScanCheck check = primitives::check_scan_result<T>(input, result, op, kind);
  std::cerr << fmt::format(
      "gpukit: scan: check: sequential CPU reference, relative L1 {:.3g}, max abs error {:.3g}: "
      "{}\n",
      check.metrics.relative_l1, check.metrics.max_abs,
      check.passed() ? "ok" : fmt::format("FAILED at element {}", check.first_bad));
  if (!check.passed()) {
    throw Error(ErrorKind::check_failed,
                fmt::format("scan --check: the result differs from the reference ('{}' was "
                            "written)",
                            output));
  }
}

template <class T>
void scan_file(const Context& context, io::NpyArray& array, const ScanOptionsCli& cli) {
  const primitives::ScanOp op = primitives::parse_scan_op(cli.op);
  const auto kind =
      cli.exclusive ? primitives::ScanKind::exclusive : primitives::ScanKind::inclusive;
  std::span<T> values = array.values<T>();
  std::vector<T> input_copy;
  if (cli.check) input_copy.assign(values.begin(), values.end());
  primitives::scan<T>(context, values, values, op, kind);  // in place: one array in memory
  inject_test_fault<T>("scan-perturb", values);
  // As every --check: the output is written first, and a failed check keeps it (exit 8).
  io::write_npy(cli.output, array);
  if (cli.check) check_against_reference<T>(input_copy, values, op, kind, cli.output);
}

}  // namespace

void register_scan(CLI::App& app) {
  auto* command = app.add_subcommand(
      "scan", "Prefix scan (sum, product, min, max) of a .npy array into a .npy array");
  auto cli = std::make_shared<ScanOptionsCli>();
  command->footer(
      "Input: a .npy file (format 1-3, any shape, C or Fortran order) of int32, int64, uint32,\n"
      "float32 or float64 (numpy's '<i4', '<i8', '<u4', '<f4', '<f8'), scanned in C order.\n"
      "Output: a .npy file of the same dtype and shape. An integer sum that does not fit the\n"
      "dtype is an error (exit 3, nothing written); integer products wrap.");
  command->add_option("--input,-i", cli->input, "Input .npy file ('-' = stdin)")->required();
  command->add_option("--output,-o", cli->output, "Output .npy file (same dtype and shape)")
      ->required();
  command->add_option("--op", cli->op, "sum | product | min | max")
      ->check(accepted_by([](std::string_view name) { primitives::parse_scan_op(name); }))
      ->capture_default_str();
  command->add_flag("--exclusive", cli->exclusive,
                    "y[i] combines x[0..i-1] (y[0] is the identity; sums start at +0)");
  command->add_flag("--check", cli->check,
                    "Also compute the sequential CPU reference and compare (exit 8 on a "
                    "mismatch; the output is still written)");
  add_device_options(*command, cli->device);
  command->callback([cli] {
    const Context context = resolve_context(cli->device);
    io::NpyArray array = io::read_npy(cli->input, {kPrimitiveDtypes, "scan"});
    with_primitive_element_type(array.dtype, cli->input, "scan", [&](auto element) {
      scan_file<decltype(element)>(context, array, *cli);
    });
  });
}

}  // namespace gpukit::cli
