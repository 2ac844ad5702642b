#!/usr/bin/env python3
"""The layers of the library as its include lines show them: a module (src/<module>/) uses
another module through that module's installed headers (include/gpukit/<module>/...), never
through its private ones (src/<module>/...), core's excepted: every layer stands on core, whose
private helpers (the CUDA call check, the host pipelines) every module shares. A private header
reached from another module is an interface nobody wrote a contract for, and one the installed
package lacks. Python 3 standard library only."""

import pathlib
import re
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh", ".h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
# Every module may use core's private headers (design.md: every layer's arrows end in core).
SHARED_BY_EVERY_MODULE = {"core"}


def private_includes_across_modules(src: pathlib.Path) -> list[str]:
    """`file:line: "header"` for every include in a module under `src` that reaches the private
    headers of another module (but core), by a path from src/ ("pde/...") or relative to the
    including file ("../pde/...")."""
    modules = {d.name for d in src.iterdir() if d.is_dir()}
    found = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        own = path.relative_to(src).parts[0]
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in INCLUDE.finditer(text):
            header = match.group(1)
            for candidate in (path.parent / header, src / header):
                try:
                    parts = candidate.resolve().relative_to(src.resolve()).parts
                except ValueError:
                    continue  # outside src/: an installed header or a library's
                module = parts[0] if len(parts) > 1 else None
                if module in modules and module != own and module not in SHARED_BY_EVERY_MODULE:
                    line = text.count("\n", 0, match.start()) + 1
                    found.append(f'{path.relative_to(src.parent)}:{line}: "{header}"')
                    break
    return found


class PrivateHeadersTest(unittest.TestCase):
    def test_no_module_includes_another_modules_private_headers(self):
        found = private_includes_across_modules(ROOT / "src")
        self.assertEqual(found, [], "private headers of another module (use its installed "
                         "interface, include/gpukit/<module>/):\n" + "\n".join(found))

    def test_the_check_finds_each_spelling_and_lets_core_and_own_headers_pass(self):
        with tempfile.TemporaryDirectory() as directory:
            src = pathlib.Path(directory) / "src"
            for name in ("core/cuda/check.hpp", "pde/poisson_impl.hpp", "scale_out/engine.hpp"):
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                (src / name).write_text("#pragma once\n")
            (src / "scale_out/cuda").mkdir()
            (src / "scale_out/cuda/slab.cpp").write_text(
                '#include "gpukit/pde/poisson.hpp"\n'  # installed: fine
                '#include "core/cuda/check.hpp"\n'      # core's: fine
                '#include "scale_out/engine.hpp"\n'     # its own: fine
                '#include "../engine.hpp"\n'            # its own, relative: fine
                '#include <vector>\n'
                '#include "pde/poisson_impl.hpp"\n'
                '#  include "../../pde/poisson_impl.hpp"\n')
            self.assertEqual(private_includes_across_modules(src), [
                'src/scale_out/cuda/slab.cpp:6: "pde/poisson_impl.hpp"',
                'src/scale_out/cuda/slab.cpp:7: "../../pde/poisson_impl.hpp"'])


if __name__ == "__main__":
    sys.exit(unittest.main())
