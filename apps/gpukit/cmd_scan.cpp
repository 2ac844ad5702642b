// gpukit scan: the inclusive or exclusive scan of a .npy array, written as a .npy array of the
// same dtype and shape (scanned in C order).

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::cli {

namespace {

struct ScanOptionsCli {
  DeviceOptions device;
  std::string input, output;
  std::string op = "sum";
  bool exclusive = false;
  bool check = false;
};

/// --check: every output against the sequential reference. Integers and min/max must be equal;
/// sums and products within the canonical bracketing's bound, (26 + i / 4096) roundings of at
/// most eps times the prefix of |x| (sums) or |reference| (products). Prints the seeds' metrics.
template <class T>
void check_against_reference(std::span<const T> input, std::span<const T> result,
                             primitives::ScanOp op, primitives::ScanKind kind) {
  std::vector<T> reference(input.size());
  primitives::scan_sequential<T>(input, reference, op, kind);
  std::int64_t bad = -1;
  long double magnitude = 0;
  for (std::size_t i = 0; i < input.size() && bad < 0; ++i) {
    const T r = reference[i], y = result[i];
    bool ok = false;
    if constexpr (std::is_floating_point_v<T>) {
      if (kind == primitives::ScanKind::inclusive) magnitude += std::fabs(input[i]);
      const double roundings = 26.0 + double(i / primitives::canonical_scan::kTile);
      const double scale = op == primitives::ScanOp::sum ? double(magnitude) : std::fabs(double(r));
      ok = (std::isnan(r) && std::isnan(y)) || r == y ||
           (op != primitives::ScanOp::min && op != primitives::ScanOp::max &&
            std::fabs(double(y) - double(r)) <=
                roundings * std::numeric_limits<T>::epsilon() * scale);
      if (kind == primitives::ScanKind::exclusive) magnitude += std::fabs(input[i]);
    } else {
      ok = r == y;
    }
    if (!ok) bad = static_cast<std::int64_t>(i);
  }
  const ErrorMetrics m = compare<T, T>(reference, result);
  std::cerr << fmt::format(
      "gpukit: scan: check: sequential CPU reference, relative L1 {:.3g}, max abs error {:.3g}: "
      "{}\n",
      m.relative_l1, m.max_abs, bad < 0 ? "ok" : fmt::format("FAILED at element {}", bad));
  if (bad >= 0) throw Error(ErrorKind::check_failed, "scan: result differs from the reference");
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
  if (cli.check) check_against_reference<T>(input_copy, values, op, kind);
  io::write_npy(cli.output, array);
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
                    "Also compute the sequential CPU reference and compare (exit 8 on mismatch)");
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
