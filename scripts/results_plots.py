#!/usr/bin/env python3
"""Draws the plots of each case-study page from its results file (SVG, with matplotlib).

A page holds one generated block per plot between two marker comments, beside its results table
(scripts/results_table.py):

    <!-- results-plot: file=results/h200/reduce.json match="seed" svg=reduce_ladder.svg -->
    ...generated, never edited by hand: the image link and the file it was drawn from...
    <!-- end results-plot -->

`file`, `match` (repeatable as match2=, match3=, ...) and `pending` are the table markers' own:
the `gpukit bench <case> --json` file and the titles of the tables to draw. `svg` (required) is
the image's file name, written beside the page (two pages may show one image when their markers
agree). `chart` says what is drawn:

- `bars` (the default): one horizontal bar chart per selected table, each row's achieved rate in
  the file's order (the seed's ladder, top to bottom), the vendor row (or the table's reference
  row) in its own colour; beside each bar its value, its share of the limit and the ratio of its
  rate to the vendor row's (the bars' ratio; the table's "vs vendor" is the ratio of times, which
  differs where the two rows' sizes do). The measured limit the table names (the device-to-device
  copy or the PCIe rate, or a GEMM table's arithmetic peak) is a solid line, the vendor row's
  rate a dotted one. The rate is GB/s for a table whose rows move bytes, TFLOP/s for a table with
  a peak, and elements/s for one that moves none (named as its title names its rate: `paths/s`,
  `path-steps/s`).
- `options-x-paths`: the seed's Monte Carlo graphs (000, slides 26-37) from the selected tables'
  `grid OxP` rows: samples/s over paths per option, one line for each number of options, the
  grid's best as a dashed line (the seed's ideal is a horizontal line), and options/s over paths
  on log-log axes (the ideal: a straight diagonal line).

The figure's title names the GPU, the run's revision and its date.

    .venv/bin/python scripts/results_plots.py            redraw every plot of docs/case-studies/
    .venv/bin/python scripts/results_plots.py --check    exit 1 naming each stale page or plot
    .venv/bin/python scripts/results_plots.py PAGE...    only these pages

The SVGs are deterministic: one results file gives the same bytes on every machine with the
matplotlib this script names (MATPLOTLIB_VERSION, the version scripts/setup.sh installs): a fixed
figure width and a height from the row count, matplotlib's own DejaVu Sans drawn as paths, a fixed
svg.hashsalt, no date in the metadata, matplotlib's defaults whatever a matplotlibrc says. With
another matplotlib, or none, `--check` still checks the pages' blocks and that each SVG exists,
then exits 77 (the test's "skipped") saying the SVGs were not compared; redrawing refuses.
Regenerating is idempotent: a current page or plot is left byte for byte as it is.
"""

import argparse
import io
import pathlib
import re
import sys
import textwrap

import results_table
from results_table import ROOT

# The version scripts/setup.sh pins (a test checks that the two agree): another version draws
# other bytes.
MATPLOTLIB_VERSION = "3.11.2"
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for the check (tests/docs/CMakeLists.txt)

BEGIN = re.compile(r"<!-- results-plot: (?P<args>.*?) -->\n")
END = "<!-- end results-plot -->"
CHARTS = ("bars", "options-x-paths")
# The arguments that decide a drawing (two markers naming one svg must agree on them).
DRAWING_KEYS = re.compile(r"file|match\d*|chart")

WIDTH_IN = 9.0
ROW_IN = 0.27  # one bar
TABLE_IN = 1.0  # a table's title, axis and ticks
HEADER_IN = 0.9  # the figure's title and legend
GRID_HEIGHT_IN = 4.2  # one of the two graphs
RC = {
    "svg.hashsalt": "gpukit results_plots",  # the clip paths' ids
    "svg.fonttype": "path",  # glyphs drawn: the page looks the same without the font
    "font.family": "DejaVu Sans",  # matplotlib's own copy (checked in draw())
    "font.size": 8.0,
    "axes.titlesize": 8.5,
    "axes.titlelocation": "left",
    "figure.titlesize": 10.0,
}
OURS, VENDOR, LIMIT, SKIP = "#4c72b0", "#dd8452", "#c44e52", "#8c8c8c"


def matplotlib_problem():
    """None when the pinned matplotlib is importable, else why not (one line)."""
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed"
    if matplotlib.__version__ != MATPLOTLIB_VERSION:
        return f"matplotlib is {matplotlib.__version__}, not {MATPLOTLIB_VERSION}"
    return None


