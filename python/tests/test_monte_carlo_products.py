"""Asian, early-exercise and Heston rows from Python: gpukit.monte_carlo's average, exercise,
model, v0, kappa, theta, sigma_v and rho, and price_book's columns of the same names, bitwise
against `gpukit mc` on the same book; their errors name the Python argument or the frame's row and
column; a frame whose product columns hold only the defaults prices as a frame without them."""

from __future__ import annotations

import io

import numpy as np
import pytest

import gpukit

from test_finance import number, run_cli

PRODUCTS_CSV = """\
id,type,spot,strike,maturity,rate,volatility,dividend,barrier,barrier_type,steps,average,exercise,model,v0,kappa,theta,sigma_v,rho,desk
E1,call,100,95,1,0.01,0.2,0.01,,,,,,,,,,,,rates
A1,put,100,100,1,0.02,0.3,0,,,12,arithmetic,,,,,,,,eq
A2,Call,95,100,0.5,0.03,0.25,0.01,,,24,Geometric,european,,,,,,,eq
B1,put,36,40,1,0.06,0.2,0,,,50,,bermudan,,,,,,,eq
B2,P,40,40,1,0.06,0.4,0,,,25,none,American,black-scholes,,,,,,eq
H1,call,100,110,1,0.01,0,0.02,,,16,,,heston,0.04,4,0.25,1,-0.5,fx
H2,put,100,90,1,0.01,0,0.02,80,down-out,12,,,Heston,0.04,4,0.25,1,-0.5,fx
H3,call,100,100,1,0.01,0.3,0.02,,,12,arithmetic,,heston,0.0625,1.5,0.0625,0.6,-0.7,fx
"""

# Each set of options with the rows it may price: early exercise takes antithetic variates but
# not the control variate, and heston rows have no Greeks yet.
EARLY = ("B1", "B2")
HESTON = ("H1", "H2", "H3")
OPTION_SETS = [
    ({}, ()),
    ({"precision": "float"}, ()),
    ({"antithetic": True}, ()),
    ({"antithetic": True, "control_variate": True}, EARLY),
    ({"greeks": True}, HESTON),
]


def book_csv(left_out=()) -> str:
    lines = PRODUCTS_CSV.splitlines(keepends=True)
    return lines[0] + "".join(line for line in lines[1:] if line.split(",")[0] not in left_out)


def read_book(csv: str):
    """Every field as text, as the CLI reads it (pandas' own float parser need not round the
    decimals as from_chars does)."""
    import pandas as pd

    return pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False)


def optional_number(book, column, empty: float) -> np.ndarray:
    return np.array([float(v) if v else empty for v in book[column]])


def monte_carlo_of(book, **options):
    """gpukit.monte_carlo on the book's columns: words as arrays of strings, numbers as arrays."""
    return gpukit.monte_carlo(
        number(book, "spot"), number(book, "strike"), number(book, "maturity"),
        number(book, "rate"), number(book, "volatility"), number(book, "dividend"),
        put=book.type.to_numpy(),
        barrier=optional_number(book, "barrier", 0.0),
        barrier_type=book.barrier_type.to_numpy(),
        steps=optional_number(book, "steps", 1.0).astype(int),
        average=book.average.to_numpy(), exercise=book.exercise.to_numpy(),
        model=book.model.to_numpy(),
        **{k: optional_number(book, k, 0.0) for k in ("v0", "kappa", "theta", "sigma_v", "rho")},
        ids=book.id.to_list(), **options)


@pytest.mark.parametrize("options, left_out", OPTION_SETS)
def test_products_have_the_bits_of_gpukit_mc(cli, tmp_path, options, left_out):
    csv = book_csv(left_out)
    flags = ["mc", "--paths", "4096", "--seed", "77"]
    for name, value in options.items():
        flags += [f"--{name.replace('_', '-')}"] + ([] if value is True else [str(value)])
    expected = run_cli(cli, tmp_path, flags, csv)
    book = read_book(csv)
    settings = dict(paths=4096, seed=77, device="cpu", **options)
    got = monte_carlo_of(book, **settings)
    priced = gpukit.price_book(book, "monte_carlo", **settings)
    # In float precision the CLI writes the float of each estimate (its shortest text).
    as_float = options.get("precision") == "float"

    def as_written(column, values):
        return values.astype(np.float32) if as_float and not column.startswith(("paths", "vrf"))\
            else values

    for column in got:
        want = as_written(column, number(expected, column))
        np.testing.assert_array_equal(as_written(column, got[column]), want, err_msg=column)
        np.testing.assert_array_equal(as_written(column, priced[column].to_numpy(float)), want,
                                      err_msg=column)
    assert list(priced.columns[:len(book.columns)]) == list(book.columns)
    assert (got["std_error"] > 0).all()  # every row priced by its paths, none left at 0


