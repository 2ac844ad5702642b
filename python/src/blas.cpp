// GEMM and AXPY: the calls of `gpukit gemm` and `gpukit saxpy` (apps/gpukit/cmd_gemm.cpp,
// cmd_saxpy.cpp) on matrices and vectors in host memory or on a CUDA device.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "arrays.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/scalar.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::python {

namespace {

// numpy's spelling of a 2-D shape, as `gpukit gemm` writes it.
std::string shape_text(const InArray& matrix) {
  return fmt::format("({}, {})", matrix.shape(0), matrix.shape(1));
}

bool same_problem(const blas::GemmProblem& a, const blas::GemmProblem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.layout == b.layout &&
         a.transpose_a == b.transpose_a && a.transpose_b == b.transpose_b && a.lda == b.lda &&
         a.ldb == b.ldb && a.ldc == b.ldc && a.precision == b.precision;
}

// The calling thread's last CUDA GEMM plan (a cuBLAS handle and, for bf16, its operand copies),
// kept so that a loop of products of one shape plans once. Its runs are queued, not waited for:
// before it serves another stream or is replaced, the stream of its last run is waited for.
struct GemmPlanCache {
  int device = -1;
  blas::GemmProblem problem;
  std::string variant;
  std::unique_ptr<blas::GemmPlan> plan;
  StreamHandle last_stream = {};
  bool in_flight = false;

  blas::GemmPlan& plan_for(const Context& context, const blas::GemmProblem& wanted,
                           const std::string& wanted_variant, StreamHandle stream) {
    const bool same = plan && device == context.cuda_device && same_problem(problem, wanted) &&
                      variant == wanted_variant;
    if (in_flight && (!same || stream != last_stream)) {
      cuda::synchronize_stream(last_stream);
      in_flight = false;
    }
    if (!same) {
      plan.reset();
      plan = std::make_unique<blas::GemmPlan>(context, wanted, wanted_variant);
      device = context.cuda_device, problem = wanted, variant = wanted_variant;
    }
    return *plan;
  }
};

void gemm(const InArray& a, const InArray& b, const OutArray& c, bool transpose_a, bool transpose_b,
          std::string_view precision, double alpha, double beta, const std::string& variant,
          std::string_view device, std::uintptr_t stream) {
  if (a.ndim() != 2 || b.ndim() != 2) {
    const InArray& bad = a.ndim() != 2 ? a : b;
    throw InvalidInput(
        fmt::format("gemm takes 2-D arrays, not {}-D ({})", bad.ndim(), a.ndim() != 2 ? "a" : "b"));
  }
  if (a.dtype() != b.dtype()) {
    throw InvalidInput(fmt::format("gemm: a is {} but b is {}; give both the same dtype",
                                   dtype_name(a.dtype()), dtype_name(b.dtype())));
  }
  const bool single = holds<float>(a.dtype());
  if (!single && !holds<double>(a.dtype())) {
    throw InvalidInput("gemm takes float32 or float64, not " + dtype_name(a.dtype()));
  }
  // As `gpukit gemm` builds the problem (cmd_gemm.cpp, run_gemm): numpy's matmul of 2-D arrays,
  // op(A) M x K and op(B) K x N, row-major and packed (the arrays are C-contiguous).
  blas::GemmProblem problem;
  problem.precision = precision.empty()
                          ? (single ? blas::GemmPrecision::float32 : blas::GemmPrecision::float64)
                          : blas::parse_gemm_precision(precision);
  if ((problem.precision == blas::GemmPrecision::float64) == single) {
    throw InvalidInput(fmt::format(
        "gemm: precision {} computes on {} data, but the inputs are {} (the output keeps the "
        "inputs' dtype)",
        precision, single ? "float64" : "float32", dtype_name(a.dtype())));
  }
  problem.transpose_a = transpose_a;
  problem.transpose_b = transpose_b;
  const auto a_rows = static_cast<std::int64_t>(a.shape(0));
  const auto a_columns = static_cast<std::int64_t>(a.shape(1));
  const auto b_rows_stored = static_cast<std::int64_t>(b.shape(0));
  const auto b_columns_stored = static_cast<std::int64_t>(b.shape(1));
  problem.m = transpose_a ? a_columns : a_rows;
  problem.k = transpose_a ? a_rows : a_columns;
  const std::int64_t b_rows = transpose_b ? b_columns_stored : b_rows_stored;
  problem.n = transpose_b ? b_rows_stored : b_columns_stored;
  if (b_rows != problem.k) {
    throw InvalidInput(fmt::format(
        "gemm: shapes do not match: a{} has shape {} and b{} has shape {} ({} columns against {} "
        "rows)",
        transpose_a ? " (transposed)" : "", shape_text(a), transpose_b ? " (transposed)" : "",
        shape_text(b), problem.k, b_rows));
  }
  blas::validate_gemm_problem(problem);
  require_like(c, problem.m * problem.n, a.dtype(), "gemm");
  const Placement where = place_call(
      device, {{"a", place_of(a, "a")}, {"b", place_of(b, "b")}, {"c", place_of(c, "c")}}, stream);
  auto run = [&](auto element) {
    using T = decltype(element);
    const T alpha_t = blas::scalar_from_double<T>("alpha", alpha);
    const T beta_t = blas::scalar_from_double<T>("beta", beta);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      thread_local GemmPlanCache cache;
      blas::GemmPlan& plan = cache.plan_for(where.context, problem, variant, where.stream);
      plan.run<T>(alpha_t, data_of<T>(a), data_of<T>(b), beta_t, data_of<T>(c), where.stream);
      cache.in_flight = true;
      cache.last_stream = where.stream;
    } else {
      blas::gemm<T>(where.context, problem, alpha_t, span_of<T>(a), span_of<T>(b), beta_t,
                    span_of<T>(c), variant);
    }
  };
  if (single) {
    run(float{});
  } else {
    run(double{});
  }
}

