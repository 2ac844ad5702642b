// gpukit reduce: one reduction of a .npy array, printed exactly.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "cli_distributed.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/primitives/check.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/scale_out/reduce.hpp"

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

// The printed result: integers exactly, floats in the shortest form that reads back to the same
// value (fmt's default), NaN as "nan" whatever its sign bit, the infinities as "inf", "-inf".
template <class R>
std::string result_text(R result) {
  if constexpr (std::is_floating_point_v<R>) {
    if (std::isnan(result)) return "nan";
  }
  return fmt::format("{}", result);
}

template <class T>
void print_and_check(const std::string& device, std::span<const T> values, std::int64_t count,
                     const std::string& dtype, const ReduceOptionsCli& cli,
                     primitives::reduce_result_t<T> result) {
  const primitives::ReduceOp op = primitives::parse_reduce_op(cli.op);
  // --json's result is the same text as a string, always: exact for every value (a JSON number
  // read as a double would round an int64 beyond 2^53) and valid JSON for NaN and Inf.
  const std::string text = result_text(result);
  if (cli.json) {
    const nlohmann::json out = {{"result", text},
                                {"dtype", dtype},
                                {"n", count},
                                {"op", std::string(primitives::reduce_op_name(op))},
                                {"device", device}};
    std::cout << out.dump() << '\n';
  } else {
    std::cout << text << '\n';
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

// One call over the job's devices (gpukit/scale_out/reduce.hpp: on one device the reduction
// itself; across several GPUs or ranks, the tiles of the canonical tree shared out and combined
// in block order, with the same bits), then rank 0 prints. `array` is rank 0's (null elsewhere).
template <class T>
void reduce_and_print(const Job& job, const io::NpyArray* array, const ReduceOptionsCli& cli) {
  primitives::ReduceOptions options;
  options.accurate_sum = cli.accurate;
  const std::span<const T> values = array ? array->values<T>() : std::span<const T>{};
  const auto result =
      scale_out::reduce<T>(job, values, primitives::parse_reduce_op(cli.op), options);
  scale_out::on_root(job, [&] {
    print_and_check<T>(job.description, values, static_cast<std::int64_t>(array->size()),
                       std::string(io::dtype_name(array->dtype)), cli, result);
  });
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
      "shortest form that reads back to the same value, NaN as nan, infinities as inf, -inf.");
  command->add_option("--input,-i", cli->input, "Input .npy file ('-' = stdin)")->required();
  command->add_option("--op", cli->op, "sum | product | min | max | and | or | xor")
      ->check(accepted_by([](std::string_view name) { primitives::parse_reduce_op(name); }))
      ->capture_default_str();
  command->add_flag("--json", cli->json,
                    "Print {result, dtype, n, op, device} as one line of JSON on stdout (result "
                    "as a string: the printed text, exact, \"nan\", \"inf\" or \"-inf\" included)");
  command->add_flag("--accurate", cli->accurate,
                    "Floating sums: accumulate in double / double-double (same fixed tree)");
  command->add_flag("--check", cli->check,
                    "Also compute the sequential CPU reference and compare (exit 8 on mismatch)");
  add_device_options(*command, cli->device, DeviceLists::accepted);
  command->callback([cli] {
    const Job job = join_job(cli->device, "reduce");
    // Rank 0 reads the file and tells every rank its element type.
    std::optional<io::NpyArray> array;
    const io::NpyDtype dtype = scale_out::from_root(
        job, scale_out::on_root(job, [&] {
               array.emplace(io::read_npy(cli->input, {kPrimitiveDtypes, "reduce"}));
               with_primitive_element_type(array->dtype, cli->input, "reduce", [](auto) {});
               return array->dtype;
             }).value_or(io::NpyDtype::float64));
    with_primitive_element_type(dtype, cli->input, "reduce", [&](auto element) {
      reduce_and_print<decltype(element)>(job, array ? &*array : nullptr, *cli);
    });
  });
}

}  // namespace gpukit::cli
