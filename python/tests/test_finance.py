"""Black-Scholes against scipy.stats.norm, Monte Carlo against Black-Scholes and bitwise against
`gpukit mc`, and pandas books against `gpukit bs` / `gpukit mc` on the same book (host arrays)."""

from __future__ import annotations

import io
import subprocess

import numpy as np
import pytest
from scipy.stats import norm

import gpukit

SIZES = [1, 31, 33, 1023, 1025]


def random_book(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Terms across short and long maturities, low and high volatilities, both sides."""
    return dict(
        spot=rng.uniform(5, 200, n),
        strike=rng.uniform(1, 250, n),
        maturity=np.exp(rng.uniform(np.log(1 / 365), np.log(30), n)),
        rate=rng.uniform(-0.01, 0.1, n),
        volatility=np.exp(rng.uniform(np.log(0.01), np.log(3), n)),
        dividend=rng.uniform(0, 0.05, n),
        put=rng.integers(0, 2, n).astype(bool),
    )


def scipy_black_scholes(spot, strike, maturity, rate, volatility, dividend, put):
    """The closed form through scipy.stats.norm, in float64, with its Greeks."""
    sqrt_t = np.sqrt(maturity)
    s = volatility * sqrt_t
    forward = spot * np.exp(-dividend * maturity)
    discounted_strike = strike * np.exp(-rate * maturity)
    d1 = np.log(forward / discounted_strike) / s + s / 2
    d2 = d1 - s
    call = forward * norm.cdf(d1) - discounted_strike * norm.cdf(d2)
    put_price = discounted_strike * norm.cdf(-d2) - forward * norm.cdf(-d1)
    density = forward * norm.pdf(d1)
    common_theta = -density * volatility / (2 * sqrt_t)
    return dict(
        price=np.where(put, put_price, call),
        delta=np.exp(-dividend * maturity) * (norm.cdf(d1) - put),
        gamma=np.exp(-dividend * maturity) * norm.pdf(d1) / (spot * s),
        vega=density * sqrt_t,
        theta=np.where(
            put,
            common_theta + rate * discounted_strike * norm.cdf(-d2)
            - dividend * forward * norm.cdf(-d1),
            common_theta - rate * discounted_strike * norm.cdf(d2)
            + dividend * forward * norm.cdf(d1)),
        rho=np.where(put, -maturity * discounted_strike * norm.cdf(-d2),
                     maturity * discounted_strike * norm.cdf(d2)),
    )


def price_scale(book) -> np.ndarray:
    """S e^{-qT} + X e^{-rT}: what black_scholes_price_bound is relative to."""
    return (book["spot"] * np.exp(-book["dividend"] * book["maturity"])
            + book["strike"] * np.exp(-book["rate"] * book["maturity"]))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("precision", ["double", "float"])
def test_black_scholes_against_scipy(rng, n, precision):
    book = random_book(rng, n)
    dtype = np.float64 if precision == "double" else np.float32
    # The exact price of the inputs as rounded to the precision (as the library's bound is).
    rounded = {k: (v.astype(dtype).astype(np.float64) if k != "put" else v) for k, v in book.items()}
    expected = scipy_black_scholes(**rounded)
    got = gpukit.black_scholes(**book, greeks=True, precision=precision, device="cpu")
    assert set(got) == {"price", "delta", "gamma", "vega", "theta", "rho"}
    assert all(v.dtype == dtype and v.shape == (n,) for v in got.values())
    # black_scholes_price_bound: 64 eps of the scale for the library; scipy's float64 arithmetic
    # adds at most 16 eps of it (a dozen roundings and norm.cdf's few ulps on terms that size).
    bound = (64 * np.finfo(dtype).eps + 16 * np.finfo(np.float64).eps) * price_scale(rounded)
    assert np.all(np.abs(got["price"] - expected["price"]) <= bound)
    if precision == "double":
        for greek in ("delta", "gamma", "vega", "theta", "rho"):
            np.testing.assert_allclose(got[greek], expected[greek], rtol=1e-8,
                                       atol=1e-10 * (1 + np.abs(expected[greek]).max()),
                                       err_msg=greek)
    # Without Greeks: the same prices.
    np.testing.assert_array_equal(
        gpukit.black_scholes(**book, precision=precision, device="cpu"), got["price"])


def test_black_scholes_broadcasts_scalars_and_shapes(rng):
    spot = rng.uniform(50, 150, (4, 1))
    strike = rng.uniform(50, 150, (1, 3))
    prices = gpukit.black_scholes(spot, strike, 1.0, 0.02, 0.3, device="cpu")
    assert prices.shape == (4, 3)
    puts = gpukit.black_scholes(spot, strike, 1.0, 0.02, 0.3, put=True, device="cpu")
    sides = gpukit.black_scholes(spot, strike, 1.0, 0.02, 0.3, put=[[True, False, True]],
                                 device="cpu")
    np.testing.assert_array_equal(sides[:, 0], puts[:, 0])
    np.testing.assert_array_equal(sides[:, 1], prices[:, 1])
    # Put-call parity, to rounding.
    np.testing.assert_allclose(prices - puts, spot - strike * np.exp(-0.02), atol=1e-12 * 300)
    scalar = gpukit.black_scholes(100.0, 100.0, 1.0, 0.05, 0.2, device="cpu")
    assert scalar.shape == () and abs(float(scalar) - 10.450583572185565) < 1e-12
    with pytest.raises(ValueError, match="do not broadcast"):
        gpukit.black_scholes(np.ones(3), np.ones(4), 1.0, 0.0, 0.2, device="cpu")


def test_black_scholes_degenerate_inputs_give_the_intrinsic_value():
    prices = gpukit.black_scholes([110.0, 90.0, 100.0], [100.0, 100.0, 0.0], [0.0, 1.0, 1.0],
                                  0.05, [0.2, 0.0, 0.2], device="cpu")
    np.testing.assert_allclose(prices, [10.0, max(90 - 100 * np.exp(-0.05), 0), 100.0],
                               atol=1e-12)


def test_black_scholes_checks_host_terms_as_a_csv_book():
    with pytest.raises(ValueError, match=r"black_scholes: strike\[1\]: must be >= 0, got -1$"):
        gpukit.black_scholes([100.0, 100.0], [100.0, -1.0], 1.0, 0.0, 0.2, device="cpu")
    with pytest.raises(ValueError, match=r"spot\[0, 1\]: must be > 0, got 0"):
        gpukit.black_scholes([[1.0, 0.0]], 100.0, 1.0, 0.0, 0.2, device="cpu")
    with pytest.raises(ValueError, match=r"black_scholes: volatility: must be >= 0, got -0.2"):
        gpukit.black_scholes(100.0, 100.0, 1.0, 0.0, -0.2, device="cpu")
    with pytest.raises(ValueError, match="maturity.*must be finite, got nan"):
        gpukit.black_scholes(100.0, 100.0, np.nan, 0.0, 0.2, device="cpu")


def test_float_terms_beyond_floats_range_are_refused_naming_the_argument():
    # Issue 30: precision="float" rounded 1e39 to an infinity and returned inf or nan prices.
    import pandas as pd

    import warnings

    beyond = "out of the range of a float"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before numpy's cast to float32 could overflow
        with pytest.raises(ValueError, match=rf"black_scholes: spot\[1\]: {beyond}"):
            gpukit.black_scholes([100.0, 1e39], 100.0, 1.0, 0.05, 0.2, precision="float",
                                 device="cpu")
    assert np.all(np.isfinite(gpukit.black_scholes([100.0, 1e39], 100.0, 1.0, 0.05, 0.2,
                                                   device="cpu")))
    with pytest.raises(ValueError, match=rf"monte_carlo: rate: {beyond} .*, got -1e\+39$"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, -1e39, 0.2, precision="float", paths=64,
                           device="cpu")
    with pytest.raises(ValueError, match=r"monte_carlo: barrier: rounds to 0 in float"):
        gpukit.monte_carlo([100.0], 100.0, 1.0, 0.05, 0.2, barrier=1e-50,
                           barrier_type="down-out", steps=4, precision="float", paths=64,
                           device="cpu")
    df = pd.DataFrame({"type": ["c", "p"], "spot": [100.0, 100.0], "strike": [100.0, 4e38],
                       "maturity": [1.0, 1.0]}, index=["x", "y"])
    for method in ("black_scholes", "monte_carlo"):
        with pytest.raises(ValueError, match=rf"price_book: row 1 \(index 'y'\): strike: {beyond}"):
            gpukit.price_book(df, method, rate=0.01, volatility=0.2, precision="float",
                              device="cpu", **({"paths": 64} if method == "monte_carlo" else {}))


def test_prices_that_overflow_the_arithmetic_are_refused_as_the_cli_refuses_them():
    # Terms within float's range can still overflow it: a rate of -100 discounts by e^100, and
    # black_scholes and monte_carlo returned inf or nan where gpukit bs and mc exit 3
    # (io::find_non_finite_output, one rule for both front doors).
    import pandas as pd

    message = (r"the terms are beyond what float arithmetic can price \(precision='double' "
               r"may\)$")
    with pytest.raises(ValueError, match=r"^black_scholes: option \[1\]: price is infinite in "
                                         r"float: " + message):
        gpukit.black_scholes(100.0, 100.0, 1.0, [0.05, -100.0], 0.2, put=True, precision="float",
                             device="cpu")
    with pytest.raises(ValueError, match=r"^black_scholes: the option: price is infinite"):
        gpukit.black_scholes(100.0, 100.0, 1.0, -100.0, 0.2, put=True, precision="float",
                             device="cpu")
    with pytest.raises(ValueError, match=r"^monte_carlo: option \[0\]: price is infinite in "
                                         r"float: " + message):
        gpukit.monte_carlo([100.0], 100.0, 1.0, -100.0, 0.2, put=True, precision="float",
                           paths=64, device="cpu")
    book = pd.DataFrame({"type": ["c", "p"], "spot": [100.0, 100.0], "strike": [100.0, 100.0],
                         "maturity": [1.0, 1.0], "rate": [0.05, -100.0]}, index=["x", "y"])
    with pytest.raises(ValueError, match=r"^price_book: row 1 \(index 'y'\): price is infinite "
                                         r"in float: " + message):
        gpukit.price_book(book, volatility=0.2, precision="float", device="cpu")
    # In double the same terms price (e^100 fits a double), as `gpukit bs` prices them.
    assert gpukit.black_scholes(100.0, 100.0, 1.0, -100.0, 0.2, put=True, device="cpu") > 0
    assert np.isfinite(gpukit.price_book(book, volatility=0.2, device="cpu").price).all()


def test_monte_carlo_warns_about_rows_without_a_paying_path_and_barriers_breached_at_start():
    # Issue 30: as gpukit mc says on stderr (deep out-of-the-money rows came out as price 0,
    # std_error 0, ci [0, 0] unremarked; a down-out at 110 on a spot of 100 priced silently).
    import pandas as pd
    import warnings

    with pytest.warns(RuntimeWarning) as record:
        result = gpukit.monte_carlo(100.0, [100.0, 400.0, 100.0], [1.0, 0.1, 1.0], 0.05, 0.2,
                                    barrier=[0.0, 0.0, 110.0],
                                    barrier_type=["none", "none", "down-out"], steps=[1, 1, 12],
                                    paths=2000, device="cpu")
    messages = [str(w.message) for w in record]
    assert ("monte_carlo: barrier[2]: the down-out barrier 110 is breached at the start (spot "
            "100): the option is priced as knocked out (price 0)") in messages, messages
    assert any(m.startswith("monte_carlo: 1 of 3 options had no paying path among their 2000 "
                            "paths (price[1]): their price, std_error and ci are 0, which is no "
                            "confidence interval") for m in messages), messages
    assert set(result) == {"price", "std_error", "ci_low", "ci_high", "paths"}
    assert result["ci_high"][1] == 0 and result["price"][2] == 0

    df = pd.DataFrame({"type": ["c", "c", "p"], "spot": [100.0] * 3,
                       "strike": [100.0, 400.0, 100.0], "maturity": [1.0, 0.1, 1.0],
                       "barrier": [None, None, 110.0], "barrier_type": ["", "", "down-out"],
                       "steps": [None, None, 12]}, index=["a", "b", "c"])
    with pytest.warns(RuntimeWarning) as record:
        priced = gpukit.price_book(df, "monte_carlo", rate=0.05, volatility=0.2, paths=2000,
                                   device="cpu")
    messages = [str(w.message) for w in record]
    assert ("price_book: row 2 (index 'c'): barrier: the down-out barrier 110 is breached at the "
            "start (spot 100): the option is priced as knocked out (price 0)") in messages, messages
    assert any(m.startswith("price_book: 1 of 3 options had no paying path among their 2000 paths "
                            "(row 1 (index 'b')): ") for m in messages), messages
    assert "_no_paying_path" not in priced.columns
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a book without such rows says nothing
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.05, 0.2, paths=2000, device="cpu")


@pytest.mark.parametrize("put", [False, True])
def test_monte_carlo_agrees_with_black_scholes_within_its_standard_error(put):
    spot = np.array([80.0, 100.0, 120.0])
    result = gpukit.monte_carlo(spot, 100.0, 1.0, 0.03, 0.25, put=put, paths=1 << 17, seed=11,
                                device="cpu")
    assert set(result) == {"price", "std_error", "ci_low", "ci_high", "paths"}
    exact = gpukit.black_scholes(spot, 100.0, 1.0, 0.03, 0.25, put=put, device="cpu")
    assert np.all(np.abs(result["price"] - exact) < 4 * result["std_error"])
    np.testing.assert_array_equal(result["paths"], 1 << 17)
    np.testing.assert_allclose(result["ci_high"] - result["ci_low"], 2 * 1.96 * result["std_error"],
                               rtol=1e-12)


def test_monte_carlo_sobol_sampler_agrees_with_black_scholes_and_refuses_what_it_cannot():
    spot = np.array([80.0, 100.0, 120.0])
    args = dict(put=True, paths=1 << 16, seed=3, device="cpu")
    sobol = gpukit.monte_carlo(spot, 100.0, 1.0, 0.03, 0.25, sampler="sobol", replicates=16,
                               **args)
    philox = gpukit.monte_carlo(spot, 100.0, 1.0, 0.03, 0.25, **args)
    exact = gpukit.black_scholes(spot, 100.0, 1.0, 0.03, 0.25, put=True, device="cpu")
    assert np.all(np.abs(sobol["price"] - exact) < 4 * sobol["std_error"])
    # The scrambled points' error bar at equal paths, far below the pseudo-random one's.
    assert np.all(sobol["std_error"] < 0.25 * philox["std_error"])
    with pytest.raises(ValueError, match="sampler"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.03, 0.25, sampler="halton", device="cpu")
    with pytest.raises(ValueError, match="replicates"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.03, 0.25, sampler="sobol", replicates=1,
                           device="cpu")
    with pytest.raises(ValueError, match="multiple"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.03, 0.25, sampler="sobol", replicates=3,
                           paths=1 << 10, device="cpu")


def test_monte_carlo_greeks_are_delta_gamma_and_vega():
    import pandas as pd

    # Pathwise delta and vega, gamma the difference of pathwise deltas at spot +- 1%: at 2^16
    # paths their standard errors at the money are about 0.0025, 4.1e-4 and 0.2 (the lognormal
    # second moments of tests/finance/monte_carlo_greeks_test.cpp), the bounds about 4 of them.
    mc = gpukit.monte_carlo(100.0, [95.0, 100.0, 105.0], 1.0, 0.05, 0.2, greeks=True,
                            paths=1 << 16, device="cpu")
    bs = gpukit.black_scholes(100.0, [95.0, 100.0, 105.0], 1.0, 0.05, 0.2, greeks=True,
                              device="cpu")
    np.testing.assert_allclose(mc["delta"], bs["delta"], atol=0.01)
    np.testing.assert_allclose(mc["gamma"], bs["gamma"], atol=0.002)
    np.testing.assert_allclose(mc["vega"], bs["vega"], atol=1.0)
    priced = gpukit.price_book(pd.DataFrame({"type": ["call"], "spot": [100.0],
                                             "strike": [100.0], "maturity": [1.0]}),
                               "monte_carlo", rate=0.05, volatility=0.2, greeks=True,
                               paths=1 << 16, device="cpu")
    assert list(priced.columns[-3:]) == ["delta", "gamma", "vega"]
    alone = gpukit.monte_carlo(100.0, 100.0, 1.0, 0.05, 0.2, greeks=True, paths=1 << 16,
                               device="cpu")  # row 0: the same random numbers
    assert priced["gamma"][0] == float(alone["gamma"])


def test_monte_carlo_options_and_determinism():
    args = dict(paths=1 << 12, seed=5, device="cpu")
    a = gpukit.monte_carlo(100.0, [90.0, 110.0], 0.5, 0.01, 0.3, antithetic=True,
                           control_variate=True, greeks=True, **args)
    assert {"delta", "gamma", "vega", "vrf_antithetic", "vrf_control"} <= set(a)
    b = gpukit.monte_carlo(100.0, [90.0, 110.0], 0.5, 0.01, 0.3, antithetic=True,
                           control_variate=True, greeks=True, **args)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    # A row's numbers follow its key, not its neighbours.
    alone = gpukit.monte_carlo(100.0, [90.0], 0.5, 0.01, 0.3, antithetic=True,
                               control_variate=True, greeks=True, **args)
    assert alone["price"][0] == a["price"][0]
    keyed = gpukit.monte_carlo(100.0, [110.0, 90.0], 0.5, 0.01, 0.3, ids=["T2", "T1"], **args)
    swapped = gpukit.monte_carlo(100.0, [90.0, 110.0], 0.5, 0.01, 0.3, ids=["T1", "T2"], **args)
    np.testing.assert_array_equal(keyed["price"], swapped["price"][::-1])
    with pytest.raises(ValueError, match="paths"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.0, 0.2, paths=1, device="cpu")
    with pytest.raises(ValueError, match=r"barrier_type\[0\]: expected none, down-out"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.0, 0.2, barrier=[90.0], barrier_type=["sideways"],
                           steps=12, device="cpu")
    with pytest.raises(ValueError, match=r"barrier\[0\]: must be > 0, got -90"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.0, 0.2, barrier=[-90.0], barrier_type="down-out",
                           steps=12, device="cpu")
    with pytest.raises(ValueError, match=r"steps: expected an integer in \[1, 1048576\]"):
        gpukit.monte_carlo(100.0, 100.0, 1.0, 0.0, 0.2, barrier=90.0, barrier_type="down-out",
                           steps=2.5, device="cpu")


def test_knock_in_plus_knock_out_is_the_vanilla():
    terms = dict(paths=1 << 14, seed=3, device="cpu", steps=52)
    vanilla = gpukit.monte_carlo(100.0, 100.0, 1.0, 0.02, 0.3, **terms)["price"]
    out = gpukit.monte_carlo(100.0, 100.0, 1.0, 0.02, 0.3, barrier=85.0, barrier_type="down-out",
                             **terms)["price"]
    into = gpukit.monte_carlo(100.0, 100.0, 1.0, 0.02, 0.3, barrier=85.0, barrier_type="down-in",
                              **terms)["price"]
    np.testing.assert_allclose(out + into, vanilla, rtol=1e-12)


BOOK_CSV = """id,type,spot,strike,maturity,rate,volatility,dividend,barrier,barrier_type,steps,desk
T1,call,100,95,1,0.01,0.2,0.01,,,,rates
T2,put,101.5,110,2,0.02,0.35,0,90,down-out,24,fx
T3,c,99,100,0.5,0.015,0.25,0.02,120,up-in,12,eq
T4,P,100,100,0,0.01,0.2,0,,none,,eq
T5,call,50,40,3,0.03,0.5,0,70,up-out,36,eq
T6,put,75,80,0.25,0,0.4,0.01,,,,fx
"""


def read_priced(path):
    """A priced book the CLI wrote, every field as text; number() reads a column of it exactly
    (Python's float() of the shortest text the CLI writes is the very double)."""
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False)


def number(frame, column) -> np.ndarray:
    return np.array([float(v) for v in frame[column]])


def run_cli(cli, tmp_path, args, csv=BOOK_CSV):
    (tmp_path / "book.csv").write_text(csv)
    subprocess.run([cli, "-q", *args, "-i", str(tmp_path / "book.csv"), "-o",
                    str(tmp_path / "out.csv"), "--device", "cpu"], check=True)
    import pandas as pd

    return read_priced(tmp_path / "out.csv")


@pytest.mark.parametrize("options", [
    {}, {"antithetic": True}, {"control_variate": True, "greeks": True},
    {"monitoring": "continuous", "antithetic": True, "precision": "float"},
    {"sampler": "sobol", "replicates": 8, "antithetic": True}])
def test_monte_carlo_has_the_bits_of_gpukit_mc(cli, tmp_path, options):
    import pandas as pd

    flags = ["mc", "--paths", "4096", "--seed", "77"]
    for name, value in options.items():
        flags += [f"--{name.replace('_', '-')}"] + ([] if value is True else [str(value)])
    expected = run_cli(cli, tmp_path, flags)
    # Every field as text, as the CLI reads it (pandas' own float parser need not round
    # the decimals as from_chars does).
    book = pd.read_csv(io.StringIO(BOOK_CSV), dtype=str, keep_default_na=False)
    as_number = lambda c: pd.to_numeric(book[c].replace("", np.nan))  # noqa: E731
    got = gpukit.monte_carlo(
        number(book, "spot"), number(book, "strike"), number(book, "maturity"),
        number(book, "rate"), number(book, "volatility"), number(book, "dividend"),
        put=book.type.str.lower().str.startswith("p").to_numpy(),
        barrier=np.nan_to_num(as_number("barrier").to_numpy(), nan=0.0),
        barrier_type=book.barrier_type.replace("", "none").to_numpy(),
        steps=np.nan_to_num(as_number("steps").to_numpy(), nan=1.0).astype(int),
        paths=4096, seed=77, ids=book.id.to_list(), device="cpu", **options)
    # In float precision the CLI writes the float of each estimate (its shortest text).
    written_as_float = {"price", "std_error", "ci_low", "ci_high", "delta", "gamma", "vega"} \
        if options.get("precision") == "float" else set()

    def as_written(column, values):
        return values.astype(np.float32) if column in written_as_float else values

    for column in got:
        np.testing.assert_array_equal(as_written(column, got[column]),
                                      as_written(column, number(expected, column)),
                                      err_msg=column)
    # The DataFrame way: the CSV's own columns, as `gpukit mc` reads them.
    priced = gpukit.price_book(book, "monte_carlo", paths=4096, seed=77, device="cpu", **options)
    for column in got:
        np.testing.assert_array_equal(as_written(column, priced[column].to_numpy(float)),
                                      as_written(column, number(expected, column)),
                                      err_msg=column)
    assert list(priced.columns[:12]) == list(book.columns)
    assert priced["paths"].dtype == np.int64


EUROPEAN_CSV = """Type , Spot,strike,maturity,desk
call,100,95,1,a
put,101.5,110,2,b
c,99,100,0.5,c
P,100,100,0,d
call,50,0,3,e
"""


@pytest.mark.parametrize("precision", ["double", "float"])
def test_price_book_has_the_prices_of_gpukit_bs(cli, tmp_path, precision):
    import pandas as pd

    expected = run_cli(cli, tmp_path, ["bs", "--greeks", "--rate", "0.02", "--volatility", "0.3",
                                       "--precision", precision], EUROPEAN_CSV)
    book = pd.read_csv(io.StringIO(EUROPEAN_CSV))
    priced = gpukit.price_book(book, rate=0.02, volatility=0.3, greeks=True, precision=precision,
                               device="cpu")
    for column in ("price", "delta", "gamma", "vega", "theta", "rho"):
        got = priced[column].to_numpy()
        if precision == "float":  # the CLI writes the float's shortest text
            got = got.astype(np.float32)
        np.testing.assert_array_equal(got, number(expected, column).astype(got.dtype),
                                      err_msg=column)
    pd.testing.assert_frame_equal(priced[book.columns], book)  # the input is passed through


def test_price_book_replaces_output_columns_and_reads_like_the_csv_reader():
    import pandas as pd

    book = pd.DataFrame({"TYPE": ["c", "put"], "spot": [100, 100], "strike": ["95", 105.0],
                         "maturity": [1.0, 1.0], "Price": [0.0, 0.0]}, index=["a", "b"])
    priced = gpukit.price_book(book, rate=0.01, volatility=0.2, device="cpu")
    assert list(priced.columns) == ["TYPE", "spot", "strike", "maturity", "Price"]
    expected = gpukit.black_scholes([100.0, 100.0], [95.0, 105.0], 1.0, 0.01, 0.2,
                                    put=[False, True], device="cpu")
    np.testing.assert_array_equal(priced["Price"].to_numpy(), expected)
    assert (book["Price"] == 0).all()  # the caller's frame is not changed


@pytest.mark.parametrize("frame, keywords, message", [
    ({"type": ["c", "c"], "spot": [100, 100], "strike": [100, -1], "maturity": [1, 1]},
     {}, r"price_book: row 1 \(index 'y'\): strike: must be >= 0, got -1$"),
    ({"type": ["c", "x"], "spot": [100, 100], "strike": [100, 1], "maturity": [1, 1]},
     {}, r"row 1 \(index 'y'\): type: expected call, put, c or p, got \"x\""),
    ({"type": ["c", "c"], "spot": [100, "abc"], "strike": [100, 1], "maturity": [1, 1]},
     {}, r"row 1 \(index 'y'\): spot: expected a number, got 'abc'"),
    ({"type": ["c", "c"], "spot": [100, None], "strike": [100, 1], "maturity": [1, 1]},
     {}, r"row 1 \(index 'y'\): spot: empty field, expected a number"),
    ({"type": ["c", "c"], "spot": [100, 1], "maturity": [1, 1]},
     {}, r"price_book: strike: required column is missing; the columns are type, spot, "
         r"maturity$"),
    ({"type": ["c", "c"], "spot": [100, 1], "Strike Price": [1, 1], "T": [1, 1]},
     {}, r"price_book: strike: required column is missing; the columns are type, spot, "
         r"Strike Price, T: is \"Strike Price\" meant to be \"strike\"\?$"),
    ({"type": ["c", "c"], "spot": [100, 1], "strike": [1, 1], "maturity": [1, 1], "vol": [0, 0]},
     {"volatility": None}, r"price_book: volatility: required column is missing \(or give "
                           r"volatility=\); the columns are type, spot, strike, maturity, vol: "
                           r"is \"vol\" meant to be \"volatility\"\?$"),
    ({"type": ["c", "c"], "spot": [100, 1], "strike": [1, 1], "maturity": [1, 1], "rate": [0, 0]},
     {"rate": 0.01}, r"price_book: rate: rate is both a column and rate=; give one"),
    ({"type": ["c"], "spot": [1], "strike": [1], "maturity": [1], "SPOT": [2]},
     {}, r"price_book: SPOT: duplicate column \(also column 2\)"),
])
def test_price_book_errors_name_the_row_and_the_column(frame, keywords, message):
    import pandas as pd

    df = pd.DataFrame(frame, index=["x", "y"][:len(frame["type"])])
    arguments = {"rate": 0.01, "volatility": 0.2}
    arguments.update(keywords)
    with pytest.raises(ValueError, match=message):
        gpukit.price_book(df, device="cpu", **arguments)


def test_price_book_monte_carlo_barrier_rules():
    import pandas as pd

    base = {"type": ["c", "c"], "spot": [100, 100], "strike": [100, 100], "maturity": [1, 1],
            "rate": [0.01, 0.01], "volatility": [0.2, 0.2]}
    with pytest.raises(ValueError, match=r"barrier_type: required column is missing \(the barrier"):
        gpukit.price_book(pd.DataFrame({**base, "barrier": [90, 90]}), "monte_carlo", paths=64)
    with pytest.raises(ValueError, match=r"row 1 \(index 1\): steps: required column is missing"):
        gpukit.price_book(pd.DataFrame({**base, "barrier": [None, 90],
                                        "barrier_type": [None, "down-in"]}), "monte_carlo",
                          paths=64, device="cpu")
    with pytest.raises(ValueError, match=r"row 0 \(index 0\): barrier: empty field, a barrier"):
        gpukit.price_book(pd.DataFrame({**base, "barrier": [None, 90], "steps": [12, 12],
                                        "barrier_type": ["up-out", "down-in"]}), "monte_carlo",
                          paths=64, device="cpu")
