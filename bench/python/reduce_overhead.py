#!/usr/bin/env python3
"""The Python binding's call overhead: gpukit.reduce on a CuPy array against the C++ API on the
same array (primitives::reduce_on_device, timed in C++ with no Python between calls) and against
CuPy's own sum, on a 1-element array (the overhead alone) and a 2^28-element one (throughput).

Every call returns the sum to the host, so each is timed on the host clock from call to result:
gpukit.reduce(x) and reduce_on_device wait for their stream; CuPy's sum is made to, by .item().
Goals (issue 21): gpukit.reduce's median per call at most 10 us above the C++ call's on the small
array, and within 2% of it on the large one. Exit status 1 when a goal is missed.

    python3 bench/python/reduce_overhead.py [--repeat 200] [--dtype float32] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def per_call_seconds(call, repeat: int, warmup: int = 10) -> list[float]:
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_us": statistics.median(ordered) * 1e6,
        "p10_us": ordered[len(ordered) // 10] * 1e6,
        "p90_us": ordered[(len(ordered) * 9) // 10] * 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64", "int32"])
    parser.add_argument("--large", type=int, default=1 << 28, help="elements of the large array")
    parser.add_argument("--json", help="write the samples' summaries here")
    args = parser.parse_args()

    import cupy
    import gpukit
    from gpukit import _gpukit

    device = gpukit.devices()[0]
    rows = []
    goals_met = True
    for n in (1, args.large):
        x = cupy.ones(n, dtype=args.dtype)
        stream = cupy.cuda.get_current_stream().ptr
        expected = n
        assert gpukit.reduce(x) == expected
        repeat = args.repeat if n < 1 << 20 else max(20, args.repeat // 10)
        python = summary(per_call_seconds(lambda: gpukit.reduce(x), repeat))
        cpp = summary(_gpukit.time_reduce_on_device(x, "sum", repeat + 10, stream)[10:])
        cupy_sum = summary(per_call_seconds(lambda: cupy.sum(x).item(), repeat))
        overhead_us = python["median_us"] - cpp["median_us"]
        ratio = python["median_us"] / cpp["median_us"]
        bytes_read = n * x.itemsize
        row = {
            "elements": n,
            "dtype": args.dtype,
            "gpukit.reduce": python,
            "C++ reduce_on_device": cpp,
            "cupy.sum(x).item()": cupy_sum,
            "overhead_us": overhead_us,
            "ratio_to_cpp": ratio,
            "gpukit_gbps": bytes_read / (python["median_us"] * 1e-6) / 1e9,
            "cpp_gbps": bytes_read / (cpp["median_us"] * 1e-6) / 1e9,
        }
        if n == 1:
            row["goal"] = "overhead <= 10 us"
            row["met"] = overhead_us <= 10.0
        else:
            row["goal"] = "within 2% of the C++ call"
            row["met"] = ratio <= 1.02
        goals_met &= row["met"]
        rows.append(row)
        del x

    print(f"gpukit.reduce call overhead on {device['name']} ({args.dtype}, medians of per-call "
          "host times, p10-p90 in brackets)")
    print(f"{'elements':>10} {'gpukit.reduce':>26} {'C++ reduce_on_device':>26} "
          f"{'cupy.sum().item()':>26} {'overhead':>10} {'ratio':>7}  goal")
    for row in rows:
        cells = []
        for key in ("gpukit.reduce", "C++ reduce_on_device", "cupy.sum(x).item()"):
            s = row[key]
            cells.append(f"{s['median_us']:9.1f} us [{s['p10_us']:.1f}-{s['p90_us']:.1f}]")
        print(f"{row['elements']:>10} {cells[0]:>26} {cells[1]:>26} {cells[2]:>26} "
              f"{row['overhead_us']:7.2f} us {row['ratio_to_cpp']:7.4f}  {row['goal']}: "
              f"{'met' if row['met'] else 'MISSED'}")
        if row["elements"] > 1:
            print(f"{'':>10} throughput: gpukit.reduce {row['gpukit_gbps']:.0f} GB/s, "
                  f"C++ {row['cpp_gbps']:.0f} GB/s")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": device, "gpukit": gpukit.__version__, "rows": rows}, out,
                      indent=2)
    return 0 if goals_met else 1


if __name__ == "__main__":
    sys.exit(main())
