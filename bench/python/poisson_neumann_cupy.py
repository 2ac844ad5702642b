"""Neumann Poisson solves on a CUDA device: gpukit.poisson against the same solve written with
CuPy (cupyx.scipy.fft.dctn, an element-wise division by the eigenvalues, idctn), in one run.

Issue 34's bar: gpukit at least 1.5x faster than CuPy on 2D and 3D grids. Both solve lap(u) = f
with every axis neumann (cell centres, modes cos(pi k x / L)), the spectral operator, f of mean
zero, on device-resident CuPy arrays; each is checked against the other before it is timed.
Times are CUDA-event medians of --repeat solves after --warmup, Python calls included (a user's
cost). Needs CuPy and a CUDA build of gpukit:

    python bench/python/poisson_neumann_cupy.py [--repeat 20] [--warmup 3] [--json out.json]
"""

import argparse
import json
import math
import statistics
import sys

import cupy as cp
import cupyx.scipy.fft as cufft

import gpukit


def eigenvalues(shape, lengths):
    """-(pi k / L)^2 summed over the axes, broadcast to the grid (the constant mode 0)."""
    total = cp.zeros(shape, dtype=cp.float64)
    for axis, (n, length) in enumerate(zip(shape, lengths)):
        k = cp.arange(n, dtype=cp.float64)
        w = -((math.pi * k / length) ** 2)
        total = total + w.reshape([n if a == axis else 1 for a in range(len(shape))])
    return total


def cupy_solve(f, inverse_eigenvalues):
    """The textbook CuPy solve: orthonormal DCT-II, divide, inverse."""
    coefficients = cufft.dctn(f, type=2, norm="ortho")
    coefficients *= inverse_eigenvalues
    return cufft.idctn(coefficients, type=2, norm="ortho")


def median_ms(run, repeat, warmup):
    for _ in range(warmup):
        run()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    samples = []
    for _ in range(repeat):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    device = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
    rows = []
    for shape in [(4096, 4096), (512, 512, 512)]:
        for dtype in [cp.float32, cp.float64]:
            lengths = [1.0] * len(shape)
            rng = cp.random.default_rng(7)
            f = rng.standard_normal(shape, dtype=cp.float64)
            f -= f.mean()
            f = f.astype(dtype)
            mu = eigenvalues(shape, lengths)
            inverse = cp.where(mu != 0, 1.0 / cp.where(mu != 0, mu, 1.0), 0.0).astype(dtype)
            del mu
            ours = gpukit.poisson(f, lengths, boundary="neumann")
            theirs = cupy_solve(f, inverse)
            scale = float(cp.abs(theirs).max())
            difference = float(cp.abs(ours - theirs).max())
            eps = float(cp.finfo(dtype).eps)
            agree = difference <= 64 * math.log2(f.size) * eps * scale
            del ours, theirs
            t_gpukit = median_ms(lambda: gpukit.poisson(f, lengths, boundary="neumann"),
                                 args.repeat, args.warmup)
            t_cupy = median_ms(lambda: cupy_solve(f, inverse), args.repeat, args.warmup)
            row = {
                "grid": "x".join(map(str, shape)),
                "dtype": cp.dtype(dtype).name,
                "gpukit_ms": t_gpukit,
                "cupy_ms": t_cupy,
                "speedup": t_cupy / t_gpukit,
                "max_difference": difference,
                "agree": agree,
            }
            rows.append(row)
            print(f"{row['grid']:>12} {row['dtype']:>8}  gpukit {t_gpukit:8.3f} ms  "
                  f"cupy {t_cupy:8.3f} ms  {row['speedup']:5.2f}x  "
                  f"max diff {difference:.2g} ({'ok' if agree else 'MISMATCH'})")
            del f, inverse
            cp.get_default_memory_pool().free_all_blocks()
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": device, "rows": rows}, out, indent=1)
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
