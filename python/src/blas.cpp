// GEMM and AXPY: the calls of `gpukit gemm` and `gpukit saxpy` (apps/gpukit/cmd_gemm.cpp,
// cmd_saxpy.cpp) on matrices and vectors in host memory or on a CUDA device.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arrays.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/scalar.hpp"

namespace gpukit::python {

namespace {

// A matrix argument as blas::gemm_problem reads it: its name, shape and dtype.
struct Operand {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  blas::GemmOperand view() const { return {name, shape, dtype}; }
};

Operand operand(std::string name, const std::vector<std::int64_t>& shape, std::string dtype) {
  return {std::move(name), std::move(dtype), shape};
}

Operand operand(std::string name, const InArray& array) {
  std::vector<std::int64_t> shape(array.ndim());
  for (std::size_t i = 0; i < shape.size(); ++i)
    shape[i] = static_cast<std::int64_t>(array.shape(i));
  return {std::move(name), dtype_name(array.dtype()), std::move(shape)};
}

// blas::gemm_problem (and, with c, check_gemm_c0) of `gemm`'s arguments as Python names them,
// before anything is allocated: the product's (M, N).
std::pair<std::int64_t, std::int64_t> gemm_shape(
    const std::vector<std::int64_t>& a_shape, const std::string& a_dtype,
    const std::vector<std::int64_t>& b_shape, const std::string& b_dtype, bool transpose_a,
    bool transpose_b, std::string_view precision,
    const std::optional<std::vector<std::int64_t>>& c_shape,
    const std::optional<std::string>& c_dtype) {
  const Operand a = operand("a", a_shape, a_dtype), b = operand("b", b_shape, b_dtype);
  const blas::GemmProblem problem =
      blas::gemm_problem(a.view(), b.view(), transpose_a, transpose_b, precision, "precision");
  if (c_shape) blas::check_gemm_c0(problem, operand("c", *c_shape, c_dtype.value_or("")).view());
  return {problem.m, problem.n};
}

void gemm(const InArray& a, const InArray& b, const OutArray& c, bool transpose_a, bool transpose_b,
          std::string_view precision, double alpha, double beta, const std::string& variant,
          std::string_view device, std::uintptr_t stream) {
  // As `gpukit gemm` builds the problem: numpy's matmul of 2-D arrays, row-major and packed (the
  // arrays are C-contiguous).
  const blas::GemmProblem problem =
      blas::gemm_problem(operand("a", a).view(), operand("b", b).view(), transpose_a, transpose_b,
                         precision, "precision");
  require_like(c, problem.m * problem.n, a.dtype(), "gemm");
  const Placement where = place_call(
      device, {{"a", place_of(a, "a")}, {"b", place_of(b, "b")}, {"c", place_of(c, "c")}}, stream);
  with_real_type(a.dtype(), "gemm", [&](auto element) {
    using T = decltype(element);
    const T alpha_t = blas::scalar_from_double<T>("alpha", alpha);
    const T beta_t = blas::scalar_from_double<T>("beta", beta);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      // The library's plan cache: a loop of products of one shape plans once on this thread.
      blas::gemm_on_device<T>(where.context, problem, alpha_t, data_of<T>(a), data_of<T>(b), beta_t,
                              data_of<T>(c), where.stream, variant);
    } else {
      blas::gemm<T>(where.context, problem, alpha_t, span_of<T>(a), span_of<T>(b), beta_t,
                    span_of<T>(c), variant);
    }
  });
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
  m.def("gemm_shape", &gemm_shape, nb::arg("a_shape"), nb::arg("a_dtype"), nb::arg("b_shape"),
        nb::arg("b_dtype"), nb::arg("transpose_a"), nb::arg("transpose_b"), nb::arg("precision"),
        nb::arg("c_shape").none() = nb::none(), nb::arg("c_dtype").none() = nb::none(),
        "blas::gemm_problem of stored shapes and numpy dtype names (and with c_shape, "
        "check_gemm_c0): the product's (M, N); ValueError naming a, b, c or precision.");
  m.def("gemm", &gemm, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("transpose_a"),
        nb::arg("transpose_b"), nb::arg("precision"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("variant"), nb::arg("device"), nb::arg("stream"),
        "blas::gemm (host arrays) or blas::gemm_on_device (CUDA arrays, queued on `stream`; the "
        "library keeps the plan per thread) of C = alpha op(a) op(b) + beta C for C-contiguous "
        "2-D a, b and c (M x N, the inputs' dtype; read when beta != 0).");
  m.def("saxpy", &saxpy, nb::arg("alpha"), nb::arg("x"), nb::arg("y"), nb::arg("out"),
        nb::arg("device"), nb::arg("stream"),
        "blas::axpy (host arrays) or axpy_on_device (CUDA arrays, queued on `stream`): out = "
        "alpha x + y, alpha rounded to the arrays' dtype; out may be y.");
}

}  // namespace gpukit::python
