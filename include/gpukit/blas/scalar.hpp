#pragma once
// The scalars of gemm and axpy (alpha, beta): one rule for every front door (`gpukit gemm`,
// `gpukit saxpy`, Python's gemm and saxpy), each of which reports it in its own words.
//
// The rule. A scalar for arrays of element type T (float for float32, tf32 and bf16 data, double
// for float64) is a finite number whose rounding to T, to nearest, is
//   - finite: 1e39 is refused for float32 (it would be Inf, and every product Inf or NaN);
//   - non-zero unless the number is zero: 1e-50 is refused for float32 (it would be 0, and alpha
//     = 0 is BLAS's quick return, which does not read x or A and B: a different operation).
// NaN and the infinities are refused. Any other number is rounded once to T (a subnormal result
// is kept): from decimal text directly into T (correctly rounded, not through double), from a
// double (Python's float) by one IEEE conversion.
//
// Tested in tests/blas/scalar_test.cpp (both element types, the boundaries of each range) and
// through the CLI (tests/cli/gemm_cli_test.cpp, saxpy_cli_test.cpp) and Python
// (python/tests/test_pde_blas_random.py).

#include <string_view>

namespace gpukit::blas {

/// `text` as a scalar of element type T (float or double) under the rule above: an optional sign,
/// decimal digits with an optional point and exponent (1, -2.5, 1e-3, +.5). InvalidInput
/// otherwise, with a message that starts with `name` (the front door's name of the scalar:
/// "--alpha", "alpha") and quotes the text: "--alpha must be finite, got 'nan'", "... must be a
/// number, got 'two'", "... must fit float32 (magnitude at most 3.4028235e+38), got '1e39'",
/// "... must not round to 0 in float32 (magnitude at least 1e-45), got '1e-50'".
template <class T>
T parse_scalar(std::string_view name, std::string_view text);

/// `value` (a double, such as Python's float) as a scalar of element type T under the same rule
/// and messages (the value written in its shortest round-trip form: "alpha must fit float32
/// (magnitude at most 3.4028235e+38), got 1e+39").
template <class T>
T scalar_from_double(std::string_view name, double value);

}  // namespace gpukit::blas
