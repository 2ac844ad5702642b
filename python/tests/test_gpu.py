"""CuPy and PyTorch CUDA arrays: no copies (data pointers), the caller's stream and explicit
streams, results on the input's device, Black-Scholes against scipy.stats.norm, Monte Carlo
bitwise against `gpukit mc --device cuda`, the exception types and the GIL on the GPU.

These skip without a GPU (or without CuPy / PyTorch), and fail instead where GPUKIT_REQUIRE_GPU=1
(scripts/python-gpu-check.sh on the GPU machine)."""

from __future__ import annotations

import io
import math
import subprocess
import threading
import time

import numpy as np
import pytest

import gpukit
from gpukit import _gpukit

from test_finance import (BOOK_CSV, number, price_scale, random_book, read_priced,
                          scipy_black_scholes)


def test_cupy_arrays_are_read_and_written_in_place(cupy):
    x = cupy.arange(1, 1 << 20, dtype=cupy.float64)
    assert _gpukit._data_pointer(x) == x.data.ptr  # DLPack hands the library CuPy's memory
    y = cupy.ones_like(x)
    out = gpukit.saxpy(2.0, x, y, out=y)
    assert out is y and y.data.ptr == out.data.ptr
    cupy.testing.assert_array_equal(y, 2 * x + 1)
    s = gpukit.scan(x)
    assert isinstance(s, cupy.ndarray) and s.device.id == x.device.id
    cupy.testing.assert_allclose(s, cupy.cumsum(x), rtol=1e-12)
    assert gpukit.reduce(cupy.arange(1 << 20, dtype=cupy.int32)) == (1 << 20) * ((1 << 20) - 1) // 2
    kept = gpukit.compact(cupy.array([0, 3, 0, -1, 5], dtype=cupy.int32), "positive")
    assert isinstance(kept, cupy.ndarray)
    cupy.testing.assert_array_equal(kept, cupy.array([3, 5], dtype=cupy.int32))


def test_torch_tensors_are_read_and_written_in_place(torch):
    x = torch.arange(1, 1 << 20, dtype=torch.float64, device="cuda")
    assert _gpukit._data_pointer(x) == x.data_ptr()
    y = torch.ones_like(x)
    out = gpukit.saxpy(2.0, x, y, out=y)
    assert out is y
    torch.testing.assert_close(y, 2 * x + 1)
    s = gpukit.scan(x)
    assert isinstance(s, torch.Tensor) and s.device == x.device
    torch.testing.assert_close(s, torch.cumsum(x, 0), rtol=1e-12, atol=0)
    assert gpukit.reduce(torch.arange(1 << 20, dtype=torch.int64, device="cuda")) == \
        (1 << 20) * ((1 << 20) - 1) // 2
    u = gpukit.rng.uniform(1000, seed=4, like=x)
    assert isinstance(u, torch.Tensor) and u.is_cuda
    np.testing.assert_array_equal(u.cpu().numpy(),
                                  gpukit.rng.uniform(1000, seed=4, device="cpu"))


def test_cupy_on_a_non_default_stream(cupy):
    stream = cupy.cuda.Stream(non_blocking=True)
    n = 1 << 24
    with stream:
        # Work queued on the stream just before the call: the call must run after it, on it.
        x = cupy.empty(n, dtype=cupy.int64)
        x.fill(3)
        total = gpukit.reduce(x)
        scanned = gpukit.scan(x)
        y = gpukit.saxpy(0.5, x.astype(cupy.float64), cupy.zeros(n))
        stream.synchronize()
    assert total == 3 * n
    assert int(scanned[-1]) == 3 * n
    assert float(y[-1]) == 1.5
    # stream= given explicitly, the current stream being the default one.
    other = cupy.cuda.Stream(non_blocking=True)
    with other:
        z = cupy.full(n, 2.0)
    assert gpukit.reduce(z, stream=other) == 2.0 * n
    assert gpukit.reduce(z, stream=other.ptr) == 2.0 * n


def test_torch_on_a_non_default_stream(torch):
    stream = torch.cuda.Stream()
    n = 1 << 24
    with torch.cuda.stream(stream):
        x = torch.full((n,), 3, dtype=torch.int64, device="cuda")
        total = gpukit.reduce(x)
        scanned = gpukit.scan(x)
    stream.synchronize()
    assert total == 3 * n
    assert int(scanned[-1]) == 3 * n
    other = torch.cuda.Stream()
    with torch.cuda.stream(other):
        z = torch.full((n,), 2.0, device="cuda")
    assert gpukit.reduce(z, stream=other) == 2.0 * n


