#!/usr/bin/env python3
"""Writes the results table of each case-study page from its results file.

A page holds one generated block between two marker comments:

    <!-- results-table: file=results/h200/reduce.json match="the seed's table" -->
    ...generated, never edited by hand...
    <!-- end results-table -->

`file` is a `gpukit bench <case> --json` output, relative to the repository root. `match`
(optional, repeatable as match2=, match3=, ...) is a substring of the JSON tables' titles: the
block shows the tables whose title contains one of them, in the file's order; without it, every
table. The block names the GPU, the revision and the date of the run, then one markdown table
per selected JSON table. `pending="..."` (optional) is what the block says while the results
file does not exist yet (a case study whose GPU run is still to come): a line naming the file,
then that text; without it a missing file is an error. Once the file exists, the block is its
table (and --check says the page is not current until it is regenerated).

    scripts/results_table.py            rewrite every docs/case-studies/*.md in place
    scripts/results_table.py --check    exit 1, naming the page, if any page is not current
    scripts/results_table.py PAGE...    only these pages

Regenerating is idempotent: a current page is left byte for byte as it is. Python 3 standard
library only, so that the test runs wherever CTest does. The plots beside the tables are
scripts/results_plots.py's (the same markers' arguments, matplotlib).
"""

import argparse
import difflib
import json
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN = re.compile(r"<!-- results-table: (?P<args>.*?) -->\n")
END = "<!-- end results-table -->"


def parse_marker_args(text):
    """`file=... match="..."` -> dict (shell-like quoting)."""
    args = {}
    for token in shlex.split(text):
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"marker argument {token!r} is not key=value")
        args[key] = value
    if "file" not in args:
        raise ValueError("marker has no file=")
    return args


DATE_UNKNOWN = []  # set when a run's date could not be found (no git, a shallow clone)
DATE_LABEL = re.compile(r"\((?:run on \d{4}-\d\d-\d\d|run date not recorded; revision committed "
                        r"\d{4}-\d\d-\d\d|date not recorded)\)")


def run_date(run):
    """The date the run was made: the file's own `date` if the harness wrote one, else the
    commit date of its revision (the run cannot be older), else None."""
    for key in ("date", "run_date", "timestamp"):
        if run.get(key):
            return str(run[key])[:10], "run"
    revision = str(run.get("git_revision", "")).removesuffix("-dirty")
    if not revision or revision == "unknown":
        return None, None
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%cs", revision],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if out.returncode != 0 or not out.stdout.strip():
        return None, None
    return out.stdout.strip(), "commit"


# The case names `gpukit bench` took before each case answered to its case study's stem; runs
# recorded then carry them in `case` and in their command line.
OLD_CASE_SPELLINGS = {"bs": "black_scholes", "mc": "monte_carlo"}


def case_stem(case):
    """A run's case by its stem (`bs` -> `black_scholes`)."""
    return OLD_CASE_SPELLINGS.get(case, case)


def bench_command(run):
    """The command line as a reader would type it today: `gpukit bench ...` with the case's stem,
    without the build path and the --json file."""
    argv = shlex.split(run.get("command_line", ""))
    if not argv:
        return f"gpukit bench {case_stem(run.get('case', '?'))}"
    argv[0] = "gpukit"
    if "bench" in argv[:-1]:
        case = argv.index("bench") + 1
        argv[case] = case_stem(argv[case])
    kept, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--json":
            skip = True
            continue
        if a.startswith("--json="):
            continue
        kept.append(a)
    return " ".join(kept)


def fmt_ratio(value):
    return "-" if value is None else f"{value:.2f}x"


def fmt_rate(value):
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value:.0f}"


def fmt_ms(value):
    return f"{value:.4f}" if value < 100 else f"{value:.1f}"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def check_text(row):
    if row.get("skipped"):
        return "skipped"
    if "verified" not in row:  # files written before the harness recorded the flag
        return "-"
    return "ok" if row["verified"] else "FAILED"