def svg_path(args, page):
    name = args.get("svg", "")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+\.svg", name):
        raise ValueError(f"{page}: results-plot marker needs svg=NAME.svg (a file name beside the "
                         f"page), not {name!r}")
    chart = args.get("chart", "bars")
    if chart not in CHARTS:
        raise ValueError(f"{page}: results-plot chart={chart!r}: one of {', '.join(CHARTS)}")
    return page.parent / name


def run_title(run):
    """The GPU, the revision and the date of the run."""
    device = (run.get("device") or {}).get("name") or f"no GPU ({run.get('backend', 'cpu')})"
    date = str(run.get("date") or run.get("run_date") or "")[:10]
    # Only the file's own date: the bytes must not depend on the git history being there.
    when = f"run on {date}" if date else "run date not recorded"
    return f"{device}, revision {run.get('git_revision', 'unknown')}, {when}"


def block_text(args, source_label, run, tables):
    """The image link (its alt text says what is drawn) and where the plot comes from."""
    if args.get("chart", "bars") == "bars":
        rates = [table_rate(t) for t in tables]
        units = list(dict.fromkeys(re.sub(r"^[kMGT] ", "", r[0]) for r in rates))
        what = f"bars of the {' and '.join(units)} of each variant"
        if any(r.get("vendor") for t in tables for r in t.get("rows", [])):
            what += ", the vendor row marked"
        if any(r[2] for r in rates):
            what += ", the measured limit as a line"
    else:
        what = "samples/s and options/s over paths per option for each number of options"
    return (f"![{what} ({run_title(run)})]({args['svg']})\n\n"
            f"Drawn by `scripts/results_plots.py` from [`{source_label}`](../../{source_label}) "
            "(do not edit by hand).\n")