def test_gpu_floating_sums_have_the_cpu_bits(cupy, rng):
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(3_000_001) * 1e3).astype(dtype)
        assert gpukit.reduce(cupy.asarray(x)) == gpukit.reduce(x, device="cpu")
        np.testing.assert_array_equal(cupy.asnumpy(gpukit.scan(cupy.asarray(x))),
                                      gpukit.scan(x, device="cpu"))
        # A host array computed on the GPU (the host-data API) too.
        assert gpukit.reduce(x, device="cuda") == gpukit.reduce(x, device="cpu")


@pytest.mark.parametrize("precision", ["double", "float"])
def test_black_scholes_on_cupy_against_scipy(cupy, rng, precision):
    book = random_book(rng, 100_003)
    dtype = np.float64 if precision == "double" else np.float32
    rounded = {k: (v.astype(dtype).astype(np.float64) if k != "put" else v) for k, v in book.items()}
    expected = scipy_black_scholes(**rounded)["price"]
    on_gpu = {k: cupy.asarray(v) for k, v in book.items()}
    prices = gpukit.black_scholes(**on_gpu, precision=precision)
    assert isinstance(prices, cupy.ndarray) and prices.dtype == dtype
    bound = (64 * np.finfo(dtype).eps + 16 * np.finfo(np.float64).eps) * price_scale(rounded)
    assert np.all(np.abs(cupy.asnumpy(prices) - expected) <= bound)
    # The same bits as the host-data API on the GPU (the same kernel).
    np.testing.assert_array_equal(cupy.asnumpy(prices),
                                  gpukit.black_scholes(**book, precision=precision,
                                                       device="cuda"))


@pytest.mark.parametrize("precision", ["double", "float"])
def test_implied_volatility_on_cupy_and_torch(cupy, torch, rng, precision):
    from test_implied_volatility import OK, quotes, recovery_bound

    book = quotes(rng, 100_003)
    dtype = np.float64 if precision == "double" else np.float32
    terms = {k: book[k].astype(dtype) for k in ("spot", "strike", "maturity", "rate",
                                                 "dividend")}
    # (black_scholes prices in double unless asked: the price's dtype picks the inversion's.)
    price = gpukit.black_scholes(**terms, volatility=book["volatility"].astype(dtype),
                                 put=book["put"], precision=precision, device="cpu")
    spot = terms.pop("spot")
    on_gpu = {k: cupy.asarray(v) for k, v in terms.items()}
    volatility, status = gpukit.implied_volatility(cupy.asarray(price), **on_gpu,
                                                   spot=cupy.asarray(spot),
                                                   put=cupy.asarray(book["put"]))
    assert isinstance(volatility, cupy.ndarray) and volatility.dtype == dtype
    assert isinstance(status, cupy.ndarray) and status.dtype == np.uint8
    # The same bits as the host-data API on the GPU (the same kernel), and the CPU's within the
    # accuracy contract.
    host = gpukit.implied_volatility(price, **terms, spot=spot, put=book["put"], device="cuda")
    np.testing.assert_array_equal(cupy.asnumpy(volatility), host[0])
    np.testing.assert_array_equal(cupy.asnumpy(status), host[1])
    rounded = {k: v.astype(np.float64) for k, v in dict(terms, spot=spot).items()}
    rounded["volatility"] = book["volatility"].astype(dtype).astype(np.float64)
    ok = cupy.asnumpy(status) == OK
    assert np.mean(ok) >= 0.9
    error = np.abs(cupy.asnumpy(volatility).astype(np.float64) - rounded["volatility"])
    assert np.all(error[ok] <= recovery_bound(rounded, dtype)[ok])
    tensors = {k: torch.as_tensor(v, device="cuda") for k, v in terms.items()}
    t_volatility, t_status = gpukit.implied_volatility(
        torch.as_tensor(price, device="cuda"), **tensors, spot=torch.as_tensor(spot, device="cuda"),
        put=torch.as_tensor(book["put"], device="cuda"))
    assert isinstance(t_volatility, torch.Tensor) and t_volatility.is_cuda
    np.testing.assert_array_equal(t_volatility.cpu().numpy(), host[0])
    np.testing.assert_array_equal(t_status.cpu().numpy(), host[1])


