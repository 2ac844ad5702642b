#!/usr/bin/env python3
"""Implied volatility on the CPU: gpukit against py_vollib_vectorized and lets_be_rational (the
pure-Python port of Jaeckel's LetsBeRational), on the same realistic book, on the same machine,
in the same run, per core (issue 32's CPU bar: gpukit at least 10x both per core).

The book: option chains as an exchange lists them, with dividends and rates: underlyings from 10
to 1000, listed expiries from a week to two years, strikes spread around the forward by a few
standard deviations (denser near the money), a skewed smile from 10% to 80%, mostly
out-of-the-money quotes with some in the money, calls and puts; prices made by
gpukit.black_scholes in double. Every implementation inverts the same prices (Black-Scholes-
Merton: spot, dividend, rate).

- gpukit.implied_volatility(device="cpu") with one OpenMP thread and with all the machine's
  cores, each in a process of its own (OMP_NUM_THREADS is read when gpukit loads);
- py_vollib_vectorized.vectorized_implied_volatility (numba, one thread) on the whole book;
- lets_be_rational.implied_volatility_from_a_transformed_rational_guess, called per option (it
  takes one), on the first --lbr-size options: a Python loop, as its users run it.
Both peers run in their fastest configuration, compiled by numba: py_vollib_vectorized 0.1.1 was
written when py_lets_be_rational compiled itself with numba; today's releases keep the special
functions in cody_special and piecewise_rational, plain Python, and compile the rest only with
PY_LETS_BE_RATIONAL_ENABLE_NUMBA=1, so that py_vollib_vectorized's numba code does not compile
(a TypingError) until those are compiled too: compile_the_peers() does so before importing them.
Times are medians of --repeat calls (after a warm-up call, which also compiles numba's code);
per core is options/s divided by the threads used. The volatilities are compared with gpukit's
where all give one. Not a test: the speed is the machine's, and the load is printed with it.

    .venv/bin/python bench/python/iv_vs_vollib.py [--size 1000000] [--repeat 5]
        [--lbr-size 20000] [--seed 32]

pip install py_vollib_vectorized lets_be_rational into the environment that runs it (they are
not gpukit's dependencies).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def realistic_book(n: int, seed: int) -> dict[str, np.ndarray]:
    """A book of n quotes spread as exchange-listed chains are (see the module's doc)."""
    rng = np.random.default_rng(seed)
    underlyings = max(1, n // 2000)
    spot_of = np.exp(rng.uniform(math.log(10), math.log(1000), underlyings))
    dividend_of = rng.uniform(0, 0.04, underlyings)
    level_of = rng.uniform(0.12, 0.45, underlyings)  # each underlying's at-the-money volatility
    expiries = np.array([7, 14, 21, 30, 45, 60, 91, 122, 182, 273, 365, 547, 730]) / 365
    which = rng.integers(0, underlyings, n)
    maturity = rng.choice(expiries, n, p=np.linspace(2, 1, len(expiries)) /
                          np.linspace(2, 1, len(expiries)).sum())
    rate = 0.045 + 0.005 * np.sqrt(maturity)  # an upward-sloping curve
    spot, dividend = spot_of[which], dividend_of[which]
    forward = spot * np.exp((rate - dividend) * maturity)
    # Standardized moneyness, denser near the money: a normal with a few wide wings.
    z = rng.standard_normal(n) * np.where(rng.random(n) < 0.9, 1.0, 2.5)
    atm = level_of[which] * (1 + 0.15 / np.sqrt(maturity * 12))  # short expiries richer
    strike = np.round(forward * np.exp(z * atm * np.sqrt(maturity)), 2)
    log_moneyness = np.log(strike / forward) / np.sqrt(maturity)
    volatility = np.clip(atm - 0.12 * log_moneyness + 0.08 * log_moneyness ** 2, 0.1, 0.8)
    # Mostly out-of-the-money quotes (puts below the forward, calls above), a fifth in the money.
    put = (strike < forward) ^ (rng.random(n) < 0.2)
    return dict(spot=spot, strike=strike, maturity=maturity, rate=rate, dividend=dividend,
                volatility=volatility, put=put)


def compile_the_peers() -> None:
    """numba.njit over every function of cody_special and piecewise_rational (and the names that
    refer to them), and py_lets_be_rational's own numba switch on: the configuration in which
    py_vollib_vectorized's compiled code compiles (see the module's doc)."""
    import types

    os.environ["PY_LETS_BE_RATIONAL_ENABLE_NUMBA"] = "1"
    import numba
    import cody_special  # noqa: F401  (imports its submodules)
    import piecewise_rational  # noqa: F401

    modules = [m for name, m in list(sys.modules.items())
               if m is not None and name.split(".")[0] in ("cody_special", "piecewise_rational")]
    compiled = {}
    for module in modules:
        for value in list(vars(module).values()):
            if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                compiled[value] = numba.njit(value)
    for module in modules:
        for name, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value in compiled:
                setattr(module, name, compiled[value])


def median_seconds(call, repeat: int) -> float:
    call()  # warm-up (numba compiles here)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def gpukit_child(book_path: str, repeat: int, result_path: str) -> None:
    """Runs in a process of its own: gpukit on the book with OMP_NUM_THREADS as set."""
    import gpukit

    book = dict(np.load(book_path))
    arguments = (book["price"], book["strike"], book["maturity"], book["rate"])
    keywords = dict(spot=book["spot"], dividend=book["dividend"], put=book["put"], device="cpu")
    volatility, status = gpukit.implied_volatility(*arguments, **keywords)
    seconds = median_seconds(lambda: gpukit.implied_volatility(*arguments, **keywords), repeat)
    np.savez(result_path, volatility=volatility, status=status, seconds=seconds)


def run_gpukit(book_path: str, repeat: int, threads: int | None) -> dict:
    environment = dict(os.environ)
    if threads is None:
        environment.pop("OMP_NUM_THREADS", None)
    else:
        environment["OMP_NUM_THREADS"] = str(threads)
    with tempfile.TemporaryDirectory() as d:
        result_path = os.path.join(d, "result.npz")
        subprocess.run([sys.executable, __file__, "--child", book_path, str(repeat),
                        result_path], env=environment, check=True)
        return dict(np.load(result_path))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="options in the book")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls (median)")
    parser.add_argument("--lbr-size", type=int, default=20_000,
                        help="options lets_be_rational inverts (a Python loop)")
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        gpukit_child(args.child[0], int(args.child[1]), args.child[2])
        return 0

    import gpukit

    compile_the_peers()
    import lets_be_rational
    import py_vollib_vectorized

    cores = os.cpu_count() or 1
    load_before = os.getloadavg()
    book = realistic_book(args.size, args.seed)
    book["price"] = gpukit.black_scholes(book["spot"], book["strike"], book["maturity"],
                                         book["rate"], book["volatility"], book["dividend"],
                                         book["put"], device="cpu")
    n = args.size
    rows = []  # (implementation, threads, options, seconds)
    with tempfile.TemporaryDirectory() as d:
        book_path = os.path.join(d, "book.npz")
        np.savez(book_path, **book)
        one = run_gpukit(book_path, args.repeat, 1)
        rows.append(("gpukit (CPU, 1 thread)", 1, n, float(one["seconds"])))
        everything = run_gpukit(book_path, args.repeat, None)
        rows.append((f"gpukit (CPU, {cores} threads)", cores, n, float(everything["seconds"])))
    reference, status = one["volatility"], one["status"]
    assert np.array_equal(reference, everything["volatility"], equal_nan=True), \
        "gpukit's volatilities depend on the thread count"

    flag = np.where(book["put"], "p", "c")

    def vectorized():
        return py_vollib_vectorized.vectorized_implied_volatility(
            book["price"], book["spot"], book["strike"], book["maturity"], book["rate"], flag,
            q=book["dividend"], model="black_scholes_merton", return_as="numpy",
            on_error="ignore")

    vectorized_volatility = np.asarray(vectorized(), dtype=np.float64).reshape(-1)
    rows.append(("py_vollib_vectorized 0.1.1 (numba, 1 thread)", 1, n,
                 median_seconds(vectorized, args.repeat)))

    m = min(args.lbr_size, n)
    discount = np.exp(-book["rate"][:m] * book["maturity"][:m])
    forward = book["spot"][:m] * np.exp((book["rate"][:m] - book["dividend"][:m]) *
                                        book["maturity"][:m])
    undiscounted = book["price"][:m] / discount
    sign = np.where(book["put"][:m], -1.0, 1.0)
    inputs = list(zip(undiscounted.tolist(), forward.tolist(), book["strike"][:m].tolist(),
                      book["maturity"][:m].tolist(), sign.tolist()))
    invert = lets_be_rational.implied_volatility_from_a_transformed_rational_guess

    def one(p, f, k, t, q):
        try:  # it raises on a quote below intrinsic: the loop must go on
            return invert(p, f, k, t, q)
        except Exception:  # noqa: BLE001 (BelowIntrinsicException, AboveMaximumException)
            return math.nan

    def loop():
        return [one(p, f, k, t, q) for p, f, k, t, q in inputs]

    rational_volatility = np.array(loop())
    rows.append(("lets_be_rational 1.1.2 (numba inside, one option a call)", 1, m,
                 median_seconds(loop, max(1, args.repeat // 2))))
    load_after = os.getloadavg()

    per_core = {name: options / seconds / threads for name, threads, options, seconds in rows}
    best_peer = max(per_core[name] for name, *_ in rows[2:])
    print(f"Implied volatility on the CPU: a realistic book of {n} options "
          f"(lets_be_rational: its first {m}), Black-Scholes-Merton, double")
    print(f"Machine: {cores} cores; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after (1 minute); median of {args.repeat} calls")
    print()
    header = ("implementation", "threads", "options", "median s", "options/s", "per core",
              "gpukit 1 thread / this, per core")
    print("| " + " | ".join(header) + " |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    gpukit_per_core = per_core[rows[0][0]]
    for name, threads, options, seconds in rows:
        rate = options / seconds
        print(f"| {name} | {threads} | {options} | {seconds:.4f} | {rate:,.0f} | "
              f"{per_core[name]:,.0f} | {gpukit_per_core / per_core[name]:.1f}x |")
    print()
    ok = status == 0
    for name, values, count in (("py_vollib_vectorized", vectorized_volatility, n),
                                ("lets_be_rational", rational_volatility, m)):
        both = ok[:count] & np.isfinite(values) & (values > 0)
        difference = np.abs(values[both] - reference[:count][both]) / reference[:count][both]
        print(f"{name}: {both.sum()} of {count} volatilities where gpukit has one too; relative "
              f"difference from gpukit's: median {np.median(difference):.2e}, max "
              f"{difference.max():.2e}")
    print(f"gpukit statuses: " + ", ".join(
        f"{int(np.sum(status == k))} {word}" for k, word in enumerate(gpukit.iv_status_names)
        if np.sum(status == k) or k == 0))
    ratio = gpukit_per_core / best_peer
    print(f"Per core, gpukit is {ratio:.1f}x the fastest peer (the bar: 10x): "
          f"{'met' if ratio >= 10 else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
