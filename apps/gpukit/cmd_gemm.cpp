// gpukit gemm: C = alpha * op(A) @ op(B) [+ beta * C0] for two 2-D .npy arrays, as numpy's matmul
// for 2-D arrays; the output has the inputs' dtype.

#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"

namespace gpukit::cli {

namespace {

struct GemmOptionsCli {
  DeviceOptions device;
  std::string a_path, b_path, c0_path, output, precision, variant;
  bool transpose_a = false, transpose_b = false, check = false;
  std::string alpha = "1", beta = "0";  // read under blas::parse_scalar's rule, in the dtype
};

constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};

io::NpyArray read_matrix(const std::string& path) { return io::read_npy(path, {kFloats, "gemm"}); }

// A matrix read from `path` as blas::gemm_problem names it: by its path.
blas::GemmOperand operand(const std::string& path, const io::NpyArray& array) {
  return {path, array.shape, io::dtype_name(array.dtype)};
}

template <class T>
void multiply_files(const Context& context, const blas::GemmProblem& problem, const io::NpyArray& a,
                    const io::NpyArray& b, const io::NpyArray* c0, const GemmOptionsCli& cli) {
  const T alpha = scalar_option<T>("--alpha", cli.alpha);
  const T beta = scalar_option<T>("--beta", cli.beta);
  io::NpyArray c(a.dtype, {problem.m, problem.n});
  const std::span<T> c_values = c.values<T>();
  if (c0 != nullptr) {
    const std::span<const T> c0_values = c0->values<T>();
    std::copy(c0_values.begin(), c0_values.end(), c_values.begin());
  }
  const std::span<const T> c0_values = c0 != nullptr ? c0->values<T>() : std::span<const T>();
  blas::gemm<T>(context, problem, alpha, a.values<T>(), b.values<T>(), beta, c_values, cli.variant);
  inject_test_fault<T>("gemm-perturb", c_values);
  io::write_npy(cli.output, c);
  if (!cli.check) return;
  const blas::GemmCheck check =
      blas::check_gemm<T>(problem, alpha, a.values<T>(), b.values<T>(), beta, c0_values,
                          c.values<T>(), context.effective_cpu_threads());
  std::cerr << fmt::format(
      "gpukit: gemm: check: long double reference, relative L1 {:.3g}, max abs error {:.3g}, "
      "{} of {} elements outside the bound (worst error/bound {:.3g}): {}\n",
      check.metrics.relative_l1, check.metrics.max_abs, check.failures, problem.m * problem.n,
      check.worst_error_over_bound, check.passed() ? "ok" : "FAILED");
  if (!check.passed()) {
    throw Error(ErrorKind::check_failed,
                fmt::format("gemm --check: C differs from the reference beyond the bound at ({}, "
                            "{}) ('{}' was written)",
                            check.first_failure_row, check.first_failure_column, cli.output));
  }
}

void run_gemm(const GemmOptionsCli& cli) {
  // The scalars in float64 first, before anything is read; in float32 once the dtype is known.
  scalar_option<double>("--alpha", cli.alpha);
  // BLAS's rule (gemm.hpp): with beta = 0, C0 is not read, so --c is neither needed nor read.
  const bool reads_c0 = scalar_option<double>("--beta", cli.beta) != 0;
  if (reads_c0 && cli.c0_path.empty()) {
    throw UsageError(fmt::format("--beta {} needs --c (the M x N matrix C0 it scales)", cli.beta));
  }
  if (!reads_c0 && !cli.c0_path.empty() && !quiet()) {
    std::cerr << fmt::format("gpukit: gemm: --beta is 0, so --c {} is not read\n", cli.c0_path);
  }
  refuse_stdin_twice({{"A", cli.a_path}, {"B", cli.b_path}, {"C0", reads_c0 ? cli.c0_path : ""}});
  const Context context = resolve_context(cli.device);
  const io::NpyArray a = read_matrix(cli.a_path);
  const io::NpyArray b = read_matrix(cli.b_path);
  // The library's rules of the problem (numpy's matmul of 2-D arrays, as Python's gemm), before
  // anything is allocated or written.
  const blas::GemmProblem problem =
      blas::gemm_problem(operand(cli.a_path, a), operand(cli.b_path, b), cli.transpose_a,
                         cli.transpose_b, cli.precision, "--precision");
  const bool single = a.dtype == io::NpyDtype::float32;
  io::NpyArray c0;
  if (reads_c0) {
    c0 = read_matrix(cli.c0_path);
    blas::check_gemm_c0(problem, operand(cli.c0_path, c0));
  }
  if (!quiet()) {
    std::cerr << fmt::format("gpukit: gemm: {} on {}\n", problem.describe(), context.describe());
  }
  const io::NpyArray* c0_pointer = reads_c0 ? &c0 : nullptr;
  if (single) {
    multiply_files<float>(context, problem, a, b, c0_pointer, cli);
  } else {
    multiply_files<double>(context, problem, a, b, c0_pointer, cli);
  }
}

}  // namespace

void register_gemm(CLI::App& app) {
  auto* command = app.add_subcommand(
      "gemm", "Multiply two 2-D .npy matrices: C = alpha * A @ B (+ beta * C0), as numpy.matmul");
  auto cli = std::make_shared<GemmOptionsCli>();
  command->footer(
      "Inputs: 2-D float32 or float64 .npy files (C or Fortran order), both of one dtype; the\n"
      "output has that dtype. --precision tf32 or bf16 takes float32 inputs and rounds them to\n"
      "the tensor-core format before multiplying (float32 accumulation). NaN and Inf propagate as\n"
      "in BLAS; with --beta 0 (the default) C0 is not read (--c is then neither needed nor\n"
      "read). --alpha and --beta are finite decimal numbers read in the inputs' dtype (float32\n"
      "for tf32 and bf16): one beyond its range, or a non-zero one that would round to 0, is a\n"
      "usage error (exit 2), as for saxpy. At most one of A, B and C0 may be stdin ('-').");
  command->add_option("a", cli->a_path, "A: M x K (.npy; K x M with --transpose-a)")->required();
  command->add_option("b", cli->b_path, "B: K x N (.npy; N x K with --transpose-b)")->required();
  command->add_option("--output,-o", cli->output, "C: M x N .npy of the inputs' dtype")->required();
  command
      ->add_option("--precision", cli->precision,
                   "float | double | tf32 | bf16 (default: the inputs' dtype)")
      ->check(accepted_by([](std::string_view name) { blas::parse_gemm_precision(name); }));
  command->add_flag("--transpose-a", cli->transpose_a, "Multiply by A^T");
  command->add_flag("--transpose-b", cli->transpose_b, "Multiply by B^T");
  command->add_option("--alpha", cli->alpha, "Scale of the product (default 1)");
  command->add_option("--beta", cli->beta, "Scale of C0 (default 0; other than 0 it needs --c)");
  command->add_option("--c", cli->c0_path, "C0: M x N .npy added as beta * C0 (read if beta != 0)");
  command
      ->add_option("--variant", cli->variant,
                   "openblas on the CPU; on a GPU a CUDA variant (default: cuBLAS; `gpukit bench "
                   "gemm` lists them)")
      ->check(accepted_by([](std::string_view name) { blas::check_gemm_variant_name(name); }));
  command->add_flag("--check", cli->check,
                    "Check C against a long double reference, every element within its derived "
                    "bound (exit 8 on a mismatch; C is still written)");
  add_device_options(*command, cli->device);
  command->callback([cli] { run_gemm(*cli); });
}

}  // namespace gpukit::cli