def test_monte_carlo_on_the_gpu_has_the_bits_of_gpukit_mc(cupy, cli, tmp_path):
    import pandas as pd

    (tmp_path / "book.csv").write_text(BOOK_CSV)
    subprocess.run([cli, "-q", "mc", "--paths", "100000", "--seed", "5", "--antithetic",
                    "--greeks", "-i", str(tmp_path / "book.csv"), "-o", str(tmp_path / "out.csv"),
                    "--device", "cuda"], check=True)
    expected = read_priced(tmp_path / "out.csv")
    # Every field as text, as the CLI reads it (pandas' own float parser need not round
    # the decimals as from_chars does).
    book = pd.read_csv(io.StringIO(BOOK_CSV), dtype=str, keep_default_na=False)
    priced = gpukit.price_book(book, "monte_carlo", paths=100000, seed=5, antithetic=True,
                               greeks=True, device="cuda")

    def optional_number(column):  # a column that may be empty (barrier, steps): NaN there
        return np.array([float(v) if v else np.nan for v in book[column]])

    terms = dict(
        spot=number(book, "spot"), strike=number(book, "strike"),
        maturity=number(book, "maturity"), rate=number(book, "rate"),
        volatility=number(book, "volatility"), dividend=number(book, "dividend"),
        put=book.type.str.lower().str.startswith("p").to_numpy())
    on_gpu = gpukit.monte_carlo(
        **{k: cupy.asarray(np.asarray(v)) for k, v in terms.items()},
        barrier=cupy.asarray(np.nan_to_num(optional_number("barrier"), nan=0.0)),
        barrier_type=book.barrier_type.replace("", "none").to_numpy(),
        steps=cupy.asarray(np.nan_to_num(optional_number("steps"), nan=1.0).astype(np.uint32)),
        ids=book.id.to_list(), paths=100000, seed=5, antithetic=True, greeks=True)
    for column in ("price", "std_error", "ci_low", "ci_high", "paths", "delta", "gamma", "vega",
                   "vrf_antithetic"):
        want = number(expected, column)
        np.testing.assert_array_equal(priced[column].to_numpy(float), want, err_msg=column)
        assert isinstance(on_gpu[column], cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(on_gpu[column]), want, err_msg=column)


def test_poisson_of_a_cupy_grid(cupy):
    n = 256
    x = np.arange(n) / n
    u = np.sin(2 * np.pi * x)[:, None] * np.cos(4 * np.pi * x)[None, :]
    f = cupy.asarray(-(4 + 16) * np.pi ** 2 * u)
    solved = gpukit.poisson(f)
    assert isinstance(solved, cupy.ndarray)
    assert float(cupy.abs(solved - cupy.asarray(u)).max()) < 1e-11
    host = gpukit.poisson(cupy.asnumpy(f), device="cpu")
    assert np.abs(cupy.asnumpy(solved) - host).max() < 1e-11


def test_poisson_walls_on_a_gpu_list_are_refused_saying_what_solves_them(gpu):
    # Two parts on GPU 0 (the copy engine): the slabs across GPUs solve only the periodic,
    # spectral, lambda = 0 problem; one GPU and mpirun on the CPU solve the others.
    f = np.zeros((9, 14))
    with pytest.raises(ValueError) as refused:
        gpukit.poisson(f, boundary="neumann", device="cuda:0,0")
    assert str(refused.value) == ("poisson: a solve spread over several GPUs does not yet solve "
                                  "dirichlet/neumann/fd2/helmholtz; use one GPU or mpirun on "
                                  "the CPU")
    assert gpukit.poisson(f, boundary="neumann", device="cuda:0").shape == f.shape


def test_gemm_and_rng_on_cupy(cupy, rng):
    a = cupy.asarray(rng.standard_normal((300, 200)))
    b = cupy.asarray(rng.standard_normal((200, 100)))
    c = gpukit.gemm(a, b)
    assert isinstance(c, cupy.ndarray)
    cupy.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-11)
    u = gpukit.rng.uniform(10001, seed=8, like=a)
    np.testing.assert_array_equal(cupy.asnumpy(u), gpukit.rng.uniform(10001, seed=8,
                                                                      device="cpu"))