void saxpy(double alpha, const InArray& x, const InArray& y, const OutArray& out,
           std::string_view device, std::uintptr_t stream) {
  if (x.dtype() != y.dtype()) {
    throw InvalidInput(fmt::format("saxpy: x is {} and y is {}: x and y must have one dtype",
                                   dtype_name(x.dtype()), dtype_name(y.dtype())));
  }
  if (x.size() != y.size()) {
    throw InvalidInput(fmt::format("saxpy: x has {} elements and y has {}", x.size(), y.size()));
  }
  require_like(out, count_of(x), x.dtype(), "saxpy");
  const Placement where = place_call(
      device, {{"x", place_of(x, "x")}, {"y", place_of(y, "y")}, {"out", place_of(out, "out")}},
      stream);
  with_real_type(x.dtype(), "saxpy", [&](auto element) {
    using T = decltype(element);
    // alpha in the arrays' type under the CLI's rule (gpukit/blas/scalar.hpp): a Python float
    // rounded once to float32, refused when not finite or out of the dtype's range.
    const T a = blas::scalar_from_double<T>("alpha", alpha);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      blas::axpy_on_device<T>(a, data_of<T>(x), data_of<T>(y), data_of<T>(out), count_of(x),
                              where.stream);
    } else {
      blas::axpy<T>(where.context, a, span_of<T>(x), span_of<T>(y), span_of<T>(out));
    }
  });
}

// blas::scalar_from_double for a dtype named as numpy names it: the value rounded to the dtype, as
// a Python float.
double blas_scalar(std::string_view name, double value, std::string_view dtype) {
  if (dtype == "float32") return blas::scalar_from_double<float>(name, value);
  if (dtype == "float64") return blas::scalar_from_double<double>(name, value);
  throw InvalidInput(
      fmt::format("{}: gemm and saxpy take float32 or float64, not {}", name, dtype));
}

}  // namespace

void bind_blas(nb::module_& m) {
  m.def("blas_scalar", &blas_scalar, nb::arg("name"), nb::arg("value"), nb::arg("dtype"),
        "blas::scalar_from_double (gpukit/blas/scalar.hpp): `value` rounded to `dtype` (float32 "
        "or float64); ValueError naming `name` when it is not finite, beyond the dtype's range, "
        "or a non-zero value that would round to 0.");
  m.def("gemm", &gemm, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("transpose_a"),
        nb::arg("transpose_b"), nb::arg("precision"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("variant"), nb::arg("device"), nb::arg("stream"),
        "blas::gemm (host arrays) or a GemmPlan run (CUDA arrays, queued on `stream`; the plan is "
        "kept per thread) of C = alpha op(a) op(b) + beta C for C-contiguous 2-D a, b and c (M x "
        "N, the inputs' dtype; read when beta != 0).");
  m.def("saxpy", &saxpy, nb::arg("alpha"), nb::arg("x"), nb::arg("y"), nb::arg("out"),
        nb::arg("device"), nb::arg("stream"),
        "blas::axpy (host arrays) or axpy_on_device (CUDA arrays, queued on `stream`): out = "
        "alpha x + y, alpha rounded to the arrays' dtype; out may be y.");
}

}  // namespace gpukit::python
