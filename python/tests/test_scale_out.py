"""Spreading a call over several devices and MPI ranks (docs/python.md, "Several GPUs and MPI").

- The device argument of the spreading calls (black_scholes, implied_volatility, monte_carlo,
  price_book, reduce, poisson): lists, their spellings and errors, named `device` (no GPU needed).
- Under `mpirun -np 2` and `-np 3` (where mpirun is installed and gpukit was built with MPI), a
  script's calls on CPU ranks give every rank the bits one process gets alone (Poisson, periodic
  and with walls, fd2 and helmholtz: within the agreement bound of docs/scale-out.md, and the
  same bits on every rank). Skips cleanly without mpirun or without MPI in the build.
- Under `mpirun -np 2`, SIGINT to one rank during a spread Monte Carlo pricing raises
  KeyboardInterrupt on every rank (docs/python.md, "Stopping a long call").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gpukit
from test_poisson_boundaries import agreement_bound

X = np.arange(1000, dtype=np.float64) / 7

SPREADING = {
    "reduce": lambda device: gpukit.reduce(X, device=device),
    "black_scholes": lambda device: gpukit.black_scholes(100.0, 100.0, 1.0, 0.02, 0.3,
                                                         device=device),
    "monte_carlo": lambda device: gpukit.monte_carlo(100.0, 100.0, 1.0, 0.02, 0.3, paths=64,
                                                     device=device),
    "poisson": lambda device: gpukit.poisson(np.zeros((4, 4)), device=device),
    "implied_volatility": lambda device: gpukit.implied_volatility(8.0, 100.0, 1.0, spot=100.0,
                                                                   device=device),
}


def refused(call, kind=ValueError) -> str:
    with pytest.raises(kind) as error:
        call()
    return str(error.value)


@pytest.mark.parametrize("function", sorted(SPREADING))
def test_device_lists_are_checked_and_named_device(function):
    call = SPREADING[function]
    assert refused(lambda: call(0), TypeError).startswith(
        "device must be a string or a list (auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,...")
    assert refused(lambda: call("gpu")) == \
        "device must be auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,..., got 'gpu'"
    assert refused(lambda: call("cuda:x")).startswith("device: 'cuda:x' is not a GPU list")
    assert refused(lambda: call(["cuda:0", "cpu"])) == \
        "device[1] must be 'cuda:N' (a list of GPUs), got 'cpu'"
    assert refused(lambda: call([])) == "device must name at least one device, got an empty list"


@pytest.mark.parametrize("device", ["cuda:all", "cuda:0,1", ["cuda:0", "cuda:1"]])
def test_a_device_list_without_the_gpus_says_so_in_pythons_words(device):
    if gpukit.devices():
        pytest.skip("this machine has a GPU: the list is taken (tests/scale_out cover it)")
    message = refused(lambda: gpukit.reduce(X, device=device), gpukit.DeviceUnavailable)
    assert message.startswith("device=cuda:"), message
    assert "--device" not in message


def test_a_list_spreads_and_one_device_does_not():
    assert gpukit._gpukit.spreads("cuda:all")
    assert gpukit._gpukit.spreads("cuda:0,0")
    assert not gpukit._gpukit.spreads("cuda:0")
    assert not gpukit._gpukit.spreads("cpu")


# ---- mpirun ---------------------------------------------------------------------------------

# Every spreading call on the CPU, its results saved per rank: run alone, then on 2 and 3 ranks.
SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import pandas as pd
    import gpukit

    out = sys.argv[1]
    rng = np.random.default_rng(2026)
    n = 301
    spot = 80 + 40 * rng.random(n)
    strike = 80 + 40 * rng.random(n)
    maturity = 0.1 + rng.random(n)
    volatility = 0.1 + 0.4 * rng.random(n)
    put = rng.random(n) < 0.5
    results = {"spread": np.array(gpukit._gpukit.spreads("cpu"))}
    bs = gpukit.black_scholes(spot, strike, maturity, 0.03, volatility, 0.01, put, greeks=True,
                              device="cpu")
    results.update({"bs_" + k: v for k, v in bs.items()})
    results["bs_float"] = gpukit.black_scholes(spot, strike, maturity, 0.03, volatility,
                                               put=put, precision="float", device="cpu")
    kinds = np.array(["none", "down-out", "up-in", "down-in", "up-out"])[np.arange(n) % 5]
    barrier = np.where(np.char.startswith(kinds, "down"), spot * 0.8, spot * 1.25)
    mc = gpukit.monte_carlo(spot, strike, maturity, 0.03, volatility, put=put, barrier=barrier,
                            barrier_type=kinds, steps=1 + np.arange(n) % 3, paths=3000,
                            greeks=True, control_variate=True, device="cpu")
    results.update({"mc_" + k: v for k, v in mc.items()})
    frame = pd.DataFrame({"type": np.where(put, "put", "call"), "spot": spot, "strike": strike,
                          "maturity": maturity, "rate": 0.03, "volatility": volatility,
                          "id": [f"T{i}" for i in range(n)]})
    results["book_bs"] = gpukit.price_book(frame, greeks=True, device="cpu")[
        ["price", "delta", "gamma", "vega", "theta", "rho"]].to_numpy()
    results["book_mc"] = gpukit.price_book(frame, "monte_carlo", paths=2000, device="cpu")[
        ["price", "std_error", "ci_low", "ci_high", "paths"]].to_numpy(dtype=np.float64)
    iv, status = gpukit.implied_volatility(results["bs_price"], strike, maturity, 0.03,
                                           spot=spot, dividend=0.01, put=put, device="cpu")
    results["iv"], results["iv_status"] = iv, status
    forward = spot * np.exp(0.03 * maturity)
    iv76, status76 = gpukit.implied_volatility(results["bs_float"], strike, maturity, 0.03,
                                               forward=forward, put=put, model="black76",
                                               precision="float", device="cpu")
    results["iv76_float"], results["iv76_status"] = iv76, status76
    quotes = frame.assign(price=results["bs_price"], dividend=0.01)
    inverted = gpukit.price_book(quotes, "implied_volatility", device="cpu")
    results["book_iv"] = inverted["implied_volatility"].to_numpy()
    results["book_iv_status"] = inverted["iv_status"].cat.codes.to_numpy()
    values = rng.standard_normal(5 * 16384 + 11)
    results["sum_float64"] = np.array(gpukit.reduce(values, device="cpu"))
    results["sum_float32"] = np.array(gpukit.reduce(values.astype(np.float32), device="cpu"))
    results["max_int32"] = np.array(gpukit.reduce((values * 1000).astype(np.int32), "max",
                                                  device="cpu"))
    results["sum_int64"] = np.array(gpukit.reduce((values * 1e6).astype(np.int64),
                                                  device="cpu"))
    f = rng.standard_normal((13, 10))
    results["poisson_f"] = f
    WALLS = ["neumann", "dirichlet"]
    # Across CPU ranks only where the build has FFTW's MPI interface (else a ValueError that
    # says so, checked by the test): one process alone always solves.
    try:
        results["poisson"] = gpukit.poisson(f, lengths=(1.0, 2.0), device="cpu")
        results["poisson_walls"] = gpukit.poisson(f.astype(np.float32), lengths=(1.0, 2.0),
                                                  boundary=WALLS, operator="fd2", helmholtz=2.5,
                                                  device="cpu")
    except ValueError as error:
        results["poisson_refused"] = np.array(str(error))
    rank = int(__import__("os").environ.get("OMPI_COMM_WORLD_RANK", "0"))
    np.savez(f"{out}_rank{rank}.npz", **results)
""")


