// Reduction, scan and compaction: the calls of `gpukit reduce`, `scan` and `compact`
// (apps/gpukit/cmd_reduce.cpp, cmd_scan.cpp, cmd_compact.cpp) on arrays in host memory, and their
// *_on_device twins on CUDA arrays; reduce also over a device list or the ranks of an MPI job
// (gpukit/scale_out/reduce.hpp).

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "arrays.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/scale_out/reduce.hpp"

namespace gpukit::python {

namespace {

nb::object reduce(const InArray& x, std::string_view op_name, bool accurate,
                  std::string_view device, std::uintptr_t stream) {
  const primitives::ReduceOp op = primitives::parse_reduce_op(op_name);
  primitives::ReduceOptions options;
  options.accurate_sum = accurate;
  // A device list, or the ranks of an MPI job: the call `gpukit reduce` makes then, every rank
  // getting the result.
  const std::optional<scale_out::Job> job = spread_job(device, {{"x", place_of(x, "x")}});
  const Placement where = job ? Placement{} : place_call(device, {{"x", place_of(x, "x")}}, stream);
  return with_primitive_type(x.dtype(), "reduce", [&](auto element) -> nb::object {
    using T = decltype(element);
    primitives::reduce_result_t<T> result{};
    {
      nb::gil_scoped_release released;
      if (job) {
        result = scale_out::reduce<T>(*job, span_of<T>(x), op, options,
                                      scale_out::Results::on_every_rank);
      } else {
        const DeviceGuard guard(where.context);
        if (where.device_data) {
          auto& workspace =
              thread_workspace<primitives::ReduceWorkspace>(where.context.cuda_device);
          result = primitives::reduce_on_device<T>(data_of<T>(x), count_of(x), op, workspace,
                                                   where.stream, options);
        } else {
          result = primitives::reduce<T>(where.context, span_of<T>(x), op, options);
        }
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      return nb::float_(static_cast<double>(result));
    } else {
      return nb::int_(result);
    }
  });
}

void scan(const InArray& x, const OutArray& out, std::string_view op_name, bool exclusive,
          std::string_view device, std::uintptr_t stream) {
  const primitives::ScanOp op = primitives::parse_scan_op(op_name);
  const auto kind = exclusive ? primitives::ScanKind::exclusive : primitives::ScanKind::inclusive;
  const Placement where =
      place_call(device, {{"x", place_of(x, "x")}, {"out", place_of(out, "out")}}, stream);
  require_like(out, count_of(x), x.dtype(), "scan");
  with_primitive_type(x.dtype(), "scan", [&](auto element) {
    using T = decltype(element);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      auto& workspace = thread_workspace<primitives::ScanWorkspace>(where.context.cuda_device);
      primitives::scan_on_device<T>(data_of<T>(x), data_of<T>(out), count_of(x), op, kind,
                                    workspace, where.stream);
    } else {
      primitives::scan<T>(where.context, span_of<T>(x), span_of<T>(out), op, kind);
    }
  });
}

std::int64_t compact(const InArray& x, const OutArray& out, std::string_view keep_name,
                     std::string_view device, std::uintptr_t stream) {
  const primitives::KeepPredicate keep = primitives::parse_keep_predicate(keep_name);
  const Placement where =
      place_call(device, {{"x", place_of(x, "x")}, {"out", place_of(out, "out")}}, stream);
  require_like(out, count_of(x), x.dtype(), "compact");
  return with_primitive_type(x.dtype(), "compact", [&](auto element) {
    using T = decltype(element);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      auto& workspace = thread_workspace<primitives::ScanWorkspace>(where.context.cuda_device);
      return primitives::compact_on_device<T>(data_of<T>(x), data_of<T>(out), count_of(x), keep,
                                              workspace, where.stream);
    }
    return primitives::compact<T>(where.context, span_of<T>(x), span_of<T>(out), keep);
  });
}

// The benchmark's baseline (bench/python/reduce_overhead.py): `repeats` back-to-back calls of the
// C++ API on a CUDA array, each timed on the host clock (the call waits for its result), with no
// Python between them. Seconds per call.
std::vector<double> time_reduce_on_device(const InArray& x, std::string_view op_name, int repeats,
                                          std::uintptr_t stream) {
  const primitives::ReduceOp op = primitives::parse_reduce_op(op_name);
  const Placement where = place_call("auto", {{"x", place_of(x, "x")}}, stream);
  if (!where.device_data) throw InvalidInput("time_reduce_on_device: x must be a CUDA array");
  std::vector<double> seconds;
  with_primitive_type(x.dtype(), "reduce", [&](auto element) {
    using T = decltype(element);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    auto& workspace = thread_workspace<primitives::ReduceWorkspace>(where.context.cuda_device);
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const auto result =
          primitives::reduce_on_device<T>(data_of<T>(x), count_of(x), op, workspace, where.stream);
      const auto stop = std::chrono::steady_clock::now();
      static_cast<void>(result);
      seconds.push_back(std::chrono::duration<double>(stop - start).count());
    }
  });
  return seconds;
}

}  // namespace

void bind_primitives(nb::module_& m) {
  m.def("time_reduce_on_device", &time_reduce_on_device, nb::arg("x"), nb::arg("op"),
        nb::arg("repeats"), nb::arg("stream"),
        "Seconds per call of `repeats` back-to-back primitives::reduce_on_device calls on the "
        "CUDA array x, timed in C++ (the baseline of bench/python/reduce_overhead.py).");
  m.def("reduce", &reduce, nb::arg("x"), nb::arg("op"), nb::arg("accurate"), nb::arg("device"),
        nb::arg("stream"),
        "primitives::reduce (host x) or reduce_on_device (CUDA x, waits for `stream`) of the "
        "C-contiguous x, or scale_out::reduce (host x with a device list, or under mpirun: "
        "every rank the result); int for integer x (exact), float otherwise.");
  m.def("scan", &scan, nb::arg("x"), nb::arg("out"), nb::arg("op"), nb::arg("exclusive"),
        nb::arg("device"), nb::arg("stream"),
        "primitives::scan / scan_on_device (waits for `stream`) of x into out (x's size and "
        "dtype, x itself allowed).");
  m.def("compact", &compact, nb::arg("x"), nb::arg("out"), nb::arg("keep"), nb::arg("device"),
        nb::arg("stream"),
        "primitives::compact / compact_on_device (waits for `stream`): the kept elements of x to "
        "the front of out (x's size and dtype); returns their number.");
}

}  // namespace gpukit::python
