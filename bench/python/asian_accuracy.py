"""The accuracy of Asian (average price) rows against their oracles, on the CPU backend in double.
Prints the markdown tables of docs/case-studies/monte_carlo_asian.md.

    python3 bench/python/asian_accuracy.py [--paths-log2 20] [--long-paths-log2 24]

The book: calls and puts struck at 90, 100 and 110 on S = 100, T = 1, r = 0.03, q = 0.01,
sigma = 0.25, with 12 (monthly) fixings t_i = i T / 12. Table 1: the geometric average against
Kemna and Vorst's closed form for discrete fixings (the tests' oracle, written again here in
double). Table 2: the arithmetic average with the geometric control variate against a long run
(the same estimator on 16 times the paths of another seed) and the arithmetic-geometric bounds
(A >= G path by path: a call lies in [geometric, geometric + the discounted E[A - G]], a put in
[geometric - that, geometric]). Seed 1 (the long run: seed 2).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.stats import norm

import gpukit

TERMS = dict(spot=100.0, maturity=1.0, rate=0.03, dividend=0.01, volatility=0.25)
STRIKES = np.array([90.0, 100.0, 110.0])
FIXINGS = 12


def kemna_vorst(strike, put, n=FIXINGS, spot=100.0, maturity=1.0, rate=0.03, dividend=0.01,
                volatility=0.25):
    """The discrete geometric Asian: ln G is normal with mean ln S + (r - q - sigma^2/2) T
    (n+1)/(2n) and variance sigma^2 T (n+1)(2n+1)/(6 n^2)."""
    mean = math.log(spot) + (rate - dividend - volatility ** 2 / 2) * maturity * (n + 1) / (2 * n)
    variance = volatility ** 2 * maturity * (n + 1) * (2 * n + 1) / (6 * n * n)
    sd = math.sqrt(variance)
    d1 = (mean - np.log(strike) + variance) / sd
    d2 = d1 - sd
    forward = math.exp(mean + variance / 2)
    discount = math.exp(-rate * maturity)
    if put:
        return discount * (strike * norm.cdf(-d2) - forward * norm.cdf(-d1))
    return discount * (forward * norm.cdf(d1) - strike * norm.cdf(d2))


def arithmetic_minus_geometric(n=FIXINGS, spot=100.0, maturity=1.0, rate=0.03, dividend=0.01,
                               volatility=0.25):
    """The discounted E[A - G] >= 0."""
    mean_a = spot / n * sum(math.exp((rate - dividend) * maturity * i / n) for i in range(1, n + 1))
    mean_log = (rate - dividend - volatility ** 2 / 2) * maturity * (n + 1) / (2 * n)
    variance = volatility ** 2 * maturity * (n + 1) * (2 * n + 1) / (6 * n * n)
    return math.exp(-rate * maturity) * (mean_a - spot * math.exp(mean_log + variance / 2))


def asian(average, put, paths, seed=1, **options):
    t = TERMS
    return gpukit.monte_carlo(t["spot"], STRIKES, t["maturity"], t["rate"], t["volatility"],
                              t["dividend"], put=put, average=average, steps=FIXINGS, paths=paths,
                              seed=seed, device="cpu", **options)


def geometric_table(paths: int) -> str:
    lines = ["| strike | side | Kemna-Vorst | Monte Carlo | std_error | difference | "
             "in standard errors |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for put in (False, True):
        r = asian("geometric", put, paths)
        for k, price, se in zip(STRIKES, r["price"], r["std_error"]):
            exact = float(kemna_vorst(k, put))
            lines.append(f"| {k:.0f} | {'put' if put else 'call'} | {exact:.6f} | {price:.6f} | "
                         f"{se:.4f} | {price - exact:+.4f} | {(price - exact) / se:+.1f} |")
    return "\n".join(lines)


def arithmetic_table(paths: int, long_paths: int) -> str:
    gap = arithmetic_minus_geometric()
    lines = ["| strike | side | bounds | long run | Monte Carlo (control) | std_error | "
             "variance reduction | in standard errors of the long run |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for put in (False, True):
        r = asian("arithmetic", put, paths, control_variate=True)
        # Another seed: the long run shares no path with the short one.
        long = asian("arithmetic", put, long_paths, seed=2, control_variate=True)
        for i, k in enumerate(STRIKES):
            g = float(kemna_vorst(k, put))
            low, high = (g - gap, g) if put else (g, g + gap)
            price, se, reference = r["price"][i], r["std_error"][i], long["price"][i]
            both = math.hypot(se, long["std_error"][i])
            lines.append(f"| {k:.0f} | {'put' if put else 'call'} | [{low:.4f}, {high:.4f}] | "
                         f"{reference:.6f} | {price:.6f} | {se:.5f} | "
                         f"{r['vrf_control'][i]:.0f} | {(price - reference) / both:+.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths-log2", type=int, default=20)
    parser.add_argument("--long-paths-log2", type=int, default=24)
    args = parser.parse_args()
    paths = 1 << args.paths_log2
    print(f"Geometric, {FIXINGS} fixings, 2^{args.paths_log2} paths:\n")
    print(geometric_table(paths))
    print(f"\nArithmetic with the geometric control, {FIXINGS} fixings, 2^{args.paths_log2} "
          f"paths (long run: 2^{args.long_paths_log2}):\n")
    print(arithmetic_table(paths, 1 << args.long_paths_log2))


if __name__ == "__main__":
    main()
