"""reduce, scan and compact against NumPy (and Python's exact integers and math.fsum) on awkward
sizes and every dtype they take, on host arrays; the CLI agreement of the floating sums."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest

import gpukit

DTYPES = [np.int32, np.int64, np.uint32, np.float32, np.float64]
# Around the tile sizes of the fixed trees (reduce: 16384; scan: 4096) and the lane counts.
SIZES = [0, 1, 31, 32, 33, 1023, 1025, 4095, 4097, 16383, 16385, (1 << 17) + 3]


def data(rng: np.random.Generator, dtype, n: int, small: bool = False) -> np.ndarray:
    """Random values of `dtype` that exercise signs and magnitudes (small: products stay
    representable)."""
    if np.issubdtype(dtype, np.floating):
        x = rng.standard_normal(n) * (1.0 if small else 10.0 ** rng.integers(-3, 4, n))
        return x.astype(dtype)
    info = np.iinfo(dtype)
    low, high = (-3, 4) if small else (max(info.min, -(1 << 40)), min(info.max, 1 << 40))
    return rng.integers(max(low, info.min), high, n, endpoint=False).astype(dtype)


def exact_sum(x: np.ndarray):
    if np.issubdtype(x.dtype, np.integer):
        return sum(int(v) for v in x.tolist())
    return math.fsum(float(v) for v in x.tolist())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce_sum_min_max_against_exact_references(rng, dtype, n):
    x = data(rng, dtype, n)
    total = gpukit.reduce(x, device="cpu")
    if np.issubdtype(dtype, np.integer):
        assert type(total) is int
        assert total == exact_sum(x)  # exact, no wrap-around
    else:
        assert type(total) is float
        # The fixed tree's bound (reduce_canonical.hpp, primitives/check.hpp): 26 roundings a
        # level of 16384-element tiles, each at most eps times the sum of |x|.
        levels = max(1, math.ceil(math.log(max(n, 2)) / math.log(16384)))
        eps = float(np.finfo(dtype).eps)
        bound = 26 * levels * eps * math.fsum(abs(float(v)) for v in x.tolist())
        assert abs(total - exact_sum(x)) <= bound
        # The same value as the input's type can hold it.
        assert float(dtype(total)) == total
    if n:
        assert gpukit.reduce(x, "min", device="cpu") == x.min()
        assert gpukit.reduce(x, "max", device="cpu") == x.max()
    else:
        with pytest.raises(ValueError):
            gpukit.reduce(x, "min", device="cpu")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_accurate_floating_sums_are_within_a_few_ulps_of_the_exact_sum(rng, dtype):
    x = (rng.standard_normal(50001) * 1e3).astype(dtype)
    exact = exact_sum(x)
    accurate = gpukit.reduce(x, accurate=True, device="cpu")
    assert abs(accurate - exact) <= 4 * abs(np.spacing(dtype(exact))) + 1e-300


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_integer_products_wrap_and_bitwise_ops_act_on_the_bits(rng, dtype):
    x = data(rng, dtype, 1025, small=True)
    x[x == 0] = 1
    wrapped = 1
    for v in x.tolist():
        wrapped = (wrapped * v) % (1 << 64)
    product = gpukit.reduce(x, "product", device="cpu")
    assert product % (1 << 64) == wrapped
    y = data(rng, dtype, 3000)
    assert gpukit.reduce(y, "and", device="cpu") == int(np.bitwise_and.reduce(y))
    assert gpukit.reduce(y, "or", device="cpu") == int(np.bitwise_or.reduce(y))
    assert gpukit.reduce(y, "xor", device="cpu") == int(np.bitwise_xor.reduce(y))


def test_reduce_edge_rules():
    assert gpukit.reduce(np.zeros(0), device="cpu") == 0.0
    assert gpukit.reduce(np.zeros(0, np.int32), "product", device="cpu") == 1
    with pytest.raises(ValueError, match="overflows int64"):
        gpukit.reduce(np.full(4, 2**62, np.int64), device="cpu")
    with pytest.raises(ValueError):
        gpukit.reduce(np.ones(4), "xor", device="cpu")
    x = np.array([1.0, np.nan, 2.0])
    assert math.isnan(gpukit.reduce(x, device="cpu"))
    assert math.isnan(gpukit.reduce(x, "min", device="cpu"))
    assert math.copysign(1, gpukit.reduce(np.array([-0.0, 0.0]), "min", device="cpu")) == -1


def test_reduce_takes_any_shape_layout_and_array_like_in_c_order(rng):
    x = data(rng, np.int64, 6 * 7 * 5).reshape(6, 7, 5)
    assert gpukit.reduce(x, device="cpu") == exact_sum(x.ravel())
    fortran = np.asfortranarray(x)
    assert gpukit.reduce(fortran, device="cpu") == exact_sum(x.ravel())
    assert gpukit.reduce(x[:, ::2, 1], device="cpu") == exact_sum(x[:, ::2, 1].ravel())
    assert gpukit.reduce([1, 2, 3], device="cpu") == 6
    assert gpukit.reduce(x.astype(">i8"), device="cpu") == exact_sum(x.ravel())


def test_floating_sums_have_the_bits_the_cli_prints(cli, tmp_path, rng):
    # The same library call, the same fixed tree: `gpukit reduce` prints the shortest text of the
    # same double.
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(70001) * 1e3).astype(dtype)
        np.save(tmp_path / "x.npy", x)
        printed = subprocess.run([cli, "reduce", "-i", str(tmp_path / "x.npy"), "--device", "cpu"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        assert dtype(printed) == dtype(gpukit.reduce(x, device="cpu"))


def sequential_scan(x: np.ndarray, op: str, exclusive: bool) -> np.ndarray:
    """The reference: one loop in element order, integers exact (Python ints; products wrap
    modulo 2**64 as the library's do), floats in long double, each output rounded once."""
    floating = np.issubdtype(x.dtype, np.floating)
    if floating:
        identity = {"sum": 0.0, "product": 1.0, "min": np.inf, "max": -np.inf}[op]
        work = x.astype(np.longdouble)
    else:
        info = np.iinfo(x.dtype)
        identity = {"sum": 0, "product": 1, "min": int(info.max), "max": int(info.min)}[op]
        work = [int(v) for v in x.tolist()]
    out, acc = [], identity
    for v in work:
        if exclusive:
            out.append(acc)
        if op == "sum":
            acc = acc + v
        elif op == "product":
            acc = acc * v
            if not floating:  # two's complement wrap in the element type
                bits = np.iinfo(x.dtype).bits
                acc %= 1 << bits
                if np.issubdtype(x.dtype, np.signedinteger) and acc >= 1 << (bits - 1):
                    acc -= 1 << bits
        elif op == "min":
            acc = v if (acc is identity or v < acc or (floating and np.isnan(v))) else acc
        else:
            acc = v if (acc is identity or v > acc or (floating and np.isnan(v))) else acc
        if not exclusive:
            out.append(acc)
    if floating:
        return np.array(out, dtype=np.longdouble).astype(x.dtype)
    return np.array(out, dtype=object).astype(x.dtype) if out else x.copy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 33, 4095, 4097, 20001])