def render_table(table):
    limit = table.get("limit_name") or "limit"
    # Arithmetic-bound tables (GEMM) carry a peak: TFLOP/s and % of it instead of GB/s and % of
    # the copy.
    arithmetic = table.get("peak_tflops", 0) > 0
    lines = [f"**{cell(table.get('title', ''))}**", ""]
    if arithmetic:
        lines += [f"% peak: of {table.get('peak_name', 'the peak')}, "
                  f"{table['peak_tflops']:.1f} TFLOP/s.", ""]
    elif table.get("limit_gbps") and any(r.get("bytes", 0) > 0 for r in table.get("rows", [])):
        lines += [f"% {limit}: of the {table['limit_gbps']:.0f} GB/s measured in the same run.", ""]
    rate, share = ("TFLOP/s", "% peak") if arithmetic else ("GB/s", f"% {limit}")
    lines.append(f"| variant | median ms | spread | elements/s | {rate} | {share} | step | "
                 "cumulative | vs vendor | check | note |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for row in table.get("rows", []):
        name = cell(row.get("variant", "?")) + (" (vendor)" if row.get("vendor") else "")
        if row.get("skipped"):
            lines.append(f"| {name} | - | - | - | - | - | - | - | - | skipped | "
                         f"{cell(row['skipped'])} |")
            continue
        median = row.get("median_ms", 0.0)
        spread = ((row.get("max_ms", median) - row.get("min_ms", median)) / median * 100
                  if median > 0 else 0.0)
        # Rows that declare no bytes (compute-bound work: paths, path-steps) have no bandwidth.
        moves_bytes = row.get("bytes", 0) > 0
        gbps = f"{row.get('gbps', 0.0):.1f}" if moves_bytes else "-"
        percent = f"{row.get('percent_of_limit', 0.0):.1f}%" if moves_bytes else "-"
        if arithmetic:
            gbps = f"{row.get('tflops', 0.0):.1f}"
            percent = f"{row.get('percent_of_peak', 0.0):.1f}%"
        lines.append(
            f"| {name} | {fmt_ms(median)} | {spread:.1f}% | "
            f"{fmt_rate(row.get('elements_per_s', 0.0))} | {gbps} | "
            f"{percent} | {fmt_ratio(row.get('step_speedup'))} | "
            f"{fmt_ratio(row.get('cumulative_speedup'))} | {fmt_ratio(row.get('vs_vendor'))} | "
            f"{check_text(row)} | {cell(row.get('note', ''))} |")
    return lines


def select_tables(args, source_label, run):
    """The run's tables whose title contains one of the marker's match=, match2=, ... (every
    table without one), in the file's order; ValueError when a match finds none."""
    matches = [v for k, v in sorted(args.items()) if re.fullmatch(r"match\d*", k)]
    tables = run.get("tables", [])
    if matches:
        tables = [t for t in tables if any(m in t.get("title", "") for m in matches)]
        found = {m for m in matches for t in tables if m in t.get("title", "")}
        missing = [m for m in matches if m not in found]
        if missing:
            raise ValueError(f"{source_label}: no table title contains {missing}")
    if not tables:
        raise ValueError(f"{source_label}: no tables")
    return tables


def render_block(args, source_label, run):
    tables = select_tables(args, source_label, run)
    device = run.get("device")
    if device:
        clocks = run.get("clocks", {})
        gpu = (f"{device.get('name', '?')} ({device.get('sm_count', '?')} SMs"
               + (f", SM clock {clocks['sm_current_mhz']} MHz" if clocks.get("sm_current_mhz")
                  else "") + ")")
        copy = run.get("copy_bandwidth_gbps")
        gpu += f", device-to-device copy {copy:.0f} GB/s" if copy else ""
    else:
        gpu = f"no GPU ({run.get('backend', 'cpu')} backend, {run.get('cpu_threads', '?')} threads)"
    date, kind = run_date(run)
    if kind is None:
        DATE_UNKNOWN.append(source_label)
    revision = run.get("git_revision", "unknown")
    when = {"run": f"run on {date}",
            "commit": f"run date not recorded; revision committed {date}",
            None: "date not recorded"}[kind]
    # One sentence a line: the page's source stays readable and its diffs small.
    lines = [
        f"Measured at revision `{revision}` ({when})",
        f"on {gpu}, CPU rows on {run.get('cpu_threads', '?')} threads.",
        f"Command: `{bench_command(run)}`.",
        f"Source: [`{source_label}`](../../{source_label}), generated by "
        "`scripts/results_table.py` (do not edit by hand).",
        "",
        "Timing: median of the samples (spread = (max - min) / median); GPU rows by CUDA events,",
        "a call under 0.5 ms timed in back-to-back batches.",
        "Step and cumulative: speedups along the optimization ladder; vs vendor: vendor time / "
        "row time.",
        "Check: the row's verified flag (- where the run predates it: the note says how the check "
        "went).",
    ]
    for table in tables:
        lines.append("")
        lines += render_table(table)
    return "\n".join(lines) + "\n"


def rewrite_blocks(text, page_label, begin, end_marker, render):
    """The page with every block between `begin` (a marker regex with an `args` group) and
    `end_marker` rewritten: render(args, source_label, run) gives a block's text from its results
    file; a `pending=` block whose file does not exist says so instead."""
    out, pos = [], 0
    while True:
        m = begin.search(text, pos)
        if not m:
            out.append(text[pos:])
            return "".join(out)
        end = text.find(end_marker, m.end())
        if end < 0:
            raise ValueError(f"{page_label}: marker without `{end_marker}`")
        args = parse_marker_args(m.group("args"))
        source = ROOT / args["file"]
        out.append(text[pos:m.end()])
        if "pending" in args and not source.exists():
            out.append(f"No run recorded yet: {args['file']} does not exist. "
                       f"{args['pending']}\n")
        else:
            try:
                run = json.loads(source.read_text())
            except (OSError, json.JSONDecodeError) as e:
                raise ValueError(f"{page_label}: cannot read {args['file']}: {e}") from e
            out.append(render(args, args["file"], run))
        out.append(end_marker)
        pos = end + len(end_marker)


def regenerate(text, page_label):
    """The page with every marked block rewritten."""
    return rewrite_blocks(text, page_label, BEGIN, END, render_block)


def update_page(page, text, new, check, tool):
    """Writes the regenerated text `new` over the page's `text` where they differ (saying so), or
    with `check` writes nothing and prints the difference; True when the page is stale."""
    if new == text:
        return False
    if check:
        sys.stderr.writelines(difflib.unified_diff(
            text.splitlines(True), new.splitlines(True), str(page), "generated", n=1))
        return True
    page.write_text(new)
    print(f"{tool}: rewrote {page}")
    return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a page is not what the generator writes")
    parser.add_argument("pages", nargs="*", type=pathlib.Path,
                        help="markdown pages (default: docs/case-studies/*.md)")
    opts = parser.parse_args(argv)
    pages = opts.pages or sorted((ROOT / "docs" / "case-studies").glob("*.md"))
    stale, blocks = [], 0
    for page in pages:
        try:
            text = page.read_text()
        except OSError as e:
            print(f"results_table: {e}", file=sys.stderr)
            return 2
        try:
            new = regenerate(text, str(page))
        except ValueError as e:
            print(f"results_table: {e}", file=sys.stderr)
            return 2
        blocks += len(BEGIN.findall(text))
        if opts.check and DATE_UNKNOWN and (DATE_LABEL.sub("(date)", new) ==
                                            DATE_LABEL.sub("(date)", text)):
            # Without git (a source archive) a run's commit date is unknown: check the rest.
            continue
        if update_page(page, text, new, opts.check, "results_table"):
            stale.append(page)
    if opts.check:
        if stale:
            print("results_table: not current (run scripts/results_table.py): "
                  + ", ".join(str(p) for p in stale), file=sys.stderr)
            return 1
        print(f"results_table: {len(pages)} pages, {blocks} generated blocks, all current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
