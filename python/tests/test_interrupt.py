"""Ctrl-C stops a long call: SIGINT sent from a timer thread while the library computes (the GIL
released) raises KeyboardInterrupt within a few seconds, not when the call would have returned,
and the next call works and gives the bits of one never stopped. Host arrays on the CPU here; the
GPU's cases are in test_gpu.py (they share interrupted_after)."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import gpukit

# The library checks for signals between blocks of work: on the CPU a chunk of about 2^24
# path-steps (about a second on two busy cores), at most once a 0.1 s.
WITHIN_SECONDS = 10.0
SIGNAL_AFTER_SECONDS = 0.5


def interrupted_after(call) -> float:
    """Seconds from SIGINT to the KeyboardInterrupt `call` raises. `call` must last much longer
    than SIGNAL_AFTER_SECONDS uninterrupted (the size of a long pricing): a call that returns
    before the signal, or lets it through only once it has returned, fails the test."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Python runs signal handlers on the main thread only")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here")
    sent = []

    def send():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(SIGNAL_AFTER_SECONDS, send)
    returned = False
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
            returned = True
            time.sleep(2 * SIGNAL_AFTER_SECONDS)  # the signal, if it comes late, lands here
    finally:
        timer.cancel()
        timer.join()
    stopped = time.monotonic()
    assert sent, "the signal was not sent"
    assert not returned, "the call returned before the signal: size it to run longer"
    return stopped - sent[0]


# How long a stopped call would run uninterrupted: long enough that stopping it early is seen,
# short enough that a regression costs a minute of CI, not hours.
UNINTERRUPTED_SECONDS = 40.0


def paths_lasting(seconds: float, pricing) -> int:
    """The paths that make pricing(paths) last about `seconds` on this machine (a pricing's time
    is linear in its paths, measured here on a short run; at most 2^34 paths, an even number). A
    first call warms up what is paid once (a GPU's context and modules: tenths of a second, which
    would otherwise pass for the time of the short run and size the long one too short)."""
    paths = 1 << 14
    pricing(paths)
    while True:
        start = time.perf_counter()
        pricing(paths)
        elapsed = time.perf_counter() - start
        if elapsed > 0.2 or paths >= 1 << 34:
            break
        paths *= 4
    return min(1 << 34, int(paths * seconds / elapsed)) & ~1


def lasting(seconds: float, pricing):
    """pricing(paths) sized to last about `seconds` on this machine (paths_lasting)."""
    scaled = paths_lasting(seconds, pricing)
    return lambda: pricing(scaled)


def long_book(rows: int) -> dict:
    """A European book of `rows` options."""
    return dict(spot=np.full(rows, 100.0), strike=np.linspace(80.0, 120.0, rows), maturity=1.0,
                rate=0.02, volatility=0.25)


def test_monte_carlo_stops_on_ctrl_c_and_the_next_call_works():
    before = gpukit.monte_carlo(100.0, [90.0, 110.0], 1.0, 0.02, 0.3, paths=4096, seed=3,
                                device="cpu")
    seconds = interrupted_after(lasting(UNINTERRUPTED_SECONDS, lambda paths: gpukit.monte_carlo(
        **long_book(4), paths=paths, device="cpu")))
    assert seconds < WITHIN_SECONDS, seconds
    after = gpukit.monte_carlo(100.0, [90.0, 110.0], 1.0, 0.02, 0.3, paths=4096, seed=3,
                               device="cpu")
    for column in before:
        np.testing.assert_array_equal(after[column], before[column], err_msg=column)


def test_monte_carlo_with_greeks_and_barriers_stops_on_ctrl_c():
    seconds = interrupted_after(lasting(UNINTERRUPTED_SECONDS, lambda paths: gpukit.monte_carlo(
        **long_book(2), barrier=70.0, barrier_type="down-out", steps=250, paths=paths,
        greeks=True, antithetic=True, device="cpu")))
    assert seconds < WITHIN_SECONDS, seconds


def test_price_book_monte_carlo_stops_on_ctrl_c():
    import pandas as pd

    book = pd.DataFrame({"type": ["call", "put", "call"], "spot": [100.0, 100.0, 90.0],
                         "strike": [100.0, 95.0, 100.0], "maturity": [1.0, 2.0, 0.5]})
    seconds = interrupted_after(lasting(UNINTERRUPTED_SECONDS, lambda paths: gpukit.price_book(
        book, "monte_carlo", rate=0.02, volatility=0.25, paths=paths, device="cpu")))
    assert seconds < WITHIN_SECONDS, seconds
    priced = gpukit.price_book(book, "monte_carlo", rate=0.02, volatility=0.25, paths=4096,
                               device="cpu")
    assert priced.price.notna().all()

