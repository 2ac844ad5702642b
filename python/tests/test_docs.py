"""docs/python.md and the README cannot go stale silently: each of their Python examples runs
here, on the installed package (the CuPy ones where CuPy and a GPU are, with the GPU tests)."""

from __future__ import annotations

import re

import pytest

from conftest import REPOSITORY

PAGE = REPOSITORY / "docs" / "python.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
README_EXAMPLES = re.findall(r"```python\n(.*?)```", (REPOSITORY / "README.md").read_text(),
                             flags=re.S)


def test_the_page_has_examples():
    assert len(EXAMPLES) >= 7


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_each_example_runs(number, request):
    code = EXAMPLES[number]
    if "cupy" in code or "torch" in code:
        request.getfixturevalue("cupy")
    exec(compile(code, f"docs/python.md example {number + 1}", "exec"), {"__name__": "example"})


def test_the_readme_has_a_python_example():
    assert len(README_EXAMPLES) >= 1


@pytest.mark.parametrize("number", range(len(README_EXAMPLES)))
def test_each_readme_example_runs(number):
    exec(compile(README_EXAMPLES[number], f"README.md example {number + 1}", "exec"),
         {"__name__": "example"})