def _mpirun() -> str | None:
    return shutil.which("mpirun") or shutil.which("mpiexec")


def _run(command: list[str], cwd: Path) -> str:
    """Runs `command` (one thread a process); its stdout."""
    environment = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       OMP_NUM_THREADS="1")
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_under_mpirun_every_rank_gets_the_bits_of_one_process(tmp_path):
    pytest.importorskip("pandas")
    mpirun = _mpirun()
    if mpirun is None:
        pytest.skip("mpirun is not installed")
    script = tmp_path / "spread.py"
    script.write_text(SCRIPT)
    _run([sys.executable, str(script), str(tmp_path / "alone")], tmp_path)
    alone = dict(np.load(tmp_path / "alone_rank0.npz"))
    assert not alone.pop("spread")
    assert np.any(alone["bs_price"] > 0) and np.any(alone["mc_price"] > 0)
    assert np.any(alone["iv"] > 0) and np.any(alone["book_iv"] > 0)
    for ranks in (2, 3):
        _run([mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(ranks), sys.executable,
              str(script), str(tmp_path / f"np{ranks}")], tmp_path)
        for rank in range(ranks):
            got = dict(np.load(tmp_path / f"np{ranks}_rank{rank}.npz"))
            if not got.pop("spread"):
                pytest.skip("this gpukit was built without MPI: each rank computed alone")
            for name, expected in alone.items():
                if name.startswith("poisson"):
                    continue
                assert _same_bits(expected, got[name]), f"{name} on rank {rank} of {ranks}"
            if not gpukit._gpukit._poisson_across_cpu_ranks():
                assert str(got["poisson_refused"]) == ("poisson: this gpukit was built without "
                                                       "FFTW's MPI interface: no distributed CPU "
                                                       "solver"), f"rank {rank} of {ranks}"
                continue
            poisson, walls = got.pop("poisson"), got.pop("poisson_walls")
            # Poisson in slabs: within the bound of docs/scale-out.md of the one-process solve
            # (pde::poisson_agreement_bound), and every rank the same bits.
            f, u = alone["poisson_f"], alone["poisson"]
            bound = 4 * np.log2(f.size) * np.finfo(np.float64).eps * (
                np.abs(u).max() + np.abs(f).max() * (2.0 / (2 * np.pi)) ** 2)
            assert np.abs(poisson - u).max() <= bound, f"poisson on rank {rank} of {ranks}"
            # Walls, fd2 and helmholtz in float: the same rule, their bound.
            f32, u_walls = f.astype(np.float32), alone["poisson_walls"]
            assert walls.dtype == np.float32
            walls_bound = agreement_bound(f32, u_walls, (1.0, 2.0), ("neumann", "dirichlet"),
                                          "fd2", 2.5, np.float32)
            assert np.abs(walls.astype(np.float64) - u_walls).max() <= walls_bound, \
                f"poisson with walls on rank {rank} of {ranks}"
            if rank == 0:
                first, first_walls = poisson, walls
            else:
                assert _same_bits(first, poisson), f"poisson on rank {rank} of {ranks}"
                assert _same_bits(first_walls, walls), \
                    f"poisson with walls on rank {rank} of {ranks}"