def test_one_option_of_each_product_from_scalars():
    terms = dict(paths=1 << 12, seed=5, device="cpu")
    asian = gpukit.monte_carlo(100.0, 100.0, 1.0, 0.02, 0.3, average="arithmetic", steps=12,
                               ids=["A"], **terms)
    american = gpukit.monte_carlo(36.0, 40.0, 1.0, 0.06, 0.2, put=True, exercise="american",
                                  steps=50, ids=["B"], **terms)
    heston = gpukit.monte_carlo(100.0, [90.0, 110.0], 1.0, 0.01, 0.0, 0.02, put=True,
                                model="heston", v0=0.04, kappa=4, theta=0.25, sigma_v=1, rho=-0.5,
                                steps=16, ids=["H90", "H110"], **terms)
    assert asian["price"].shape == american["price"].shape == ()
    assert heston["price"].shape == (2,)
    # Broadcasting the scalars gives each row the bits of the row priced in a book of arrays.
    book = gpukit.monte_carlo([100.0, 36.0, 100.0, 100.0], [100.0, 40.0, 90.0, 110.0], 1.0,
                              [0.02, 0.06, 0.01, 0.01], [0.3, 0.2, 0.0, 0.0],
                              [0.0, 0.0, 0.02, 0.02], put=[False, True, True, True],
                              average=["arithmetic", "none", "none", "none"],
                              exercise=["european", "american", "european", "european"],
                              model=["black-scholes", "black-scholes", "heston", "heston"],
                              v0=0.04, kappa=4, theta=0.25, sigma_v=1, rho=[0, 0, -0.5, -0.5],
                              steps=[12, 50, 16, 16], ids=["A", "B", "H90", "H110"], **terms)
    np.testing.assert_array_equal(book["price"], [asian["price"], american["price"],
                                                  *heston["price"]])
    # Lewis's puts at 90 and 110 (the oracle of tests/finance/monte_carlo_heston_test.cpp),
    # within 4 standard errors and the bias of 16 steps (measured for the 110 put with 2^24 paths
    # on two seeds: -0.0067 +- 0.0023, docs/case-studies/monte_carlo_heston.md).
    np.testing.assert_allclose(heston["price"], [12.017967, 23.017826],
                               atol=4 * heston["std_error"].max() + 0.015)


@pytest.mark.parametrize("keywords, message", [
    (dict(average=["none", "mean"], steps=4),
     r'^monte_carlo: average\[1\]: expected none, arithmetic or geometric, got "mean"$'),
    (dict(exercise="early", steps=4),
     r'^monte_carlo: exercise: expected european, bermudan or american, got "early"$'),
    (dict(model=[["heston"], ["gbm"]], steps=4),
     r'^monte_carlo: model\[1, 0\]: expected black-scholes or heston, got "gbm"$'),
    (dict(model="heston", v0=0.04, kappa=1, theta=0.04, sigma_v=0.3, steps=4),
     r"^monte_carlo: rho: a heston row needs v0, kappa, theta, sigma_v and rho$"),
    (dict(model="heston", v0=0.04, kappa=0, theta=0.04, sigma_v=0.3, rho=0, steps=4),
     r"^monte_carlo: kappa: must be > 0, got 0$"),
    (dict(model="heston", v0=0.04, kappa=1, theta=0.04, sigma_v=0.3, rho=[0.5, -1.5], steps=4),
     r"^monte_carlo: rho\[1\]: must be in \[-1, 1\], got -1.5$"),
    (dict(model="heston", v0=np.nan, kappa=1, theta=0.04, sigma_v=0.3, rho=0, steps=4),
     r"^monte_carlo: v0: must be finite, got nan$"),
    (dict(average="arithmetic"),
     r"^monte_carlo: steps: an Asian option needs its number of fixings \(give steps=; option "
     r"\[0\]\)$"),
    (dict(model=["black-scholes", "heston"], v0=0.04, kappa=1, theta=0.04, sigma_v=0.3, rho=0),
     r"^monte_carlo: steps: a heston row needs its number of time steps \(give steps=; option "
     r"\[1\]\)$"),
    (dict(average="arithmetic", barrier=90.0, barrier_type="down-out", steps=4),
     r"^monte_carlo: average: an Asian \(arithmetic\) option takes no barrier, got barrier_type "
     r"down-out$"),
    (dict(average="geometric", exercise=["european", "bermudan"], steps=4),
     r"^monte_carlo: exercise\[1\]: an Asian \(geometric\) option is exercised at maturity only, "
     r"got bermudan$"),
    (dict(exercise="american", steps=70000),
     r"^monte_carlo: option \[0\]: early exercise allows at most 65536 dates \(steps\), got "
     r"70000$"),
    (dict(exercise=["european", "bermudan"], steps=4, control_variate=True),
     r"^monte_carlo: option \[1\]: the control variate is not available with early exercise$"),
    (dict(model=["black-scholes", "heston"], v0=0.04, kappa=1, theta=0.04, sigma_v=0.3, rho=0,
          steps=4, barrier=80.0, barrier_type="down-out", monitoring="continuous"),
     r"^monte_carlo: option \[1\]: a heston barrier row is monitored on its dates only"),
])
def test_monte_carlo_errors_name_the_argument_and_the_option(keywords, message):
    with pytest.raises(ValueError, match=message):
        gpukit.monte_carlo(100.0, [95.0, 105.0], 1.0, 0.02, 0.3, paths=1024, device="cpu",
                           **keywords)