def test_errors_on_the_gpu(cupy):
    x = cupy.ones(10)
    with pytest.raises(ValueError, match="device='cpu'"):
        gpukit.reduce(x, device="cpu")
    with pytest.raises(gpukit.DeviceUnavailable):
        gpukit.reduce(np.ones(10), device=f"cuda:{len(gpukit.devices())}")
    with pytest.raises(ValueError, match="on cuda:0 but y is on the host"):
        gpukit.saxpy(1.0, x, np.ones(10))
    with pytest.raises(ValueError, match="C-contiguous"):
        gpukit.saxpy(1.0, x, cupy.ones(10), out=cupy.ones(20)[::2])
    with pytest.raises(ValueError, match="float32 or float64, not int32"):
        gpukit.poisson(cupy.zeros((4, 4), dtype=cupy.int32))


def test_out_of_device_memory_is_a_memory_error_with_the_bytes(cupy):
    # A Poisson plan checks the device's free memory before it allocates. A ballast array leaves
    # room for f, for u (CuPy's allocation of the output, made first) and for half of f again, so
    # the plan's own buffers (a spectrum about f's size) cannot fit, and gpukit, not CuPy, raises.
    # f stays below 2^31 elements, the largest grid one device solves (an H100's 35% as one cube
    # is more: that grid is refused by its size, not for memory).
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free, _ = cupy.cuda.runtime.memGetInfo()
    side = min(1024, int((free / 8 / 4) ** (1 / 3)))
    f_bytes = side**3 * 8
    ballast = cupy.empty(free - int(2.5 * f_bytes), dtype=cupy.uint8)
    f = cupy.zeros((side, side, side))
    with pytest.raises(MemoryError) as raised:
        gpukit.poisson(f)
    assert raised.value.bytes_requested > 0
    assert f"{raised.value.bytes_requested} bytes" in str(raised.value)
    del f, ballast
    pool.free_all_blocks()


def test_the_gil_is_released_during_a_gpu_call(gpu):
    from test_package import calls_another_thread_runs_during

    # One long call that waits for the GPU: a Monte Carlo book in host memory priced on the device
    # (its results come back to NumPy arrays before the call returns). A book of CUDA arrays would
    # not do: that call only enqueues the work on the caller's stream and returns at once.
    book = random_book(np.random.default_rng(1), 256)
    assert calls_another_thread_runs_during(
        lambda size: gpukit.monte_carlo(**book, paths=size << 16, device="cuda"), 0.5) >= 5


def test_monte_carlo_on_the_gpu_stops_on_ctrl_c(gpu):
    # Host arrays priced on the GPU: the library checks for signals between launches.
    from test_interrupt import WITHIN_SECONDS, interrupted_after, lasting, long_book

    before = gpukit.monte_carlo(100.0, [90.0, 110.0], 1.0, 0.02, 0.3, paths=1 << 16, seed=3,
                                device="cuda")
    seconds = interrupted_after(lasting(40.0, lambda paths: gpukit.monte_carlo(
        **long_book(256), barrier=70.0, barrier_type="down-out", steps=64, paths=paths,
        greeks=True, device="cuda")))
    assert seconds < WITHIN_SECONDS, seconds
    after = gpukit.monte_carlo(100.0, [90.0, 110.0], 1.0, 0.02, 0.3, paths=1 << 16, seed=3,
                               device="cuda")
    for column in before:
        np.testing.assert_array_equal(after[column], before[column], err_msg=column)


def test_monte_carlo_on_cupy_arrays_stops_on_ctrl_c(cupy):
    # The device-data API on the caller's stream: stopped between launches, nothing left queued.
    from test_interrupt import WITHIN_SECONDS, interrupted_after, lasting

    spot = cupy.full(256, 100.0)
    strike = cupy.linspace(80.0, 120.0, 256)
    seconds = interrupted_after(lasting(40.0, lambda paths: gpukit.monte_carlo(
        spot, strike, 1.0, 0.02, 0.25, barrier=70.0, barrier_type="down-out", steps=64,
        paths=paths)))
    assert seconds < WITHIN_SECONDS, seconds
    assert cupy.cuda.get_current_stream().done  # nothing left in flight on the caller's stream
    short = gpukit.monte_carlo(spot[:2], strike[:2], 1.0, 0.02, 0.25, paths=1 << 16)
    expected = gpukit.monte_carlo(cupy.asnumpy(spot[:2]), cupy.asnumpy(strike[:2]), 1.0, 0.02,
                                  0.25, paths=1 << 16, device="cuda")
    np.testing.assert_array_equal(cupy.asnumpy(short["price"]), expected["price"])
