// gpukit compact: the elements of a .npy array that satisfy a predicate, in order, written as a
// 1-D .npy array of the same dtype.

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/primitives/check.hpp"
#include "gpukit/primitives/compact.hpp"

namespace gpukit::cli {

namespace {

struct CompactOptionsCli {
  DeviceOptions device;
  std::string input, output;
  std::string keep;
  bool check = false;
};

template <class T>
void compact_file(const Context& context, const io::NpyArray& array, const CompactOptionsCli& cli) {
  const primitives::KeepPredicate keep = primitives::parse_keep_predicate(cli.keep);
  const std::span<const T> values = array.values<T>();
  std::vector<T> kept(values.size());
  const std::int64_t count = primitives::compact<T>(context, values, kept, keep);
  kept.resize(static_cast<std::size_t>(count));
  inject_test_fault<T>("compact-perturb", std::span<T>(kept));
  // As every --check: the output is written first, and a failed check keeps it (exit 8).
  io::write_npy<T>(cli.output, std::span<const T>(kept));
  // A summary, not data: stderr, so that `-o -` carries only the array.
  fmt::print(stderr, "gpukit: compact: kept {} of {} elements ({})\n", count, values.size(),
             primitives::keep_predicate_name(keep));
  if (!cli.check) return;
  const primitives::CompactCheck check =
      primitives::check_compact_result<T>(values, std::span<const T>(kept), keep);
  std::cerr << fmt::format("gpukit: compact: check: sequential CPU reference keeps {}: {}\n",
                           check.reference_kept, check.passed ? "ok" : "FAILED");
  if (!check.passed) {
    throw Error(ErrorKind::check_failed,
                fmt::format("compact --check: the result differs from the reference ('{}' was "
                            "written)",
                            cli.output));
  }
}

}  // namespace

void register_compact(CLI::App& app) {
  auto* command = app.add_subcommand(
      "compact", "Keep the elements of a .npy array that satisfy a predicate (stable order)");
  auto cli = std::make_shared<CompactOptionsCli>();
  command->footer(
      "Input: a .npy file (format 1-3, any shape, C or Fortran order) of int32, int64, uint32,\n"
      "float32 or float64 (numpy's '<i4', '<i8', '<u4', '<f4', '<f8'), read in C order.\n"
      "Output: the kept elements, in order, as a 1-D .npy file of the same dtype.");
  command->add_option("--input,-i", cli->input, "Input .npy file ('-' = stdin)")->required();
  command->add_option("--output,-o", cli->output, "Output .npy file (1-D, same dtype)")->required();
  command->add_option("--keep", cli->keep, "nonzero | positive | negative | finite")
      ->check(accepted_by([](std::string_view name) { primitives::parse_keep_predicate(name); }))
      ->required();
  command->add_flag("--check", cli->check,
                    "Also compute the sequential CPU reference and compare (exit 8 on a "
                    "mismatch; the output is still written)");
  add_device_options(*command, cli->device);
  command->callback([cli] {
    const Context context = resolve_context(cli->device);
    const io::NpyArray array = io::read_npy(cli->input, {kPrimitiveDtypes, "compact"});
    with_primitive_element_type(array.dtype, cli->input, "compact", [&](auto element) {
      compact_file<decltype(element)>(context, array, *cli);
    });
  });
}

}  // namespace gpukit::cli