def test_a_scalar_book_names_the_option_as_the_option():
    with pytest.raises(ValueError, match=r"^monte_carlo: the option: a heston barrier row is "):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.02, 0.0, model="heston", v0=0.04, kappa=1,
                           theta=0.04, sigma_v=0.3, rho=0, steps=4, barrier=80.0,
                           barrier_type="down-out", monitoring="continuous", paths=1024,
                           device="cpu")


BASE = {"type": ["c", "p"], "spot": [100, 100], "strike": [100, 95], "maturity": [1, 1],
        "rate": [0.01, 0.01], "volatility": [0.2, 0.2]}
HESTON_COLUMNS = {"model": ["heston", "heston"], "v0": [0.04, 0.04], "kappa": [1, 1],
                  "theta": [0.04, 0.04], "sigma_v": [0.3, 0.3], "rho": [-0.5, -0.5],
                  "steps": [8, 8]}


@pytest.mark.parametrize("columns, message", [
    ({"average": ["none", "mean"], "steps": [4, 4]},
     r"^price_book: row 1 \(index 'b'\): average: expected none, arithmetic or geometric, "
     r'got "mean"$'),
    ({"Exercise": ["", "early"], "steps": [4, 4]},
     r"^price_book: row 1 \(index 'b'\): Exercise: expected european, bermudan or american, "
     r'got "early"$'),
    ({"average": [None, "arithmetic"]},
     r"^price_book: row 1 \(index 'b'\): steps: required column is missing \(an Asian option "
     r"needs its number of fixings\)$"),
    ({**HESTON_COLUMNS, "steps": [8, None]},
     r"^price_book: row 1 \(index 'b'\): steps: empty field, a heston row needs its number of "
     r"time steps$"),
    ({"exercise": ["bermudan", ""], "steps": [None, 3]},
     r"^price_book: row 0 \(index 'a'\): steps: empty field, a bermudan option needs its number "
     r"of exercise dates$"),
    ({k: v for k, v in HESTON_COLUMNS.items() if k != "kappa"},
     r"^price_book: row 0 \(index 'a'\): kappa: required column is missing \(a heston row needs "
     r"v0, kappa, theta, sigma_v and rho\)$"),
    ({**HESTON_COLUMNS, "rho": [-0.5, None]},
     r"^price_book: row 1 \(index 'b'\): rho: empty field, a heston row needs v0, kappa, theta, "
     r"sigma_v and rho$"),
    ({**HESTON_COLUMNS, "kappa": [1, 0]},
     r"^price_book: row 1 \(index 'b'\): kappa: must be > 0, got 0$"),
    # A parameter on a row that is not heston is checked as the CSV reader checks it.
    ({**HESTON_COLUMNS, "model": ["black-scholes", "heston"], "v0": [-1, 0.04]},
     r"^price_book: row 0 \(index 'a'\): v0: must be >= 0, got -1$"),
    ({"average": ["geometric", ""], "barrier": [90, None], "barrier_type": ["down-in", ""],
      "steps": [4, None]},
     r"^price_book: row 0 \(index 'a'\): average: an Asian \(geometric\) option takes no "
     r"barrier, got barrier_type down-in$"),
    ({"exercise": ["european", "american"], "steps": [1, 70000]},
     r"^price_book: row 1 \(index 'b'\): early exercise allows at most 65536 dates \(steps\), "
     r"got 70000$"),
])
def test_price_book_errors_name_the_row_and_the_column(columns, message):
    import pandas as pd

    frame = pd.DataFrame({**BASE, **columns}, index=["a", "b"])
    with pytest.raises(ValueError, match=message):
        gpukit.price_book(frame, "monte_carlo", paths=1024, device="cpu")


