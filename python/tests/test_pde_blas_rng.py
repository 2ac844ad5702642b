"""poisson against manufactured solutions, gemm against numpy.matmul within its derived bound,
saxpy against the exact result, and the random streams of gpukit.rng against their
distributions (host arrays)."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import gpukit


def grid(shape, lengths):
    axes = [np.arange(n) * (length / n) for n, length in zip(shape, lengths)]
    return np.meshgrid(*axes, indexing="ij")


@pytest.mark.parametrize("shape, lengths", [((64, 48), (1.0, 2.0)), ((33, 17), (1.0, 1.0)),
                                            ((16, 12, 10), (1.0, 1.5, 2.0)), ((1, 31), (1.0, 3.0))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_poisson_solves_a_manufactured_problem(shape, lengths, dtype):
    # u = sin(2 pi x / L0) cos(4 pi y / L1) (...): lap(u) = -|k|^2 u, exactly representable on
    # the grid, mean zero.
    coordinates = grid(shape, lengths)
    waves = [2 * np.pi * (a + 1) / length for a, length in enumerate(lengths)]
    if shape[0] == 1:
        waves[0] = 0.0
    u = np.ones(shape)
    for axis, (x, k) in enumerate(zip(coordinates, waves)):
        u = u * (np.sin(k * x) if axis == len(shape) - 1 else np.cos(k * x))
    f = (-sum(k * k for k in waves) * u).astype(dtype)
    solved = gpukit.poisson(f, lengths, device="cpu")
    assert solved.dtype == dtype and solved.shape == f.shape
    # poisson_agreement_bound: 4 log2(n) eps (max|u| + max|f| (L_max / 2 pi)^2).
    eps = np.finfo(dtype).eps
    bound = 4 * math.log2(f.size) * eps * (1 + np.abs(f).max() * (max(lengths) / (2 * np.pi)) ** 2)
    assert np.abs(solved - u).max() <= bound


def test_poisson_gauges_means_and_refusals():
    rng = np.random.default_rng(4)
    f = rng.standard_normal((32, 24))
    f -= f.mean()
    u = gpukit.poisson(f, device="cpu")
    assert abs(u.mean()) < 1e-14
    corner = gpukit.poisson(f, gauge="corner", device="cpu")
    assert corner[0, 0] == 0.0
    np.testing.assert_allclose(corner, u - u[0, 0], atol=1e-14)
    with pytest.warns(RuntimeWarning, match="is not zero to rounding"):
        shifted = gpukit.poisson(f + 1.0, device="cpu")
    np.testing.assert_allclose(shifted, u, atol=1e-12)
    with pytest.raises(ValueError, match="not zero to rounding"):
        gpukit.poisson(f + 1.0, strict=True, device="cpu")
    bad = f.copy()
    bad[3, 17] = np.nan
    with pytest.raises(ValueError, match=r"f\[3, 17\] is nan"):
        gpukit.poisson(bad, device="cpu")
    with pytest.raises(ValueError, match="2D or 3D"):
        gpukit.poisson(np.zeros(8), device="cpu")
    with pytest.raises(ValueError, match="float32 or float64, not int64"):
        gpukit.poisson(np.zeros((4, 4), np.int64), device="cpu")
    # precision=: solved in float, returned in the input's dtype.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        single = gpukit.poisson(f, precision="float", device="cpu")
    assert single.dtype == np.float64
    np.testing.assert_allclose(single, u, atol=1e-4)


def test_poisson_lengths_are_one_for_every_axis_or_one_per_axis():
    # The rule of `gpukit poisson --length` (pde::axis_lengths): one number, or a list of one, is
    # the period of every axis; otherwise one per axis.
    rng = np.random.default_rng(5)
    for shape in ((16, 12), (6, 8, 10)):
        f = rng.standard_normal(shape)
        f -= f.mean()
        every = gpukit.poisson(f, [2.5] * len(shape), device="cpu")
        np.testing.assert_array_equal(gpukit.poisson(f, 2.5, device="cpu"), every)
        np.testing.assert_array_equal(gpukit.poisson(f, [2.5], device="cpu"), every)
    with pytest.raises(ValueError, match=r"^lengths gives 3 values for a grid of 2 axes: give one "
                                         r"for every axis, or one per axis$"):
        gpukit.poisson(np.zeros((4, 4)), [1.0, 2.0, 3.0], device="cpu")


def gemm_bound(a, b, c, alpha, beta, k, precision):
    """gemm_error_bound (blas/gemm.hpp): (w + gamma(K + 2, u)(1 + w)) |alpha| |A||B| +
    gamma(2, u) |beta C0|."""
    u, w = {"float": (2.0 ** -24, 0), "double": (2.0 ** -53, 0),
            "tf32": (2.0 ** -23, 2 * 2.0 ** -10 + 2.0 ** -20),
            "bf16": (2.0 ** -23, 2 * 2.0 ** -8 + 2.0 ** -16)}[precision]
    gamma = lambda h: h * u / (1 - h * u)  # noqa: E731
    product = abs(alpha) * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    term = 0 if c is None else np.abs(beta * c.astype(np.float64))
    return (w + gamma(k + 2) * (1 + w)) * product + gamma(2) * term


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (31, 33, 17), (64, 1, 129), (5, 7, 0)])
@pytest.mark.parametrize("dtype, precision", [(np.float64, "double"), (np.float32, "float"),
                                              (np.float32, "tf32"), (np.float32, "bf16")])
@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True)])
def test_gemm_against_numpy_within_the_derived_bound(rng, m, n, k, dtype, precision, transpose_a,
                                                      transpose_b):
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(dtype)
    c0 = rng.standard_normal((m, n)).astype(dtype)
    alpha, beta = 1.5, -0.5
    got = gpukit.gemm(a, b, precision, transpose_a, transpose_b, alpha, beta, c0, device="cpu")
    op_a = a.T if transpose_a else a
    op_b = b.T if transpose_b else b
    exact = alpha * (op_a.astype(np.longdouble) @ op_b.astype(np.longdouble)) + beta * c0
    assert got.dtype == dtype and got.shape == (m, n)
    bound = gemm_bound(op_a, op_b, c0, alpha, beta, k, precision)
    assert np.all(np.abs(got - exact) <= bound)


def test_gemm_layouts_shapes_and_rules(rng):
    a = rng.standard_normal((40, 30))
    b = rng.standard_normal((30, 20))
    expected = a @ b
    for a_in, b_in in ((a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b))):
        np.testing.assert_allclose(gpukit.gemm(a_in, b_in, device="cpu"), expected, rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(gpukit.gemm(a[::2], b, device="cpu"), a[::2] @ b, atol=1e-12)
    with pytest.raises(ValueError, match=r"shapes do not match: a has shape \(40, 30\) and b "
                                         r"\(transposed\) has shape \(30, 20\)"):
        gpukit.gemm(a, b, transpose_b=True, device="cpu")
    with pytest.raises(ValueError, match="a is float64 but b is float32"):
        gpukit.gemm(a, b.astype(np.float32), device="cpu")
    with pytest.raises(ValueError, match="precision tf32 computes on float32 data"):
        gpukit.gemm(a, b, "tf32", device="cpu")
    with pytest.raises(ValueError, match="beta != 0 needs c"):
        gpukit.gemm(a, b, beta=1.0, device="cpu")
    # The library's rules of the problem (blas::gemm_problem, as `gpukit gemm`'s), in Python's
    # words: the arguments by their names, never a flag.
    with pytest.raises(ValueError,
                       match=r"^gemm takes 2-D arrays, not 1-D \(b has shape \(30,\)\)$"):
        gpukit.gemm(a, b[:, 0].copy(), device="cpu")
    with pytest.raises(ValueError, match=r"^gemm takes float32 or float64, not int32 \(a\)$"):
        gpukit.gemm(a.astype(np.int32), b.astype(np.int32), device="cpu")
    with pytest.raises(ValueError, match=r"^gemm: precision double computes on float64 data, but "
                                         r"the inputs are float32"):
        gpukit.gemm(a.astype(np.float32), b.astype(np.float32), "double", device="cpu")
    with pytest.raises(ValueError, match=r"^gemm: c has shape \(20, 40\), but the product has "
                                         r"shape \(40, 20\)$"):
        gpukit.gemm(a, b, beta=1.0, c=np.zeros((20, 40)), device="cpu")
    with pytest.raises(ValueError, match=r"^gemm: c is float32 but the inputs are float64$"):
        gpukit.gemm(a, b, beta=1.0, c=np.zeros((40, 20), np.float32), device="cpu")
    # beta = 0: c is not read (a NaN there does not reach the result).
    c = np.full((40, 20), np.nan)
    assert not np.isnan(gpukit.gemm(a, b, c=c, device="cpu")).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 31, 1025, 100003])
def test_saxpy_is_the_exact_result_rounded_once_or_twice(rng, dtype, n):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    alpha = dtype(1.7)
    out = gpukit.saxpy(1.7, x, y, device="cpu")
    separate = ((alpha * x).astype(dtype) + y).astype(dtype)
    # The exact alpha x + y rounded once: long double holds a float product exactly; for double
    # the elements that need it are rounded from exact rationals (float() of a Fraction rounds
    # correctly).
    wide = np.longdouble
    fused = (wide(alpha) * x.astype(wide) + y.astype(wide)).astype(dtype)
    for i in np.flatnonzero((out != fused) & (out != separate)):
        exact = Fraction(float(alpha)) * Fraction(float(x[i])) + Fraction(float(y[i]))
        fused[i] = dtype(float(exact))
    assert np.all((out == fused) | (out == separate))
    y_before = y.copy()
    assert gpukit.saxpy(0.0, np.full(n, np.nan, dtype), y, out=y, device="cpu") is y
    np.testing.assert_array_equal(y, y_before)  # alpha = 0: y exactly, x not read


def test_saxpy_refuses_what_the_cli_refuses():
    with pytest.raises(ValueError, match=r"the shapes differ: x is \(3,\) and y is \(4,\)"):
        gpukit.saxpy(1.0, np.ones(3), np.ones(4), device="cpu")
    with pytest.raises(ValueError, match="x is float32 and y is float64"):
        gpukit.saxpy(1.0, np.ones(3, np.float32), np.ones(3), device="cpu")
    with pytest.raises(ValueError, match="float32 or float64, not int64"):
        gpukit.saxpy(1.0, np.ones(3, np.int64), np.ones(3, np.int64), device="cpu")


# The scalar rule of `gpukit gemm` and `gpukit saxpy` (gpukit/blas/scalar.hpp). Before, saxpy
# returned inf for alpha = 1e39 in float32 and gemm wrote all-inf or all-nan matrices.
@pytest.mark.parametrize("value, dtype, message", [
    (1e39, np.float32, r"must fit float32 \(magnitude at most 3.4028235e\+38\), got 1e\+39"),
    (-1e39, np.float32, "must fit float32"),
    (1e-50, np.float32, r"must not round to 0 in float32 \(magnitude at least 1e-45\)"),
    (math.nan, np.float64, "must be finite, got nan"),
    (math.inf, np.float64, "must be finite, got inf"),
    (-math.inf, np.float32, "must be finite, got -inf"),
])
def test_gemm_and_saxpy_refuse_scalars_the_cli_refuses(value, dtype, message):
    x = np.ones(3, dtype)
    with pytest.raises(ValueError, match="^alpha " + message):
        gpukit.saxpy(value, x, x, device="cpu")
    a = np.ones((2, 2), dtype)
    with pytest.raises(ValueError, match="^alpha " + message):
        gpukit.gemm(a, a, alpha=value, device="cpu")
    # beta is checked before it decides whether c is read ("beta != 0 needs c" would mislead).
    with pytest.raises(ValueError, match="^beta " + message):
        gpukit.gemm(a, a, beta=value, device="cpu")
    with pytest.raises(ValueError, match="^beta " + message):
        gpukit.gemm(a, a, beta=value, c=a, device="cpu")


def test_scalars_within_the_dtypes_range_are_rounded_once():
    # 1e39 fits float64; float32's largest and smallest magnitudes are kept.
    np.testing.assert_array_equal(gpukit.saxpy(1e39, np.ones(2), np.zeros(2), device="cpu"),
                                  [1e39, 1e39])
    largest = float(np.finfo(np.float32).max)
    one = np.ones(1, np.float32)
    assert gpukit.saxpy(largest, one, np.zeros(1, np.float32), device="cpu")[0] == largest
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    assert gpukit.gemm(one.reshape(1, 1), one.reshape(1, 1), alpha=tiny, device="cpu")[0, 0] == tiny


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniforms_are_uniform_open_and_addressable(dtype):
    u = gpukit.rng.uniform(1 << 18, seed=9, dtype=dtype, device="cpu")
    assert u.dtype == dtype and u.min() > 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    pieces = np.concatenate([gpukit.rng.uniform(1000, seed=9, dtype=dtype, device="cpu"),
                             gpukit.rng.uniform(777, seed=9, dtype=dtype, offset=1000,
                                                device="cpu")])
    np.testing.assert_array_equal(pieces, u[:1777])
    assert not np.array_equal(u[:100], gpukit.rng.uniform(100, seed=10, dtype=dtype,
                                                          device="cpu"))
    assert gpukit.rng.uniform((3, 4), seed=1, device="cpu").shape == (3, 4)


@pytest.mark.parametrize("transform", ["box_muller", "inverse_cdf"])
def test_normals_are_standard_normal(transform):
    z = gpukit.rng.normal(1 << 18, seed=3, transform=transform, device="cpu")
    assert stats.kstest(z, "norm").pvalue > 1e-4
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    np.testing.assert_array_equal(z, gpukit.rng.normal(1 << 18, seed=3, transform=transform,
                                                       device="cpu"))


def test_random_words_and_arguments():
    words = gpukit.rng.bits(1 << 16, seed=1, device="cpu")
    assert words.dtype == np.uint32
    # Each bit is a fair coin.
    ones = np.unpackbits(words.view(np.uint8)).mean()
    assert abs(ones - 0.5) < 5 * 0.5 / math.sqrt(words.size * 32)
    with pytest.raises(ValueError, match="generator must be 'philox'"):
        gpukit.rng.uniform(4, generator="mt19937")
    with pytest.raises(ValueError, match="float32 or float64, not int32"):
        gpukit.rng.normal(4, dtype=np.int32, device="cpu")


def test_gpukit_random_is_the_deprecated_name_of_gpukit_rng():
    # The random-number case study's stem is rng; scripts written for gpukit.random keep working,
    # with a DeprecationWarning naming gpukit.rng, and get the same functions.
    code = ("import warnings, gpukit\n"
            "assert 'random' not in gpukit.__all__ and 'rng' in gpukit.__all__\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    u = gpukit.random.uniform(5, seed=3, device='cpu')\n"
            "assert [str(w.message) for w in caught if w.category is DeprecationWarning] == "
            "['gpukit.random is deprecated: use gpukit.rng (the same functions)'], caught\n"
            "assert (u == gpukit.rng.uniform(5, seed=3, device='cpu')).all()\n"
            "assert gpukit.random.normal is gpukit.rng.normal\n")
    # A fresh interpreter: this process may have imported gpukit.random already.
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gpukit.rng.bits(2, device="cpu").shape == (2,)  # the stem warns of nothing


@pytest.mark.parametrize("value, error, message", [
    ("2", TypeError, "alpha must be a number, not str"),
    (None, TypeError, "alpha must be a number, not NoneType"),
    (True, TypeError, "alpha must be a number, not bool"),
    (10**400, ValueError, "alpha must be a number within float64's range"),
], ids=["str", "None", "bool", "int-beyond-float64"])
def test_gemm_and_saxpy_name_a_scalar_of_the_wrong_type(value, error, message):
    # Not float()'s own words (could not convert, int too large): the API's, naming the argument.
    x = np.ones(3)
    with pytest.raises(error, match="^" + message):
        gpukit.saxpy(value, x, x, device="cpu")
    a = np.ones((2, 2))
    with pytest.raises(error, match="^" + message):
        gpukit.gemm(a, a, alpha=value, device="cpu")
    with pytest.raises(error, match="^" + message.replace("alpha", "beta")):
        gpukit.gemm(a, a, beta=value, c=a, device="cpu")
