// gpukit reduce: one reduction of a .npy array, printed exactly.

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/primitives/check.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::cli {

namespace {

struct ReduceOptionsCli {
  DeviceOptions device;
  std::string input;
  std::string op = "sum";
  bool json = false;
  bool accurate = false;
  bool check = false;
};

template <class T>
void reduce_and_print(const Context& context, const io::NpyArray& array,
                      const ReduceOptionsCli& cli) {
  const primitives::ReduceOp op = primitives::parse_reduce_op(cli.op);
  primitives::ReduceOptions options;
  options.accurate_sum = cli.accurate;
  const std::span<const T> values = array.values<T>();
  const auto result = primitives::reduce<T>(context, values, op, options);
  const std::string dtype(io::dtype_name(array.dtype));
  if (cli.json) {
    nlohmann::json out = {{"result", result},
                          {"dtype", dtype},
                          {"n", array.size()},
                          {"op", std::string(primitives::reduce_op_name(op))},
                          {"device", context.describe()}};
    // JSON has no NaN or infinity: those results travel as strings.
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(result)) out["result"] = fmt::format("{}", result);
    }
    std::cout << out.dump() << '\n';
  } else {
    // fmt's default float format is the shortest string that reads back to the same value.
    fmt::print("{}\n", result);
  }
  if (cli.check) {
    const primitives::ReduceCheck<T> check = primitives::check_reduce_result<T>(values, op, result);
    std::cerr << fmt::format(
        "gpukit: reduce: check: sequential CPU reference {}, |difference| {:.3g}: {}\n",
        check.reference, check.difference, check.passed ? "ok" : "FAILED");
    if (!check.passed)
      throw Error(ErrorKind::check_failed, "reduce: result differs from the reference");
  }
}

}  // namespace

void register_reduce(CLI::App& app) {
  auto* command = app.add_subcommand(
      "reduce", "Reduce a .npy array (sum, product, min, max, and, or, xor) and print the result");
  auto cli = std::make_shared<ReduceOptionsCli>();
  command->footer(
      "Input: a .npy file (format 1-3, any shape, C or Fortran order) of int32, int64, uint32,\n"
      "float32 or float64 (numpy's '<i4', '<i8', '<u4', '<f4', '<f8'). and, or and xor need\n"
      "integers. Output on stdout: integers exactly (int32 sums widen to int64), floats in the\n"
      "shortest form that reads back to the same value.");
  command->add_option("--input,-i", cli->input, "Input .npy file ('-' = stdin)")->required();
  command->add_option("--op", cli->op, "sum | product | min | max | and | or | xor")
      ->check(accepted_by([](std::string_view name) { primitives::parse_reduce_op(name); }))
      ->capture_default_str();
  command->add_flag("--json", cli->json,
                    "Print {result, dtype, n, op, device} as one line of JSON on stdout");
  command->add_flag("--accurate", cli->accurate,
                    "Floating sums: accumulate in double / double-double (same fixed tree)");
  command->add_flag("--check", cli->check,
                    "Also compute the sequential CPU reference and compare (exit 8 on mismatch)");
  add_device_options(*command, cli->device);
  command->callback([cli] {
    const Context context = resolve_context(cli->device);
    const io::NpyArray array = io::read_npy(cli->input, {kPrimitiveDtypes, "reduce"});
    with_primitive_element_type(array.dtype, cli->input, "reduce", [&](auto element) {
      reduce_and_print<decltype(element)>(context, array, *cli);
    });
  });
}

}  // namespace gpukit::cli
