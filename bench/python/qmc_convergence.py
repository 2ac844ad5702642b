"""The convergence of the Monte Carlo samplers: the error of European prices against the
Black-Scholes closed form as the paths grow, Philox (pseudo-random) against Sobol (scrambled
quasi-random points, 16 replicates), on the CPU backend in double. Prints the markdown table of
docs/case-studies/monte_carlo_qmc.md and can draw its plot.

    python3 bench/python/qmc_convergence.py [--svg docs/case-studies/monte_carlo_qmc_convergence.svg]

The book: 64 calls and puts, spots 70-130 against a strike of 100, maturities 0.25-3 years,
volatilities 0.1-0.45 (fixed by a seeded numpy generator, so every run prices the same book). The
error of a row is |price - closed form|; the table gives the root mean square over the rows, and
the mean of the estimator's own standard error. Sobol's error falls close to 1/paths, Philox's as
1/sqrt(paths).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import gpukit

PATHS = [1 << k for k in range(10, 21, 2)]


def book():
    rng = np.random.default_rng(33)
    n = 64
    return dict(spot=rng.uniform(70, 130, n), strike=np.full(n, 100.0),
                maturity=rng.uniform(0.25, 3, n), rate=rng.uniform(0, 0.05, n),
                volatility=rng.uniform(0.1, 0.45, n), put=np.arange(n) % 2 == 1)


def measure():
    b = book()
    exact = gpukit.black_scholes(b["spot"], b["strike"], b["maturity"], b["rate"],
                                 b["volatility"], put=b["put"], device="cpu")
    rows = []
    for paths in PATHS:
        row = {"paths": paths}
        for sampler in ("philox", "sobol"):
            r = gpukit.monte_carlo(b["spot"], b["strike"], b["maturity"], b["rate"],
                                   b["volatility"], put=b["put"], paths=paths, seed=7,
                                   sampler=sampler, replicates=16, device="cpu")
            row[sampler] = (float(np.sqrt(np.mean((r["price"] - exact) ** 2))),
                            float(np.mean(r["std_error"])))
        rows.append(row)
    return rows


def table(rows) -> str:
    lines = ["| paths | Philox rms error | Philox mean std_error | Sobol rms error | "
             "Sobol mean std_error | error ratio |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p, s = r["philox"], r["sobol"]
        lines.append(f"| 2^{int(math.log2(r['paths']))} | {p[0]:.2e} | {p[1]:.2e} | {s[0]:.2e} | "
                     f"{s[1]:.2e} | {p[0] / s[0]:.0f}x |")
    return "\n".join(lines)


def svg(rows) -> str:
    width, height, left, bottom, top, right = 640, 400, 70, 50, 20, 20
    xs = [math.log2(r["paths"]) for r in rows]
    ys = [math.log10(r[s][0]) for r in rows for s in ("philox", "sobol")]
    x0, x1 = min(xs), max(xs)
    y0, y1 = math.floor(min(ys)), math.ceil(max(ys))

    def at(x, y):
        px = left + (x - x0) / (x1 - x0) * (width - left - right)
        py = top + (y1 - y) / (y1 - y0) * (height - top - bottom)
        return f"{px:.1f},{py:.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    for y in range(y0, y1 + 1):
        parts.append(f'<polyline points="{at(x0, y)} {at(x1, y)}" stroke="#ddd"/>')
        px, py = at(x0, y).split(",")
        parts.append(f'<text x="{float(px) - 8}" y="{float(py) + 4}" text-anchor="end">'
                     f'1e{y}</text>')
    for x in xs:
        px, py = at(x, y0).split(",")
        parts.append(f'<text x="{px}" y="{float(py) + 18}" text-anchor="middle">2^{int(x)}</text>')
    for sampler, colour in (("philox", "#d62728"), ("sobol", "#1f77b4")):
        points = " ".join(at(x, math.log10(r[sampler][0])) for x, r in zip(xs, rows))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                     'stroke-width="2"/>')
        lx, ly = at(xs[-1], math.log10(rows[-1][sampler][0])).split(",")
        parts.append(f'<text x="{float(lx) - 4}" y="{float(ly) - 8}" text-anchor="end" '
                     f'fill="{colour}">{sampler}</text>')
    parts.append(f'<text x="{(left + width - right) / 2}" y="{height - 10}" '
                 'text-anchor="middle">paths per option</text>')
    parts.append(f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 16 {(top + height - bottom) / 2})">rms error against '
                 'Black-Scholes (64 options, CPU, double)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", help="write the plot to this file")
    args = parser.parse_args()
    rows = measure()
    print(table(rows))
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg(rows))
        print(f"wrote {args.svg}")


if __name__ == "__main__":
    main()
