#!/usr/bin/env python3
"""Unit tests of scripts/compare_results.py, scripts/results_table.py and scripts/results_plots.py
on synthetic runs, the check that docs/library.md quotes its examples (tests/docs/examples, built
and run by ctest) as they are, and the check that every relative link of the docs reaches its file
and heading."""

import contextlib
import io
import json
import pathlib
import re
import sys
import tempfile
import unittest
from unittest import mock

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import compare_results  # noqa: E402
import results_plots  # noqa: E402
import results_table  # noqa: E402


def run(revision, rows, title="Sum: 1024 int32", date=None, case="reduce"):
    """A minimal `gpukit bench --json` document: rows are (variant, elements, samples_ms)."""
    table = {"title": title, "limit_name": "D2D copy", "limit_gbps": 1000.0, "rows": []}
    for variant, elements, samples in rows:
        median = sorted(samples)[len(samples) // 2]
        table["rows"].append({
            "variant": variant, "description": "", "seed_reference": "", "elements": elements,
            "bytes": 4 * elements, "samples_ms": samples, "median_ms": median,
            "min_ms": min(samples), "max_ms": max(samples),
            "elements_per_s": elements / (median * 1e-3),
            "gbps": 4 * elements / (median * 1e-3) / 1e9,
            "percent_of_limit": 0.4 * elements / (median * 1e-3) / 1e9, "verified": True,
            "note": "ok", "vendor": variant == "cub", "step_speedup": None,
            "cumulative_speedup": None, "vs_vendor": None})
    document = {"case": case, "command_line": f"build/x/gpukit bench {case} --json /tmp/r.json",
                "git_revision": revision, "backend": "cuda", "cpu_threads": 2,
                "device": {"name": "Test GPU", "sm_count": 4}, "copy_bandwidth_gbps": 1000.0,
                "tables": [table]}
    if date is not None:
        document["date"] = date  # the harness writes it next to the revision (ISO 8601, UTC)
    return document


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.ref = run("aaaaaaa", [("tiles", 1024, [2.0, 2.0, 2.0]),
                                   ("cub", 1024, [1.0, 1.0, 1.0]),
                                   ("tiles", 2048, [4.0, 4.0, 4.0]),
                                   ("gone", 1024, [1.0, 1.0, 1.0])])
        self.new = run("bbbbbbb", [("tiles", 1024, [1.0, 1.0, 1.0]),
                                   ("cub", 1024, [1.5, 1.5, 1.5]),
                                   ("tiles", 2048, [4.02, 4.02, 4.02]),
                                   ("added", 1024, [1.0, 1.0, 1.0])])

    def test_ratios_statuses_and_unmatched_rows(self):
        matched, only_ref, only_cmp = compare_results.compare(self.ref, self.new, threshold=0.01)
        by_key = {(m["variant"], m["elements"]): m for m in matched}
        self.assertEqual(set(by_key), {("tiles", 1024), ("cub", 1024), ("tiles", 2048)})
        self.assertAlmostEqual(by_key[("tiles", 1024)]["ratio"], 0.5)
        self.assertEqual(by_key[("tiles", 1024)]["status"], "FAST")
        self.assertAlmostEqual(by_key[("cub", 1024)]["ratio"], 1.5)
        self.assertEqual(by_key[("cub", 1024)]["status"], "SLOW")
        # Matched by size too: the 2048 row is compared with the 2048 row (1.005x, within 1%).
        self.assertAlmostEqual(by_key[("tiles", 2048)]["ratio"], 1.005)
        self.assertEqual(by_key[("tiles", 2048)]["status"], "SAME")
        self.assertEqual([k[1] for k in only_ref], ["gone"])
        self.assertEqual([k[1] for k in only_cmp], ["added"])

    def test_noise_widens_same(self):
        noisy = run("ccccccc", [("tiles", 1024, [1.0, 2.0, 3.0])])
        quiet = run("ddddddd", [("tiles", 1024, [2.2, 2.2, 2.2])])
        (m,), _, _ = compare_results.compare(noisy, quiet, threshold=0.01)
        self.assertAlmostEqual(m["ref_noise"], 0.5)  # stdev 1 over mean 2
        self.assertEqual(m["status"], "SAME")  # 10% slower, but the reference's noise is 50%

    def test_the_header_names_revision_gpu_and_date(self):
        dated = run("fffffff", [("tiles", 1024, [1.0])], date="2026-11-25T07:15:02Z")
        out = io.StringIO()
        compare_results.print_report(self.ref, dated, *compare_results.compare(self.ref, dated),
                                     out=out)
        self.assertIn("reference: reduce, aaaaaaa on Test GPU\n", out.getvalue())  # no date
        self.assertIn("compare:   reduce, fffffff on Test GPU at 2026-11-25T07:15:02Z\n",
                      out.getvalue())

    def test_a_case_recorded_under_its_older_spelling_is_the_same_case(self):
        # Runs before the cases took their stems recorded `bs` and `mc`.
        old = run("aaaaaaa", [("tiles", 1024, [2.0])], case="bs")
        new = run("bbbbbbb", [("tiles", 1024, [1.0])], case="black_scholes")
        out = io.StringIO()
        compare_results.print_report(old, new, *compare_results.compare(old, new), out=out)
        self.assertIn("reference: black_scholes, aaaaaaa on Test GPU\n", out.getvalue())
        self.assertIn("1 rows matched: 1 faster", out.getvalue())
        self.assertEqual(compare_results.case_of(run("c", [], case="mc")), "monte_carlo")

    def test_runs_of_different_cases_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            ref, new = pathlib.Path(d, "ref.json"), pathlib.Path(d, "new.json")
            ref.write_text(json.dumps(self.ref))
            new.write_text(json.dumps(run("b", [("tiles", 1024, [1.0])], case="scan")))
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                self.assertEqual(compare_results.main([str(ref), str(new)]), 2)
            self.assertIn("runs of different cases (reduce, scan)", err.getvalue())

    def test_rows_in_different_tables_do_not_match(self):
        other = run("eeeeeee", [("tiles", 1024, [1.0])], title="Sum: 1024 float")
        matched, only_ref, only_cmp = compare_results.compare(self.ref, other)
        self.assertEqual(matched, [])
        self.assertEqual(len(only_cmp), 1)

    def test_command_line_exit_status(self):
        with tempfile.TemporaryDirectory() as d:
            ref, new = pathlib.Path(d, "ref.json"), pathlib.Path(d, "new.json")
            ref.write_text(json.dumps(self.ref))
            new.write_text(json.dumps(self.new))
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(compare_results.main([str(ref), str(new)]), 0)
                self.assertEqual(compare_results.main([str(ref), str(new), "--fail-slower", "10"]),
                                 1)
                self.assertEqual(compare_results.main([str(ref), str(new), "--fail-slower", "60"]),
                                 0)
                self.assertEqual(compare_results.main([str(ref), str(pathlib.Path(d, "no"))]), 2)
            self.assertIn("3 rows matched: 1 faster, 1 same, 1 slower", out.getvalue())


class ResultsTableTest(unittest.TestCase):
    def test_the_command_says_the_cases_stem(self):
        # Runs recorded before the cases took their stems quote the command as it is typed now.
        old = {"case": "bs", "command_line":
               "build/gpu/apps/gpukit/gpukit bench bs --device cuda --json /root/out/bs.json"}
        self.assertEqual(results_table.bench_command(old),
                         "gpukit bench black_scholes --device cuda")
        self.assertEqual(results_table.bench_command({"case": "mc"}), "gpukit bench monte_carlo")
        self.assertEqual(results_table.bench_command(
            {"command_line": "gpukit -q bench mc --json x.json --variants bs"}),
            "gpukit -q bench monte_carlo --variants bs")

    def test_generate_then_check_is_idempotent(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            data.write_text(json.dumps(run("1234567", [("tiles", 1024, [2.0, 2.5, 3.0]),
                                                       ("cub", 1024, [1.0, 1.0, 1.0])])))
            rel = data.relative_to(ROOT).as_posix()
            page = pathlib.Path(d, "page.md")
            original = (f"# A page\n\nbefore\n<!-- results-table: file={rel} match=int32 -->\n"
                        "stale text\n<!-- end results-table -->\nafter\n")
            page.write_text(original)
            quiet = contextlib.redirect_stdout(io.StringIO())
            with quiet, contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(results_table.main(["--check", str(page)]), 1)
                self.assertEqual(page.read_text(), original)  # --check changes nothing
                self.assertEqual(results_table.main([str(page)]), 0)
                first = page.read_text()
                self.assertEqual(results_table.main([str(page)]), 0)
                self.assertEqual(page.read_text(), first)
                self.assertEqual(results_table.main(["--check", str(page)]), 0)
            self.assertNotIn("stale text", first)
            self.assertTrue(first.startswith("# A page\n\nbefore\n") and first.endswith("after\n"))
            self.assertIn("revision `1234567`", first)
            self.assertIn("Test GPU (4 SMs)", first)
            self.assertIn("`gpukit bench reduce`", first)  # the build path and --json file go
            self.assertIn("| tiles | 2.5000 | 40.0% |", first)  # median, (max - min) / median
            self.assertIn("| cub (vendor) | 1.0000 |", first)

    def test_the_runs_own_date_is_quoted(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            data.write_text(json.dumps(run("1234567", [("tiles", 1024, [1.0])],
                                           date="2026-11-25T07:15:02Z")))
            page = pathlib.Path(d, "page.md")
            page.write_text(f"<!-- results-table: file={data.relative_to(ROOT).as_posix()} "
                            "match=int32 -->\n<!-- end results-table -->\n")
            quiet = contextlib.redirect_stdout(io.StringIO())
            with quiet, contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(results_table.main([str(page)]), 0)
            self.assertIn("revision `1234567` (run on 2026-11-25)", page.read_text())

    def test_a_pending_block_says_so_until_its_file_exists(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            page = pathlib.Path(d, "page.md")
            page.write_text(f"<!-- results-table: file={data.relative_to(ROOT).as_posix()} "
                            'pending="The GPU run comes later." -->\n<!-- end results-table -->\n')
            quiet = contextlib.redirect_stdout(io.StringIO())
            with quiet, contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(results_table.main([str(page)]), 0)
                self.assertEqual(results_table.main(["--check", str(page)]), 0)
            self.assertIn(f"No run recorded yet: {data.relative_to(ROOT).as_posix()} does not "
                          "exist. The GPU run comes later.\n", page.read_text())
            # The run arrives: the page is stale until regenerated, then shows its table.
            data.write_text(json.dumps(run("1234567", [("tiles", 1024, [1.0])])))
            with quiet, contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(results_table.main(["--check", str(page)]), 1)
                self.assertEqual(results_table.main([str(page)]), 0)
            self.assertIn("revision `1234567`", page.read_text())
            self.assertNotIn("No run recorded yet", page.read_text())

    def test_a_match_that_finds_no_table_is_an_error(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            data.write_text(json.dumps(run("1234567", [("tiles", 1024, [1.0])])))
            page = pathlib.Path(d, "page.md")
            page.write_text(f"<!-- results-table: file={data.relative_to(ROOT).as_posix()} "
                            'match="no such table" -->\n<!-- end results-table -->\n')
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(results_table.main(["--check", str(page)]), 2)
            self.assertIn("no table title contains", err.getvalue())


# The plots are drawn only with the matplotlib whose bytes the committed SVGs are (scripts/setup.sh
# installs it into .venv, the interpreter ctest runs this file with).
NO_PINNED_MATPLOTLIB = results_plots.matplotlib_problem()


class ResultsPlotsTest(unittest.TestCase):
    def test_setup_installs_the_matplotlib_the_plots_are_drawn_with(self):
        setup = (ROOT / "scripts" / "setup.sh").read_text()
        pin = re.search(r"^matplotlib_version=(\S+)$", setup, re.M)
        self.assertIsNotNone(pin, "scripts/setup.sh names no matplotlib_version=")
        self.assertEqual(pin.group(1), results_plots.MATPLOTLIB_VERSION)
        self.assertIn('"matplotlib==$matplotlib_version"', setup)

    def write_page(self, d, data, marker_args="match=int32 svg=plot.svg"):
        page = pathlib.Path(d, "page.md")
        page.write_text(f"# A page\n\n<!-- results-plot: file={data.relative_to(ROOT).as_posix()} "
                        f"{marker_args} -->\nstale text\n<!-- end results-plot -->\nafter\n")
        return page

    @unittest.skipIf(NO_PINNED_MATPLOTLIB, f"{NO_PINNED_MATPLOTLIB}: the plots cannot be drawn")
    def test_draw_then_check_and_a_changed_run_makes_the_plot_stale(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            document = run("1234567", [("tiles", 1024, [2.0, 2.5, 3.0]),
                                       ("cub", 1024, [1.0, 1.0, 1.0])], date="2026-11-25T07:15:02Z")
            data.write_text(json.dumps(document))
            page = self.write_page(d, data)
            original = page.read_text()
            svg = pathlib.Path(d, "plot.svg")
            quiet = contextlib.redirect_stdout(io.StringIO())
            with quiet, contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(results_plots.main(["--check", str(page)]), 1)
            self.assertEqual(page.read_text(), original)  # --check changes nothing
            self.assertFalse(svg.exists())
            self.assertIn(str(svg), err.getvalue())
            with quiet:
                self.assertEqual(results_plots.main([str(page)]), 0)
            first_page, first_svg = page.read_text(), svg.read_bytes()
            self.assertNotIn("stale text", first_page)
            self.assertIn("](plot.svg)\n", first_page)
            self.assertIn(f"[`{data.relative_to(ROOT).as_posix()}`]", first_page)
            self.assertTrue(first_page.endswith("<!-- end results-plot -->\nafter\n"))
            # Text is drawn as paths, each string named in a comment beside its glyphs.
            strings = re.findall(r"<!-- (.*?) -->", first_svg.decode())
            self.assertIn("reduce: Test GPU, revision 1234567, run on 2026-11-25", strings)
            self.assertIn("D2D copy: 1000 GB/s measured in the run ", strings)
            # 4 KiB in 2.5 ms, 0.0% of the limit, cub (4 KiB in 1 ms) 2.5 times as fast.
            self.assertIn("0.00164  0.0%  0.40x cub", strings)
            self.assertIn("cub (vendor)", strings)
            self.assertNotIn(b"<dc:date>", first_svg)
            # Redrawn under another style (a matplotlibrc's), the bytes are the same.
            import matplotlib
            with quiet, matplotlib.rc_context({"font.size": 20, "svg.hashsalt": None,
                                               "font.family": "serif"}):
                self.assertEqual(results_plots.main([str(page)]), 0)
                self.assertEqual(results_plots.main(["--check", str(page)]), 0)
            self.assertEqual((page.read_text(), svg.read_bytes()), (first_page, first_svg))
            # The run changes: the plot is stale (the page, which only links it, is not).
            document["tables"][0]["rows"][1]["gbps"] *= 2
            data.write_text(json.dumps(document))
            with quiet, contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(results_plots.main(["--check", str(page)]), 1)
            self.assertIn(f"not current (run scripts/results_plots.py): {svg}", err.getvalue())
            self.assertNotIn(str(page), err.getvalue())
            # Without the pinned matplotlib the pages and the SVGs' presence are still checked.
            with quiet, contextlib.redirect_stderr(io.StringIO()) as err, mock.patch.object(
                    results_plots, "matplotlib_problem", return_value="matplotlib is 0.1"):
                self.assertEqual(results_plots.main(["--check", str(page)]), results_plots.SKIPPED)
                self.assertIn("the SVGs were not compared (matplotlib is 0.1", err.getvalue())
                self.assertEqual(results_plots.main([str(page)]), 2)  # drawing refuses
                svg.unlink()
                self.assertEqual(results_plots.main(["--check", str(page)]), 1)

    def test_markers_are_checked(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            data.write_text(json.dumps(run("1234567", [("tiles", 1024, [1.0])])))
            for args, message in (("match=int32", "needs svg=NAME.svg"),
                                  ("match=int32 svg=../up.svg", "needs svg=NAME.svg"),
                                  ("svg=p.svg chart=pie", "chart='pie': one of bars, "),
                                  ('svg=p.svg match="no such table"', "no table title contains")):
                page = self.write_page(d, data, args)
                with contextlib.redirect_stderr(io.StringIO()) as err, mock.patch.object(
                        results_plots, "matplotlib_problem", return_value=None), mock.patch.object(
                        results_plots, "draw", return_value=b""):
                    self.assertEqual(results_plots.main(["--check", str(page)]), 2, args)
                self.assertIn(message, err.getvalue(), args)
            # Two markers may show one image only when they draw it alike.
            page = self.write_page(d, data, "match=int32 svg=p.svg")
            page.write_text(page.read_text() * 2)
            page2 = pathlib.Path(d, "page2.md")
            page2.write_text(page.read_text().replace("match=int32", "match=Sum"))
            with contextlib.redirect_stderr(io.StringIO()) as err, mock.patch.object(
                    results_plots, "matplotlib_problem", return_value=None), mock.patch.object(
                    results_plots, "draw", return_value=b"") as draw:
                self.assertEqual(results_plots.main(["--check", str(page)]), 1)  # not drawn yet
                self.assertEqual(draw.call_count, 1)  # the one image drawn once
                self.assertEqual(results_plots.main(["--check", str(page), str(page2)]), 2)
            self.assertIn("two markers draw p.svg differently", err.getvalue())

    @unittest.skipIf(NO_PINNED_MATPLOTLIB, f"{NO_PINNED_MATPLOTLIB}: the plots cannot be drawn")
    def test_the_options_x_paths_chart_reads_the_grid_rows(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            data = pathlib.Path(d, "run.json")
            document = run("1234567", [("grid 1x65536", 65536, [0.01]),
                                       ("grid 1x262144", 262144, [0.02]),
                                       ("grid 4x65536", 262144, [0.01])], title="Grid")
            data.write_text(json.dumps(document))
            page = self.write_page(d, data, "chart=options-x-paths svg=grid.svg")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(results_plots.main([str(page)]), 0)
            strings = re.findall(r"<!-- (.*?) -->", pathlib.Path(d, "grid.svg").read_text())
            # The best: 4 x 65536 samples in 0.01 ms.
            self.assertIn("the grid's best: 26 G samples/s", strings)
            self.assertIn("4 options", strings)
            self.assertIn("256K", strings)
            self.assertIn("samples/s and options/s over paths", page.read_text())
            for row in document["tables"][0]["rows"]:
                row["variant"] = "tiles"
            data.write_text(json.dumps(document))
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(results_plots.main([str(page)]), 2)
            self.assertIn("no `grid OxP` rows in 'Grid'", err.getvalue())


class LibraryGuideTest(unittest.TestCase):
    def test_every_example_is_quoted_whole_and_every_quote_is_an_example(self):
        guide = (ROOT / "docs" / "library.md").read_text()
        blocks = re.findall(r"```cpp\n(.*?)```", guide, re.S)
        examples = sorted((ROOT / "tests" / "docs" / "examples").glob("*.cpp"))
        self.assertEqual(len(blocks), len(examples))
        for block in blocks:
            first = block.splitlines()[0]
            m = re.match(r"// (tests/docs/examples/\w+\.cpp):", first)
            self.assertIsNotNone(m, f"a cpp block of docs/library.md starts {first!r}")
            self.assertEqual(block, (ROOT / m.group(1)).read_text(),
                             f"docs/library.md does not quote {m.group(1)} as it is")


# The pages a reader follows links through: the README, docs/ (journal included) and the
# benchmarks' READMEs.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md")),
         *sorted((ROOT / "bench").glob("**/*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A repository path written as code (`results/h100/gemm.json`): the pages name files this way too.
CODE_PATH = re.compile(r"`((?:apps|bench|cmake|docs|fuzz|include|python|results|scripts|src|tests)"
                       r"/[^`\s*<>{}$]*)`")


def heading_anchors(page):
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as
    hyphens (code blocks left out: their # lines are no headings)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}


def broken_links(pages):
    """'page: target (why)' for every relative link of the pages that reaches no file or no
    heading of its page."""
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    return broken


class DocsLinksTest(unittest.TestCase):
    def test_every_relative_link_reaches_its_file_and_heading(self):
        self.assertEqual(broken_links(PAGES), [])

    def test_every_repository_path_the_pages_name_exists(self):
        # The journal is lab notes: it may name files that were later renamed or merged.
        missing = [f"{page.relative_to(ROOT)}: {path}"
                   for page in PAGES if "journal" not in page.parts
                   for path in (p.rstrip(".,:;") for p in CODE_PATH.findall(page.read_text()))
                   if not (ROOT / path).exists()]
        self.assertEqual(missing, [])

    def test_the_check_finds_a_missing_file_and_a_missing_heading(self):
        with tempfile.TemporaryDirectory() as d:
            page = pathlib.Path(d, "page.md")
            page.write_text("# A `code` title\n[a](missing.md) [b](#a-code-title) [c](#nowhere) "
                            "[d](page.md#a-code-title) [e](https://example.com)\n")
            self.assertEqual(broken_links([page]), ["page.md: missing.md (no such file)",
                                                    "page.md: #nowhere (no such heading)"])


if __name__ == "__main__":
    unittest.main()