def prefixed(value):
    """(scale, prefix) that writes value with three digits at most before the point."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return scale, prefix
    return 1.0, ""


def table_rate(table):
    """How a table is measured: (axis label, rate of a row or None, limit or None, limit label,
    scale of the axis)."""
    rows = table.get("rows", [])
    peak = table.get("peak_tflops") or 0.0
    if peak > 0:
        return ("TFLOP/s", lambda r: r.get("tflops"), peak,
                f"{table.get('peak_name', 'the peak')}: {peak:.1f} TFLOP/s", 1.0)
    if any(r.get("bytes", 0) > 0 for r in rows):
        limit = table.get("limit_gbps") or None
        name = table.get("limit_name") or "limit"
        return ("GB/s", lambda r: r.get("gbps") if r.get("bytes", 0) > 0 else None, limit,
                f"{name}: {limit:.0f} GB/s measured in the run" if limit else "", 1.0)
    top = max((r.get("elements_per_s", 0.0) for r in rows), default=0.0)
    scale, prefix = prefixed(top)
    named = re.search(r"\b([a-z]+(?:-[a-z]+)*/s)\b", table.get("title", ""))
    unit = named.group(1) if named else "elements/s"
    return (f"{prefix} {unit}".strip(), lambda r: r.get("elements_per_s"), None, "", scale)


def bar_label(row, value, limit, vendor, vendor_value, scale):
    """The value (in the axis's unit), its share of the limit and its ratio to the vendor's."""
    scaled = value / scale
    text = f"{scaled:,.0f}" if scaled >= 100 else f"{scaled:.3g}"
    if limit:
        share = 100 * value / limit
        text += f"  {share:.0f}%" if share >= 10 else f"  {share:.1f}%"
    if vendor_value and row is not vendor:
        text += f"  {value / vendor_value:.2f}x {vendor.get('variant', 'vendor')}"
    if row.get("verified") is False:
        text += "  check FAILED"
    return text


def draw_bars(fig, tables):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    heights = [len(t.get("rows", [])) * ROW_IN + TABLE_IN for t in tables]
    axes = fig.subplots(len(tables), 1, squeeze=False, height_ratios=heights)[:, 0]
    drawn = set()  # what the legend names
    for ax, table in zip(axes, tables):
        label, rate, limit, limit_label, scale = table_rate(table)
        rows = table.get("rows", [])
        vendor = next((r for r in rows if r.get("vendor") and not r.get("skipped")), None)
        values = [None if r.get("skipped") else rate(r) for r in rows]
        vendor_value = rate(vendor) if vendor is not None else None
        top = max([v for v in values if v] + [limit or 0.0, 1e-30]) / scale
        names = [r.get("variant", "?") + (" (vendor)" if r.get("vendor") else "") for r in rows]
        y = range(len(rows))
        ax.barh(y, [0 if v is None else v / scale for v in values], height=0.7,
                color=[VENDOR if r.get("vendor") else OURS for r in rows])
        for i, (row, value) in enumerate(zip(rows, values)):
            if value is None:
                why = ("skipped" if row.get("skipped") else "no bytes counted")
                ax.text(top * 0.01, i, why, va="center", color=SKIP, style="italic")
            else:
                ax.text(value / scale + top * 0.01, i,
                        bar_label(row, value, limit, vendor, vendor_value, scale), va="center")
        if limit:
            ax.axvline(limit / scale, color=LIMIT, linewidth=1.2)
            right = limit / scale > 0.6 * top * 1.3  # the label to the line's left
            ax.text(limit / scale, -0.75, f"{limit_label} " if right else f" {limit_label}",
                    color=LIMIT, va="bottom", ha="right" if right else "left")
            drawn.add("limit")
        if vendor_value:
            ax.axvline(vendor_value / scale, color=VENDOR, linewidth=1.0, linestyle=":")
            drawn.add("vendor")
        ax.set_yticks(list(y), names)
        ax.set_ylim(len(rows) - 0.5, -1.0)  # the ladder from the top; room for the limit's label
        ax.set_xlim(0, top * 1.3)
        ax.set_xlabel(label)
        ax.set_title("\n".join(textwrap.wrap(table.get("title", ""), 115)))
        ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    handles = [Patch(color=OURS, label="gpukit")]
    if "vendor" in drawn:
        handles += [Patch(color=VENDOR, label="the vendor row (the table's reference)"),
                    Line2D([], [], color=VENDOR, linestyle=":", label="its rate")]
    if "limit" in drawn:
        handles.append(Line2D([], [], color=LIMIT, label="the limit: the copy, PCIe or peak"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)


def grid_rows(table):
    """{options: [(paths, samples/s)]} from the table's `grid OxP` rows."""
    lines = {}
    for row in table.get("rows", []):
        m = re.fullmatch(r"grid (\d+)x(\d+)", row.get("variant", ""))
        if m and not row.get("skipped"):
            lines.setdefault(int(m.group(1)), []).append(
                (int(m.group(2)), row.get("elements_per_s", 0.0)))
    return lines


def paths_tick(paths):
    for scale, suffix in ((1 << 20, "M"), (1 << 10, "K")):
        if paths >= scale and paths % scale == 0:
            return f"{paths // scale}{suffix}"
    return str(paths)


def draw_options_x_paths(fig, tables, source_label):
    """Per table the seed's two graphs: samples/s over paths (slides 27-28: "should be a
    horizontal line") and options/s over paths (slides 29-30: "should be a straight diagonal
    line", log-log), a line for each number of options."""
    axes = fig.subplots(2 * len(tables), 1, squeeze=False)[:, 0]
    for samples_ax, options_ax, table in zip(axes[0::2], axes[1::2], tables):
        lines = grid_rows(table)
        if not lines:
            raise ValueError(f"{source_label}: no `grid OxP` rows in {table.get('title', '')!r}")
        best = max(rate for points in lines.values() for _, rate in points)
        scale, prefix = prefixed(best)
        ticks = sorted({p for points in lines.values() for p, _ in points})
        for options in sorted(lines):
            points = sorted(lines[options])
            label = f"{options} option{'s' if options > 1 else ''}"
            samples_ax.plot([p for p, _ in points], [r / scale for _, r in points], marker="o",
                            markersize=4, label=label)
            # options/s = options / time = samples/s / paths per option
            options_ax.plot([p for p, _ in points], [r / p for p, r in points], marker="o",
                            markersize=4, label=label)
        samples_ax.axhline(best / scale, color=SKIP, linestyle="--", linewidth=1.0)
        samples_ax.text(ticks[0], best / scale, f"the grid's best: {best / scale:.0f} {prefix} "
                        "samples/s", va="bottom", color=SKIP)
        samples_ax.set_ylim(0, best / scale * 1.12)
        samples_ax.set_ylabel(f"{prefix} samples/s (options x paths / time)")
        samples_ax.set_title("\n".join(textwrap.wrap(table.get("title", ""), 115)))
        options_ax.set_yscale("log")
        options_ax.set_ylabel("options/s")
        options_ax.set_title("Options per second: the seed's ideal is a straight diagonal line")
        for ax in (samples_ax, options_ax):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ticks, [paths_tick(p) for p in ticks])
            ax.minorticks_off()
            ax.set_xlabel("paths per option")
            ax.grid(color="#e0e0e0", linewidth=0.6)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        samples_ax.legend(loc="lower right", title="options")
        options_ax.legend(loc="upper right", title="options")


