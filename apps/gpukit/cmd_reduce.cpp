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
#include "gpukit/distributed/test_fault.hpp"
#include "gpukit/distributed/workers.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/primitives/check.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/reduce_partials.hpp"

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

template <class T>
void reduce_and_print(const Context& context, const io::NpyArray& array,
                      const ReduceOptionsCli& cli) {
  const primitives::ReduceOp op = primitives::parse_reduce_op(cli.op);
  primitives::ReduceOptions options;
  options.accurate_sum = cli.accurate;
  const std::span<const T> values = array.values<T>();
  const auto result = primitives::reduce<T>(context, values, op, options);
  print_and_check<T>(context.describe(), values, static_cast<std::int64_t>(array.size()),
                     std::string(io::dtype_name(array.dtype)), cli, result);
}

// Across the job's workers (several GPUs, several ranks): the blocks are tiles of the canonical
// tree (primitives/reduce_partials.hpp); rank 0 sends each rank its blocks' elements, each worker
// computes its blocks' partials, and rank 0 runs the levels above them in block order: the bits
// of reduce() of the whole array, on any backend.
template <class T>
void reduce_across(const Job& job, const io::NpyArray* array, std::int64_t count,
                   const std::string& dtype, const ReduceOptionsCli& cli) {
  distributed::Communicator& comm = *job.comm;
  const primitives::ReduceOp op = primitives::parse_reduce_op(cli.op);
  primitives::ReduceOptions options;
  options.accurate_sum = cli.accurate;
  const primitives::ReduceSplit split =
      distributed::agree(comm, [&] { return primitives::reduce_split<T>(count, op, options); });
  const auto workers = static_cast<int>(job.workers.contexts.size());
  const distributed::WorkPlan plan = distributed::plan_work(comm, workers, split.blocks);
  const distributed::BlockRange mine = plan.rank_ranges[static_cast<std::size_t>(comm.rank())];
  const auto elements_of = [&](const distributed::BlockRange& r) {
    const std::int64_t first = r.first * split.block_elements;
    return std::min(count, r.end() * split.block_elements) - std::min(count, first);
  };

  // This rank's elements: rank 0's array itself in a job of one process, else what rank 0 sent.
  std::vector<std::byte> received;
  if (comm.distributed()) {
    std::vector<std::int64_t> sizes;
    std::span<const std::byte> all;
    if (comm.is_root()) {
      all = std::as_bytes(array->values<T>());
      for (const distributed::BlockRange& r : plan.rank_ranges) {
        sizes.push_back(elements_of(r) * static_cast<std::int64_t>(sizeof(T)));
      }
    }
    received = comm.scatter(all, sizes);
  }
  const std::span<const T> local =
      comm.distributed() ? std::span<const T>(reinterpret_cast<const T*>(received.data()),
                                              received.size() / sizeof(T))
                         : array->values<T>();
  const std::vector<std::byte> partials = distributed::compute_blocks<std::byte>(
      comm, job.workers.contexts, plan, static_cast<std::int64_t>(split.partial_bytes),
      [&](const Context& context, distributed::BlockRange range,
          const distributed::ReportProgress&) {
        distributed::inject_rank_fault(*job.comm);
        std::vector<std::byte> out(static_cast<std::size_t>(range.count) * split.partial_bytes);
        const std::int64_t at = (range.first - mine.first) * split.block_elements;
        primitives::reduce_partials<T>(context,
                                       local.subspan(static_cast<std::size_t>(at),
                                                     static_cast<std::size_t>(elements_of(range))),
                                       split, range.first, op, options, out);
        return out;
      });
  std::vector<std::byte>().swap(received);
  distributed::agree(comm, [&] {
    if (!comm.is_root()) return;
    const auto result =
        primitives::reduce_from_partials<T>(partials, split, op, options, cli.device.threads);
    print_and_check<T>(job.description, array->values<T>(), count, dtype, cli, result);
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
    if (!job.spread) {
      const io::NpyArray array = io::read_npy(cli->input, {kPrimitiveDtypes, "reduce"});
      with_primitive_element_type(array.dtype, cli->input, "reduce", [&](auto element) {
        reduce_and_print<decltype(element)>(job.workers.contexts.front(), array, *cli);
      });
      return;
    }
    // Rank 0 reads the file and tells every rank its type and size.
    distributed::Communicator& comm = *job.comm;
    std::optional<io::NpyArray> array;
    std::vector<std::int64_t> header = distributed::agree(comm, [&] {
      if (!comm.is_root()) return std::vector<std::int64_t>{};
      array.emplace(io::read_npy(cli->input, {kPrimitiveDtypes, "reduce"}));
      with_primitive_element_type(array->dtype, cli->input, "reduce", [](auto) {});
      return std::vector<std::int64_t>{static_cast<std::int64_t>(array->dtype),
                                       static_cast<std::int64_t>(array->size())};
    });
    const std::span<const std::byte> header_bytes = distributed::as_bytes(header);
    std::vector<std::byte> bytes(header_bytes.begin(), header_bytes.end());
    comm.broadcast(bytes);
    header = distributed::from_bytes<std::int64_t>(bytes);
    const auto dtype = static_cast<io::NpyDtype>(header[0]);
    with_primitive_element_type(dtype, cli->input, "reduce", [&](auto element) {
      reduce_across<decltype(element)>(job, array ? &*array : nullptr, header[1],
                                       std::string(io::dtype_name(dtype)), *cli);
    });
  });
}

}  // namespace gpukit::cli