@pytest.mark.parametrize("op", ["sum", "product", "min", "max"])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_against_a_sequential_loop(rng, dtype, n, op, exclusive):
    x = data(rng, dtype, n, small=op == "product" or np.issubdtype(dtype, np.unsignedinteger))
    if op == "sum" and np.issubdtype(dtype, np.integer):
        x = data(rng, dtype, n, small=True)
    if op == "product" and np.issubdtype(dtype, np.floating):
        # Powers of two (signs included) whose products stay in range: every partial product is
        # exact in any bracketing, so the scan must equal the loop bit for bit.
        x = rng.choice([1.0, -1.0, 2.0, 0.5], n, p=[0.48, 0.48, 0.02, 0.02]).astype(dtype)
    y = gpukit.scan(x, op, exclusive, device="cpu")
    assert y.shape == x.shape and y.dtype == x.dtype
    expected = sequential_scan(x, op, exclusive)
    if op != "sum" or np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(y, expected)
    else:
        # The canonical bracketing's bound (primitives/check.hpp): 26 + i // 4096 roundings of
        # eps times the prefix of |x|; the reference's own rounding to the dtype adds one more.
        eps = float(np.finfo(dtype).eps)
        roundings = 27 + np.arange(n) // 4096
        scale = sequential_scan(np.abs(x).astype(np.float64), "sum", exclusive)
        bound = roundings * eps * scale
        assert np.all(np.abs(y.astype(np.float64) - expected.astype(np.float64)) <= bound)


def test_scan_keeps_the_shape_scans_in_c_order_and_refuses_overflow(rng):
    x = data(rng, np.int32, 5 * 6, small=True).reshape(5, 6)
    np.testing.assert_array_equal(gpukit.scan(x, device="cpu"),
                                  np.cumsum(x.ravel()).reshape(5, 6).astype(np.int32))
    with pytest.raises(ValueError):
        gpukit.scan(np.full(3, 2**30, np.int32), device="cpu")
    assert gpukit.scan(np.array([-1.0, 1.0]), exclusive=True, device="cpu")[0] == 0.0
    assert math.copysign(1, gpukit.scan(np.array([-0.0]), exclusive=True, device="cpu")[0]) == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keep", ["nonzero", "positive", "negative", "finite"])
@pytest.mark.parametrize("n", [0, 1, 31, 1025, 70001])
def test_compact_against_a_boolean_mask(rng, dtype, keep, n):
    x = data(rng, dtype, n, small=True)
    if np.issubdtype(dtype, np.floating) and n > 4:
        x[:4] = [np.nan, np.inf, -0.0, -np.inf]
    mask = {"nonzero": x != 0, "positive": x > 0, "negative": x < 0,
            "finite": np.isfinite(x) if np.issubdtype(dtype, np.floating) else np.ones(n, bool)}
    kept = gpukit.compact(x, keep, device="cpu")
    assert kept.dtype == x.dtype and kept.ndim == 1
    np.testing.assert_array_equal(kept, x[mask[keep]])


def test_compact_reads_any_shape_in_c_order():
    x = np.array([[0, 1, 2], [3, 0, 4]], np.int32)
    np.testing.assert_array_equal(gpukit.compact(x, device="cpu"), [1, 2, 3, 4])
    np.testing.assert_array_equal(gpukit.compact(x.T, device="cpu"), [3, 1, 2, 4])
    with pytest.raises(ValueError, match="nonzero, positive, negative"):
        gpukit.compact(x, "odd", device="cpu")
