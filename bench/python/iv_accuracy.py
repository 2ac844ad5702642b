#!/usr/bin/env python3
"""The accuracy plot of docs/case-studies/implied_volatility.md: gpukit.implied_volatility on the
CPU over the grid the issue names (moneyness ln(F/K) from -10 to +10 standard deviations
sigma sqrt(T), maturities from one day to 30 years, volatilities from 1% to 500%, calls and
puts), each price made by gpukit.black_scholes in double from a known volatility.

Two heat maps over moneyness x maturity, each cell the worst over the volatilities and sides:
- the volatility's relative error |iv - sigma| / sigma (log10): about 1e-16 wherever the price
  carries its volatility, growing only where the vega vanishes (deep in or out of the money, short
  maturities): there no method can know the volatility better than the price's error over the
  vega;
- the same error over that bound, 2 b / vega (b = black_scholes_price_bound: 64 eps of
  S + K, the pricing error; include/gpukit/finance/black_scholes_reference.hpp): every cell at
  most 1 is the accuracy contract holding on the whole grid.
A quote whose price rounds onto a no-arbitrage bound (an intrinsic value to the last bit) has no
volatility to recover: such rows are counted, not plotted.

Writes an SVG (Python standard library, no plotting package) and prints a summary:

    python3 bench/python/iv_accuracy.py [--svg docs/case-studies/implied_volatility_accuracy.svg]
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import gpukit

MONEYNESS = np.linspace(-10, 10, 41)  # z = ln(F/K) / (sigma sqrt(T))
MATURITIES = np.exp(np.linspace(math.log(1 / 365), math.log(30), 25))
VOLATILITIES = np.array([0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0])
EPS = np.finfo(np.float64).eps


def measure():
    """(relative error, error over bound, rows at a bound), each cell's worst; and the counts."""
    z, t, v, put = np.meshgrid(MONEYNESS, MATURITIES, VOLATILITIES, [False, True],
                               indexing="ij")
    forward = 100.0
    strike = forward * np.exp(-z * v * np.sqrt(t))
    price = gpukit.black_scholes(forward, strike, t, 0.0, v, 0.0, put, device="cpu")
    iv, status = gpukit.implied_volatility(price, strike, t, 0.0, spot=forward, put=put,
                                           device="cpu")
    s = v * np.sqrt(t)
    d1 = np.log(forward / strike) / s + s / 2
    vega = forward * np.sqrt(t) * np.exp(-d1 * d1 / 2) / math.sqrt(2 * math.pi)
    bound = 2 * 64 * EPS * (forward + strike) / vega
    error = np.abs(iv - v)
    ok = status == 0
    relative = np.where(ok, error / v, np.nan)
    over_bound = np.where(ok, error / bound, np.nan)
    # Worst over the volatilities and the sides: axes (moneyness, maturity).
    with np.errstate(all="ignore"):
        worst_relative = np.nanmax(relative, axis=(2, 3))
        worst_over_bound = np.nanmax(over_bound, axis=(2, 3))
    counts = {"rows": int(status.size), "ok": int(ok.sum()),
              "at a no-arbitrage bound": int((~ok).sum()),
              "within 1e-13 relative": int(np.sum(ok & (error <= 1e-13 * v))),
              "over the bound": int(np.sum(ok & (error > bound)))}
    return worst_relative, worst_over_bound, counts


def colour(value: float, low: float, high: float) -> str:
    """A blue (low) to yellow to red (high) ramp over log10 values; grey for no data."""
    if not np.isfinite(value):
        return "#d0d0d0"
    x = min(max((value - low) / (high - low), 0.0), 1.0)
    stops = [(0.0, (49, 54, 149)), (0.35, (116, 173, 209)), (0.6, (254, 224, 144)),
             (0.8, (244, 109, 67)), (1.0, (165, 0, 38))]
    for (x0, c0), (x1, c1) in zip(stops, stops[1:]):
        if x <= x1:
            f = (x - x0) / (x1 - x0)
            return "#%02x%02x%02x" % tuple(round(a + f * (b - a)) for a, b in zip(c0, c1))
    return "#a50026"


