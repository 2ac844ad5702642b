"""Shared fixtures of the Python tests.

- ``seed``: the data seed of the randomized tests: fixed, or GPUKIT_TEST_SEED (decimal or 0x
  hex) as the C++ tests take it; a failure names it so that it replays.
- ``gpu``: the GPU tests' gate. Without a usable GPU (or without CuPy / PyTorch for the tests that
  need them) they skip, except where GPUKIT_REQUIRE_GPU=1 (the GPU machine's
  scripts/python-gpu-check.sh): there a skip would hide a broken setup, so it fails instead.
- ``cli``: the gpukit tool the package is compared with (GPUKIT_CLI, else a build tree's), for the
  "same bits as the CLI" tests; they skip where there is none, unless GPUKIT_REQUIRE_CLI=1
  (scripts/setup.sh test sets it).
"""

from __future__ import annotations

import os
import pathlib
import shutil

import numpy as np
import pytest

import gpukit

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def require_or_skip(reason: str, flag: str = "GPUKIT_REQUIRE_GPU") -> None:
    if _flag(flag):
        pytest.fail(f"{flag} is set, so this test may not skip: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def seed() -> int:
    text = os.environ.get("GPUKIT_TEST_SEED", "")
    return int(text, 0) if text else 20260911


@pytest.fixture
def rng(seed: int, request) -> np.random.Generator:
    # One stream per test, derived from the seed and the test's name, so tests do not share data.
    name = request.node.nodeid.encode()
    return np.random.default_rng([seed, int.from_bytes(name[-16:].ljust(16, b"\0"), "little")])


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        if report.failed:
            seed = os.environ.get("GPUKIT_TEST_SEED", "20260911 (the default)")
            report.sections.append(("gpukit", f"data seed: GPUKIT_TEST_SEED={seed}"))


@pytest.fixture(scope="session")
def gpu() -> int:
    """The GPU tests' device: cuda:0, when gpukit can use one."""
    if not gpukit.built_with_cuda():
        require_or_skip("this gpukit was built without CUDA")
    if not gpukit.devices():
        require_or_skip(f"no usable GPU ({gpukit._gpukit.cuda_unavailable_reason()})")
    return 0


@pytest.fixture(scope="session")
def cupy(gpu):
    try:
        import cupy
    except ImportError:
        require_or_skip("CuPy is not installed")
    return cupy


@pytest.fixture(scope="session")
def torch(gpu):
    try:
        import torch
    except ImportError:
        require_or_skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        require_or_skip("PyTorch sees no GPU")
    return torch


@pytest.fixture(scope="session")
def cli() -> str:
    """The path of the gpukit tool."""
    candidates = [os.environ.get("GPUKIT_CLI", "")]
    candidates += [str(REPOSITORY / "build" / p / "apps" / "gpukit" / "gpukit")
                   for p in ("ci", "release", "gpu", "python-gpu")]
    candidates.append(shutil.which("gpukit") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    require_or_skip("no gpukit tool found (set GPUKIT_CLI)", "GPUKIT_REQUIRE_CLI")
    return ""
