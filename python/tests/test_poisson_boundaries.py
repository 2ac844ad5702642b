"""gpukit.poisson with dirichlet, neumann and periodic axes, the spectral and fd2 operators and
Helmholtz's lambda, against a solver written here from scipy.fft's own transforms (dstn type 1 on
dirichlet axes, dctn type 2 on neumann ones, fft on periodic ones, each axis' eigenvalues from the
documented formulas), every element within the library's documented agreement bound; the rules of
the arguments and of singular problems (host arrays, the CPU)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.fft as sf

import gpukit

BOUNDARIES = ("periodic", "dirichlet", "neumann")


def eigenvalue_magnitudes(boundary, operator, n, length):
    """-e >= 0 for the modes in scipy's output order: fft's frequencies m, dst-I's k = 1..n,
    dct-II's k = 0..n-1 (gpukit.poisson's docstring)."""
    if boundary == "periodic":
        mode = np.abs(np.fft.fftfreq(n) * n)
        step, theta = length / n, 2 * np.pi * mode / n
        wave = 2 * np.pi * mode / length
    elif boundary == "dirichlet":
        mode = np.arange(1, n + 1)
        step, theta = length / (n + 1), np.pi * mode / (n + 1)
        wave = np.pi * mode / length
    else:
        mode = np.arange(n)
        step, theta = length / n, np.pi * mode / n
        wave = np.pi * mode / length
    if operator == "spectral":
        return wave ** 2
    return 4 / step ** 2 * np.sin(theta / 2) ** 2


def scipy_solve(f, lengths, boundaries, operator, helmholtz):
    """(lap - helmholtz) u = f by scipy's transforms in float64: dst-I and dct-II on the walls'
    axes, fft on the periodic ones, a zero denominator (the constant of a singular problem) 0."""
    x = np.asarray(f, dtype=np.float64)
    walls = [a for a, b in enumerate(boundaries) if b != "periodic"]
    periodic = [a for a, b in enumerate(boundaries) if b == "periodic"]
    for a in walls:
        x = (sf.dst(x, type=1, axis=a) if boundaries[a] == "dirichlet"
             else sf.dct(x, type=2, axis=a))
    spectrum = sf.fftn(x, axes=periodic) if periodic else x.astype(complex)
    denominator = np.full(f.shape, float(helmholtz))
    for a, (n, length, b) in enumerate(zip(f.shape, lengths, boundaries)):
        shape = [1] * f.ndim
        shape[a] = n
        denominator = denominator + eigenvalue_magnitudes(b, operator, n, length).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        spectrum = np.where(denominator > 0, -spectrum / denominator, 0)
    x = (sf.ifftn(spectrum, axes=periodic) if periodic else spectrum).real
    for a in walls:
        x = (sf.idst(x, type=1, axis=a) if boundaries[a] == "dirichlet"
             else sf.idct(x, type=2, axis=a))
    return x


def agreement_bound(f, u, lengths, boundaries, operator, helmholtz, dtype):
    """pde::poisson_agreement_bound, as documented: 4 log2(M) eps (max|u| + max|f| / mu_min), M
    the product of the axes' FFT lengths (n, 2n neumann, 2(n + 1) dirichlet), mu_min lambda plus
    every dirichlet axis' first eigenvalue, or (when that is 0) the smallest first non-zero
    eigenvalue of an axis."""
    fft_points, mu_min, firsts = 1.0, float(helmholtz), []
    for n, length, b in zip(f.shape, lengths, boundaries):
        fft_points *= n if b == "periodic" else 2 * n if b == "neumann" else 2 * (n + 1)
        magnitudes = eigenvalue_magnitudes(b, operator, n, length)
        if b == "dirichlet":
            mu_min += magnitudes[0]
            firsts.append(magnitudes[0])
        elif n > 1:
            firsts.append(magnitudes[1])
        else:  # no non-zero mode of its own: the spectral one stands in
            firsts.append(((2 if b == "periodic" else 1) * np.pi / length) ** 2)
    if not mu_min > 0:
        mu_min = min(firsts)
    eps = np.finfo(dtype).eps
    return 4 * max(1.0, math.log2(fft_points)) * eps * (np.abs(u).max() +
                                                       np.abs(f).max() / mu_min)


SHAPES = [((31, 100), (1.0, 2.0)), ((1000, 7), (3.0, 0.5)), ((97, 1), (1.0, 1.0)),
          ((7, 31, 10), (1.0, 0.5, 2.0))]


@pytest.mark.parametrize("shape, lengths", SHAPES)
@pytest.mark.parametrize("operator, helmholtz", [("spectral", 0.0), ("fd2", 0.0), ("fd2", 2.5),
                                                 ("spectral", 400.0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_boundary_combination_matches_scipy(shape, lengths, operator, helmholtz, dtype):
    rng = np.random.default_rng(34)
    combinations = list(itertools.product(BOUNDARIES, repeat=len(shape)))
    if len(shape) == 3:  # every 3D combination on one operator, a sample on the others
        combinations = combinations if (operator, helmholtz) == ("fd2", 2.5) else \
            combinations[::5]
    for boundaries in combinations:
        f = rng.uniform(-1, 1, shape)
        singular = "dirichlet" not in boundaries and helmholtz == 0
        if singular:
            f -= f.mean()
        f = f.astype(dtype)
        expected = scipy_solve(f, lengths, boundaries, operator, helmholtz)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a mean-zero f, or a nonsingular problem: no warning
            u = gpukit.poisson(f, lengths, boundary=list(boundaries), operator=operator,
                               helmholtz=helmholtz, device="cpu")
        assert u.dtype == dtype and u.shape == f.shape
        bound = agreement_bound(f, expected, lengths, boundaries, operator, helmholtz, dtype)
        error = np.abs(u.astype(np.float64) - expected)
        assert error.max() <= bound, (boundaries, error.max(), bound)
        # The test can fail: the other operator's solution is not this one's.
        other = scipy_solve(f, lengths, boundaries,
                            "fd2" if operator == "spectral" else "spectral", helmholtz)
        assert np.abs(other - expected).max() > bound, boundaries


@pytest.mark.parametrize("variant", ["", "cufft-r2r-axes"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_arrays_are_solved_on_the_gpu(cupy, variant, dtype):
    """The walls solver on a CuPy array (no copy to the host), both pipelines, against scipy."""
    rng = np.random.default_rng(35)
    cases = [((31, 100), (1.0, 2.0), "fd2", 2.5), ((1000, 7), (3.0, 0.5), "spectral", 0.0),
             ((7, 31, 10), (1.0, 0.5, 2.0), "spectral", 40.0)]
    for shape, lengths, operator, helmholtz in cases:
        for boundaries in itertools.product(BOUNDARIES, repeat=len(shape)):
            if all(b == "periodic" for b in boundaries) and operator == "spectral" \
                    and helmholtz == 0:
                continue  # the periodic variants' problem
            f = rng.uniform(-1, 1, shape)
            if "dirichlet" not in boundaries and helmholtz == 0:
                f -= f.mean()
            f = f.astype(dtype)
            expected = scipy_solve(f, lengths, boundaries, operator, helmholtz)
            u = gpukit.poisson(cupy.asarray(f), lengths, boundary=list(boundaries),
                               operator=operator, helmholtz=helmholtz, variant=variant)
            assert isinstance(u, cupy.ndarray) and u.dtype == dtype
            bound = agreement_bound(f, expected, lengths, boundaries, operator, helmholtz, dtype)
            error = np.abs(cupy.asnumpy(u).astype(np.float64) - expected)
            assert error.max() <= bound, (boundaries, variant, error.max(), bound)


def test_fd2_is_the_five_point_stencil_with_its_ghosts():
    # (A - lambda) u = f for A the 5-point stencil written out here: a ghost 0 beyond a dirichlet
    # end, the mirrored node beyond a neumann end, the wrapped one on a periodic axis.
    rng = np.random.default_rng(7)
    n0, n1, L0, L1, lam = 12, 9, 1.0, 2.0, 1.5
    f = rng.uniform(-1, 1, (n0, n1))
    u = gpukit.poisson(f, (L0, L1), boundary="dirichlet,neumann", operator="fd2", helmholtz=lam,
                       device="cpu")
    h0, h1 = L0 / (n0 + 1), L1 / n1
    padded = np.zeros((n0 + 2, n1 + 2))
    padded[1:-1, 1:-1] = u
    padded[1:-1, 0], padded[1:-1, -1] = u[:, 0], u[:, -1]  # neumann: mirrored
    lap = ((padded[:-2, 1:-1] - 2 * u + padded[2:, 1:-1]) / h0 ** 2 +
           (padded[1:-1, :-2] - 2 * u + padded[1:-1, 2:]) / h1 ** 2)
    residual = lap - lam * u - f
    stencil_norm = 4 / h0 ** 2 + 4 / h1 ** 2 + lam
    bound = stencil_norm * agreement_bound(f, u, (L0, L1), ("dirichlet", "neumann"), "fd2", lam,
                                           np.float64)
    assert np.abs(residual).max() <= bound
    spectral = gpukit.poisson(f, (L0, L1), boundary="dirichlet,neumann", helmholtz=lam,
                              device="cpu")
    assert np.abs(spectral - u).max() > bound  # another operator, another answer


def test_boundary_spellings_and_refusals_name_the_python_arguments():
    rng = np.random.default_rng(3)
    f = rng.uniform(-1, 1, (6, 8))
    one = gpukit.poisson(f, boundary="dirichlet", device="cpu")
    np.testing.assert_array_equal(one, gpukit.poisson(f, boundary=["dirichlet"] * 2,
                                                      device="cpu"))
    np.testing.assert_array_equal(one, gpukit.poisson(f, boundary="dirichlet,dirichlet",
                                                      device="cpu"))
    np.testing.assert_array_equal(one, gpukit.poisson(f, boundary=("dirichlet",), device="cpu"))
    f0 = f - f.mean()
    np.testing.assert_array_equal(gpukit.poisson(f0, device="cpu"),
                                  gpukit.poisson(f0, boundary="periodic", device="cpu"))
    with pytest.raises(ValueError, match=r"^boundary gives 3 values for a grid of 2 axes: give "
                                         r"one for every axis, or one per axis$"):
        gpukit.poisson(f, boundary=["dirichlet", "neumann", "periodic"], device="cpu")
    with pytest.raises(ValueError, match=r"^boundary: unknown boundary 'wall' \(known: "
                                         r"periodic, dirichlet, neumann\)$"):
        gpukit.poisson(f, boundary="wall", device="cpu")
    with pytest.raises(ValueError, match=r"^boundary\[0\] must be one name"):
        gpukit.poisson(f, boundary=["dirichlet,neumann"], device="cpu")
    with pytest.raises(ValueError, match=r"^boundary must name at least one"):
        gpukit.poisson(f, boundary=[], device="cpu")
    with pytest.raises(ValueError, match=r"^operator: unknown operator 'fd4' \(known: spectral, "
                                         r"fd2\)$"):
        gpukit.poisson(f, operator="fd4", device="cpu")
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"^helmholtz must be finite and >= 0, got "):
            gpukit.poisson(f, helmholtz=bad, device="cpu")


def test_only_singular_problems_remove_the_mean():
    rng = np.random.default_rng(11)
    f = rng.uniform(-1, 1, (9, 12)) + 0.25
    # Nonsingular (a dirichlet axis, or lambda > 0): solved as given, strict and gauge change
    # nothing, no warning.
    for boundary, lam in (("dirichlet,neumann", 0.0), ("neumann", 1.0), ("periodic", 0.5)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            u = gpukit.poisson(f, boundary=boundary, helmholtz=lam, device="cpu")
            np.testing.assert_array_equal(
                u, gpukit.poisson(f, boundary=boundary, helmholtz=lam, gauge="corner",
                                  strict=True, device="cpu"))
    # Neumann with lambda 0: the mean rule, in its own words.
    with pytest.warns(RuntimeWarning, match="has no solution with boundaries neumann,neumann"):
        u = gpukit.poisson(f, boundary="neumann", device="cpu")
    assert abs(u.mean()) < 1e-14
    with pytest.raises(ValueError, match="not zero to rounding"):
        gpukit.poisson(f, boundary="neumann", strict=True, device="cpu")
    with pytest.warns(RuntimeWarning):
        corner = gpukit.poisson(f, boundary="neumann", gauge="corner", device="cpu")
    assert corner[0, 0] == 0.0


def test_length_is_the_clis_spelling_of_lengths():
    """The issue's `gpukit.poisson(f, length=..., boundary=...)`: the same argument as lengths,
    the same bits, and messages that name the spelling given."""
    rng = np.random.default_rng(36)
    f = rng.uniform(-1, 1, (12, 9))
    by_lengths = gpukit.poisson(f, [1.0, 2.5], boundary="dirichlet", device="cpu")
    by_length = gpukit.poisson(f, length=[1.0, 2.5], boundary="dirichlet", device="cpu")
    assert np.array_equal(by_lengths, by_length)
    assert np.array_equal(gpukit.poisson(f, 2.0, boundary="dirichlet", device="cpu"),
                          gpukit.poisson(f, length=2.0, boundary="dirichlet", device="cpu"))
    with pytest.raises(TypeError, match="lengths or length"):
        gpukit.poisson(f, [1.0, 2.5], length=[1.0, 2.5], device="cpu")
    with pytest.raises(ValueError, match=r"^length gives 3 values for a grid of 2 axes"):
        gpukit.poisson(f, length=[1.0, 2.0, 3.0], boundary="dirichlet", device="cpu")
    with pytest.raises(ValueError, match=r"^lengths gives 3 values for a grid of 2 axes"):
        gpukit.poisson(f, [1.0, 2.0, 3.0], boundary="dirichlet", device="cpu")
    with pytest.raises((TypeError, ValueError), match=r"length\[1\]"):
        gpukit.poisson(f, length=[1.0, "x"], device="cpu")