def heat_map(values, left: float, top: float, title: str, low: float, high: float,
             ticks: list[tuple[float, str]]) -> list[str]:
    """An SVG group: moneyness across, maturity up, log10 of `values` coloured over [low, high]."""
    cell_w, cell_h = 9, 11
    nx, ny = values.shape
    out = [f'<text x="{left + nx * cell_w / 2}" y="{top - 10}" text-anchor="middle" '
           f'font-weight="bold">{title}</text>']
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log10(values)
    for i in range(nx):
        for j in range(ny):
            y = top + (ny - 1 - j) * cell_h
            out.append(f'<rect x="{left + i * cell_w}" y="{y}" width="{cell_w}" '
                       f'height="{cell_h}" fill="{colour(logs[i, j], low, high)}"/>')
    bottom = top + ny * cell_h
    for zi in range(0, nx, 10):
        x = left + (zi + 0.5) * cell_w
        out.append(f'<text x="{x}" y="{bottom + 14}" text-anchor="middle">'
                   f'{MONEYNESS[zi]:+.0f}</text>')
    out.append(f'<text x="{left + nx * cell_w / 2}" y="{bottom + 30}" text-anchor="middle">'
               'ln(F/K) in standard deviations (sigma sqrt T)</text>')
    for label, maturity in (("1 day", 1 / 365), ("1 month", 1 / 12), ("1 year", 1.0),
                            ("30 years", 30.0)):
        j = int(np.argmin(np.abs(np.log(MATURITIES) - math.log(maturity))))
        y = top + (ny - 1 - j) * cell_h + cell_h * 0.8
        out.append(f'<text x="{left - 6}" y="{y}" text-anchor="end">{label}</text>')
    # The colour scale.
    scale_top = bottom + 42
    for k in range(60):
        value = low + (high - low) * k / 59
        out.append(f'<rect x="{left + k * nx * cell_w / 60}" y="{scale_top}" '
                   f'width="{nx * cell_w / 60 + 0.5}" height="10" '
                   f'fill="{colour(value, low, high)}"/>')
    for value, label in ticks:
        x = left + (value - low) / (high - low) * nx * cell_w
        out.append(f'<text x="{x}" y="{scale_top + 24}" text-anchor="middle">{label}</text>')
    return out


def svg(worst_relative, worst_over_bound) -> str:
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="900" height="420" '
             'font-family="sans-serif" font-size="11">',
             '<rect width="900" height="420" fill="white"/>']
    parts += heat_map(worst_relative, 80, 40,
                      "Volatility error |iv - sigma| / sigma (worst over sigma, side)", -17, 0,
                      [(-16, "1e-16"), (-13, "1e-13"), (-8, "1e-8"), (-4, "1e-4"), (0, "1")])
    parts += heat_map(worst_over_bound, 530, 40,
                      "The same error over its bound 2 b / vega", -6, 0,
                      [(-6, "1e-6"), (-4, "1e-4"), (-2, "0.01"), (0, "1 (the bound)")])
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--svg", help="write the plot to this file")
    args = parser.parse_args(argv)
    worst_relative, worst_over_bound, counts = measure()
    print(f"gpukit {gpukit.__version__}: {len(MONEYNESS)} moneyness x {len(MATURITIES)} "
          f"maturities x {len(VOLATILITIES)} volatilities x call, put")
    for name, count in counts.items():
        print(f"  {name}: {count}")
    print(f"  worst error over its bound: {np.nanmax(worst_over_bound):.3g}")
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg(worst_relative, worst_over_bound))
        print(f"wrote {args.svg}")
    return 1 if counts["over the bound"] else 0


if __name__ == "__main__":
    sys.exit(main())
