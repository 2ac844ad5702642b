// gpukit saxpy: OUT = alpha * X + Y for two .npy arrays of one shape and dtype (float32 or
// float64), written as a .npy array of that shape and dtype.

#include <array>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_common.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"

namespace gpukit::cli {

namespace {

struct SaxpyOptionsCli {
  DeviceOptions device;
  std::string alpha;
  std::string x, y, output;
  bool check = false;
};

inline constexpr std::array<io::NpyDtype, 2> kSaxpyDtypes = {io::NpyDtype::float32,
                                                             io::NpyDtype::float64};

// numpy's spelling of a shape: (), (5,), (2, 3).
std::string shape_text(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

template <class T>
void saxpy_files(const Context& context, const io::NpyArray& x, io::NpyArray& y,
                 const SaxpyOptionsCli& cli) {
  const T alpha = scalar_option<T>("--alpha", cli.alpha);
  const std::span<T> y_values = y.values<T>();
  // --check needs the original y; an NpyArray copy names the bytes it asked for if memory is short.
  const io::NpyArray y_before = cli.check ? y : io::NpyArray();
  blas::axpy<T>(context, alpha, x.values<T>(), y_values, y_values);  // in place: two arrays held
  inject_test_fault<T>("saxpy-perturb", y_values);
  // As every --check: the output is written first, and a failed check keeps it (exit 8).
  io::write_npy(cli.output, y);
  if (cli.check) {
    const auto rounding = context.backend == Backend::cpu ? blas::AxpyRounding::fused_or_separate
                                                          : blas::AxpyRounding::fused;
    const blas::AxpyCheck check =
        blas::check_axpy_result<T>(alpha, x.values<T>(), y_before.values<T>(), y_values, rounding);
    std::cerr << fmt::format(
        "gpukit: saxpy: check: exact reference ({}), relative L1 {:.3g}, max abs error {:.3g}: "
        "{}\n",
        rounding == blas::AxpyRounding::fused
            ? "every element round(alpha*x + y)"
            : "every element round(alpha*x + y) or round(round(alpha*x) + y), as OpenBLAS may do",
        check.metrics.relative_l1, check.metrics.max_abs,
        check.passed() ? "ok"
                       : fmt::format("FAILED: {}, the first at {}",
                                     count_text(check.bad_count, "element"), check.first_bad));
    if (!check.passed()) {
      throw Error(ErrorKind::check_failed,
                  fmt::format("saxpy --check: the result differs from the reference ('{}' was "
                              "written)",
                              cli.output));
    }
  }
}

}  // namespace

void register_saxpy(CLI::App& app) {
  auto* command = app.add_subcommand(
      "saxpy", "OUT = alpha * X + Y for two .npy arrays (SAXPY / DAXPY), written as a .npy array");
  auto cli = std::make_shared<SaxpyOptionsCli>();
  command->footer(
      "Input: two .npy files (format 1-3, C or Fortran order) of the same shape and dtype,\n"
      "float32 or float64 (numpy's '<f4', '<f8'); any number of dimensions, element by element\n"
      "as numpy's alpha * x + y (no broadcasting). Output: a .npy file of that shape and dtype;\n"
      "OUT may be Y's path. alpha is read in the arrays' dtype. On the GPU every element is\n"
      "round(alpha*x + y), one fused multiply-add; on the CPU (OpenBLAS) it may be\n"
      "round(round(alpha*x) + y). alpha = 0 gives Y exactly (BLAS's rule: X is not read);\n"
      "otherwise NaN and infinities propagate. alpha is a finite decimal number: one beyond the\n"
      "dtype's range, or a non-zero one that would round to 0, is a usage error (exit 2), as for\n"
      "gemm. Nothing is written on any error but a failed --check (exit 8, OUT is kept).");
  command->add_option("--alpha,-a", cli->alpha, "The scalar alpha (a decimal number)")->required();
  command->add_option("x", cli->x, "X: input .npy file ('-' = stdin)")->required();
  command->add_option("y", cli->y, "Y: input .npy file ('-' = stdin)")->required();
  command->add_option("--output,-o", cli->output, "Output .npy file (may be Y's path)")->required();
  command->add_flag("--check", cli->check,
                    "Also compare every element with the exact reference (exit 8 on a mismatch; "
                    "OUT is still written)");
  add_device_options(*command, cli->device);
  command->callback([cli] {
    scalar_option<double>("--alpha", cli->alpha);  // float32's range once the dtype is known
    refuse_stdin_twice({{"X", cli->x}, {"Y", cli->y}});
    const Context context = resolve_context(cli->device);
    const io::NpyArray x = io::read_npy(cli->x, {kSaxpyDtypes, "saxpy"});
    io::NpyArray y = io::read_npy(cli->y, {kSaxpyDtypes, "saxpy"});
    if (x.dtype != y.dtype) {
      throw InvalidInput(fmt::format("saxpy: {} is {} and {} is {}: X and Y must have one dtype",
                                     cli->x, io::dtype_name(x.dtype), cli->y,
                                     io::dtype_name(y.dtype)));
    }
    if (x.shape != y.shape) {
      throw InvalidInput(fmt::format("saxpy: the shapes differ: {} is {} and {} is {}", cli->x,
                                     shape_text(x.shape), cli->y, shape_text(y.shape)));
    }
    if (x.dtype == io::NpyDtype::float32) {
      saxpy_files<float>(context, x, y, *cli);
    } else {
      saxpy_files<double>(context, x, y, *cli);
    }
  });
}

}  // namespace gpukit::cli