@pytest.mark.parametrize("column, row, message", [
    ("average", ["none", "arithmetic"], r'average: an Asian option: method="black_scholes" '
                                        r'prices European options only \(method="monte_carlo" '
                                        r"prices Asian ones\)$"),
    ("exercise", ["", "American"], r'exercise: a american option: method="black_scholes" '
                                   r"prices European exercise only"),
    ("model", ["black-scholes", "heston"], r"model: a heston row: the Black-Scholes formula "
                                           r"prices the black-scholes model only"),
])
def test_price_book_black_scholes_refuses_the_rows_it_cannot_price(column, row, message):
    import pandas as pd

    frame = pd.DataFrame({**BASE, column: row}, index=["a", "b"])
    with pytest.raises(ValueError, match=r"^price_book: row 1 \(index 'b'\): " + message):
        gpukit.price_book(frame, device="cpu")


def test_a_frame_whose_product_columns_hold_the_defaults_prices_as_without_them():
    import pandas as pd

    plain = pd.DataFrame(BASE)
    defaults = {"average": ["", "None"], "exercise": ["european", None],
                "model": ["Black-Scholes", ""], "v0": [None, None], "kappa": ["", ""],
                "theta": [np.nan, np.nan], "sigma_v": [None, None], "rho": ["", ""],
                "steps": [None, None]}
    with_columns = pd.DataFrame({**BASE, **defaults})
    for method, keywords in (("monte_carlo", dict(paths=4096, seed=3, antithetic=True)),
                             ("black_scholes", dict())):
        want = gpukit.price_book(plain, method, device="cpu", **keywords)
        got = gpukit.price_book(with_columns, method, device="cpu", **keywords)
        outputs = [c for c in want.columns if c not in plain.columns]
        pd.testing.assert_frame_equal(got[outputs], want[outputs])
        # The input columns pass through as they were.
        pd.testing.assert_frame_equal(got[with_columns.columns], with_columns)
    # Black-Scholes reads no Heston parameter (a pass-through column there, as for gpukit bs).
    odd = pd.DataFrame({**BASE, "v0": ["not read", -1]})
    pd.testing.assert_series_equal(gpukit.price_book(odd, device="cpu")["price"],
                                   gpukit.price_book(plain, device="cpu")["price"])


def test_products_on_cupy_have_the_bits_of_the_host_call_on_the_gpu(cupy):
    book = read_book(book_csv(EARLY))
    settings = dict(paths=1 << 14, seed=9, antithetic=True)
    on_host = monte_carlo_of(book, device="cuda", **settings)
    on_gpu = gpukit.monte_carlo(
        *(cupy.asarray(number(book, c)) for c in ("spot", "strike", "maturity", "rate",
                                                  "volatility", "dividend")),
        put=book.type.to_numpy(), barrier=cupy.asarray(optional_number(book, "barrier", 0.0)),
        barrier_type=book.barrier_type.to_numpy(),
        steps=cupy.asarray(optional_number(book, "steps", 1.0).astype(np.uint32)),
        average=book.average.to_numpy(), model=book.model.to_numpy(),
        **{k: cupy.asarray(optional_number(book, k, 0.0))
           for k in ("v0", "kappa", "theta", "sigma_v", "rho")},
        ids=book.id.to_list(), **settings)
    for column, values in on_host.items():
        assert isinstance(on_gpu[column], cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(on_gpu[column]), values, err_msg=column)
    with pytest.raises(ValueError, match=r"^monte_carlo: exercise: bermudan and american options "
                                         r"are priced from host arrays"):
        gpukit.monte_carlo(cupy.asarray([36.0]), 40.0, 1.0, 0.06, 0.2, put=True,
                           exercise="bermudan", steps=50, paths=1024)


def test_products_on_torch_have_the_bits_of_the_host_call_on_the_gpu(torch):
    terms = dict(model="heston", v0=0.04, kappa=4.0, theta=0.25, sigma_v=1.0, rho=-0.5, steps=16,
                 paths=1 << 14, seed=2)
    strikes = np.array([90.0, 110.0])
    on_host = gpukit.monte_carlo(100.0, strikes, 1.0, 0.01, 0.0, 0.02, put=True, device="cuda",
                                 **terms)
    on_gpu = gpukit.monte_carlo(100.0, torch.tensor(strikes, device="cuda"), 1.0, 0.01, 0.0, 0.02,
                                put=True, **terms)
    for column, values in on_host.items():
        assert isinstance(on_gpu[column], torch.Tensor) and on_gpu[column].is_cuda
        np.testing.assert_array_equal(on_gpu[column].cpu().numpy(), values, err_msg=column)