# Ctrl-C under a launcher that forwards SIGINT to its ranks (MPICH's mpiexec, Slurm's srun; Open
# MPI's mpirun ends them instead): here SIGINT reaches the last rank alone, half a second into a
# spread Monte Carlo pricing sized (by `size`: one process, one thread, test_interrupt's
# paths_lasting) to last about 5 s a rank.
CTRL_C_SCRIPT = textwrap.dedent("""
    import os
    import signal
    import sys
    import threading
    import numpy as np
    import gpukit

    mode, out = sys.argv[1], sys.argv[2]
    book = dict(spot=np.full(4, 100.0), strike=np.linspace(80.0, 120.0, 4), maturity=1.0,
                rate=0.02, volatility=0.25, device="cpu")
    if mode == "size":
        sys.path.insert(0, sys.argv[3])
        from test_interrupt import paths_lasting
        # Each of the 2 ranks prices half the book's blocks.
        print(paths_lasting(2 * 5.0, lambda paths: gpukit.monte_carlo(**book, paths=paths)))
        sys.exit(0)
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    if not gpukit._gpukit.spreads("cpu"):
        outcome = "alone"
    else:
        if rank == int(os.environ["OMPI_COMM_WORLD_SIZE"]) - 1:
            threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            gpukit.monte_carlo(**book, paths=int(sys.argv[3]))
            outcome = "returned"
        except KeyboardInterrupt as error:
            outcome = "KeyboardInterrupt: " + str(error)
        except BaseException as error:
            outcome = type(error).__name__ + ": " + str(error)
    with open(f"{out}_rank{rank}.txt", "w") as f:
        f.write(outcome)
""")


def test_under_mpirun_ctrl_c_on_one_rank_raises_keyboard_interrupt_on_every_rank(tmp_path):
    mpirun = _mpirun()
    if mpirun is None:
        pytest.skip("mpirun is not installed")
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C_SCRIPT)
    paths = _run([sys.executable, str(script), "size", str(tmp_path / "size"),
                  str(Path(__file__).parent)], tmp_path).strip()
    _run([mpirun, "--oversubscribe", "--bind-to", "none", "-np", "2", sys.executable, str(script),
          "run", str(tmp_path / "np2"), paths], tmp_path)
    outcomes = [(tmp_path / f"np2_rank{rank}.txt").read_text() for rank in range(2)]
    if outcomes[0] == "alone":
        pytest.skip("this gpukit was built without MPI: each rank computed alone")
    # The rank that got SIGINT raises its own KeyboardInterrupt (Python's, without a message);
    # the other, stopped by the ranks' agreement, one that names the rank that was interrupted.
    assert outcomes[1] == "KeyboardInterrupt: ", outcomes
    assert outcomes[0].startswith("KeyboardInterrupt: "), outcomes
    assert outcomes[0].endswith(" (MPI rank 1 of 2)"), outcomes
