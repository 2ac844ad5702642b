#!/usr/bin/env python3
"""Compares two `gpukit bench --json` runs row by row (the shape of nvbench_compare.py).

    scripts/compare_results.py REFERENCE.json COMPARE.json [--threshold PCT] [--fail-slower PCT]

Both runs must be of one case (`gpukit bench CASE`; a run recorded under a case's older spelling,
`bs` or `mc`, is of its stem's case). Rows are matched by table title + variant + size (the row's
element count). For each matched
row it prints the reference and compared median times, each run's noise (the relative standard
deviation of its samples), the ratio compare/reference of the medians (below 1: faster) and a
status: SAME when the change is within the larger of the two noises and --threshold (default
1%), else FAST or SLOW. Rows present in one run only are listed after the tables.

Exit status: 0; 1 if --fail-slower PCT is given and a matched row is more than PCT percent
slower; 2 on a usage error, an unreadable file or runs of different cases. Python 3 standard
library only.
"""

import argparse
import json
import math
import sys

from results_table import case_stem


def noise(samples):
    """Relative standard deviation of the samples (0 for fewer than two)."""
    if len(samples) < 2:
        return 0.0
    mean = sum(samples) / len(samples)
    if mean <= 0:
        return 0.0
    var = sum((s - mean) ** 2 for s in samples) / (len(samples) - 1)
    return math.sqrt(var) / mean


def rows_by_key(run):
    """(table title, variant, elements) -> row, for every timed (not skipped) row."""
    rows = {}
    for table in run.get("tables", []):
        for row in table.get("rows", []):
            if row.get("skipped"):
                continue
            key = (table.get("title", ""), row.get("variant", ""), int(row.get("elements", 0)))
            rows[key] = row
    return rows


def compare(reference, candidate, threshold=0.01):
    """A list of dicts, one per row present in both runs, in the reference's order, and the
    keys present in only one run."""
    ref_rows, cmp_rows = rows_by_key(reference), rows_by_key(candidate)
    matched = []
    for key, ref in ref_rows.items():
        if key not in cmp_rows:
            continue
        cmp = cmp_rows[key]
        ref_ms, cmp_ms = ref.get("median_ms", 0.0), cmp.get("median_ms", 0.0)
        ratio = cmp_ms / ref_ms if ref_ms > 0 else math.nan
        ref_noise = noise(ref.get("samples_ms", []))
        cmp_noise = noise(cmp.get("samples_ms", []))
        change = ratio - 1.0
        if math.isnan(ratio) or abs(change) <= max(ref_noise, cmp_noise, threshold):
            status = "SAME"
        else:
            status = "SLOW" if change > 0 else "FAST"
        matched.append({"table": key[0], "variant": key[1], "elements": key[2],
                        "ref_ms": ref_ms, "cmp_ms": cmp_ms, "ref_noise": ref_noise,
                        "cmp_noise": cmp_noise, "ratio": ratio, "status": status})
    only_ref = [k for k in ref_rows if k not in cmp_rows]
    only_cmp = [k for k in cmp_rows if k not in ref_rows]
    return matched, only_ref, only_cmp


def case_of(run):
    """The run's case by its stem ("?" where the run names none)."""
    return case_stem(run.get("case", "?"))


def describe(run):
    """Case, revision, GPU and, where the run recorded it (the harness's ISO 8601 UTC `date`),
    when."""
    device = run.get("device", {}).get("name", run.get("backend", "?"))
    when = f" at {run['date']}" if run.get("date") else ""
    return f"{case_of(run)}, {run.get('git_revision', '?')} on {device}{when}"


def print_report(reference, candidate, matched, only_ref, only_cmp, out=None):
    out = out or sys.stdout
    print(f"reference: {describe(reference)}", file=out)
    print(f"compare:   {describe(candidate)}", file=out)
    table = None
    for m in matched:
        if m["table"] != table:
            table = m["table"]
            print(f"\n## {table}\n", file=out)
            print(f"| {'variant':<32} | {'elements':>12} | {'ref ms':>10} | {'ref noise':>9} | "
                  f"{'cmp ms':>10} | {'cmp noise':>9} | {'ratio':>7} | status |", file=out)
            print(f"|{'-' * 34}|{'-' * 14}|{'-' * 12}|{'-' * 11}|{'-' * 12}|{'-' * 11}|"
                  f"{'-' * 9}|--------|", file=out)
        print(f"| {m['variant']:<32} | {m['elements']:>12} | {m['ref_ms']:>10.4f} | "
              f"{m['ref_noise'] * 100:>8.2f}% | {m['cmp_ms']:>10.4f} | "
              f"{m['cmp_noise'] * 100:>8.2f}% | {m['ratio']:>6.3f}x | {m['status']:<6} |",
              file=out)
    for label, keys in (("only in the reference", only_ref), ("only in the compared run", only_cmp)):
        if keys:
            print(f"\n{len(keys)} row(s) {label}:", file=out)
            for title, variant, elements in keys:
                print(f"  {title}: {variant} ({elements} elements)", file=out)
    counts = {s: sum(1 for m in matched if m["status"] == s) for s in ("FAST", "SAME", "SLOW")}
    print(f"\n{len(matched)} rows matched: {counts['FAST']} faster, {counts['SAME']} same, "
          f"{counts['SLOW']} slower", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", help="the baseline run (gpukit bench --json)")
    parser.add_argument("compare", help="the run to compare with it")
    parser.add_argument("--threshold", type=float, default=1.0,
                        help="smallest change in percent reported as FAST/SLOW (default 1)")
    parser.add_argument("--fail-slower", type=float, metavar="PCT",
                        help="exit 1 if a matched row is more than PCT percent slower")
    opts = parser.parse_args(argv)
    runs = []
    for path in (opts.reference, opts.compare):
        try:
            with open(path) as f:
                runs.append(json.load(f))
        except (OSError, json.JSONDecodeError) as e:
            print(f"compare_results: {path}: {e}", file=sys.stderr)
            return 2
    cases = [case_of(r) for r in runs]
    if cases[0] != cases[1]:
        print(f"compare_results: runs of different cases ({cases[0]}, {cases[1]})",
              file=sys.stderr)
        return 2
    matched, only_ref, only_cmp = compare(runs[0], runs[1], opts.threshold / 100)
    print_report(runs[0], runs[1], matched, only_ref, only_cmp)
    if opts.fail_slower is not None:
        slower = [m for m in matched if m["ratio"] - 1 > opts.fail_slower / 100]
        if slower:
            print(f"compare_results: {len(slower)} row(s) more than {opts.fail_slower}% slower",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
