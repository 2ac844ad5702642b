"""The package as pip installed it: where it is imported from, its version, stubs, devices, the
exception types and the GIL."""

from __future__ import annotations

import pathlib
import sys
import threading
import time

import numpy as np
import pytest

import gpukit
from gpukit import _gpukit

from conftest import REPOSITORY


def test_the_package_is_the_installed_one_not_the_source_tree():
    # scripts/setup.sh test runs these tests on the package pip installed into .venv: a missing
    # install step must fail here, not pass on python/gpukit by accident.
    package = pathlib.Path(gpukit.__file__).resolve().parent
    assert package != (REPOSITORY / "python" / "gpukit").resolve()
    assert pathlib.Path(_gpukit.__file__).resolve().parent == package
    assert str(package).startswith(str(pathlib.Path(sys.prefix).resolve())) or "site-packages" in str(package)


def test_version_and_build_facts():
    assert gpukit.__version__ == "0.1.0"
    assert isinstance(gpukit.built_with_cuda(), bool)
    assert isinstance(gpukit.devices(), list)


def test_type_stubs_are_installed_beside_the_module():
    package = pathlib.Path(gpukit.__file__).parent
    stub = (package / "_gpukit.pyi").read_text()
    # stubgen wrote every binding with its signature and docstring.
    for name in ("def reduce(", "def scan(", "def compact(", "def black_scholes(",
                 "def monte_carlo(", "def poisson(", "def gemm(", "def saxpy(", "def generate("):
        assert name in stub, name
    assert "reduce_on_device" in stub
    assert "class CudaError(RuntimeError)" in stub
    assert "class DeviceUnavailable(RuntimeError)" in stub
    assert (package / "py.typed").exists()


def test_devices_describe_each_gpu():
    for d in gpukit.devices():
        assert d["device"].startswith("cuda:")
        assert d["total_memory_bytes"] > 0
        assert len(d["compute_capability"]) == 2


def test_no_gpu_where_one_is_asked_for_is_device_unavailable():
    if gpukit.devices():
        with pytest.raises(gpukit.DeviceUnavailable, match="cuda:99"):
            gpukit.reduce(np.ones(4), device="cuda:99")
        return
    for device in ("cuda", "cuda:0"):
        with pytest.raises(gpukit.DeviceUnavailable):
            gpukit.reduce(np.ones(4), device=device)
    # auto falls back to the CPU, as the CLI does.
    assert gpukit.reduce(np.ones(4), device="auto") == 4.0


@pytest.mark.parametrize(
    "kind, python_type",
    [("invalid_input", ValueError), ("io", OSError), ("out_of_memory", MemoryError),
     ("cuda", gpukit.CudaError), ("device_unavailable", gpukit.DeviceUnavailable),
     ("interrupted", KeyboardInterrupt)])
def test_each_error_kind_maps_to_its_python_exception(kind, python_type):
    with pytest.raises(python_type) as raised:
        _gpukit._raise(kind, "the message", 12345)
    assert "the message" in str(raised.value)
    if kind == "out_of_memory":
        assert raised.value.bytes_requested == 12345
        assert "12345 bytes" in str(raised.value)
    if kind == "cuda":
        assert "cudaMalloc(&p, n) failed" in str(raised.value)


def test_the_exception_classes():
    assert issubclass(gpukit.CudaError, RuntimeError)
    assert issubclass(gpukit.DeviceUnavailable, RuntimeError)
    assert gpukit.CudaError.__module__ == "gpukit"
    assert gpukit.CudaError.__doc__


def test_bad_arguments_are_value_errors_with_the_clis_words():
    with pytest.raises(ValueError, match="unknown|sum, product"):
        gpukit.reduce(np.ones(3), op="mean")
    with pytest.raises(ValueError, match="int32, int64, uint32, float32 or float64, not int16"):
        gpukit.reduce(np.ones(3, dtype=np.int16))
    with pytest.raises(ValueError, match="^device must be auto, cpu, cuda or cuda:N"):
        gpukit.scan(np.ones(3), device="gpu")
    with pytest.raises(ValueError, match="^device must be auto, cpu, cuda, cuda:N, cuda:all or"):
        gpukit.reduce(np.ones(3), device="gpu")
    with pytest.raises(ValueError, match="stream= applies to CUDA arrays"):
        gpukit.reduce(np.ones(3), stream=0)


def calls_another_thread_runs_during(call, seconds: float) -> int:
    """How many 10 ms slots strictly inside `call` (its first and last 100 ms excluded) saw a
    Python thread run. With the GIL held through the call there can be none: the thread runs
    only in the call's Python parts, at its start and end. `call` is repeated with a growing
    size until it lasts `seconds`."""
    size = 1
    while True:
        start = time.perf_counter()
        call(size)
        if time.perf_counter() - start > seconds or size >= 1 << 12:
            break
        size *= 2
    slots: set[int] = set()
    done = threading.Event()
    origin = time.perf_counter()

    def mark():
        while not done.is_set():
            slots.add(int((time.perf_counter() - origin) / 0.01))

    thread = threading.Thread(target=mark)
    thread.start()
    time.sleep(0.05)
    start = time.perf_counter() - origin
    call(size)
    end = time.perf_counter() - origin
    done.set()
    thread.join()
    return sum(1 for slot in slots if start + 0.1 < slot * 0.01 < end - 0.11)


def test_the_gil_is_released_while_the_library_computes():
    # A Monte Carlo book of about half a second on the CPU (all cores busy with it: the marking
    # thread still gets time slices from the scheduler, never the GIL if it were held).
    spot = np.full(64, 100.0)
    busy = calls_another_thread_runs_during(
        lambda size: gpukit.monte_carlo(spot, 100.0, 1.0, 0.01, 0.2, paths=size << 14,
                                        device="cpu"), 0.5)
    assert busy >= 5, busy
