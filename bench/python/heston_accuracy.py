"""The accuracy of Heston rows (Andersen's QE scheme with the martingale correction) against the
continuous model's prices, on the CPU backend in double. Prints the markdown tables of
docs/case-studies/monte_carlo_heston.md.

    python3 bench/python/heston_accuracy.py [--paths-log2 20] [--study-paths-log2 24]

Lewis's reference set ("Heston Model Reference Prices", 2019: S = 100, T = 1, r = 0.01,
q = 0.02, v0 = 0.04, kappa = 4, theta = 0.25, sigma_v = 1, rho = -0.5, strikes 80 to 120) is
the oracle: the tests' semi-analytic price (tests/finance/heston_oracle.hpp) reproduces it to
1e-10, and so does this script's (heston_price, in double: to 1e-13). Table 1 prices the ten
options at 64 steps a year; table 2 prices the 110 put at 16 to 256
steps a year with enough paths that the standard error is well below the discretisation error,
and fits error = c dt^p to see the scheme's bias shrink (a defect would not). Every row:
antithetic variates and the control variate (the discounted terminal price, exact under the
martingale correction), seed 1.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import gpukit

LEWIS = dict(spot=100.0, maturity=1.0, rate=0.01, dividend=0.02, v0=0.04, kappa=4.0, theta=0.25,
             sigma_v=1.0, rho=-0.5)
# strike: (put, call), Lewis's 50-digit values to 15.
PUBLISHED = {80: (7.958878113256768, 26.774758743998854),
             90: (12.017966707346305, 20.933349000596710),
             100: (17.055270961270109, 16.070154917028834),
             110: (23.017825898442801, 12.132211516709845),
             120: (29.811026202682472, 9.024913483457836)}
STUDY_STEPS = [16, 32, 64, 128, 256]
# The call of `gpukit bench monte_carlo`'s heston row (bench/monte_carlo_bench.cpp).
BENCH = dict(spot=100.0, strike=100.0, maturity=1.0, rate=0.05, dividend=0.02, v0=0.0625,
             kappa=1.5, theta=0.0625, sigma_v=0.6, rho=-0.7)


def heston_price(spot, strike, maturity, rate, dividend, v0, kappa, theta, sigma_v, rho,
                 put=False):
    """The semi-analytic price: Heston's two probabilities from the characteristic function of
    ln S_T in the stable form (Albrecher et al. 2007), integrated by scipy's adaptive quadrature
    in double. It reproduces Lewis's prices to 1e-13 (checked in main)."""
    from scipy.integrate import quad

    def phi(u):
        iu = 1j * u
        b = kappa - rho * sigma_v * iu
        d = np.sqrt(b * b + sigma_v ** 2 * (iu + u * u))
        g = (b - d) / (b + d)
        e = np.exp(-d * maturity)
        c = (rate - dividend) * iu * maturity + kappa * theta / sigma_v ** 2 * (
            (b - d) * maturity - 2 * np.log((1 - g * e) / (1 - g)))
        return np.exp(c + (b - d) / sigma_v ** 2 * (1 - e) / (1 - g * e) * v0
                      + iu * math.log(spot))

    log_k, forward = math.log(strike), phi(-1j)

    def probability(integrand):
        return 0.5 + quad(lambda u: integrand(u).real, 0, 200, limit=500,
                          epsabs=1e-12)[0] / math.pi

    p1 = probability(lambda u: np.exp(-1j * u * log_k) * phi(u - 1j) / (1j * u * forward))
    p2 = probability(lambda u: np.exp(-1j * u * log_k) * phi(u) / (1j * u))
    call = spot * math.exp(-dividend * maturity) * p1 - strike * math.exp(-rate * maturity) * p2
    if not put:
        return call
    return call - spot * math.exp(-dividend * maturity) + strike * math.exp(-rate * maturity)


def heston(strikes, put, steps, paths, seed=1):
    t = LEWIS
    return gpukit.monte_carlo(t["spot"], strikes, t["maturity"], t["rate"], 0.0, t["dividend"],
                              put=put, model="heston", v0=t["v0"], kappa=t["kappa"],
                              theta=t["theta"], sigma_v=t["sigma_v"], rho=t["rho"], steps=steps,
                              paths=paths, seed=seed, antithetic=True, control_variate=True,
                              device="cpu")


def lewis_table(paths: int) -> str:
    strikes = np.array(sorted(PUBLISHED), dtype=float)
    lines = ["| strike | side | published | QE, 64 steps | std_error | difference | "
             "in standard errors |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for put in (False, True):
        r = heston(strikes, put, 64, paths)
        for k, price, se in zip(strikes, r["price"], r["std_error"]):
            exact = PUBLISHED[int(k)][0 if put else 1]
            lines.append(f"| {k:.0f} | {'put' if put else 'call'} | {exact:.6f} | {price:.6f} | "
                         f"{se:.4f} | {price - exact:+.4f} | {(price - exact) / se:+.1f} |")
    return "\n".join(lines)


def steps_study(paths: int) -> str:
    exact = PUBLISHED[110][0]
    errors, lines = [], [
        "| steps a year | price | std_error | error | error / std_error | seconds |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for steps in STUDY_STEPS:
        start = time.perf_counter()
        r = heston(110.0, True, steps, paths)
        seconds = time.perf_counter() - start
        price, se = float(r["price"]), float(r["std_error"])
        errors.append(price - exact)
        lines.append(f"| {steps} | {price:.5f} | {se:.5f} | {price - exact:+.5f} | "
                     f"{(price - exact) / se:+.1f} | {seconds:.0f} |")
    # error = c dt^p by least squares on the logarithms (the errors share a sign when it is bias).
    dt = 1.0 / np.array(STUDY_STEPS, dtype=float)
    e = np.array(errors)
    if np.all(e < 0) or np.all(e > 0):
        p, log_c = np.polyfit(np.log(dt), np.log(np.abs(e)), 1)
        lines.append("")
        lines.append(f"Fit: |error| = {math.exp(log_c):.3g} dt^{p:.2f}.")
    return "\n".join(lines)


def oracle_check() -> str:
    worst = max(abs(heston_price(strike=k, put=put, **LEWIS) - PUBLISHED[k][0 if put else 1])
                for k in PUBLISHED for put in (False, True))
    bench = heston_price(**BENCH)
    return (f"The oracle against Lewis's ten prices: within {worst:.1e}. The bench's heston call "
            f"(S = K = 100, T = 1, r = 5%, q = 2%, v0 = theta = 0.0625, kappa 1.5, sigma_v 0.6, "
            f"rho -0.7): {bench:.6f}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths-log2", type=int, default=20)
    parser.add_argument("--study-paths-log2", type=int, default=24)
    parser.add_argument("--only", choices=("lewis", "steps"))
    args = parser.parse_args()
    print(oracle_check())
    print()
    if args.only != "steps":
        print(f"Lewis's set, 64 steps a year, 2^{args.paths_log2} paths:\n")
        print(lewis_table(1 << args.paths_log2))
        print()
    if args.only != "lewis":
        print(f"The 110 put against the steps, 2^{args.study_paths_log2} paths:\n")
        print(steps_study(1 << args.study_paths_log2))


if __name__ == "__main__":
    main()
