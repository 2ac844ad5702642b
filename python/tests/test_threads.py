"""The OpenMP wait policy of the Python module (README "Threads"): passive unless the user chose
one. libgomp reads it once, when the compiled module loads it, so the package sets it before; what
libgomp took is observed through its own report (OMP_DISPLAY_ENV=verbose: GOMP_SPINCOUNT 0 is
passive waiting, 300000 its default of spinning a few milliseconds, 30000000000 active)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest


def _spin_counts(**variables: str | None) -> list[str]:
    env = dict(os.environ)
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(name, None)  # this process imported gpukit, which may have set one
    env["OMP_DISPLAY_ENV"] = "verbose"
    for name, value in variables.items():
        if value is not None:
            env[name] = value
    done = subprocess.run([sys.executable, "-c", "import gpukit"], env=env, capture_output=True,
                          text=True, check=True)
    return re.findall(r"GOMP_SPINCOUNT = '([0-9]+)'", done.stderr)


def test_threads_wait_passively_unless_the_user_chose():
    assert _spin_counts() == ["0"]


@pytest.mark.parametrize(("variables", "spin_count"), [
    ({"OMP_WAIT_POLICY": "active"}, "30000000000"),
    ({"GOMP_SPINCOUNT": "1000"}, "1000"),
])
def test_the_users_wait_policy_stands(variables, spin_count):
    assert _spin_counts(**variables) == [spin_count]