def draw(args, source_label, run, tables):
    """The SVG of one marker (its selected tables of the run), as bytes."""
    import matplotlib
    from matplotlib import font_manager
    from matplotlib.figure import Figure

    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # not the user's matplotlibrc
        matplotlib.rcParams.update(RC)
        font = pathlib.Path(font_manager.findfont(RC["font.family"], fallback_to_default=False))
        if pathlib.Path(matplotlib.get_data_path()) not in font.parents:
            raise ValueError(f"DejaVu Sans resolves to {font}, not matplotlib's own copy: the "
                             "SVGs would depend on this machine's fonts")
        if args.get("chart", "bars") == "bars":
            rows = sum(len(t.get("rows", [])) for t in tables)
            height = HEADER_IN + rows * ROW_IN + len(tables) * TABLE_IN
            fig = Figure(figsize=(WIDTH_IN, round(height, 2)), layout="constrained")
            draw_bars(fig, tables)
        else:
            fig = Figure(figsize=(WIDTH_IN, 2 * GRID_HEIGHT_IN * len(tables)),
                         layout="constrained")
            draw_options_x_paths(fig, tables, source_label)
        fig.suptitle(f"{results_table.case_stem(run.get('case', '?'))}: {run_title(run)}")
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a page or a plot is not what the "
                             f"generator writes ({SKIPPED} when matplotlib "
                             f"{MATPLOTLIB_VERSION} is not there to compare the plots)")
    parser.add_argument("pages", nargs="*", type=pathlib.Path,
                        help="markdown pages (default: docs/case-studies/*.md)")
    opts = parser.parse_args(argv)
    problem = matplotlib_problem()
    if problem and not opts.check:
        print(f"results_plots: {problem}; scripts/setup.sh installs it into .venv "
              f"(.venv/bin/python scripts/results_plots.py)", file=sys.stderr)
        return 2
    pages = opts.pages or sorted((ROOT / "docs" / "case-studies").glob("*.md"))
    stale, plots = [], {}  # plots: svg path -> (the arguments that drew it, its bytes or None)
    for page in pages:
        def render(args, source_label, run, page=page):
            path = svg_path(args, page)
            key = sorted((k, v) for k, v in args.items() if DRAWING_KEYS.fullmatch(k))
            if path in plots and plots[path][0] != key:
                raise ValueError(f"{page}: two markers draw {path.name} differently")
            tables = results_table.select_tables(args, source_label, run)
            if path not in plots:
                plots[path] = (key, None if problem else draw(args, source_label, run, tables))
            return block_text(args, source_label, run, tables)

        try:
            text = page.read_text()
            new = results_table.rewrite_blocks(text, str(page), BEGIN, END, render)
        except (OSError, ValueError) as e:
            print(f"results_plots: {e}", file=sys.stderr)
            return 2
        if results_table.update_page(page, text, new, opts.check, "results_plots"):
            stale.append(page)
    for path, (_, svg) in plots.items():
        old = path.read_bytes() if path.exists() else None
        if svg is None:  # not drawn: only its existence can be checked
            if old is None:
                stale.append(path)
        elif old != svg:
            if opts.check:
                stale.append(path)
            else:
                path.write_bytes(svg)
                print(f"results_plots: drew {path}")
    if opts.check:
        if stale:
            print("results_plots: not current (run scripts/results_plots.py): "
                  + ", ".join(str(p) for p in stale), file=sys.stderr)
            return 1
        if problem:
            print(f"results_plots: {len(pages)} pages, {len(plots)} plots: the pages are current, "
                  f"the SVGs were not compared ({problem}; scripts/setup.sh installs "
                  f"{MATPLOTLIB_VERSION} into .venv)", file=sys.stderr)
            return SKIPPED
        print(f"results_plots: {len(pages)} pages, {len(plots)} plots, all current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
