"""gpukit.implied_volatility and price_book(df, "implied_volatility") on host arrays (issue 32):
the round trip with black_scholes within the bound the price's error and the vega give, every
status, bad input named by its Python argument, NumPy broadcasting, float precision, the three
models, pandas frames read as `gpukit iv` reads a CSV book (and its bits). CuPy and PyTorch
arrays: test_gpu.py; device lists and mpirun: test_scale_out.py."""

from __future__ import annotations

import io
import subprocess

import numpy as np
import pytest
from scipy.stats import norm

import gpukit

from test_finance import number, price_scale, read_priced

OK, BELOW, ABOVE, ZERO_MATURITY, INVALID = range(5)


def quotes(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Terms a real book spreads over, every price carrying its volatility: strikes within 3
    standard deviations of the forward (K = F e^{z v sqrt(T)}, |z| <= 3), maturities from a day
    to 30 years, volatilities from 1% to 300%."""
    spot = rng.uniform(5, 200, n)
    maturity = np.exp(rng.uniform(np.log(1 / 365), np.log(30), n))
    volatility = np.exp(rng.uniform(np.log(0.01), np.log(3), n))
    rate, dividend = rng.uniform(-0.01, 0.1, n), rng.uniform(0, 0.05, n)
    forward = spot * np.exp((rate - dividend) * maturity)
    return dict(spot=spot, strike=forward * np.exp(rng.uniform(-3, 3, n) * volatility *
                                                   np.sqrt(maturity)),
                maturity=maturity, rate=rate, volatility=volatility, dividend=dividend,
                put=rng.integers(0, 2, n).astype(bool))


def scipy_vega(spot, strike, maturity, rate, volatility, dividend):
    """The Black-Scholes vega through scipy.stats.norm: S e^{-qT} sqrt(T) n(d1)."""
    s = volatility * np.sqrt(maturity)
    d1 = (np.log(spot / strike) + (rate - dividend) * maturity) / s + s / 2
    return spot * np.exp(-dividend * maturity) * np.sqrt(maturity) * norm.pdf(d1)


def recovery_bound(book, dtype=np.float64) -> np.ndarray:
    """What the volatility of a price black_scholes computed in `dtype` can be known to: the
    price's error bound (black_scholes_price_bound: 64 eps of the option's scale) and the
    inversion's (a few eps of the same scale, in the same dtype), over the vega."""
    eps = np.finfo(dtype).eps
    return 2 * 64 * eps * price_scale(book) / scipy_vega(
        book["spot"], book["strike"], book["maturity"], book["rate"], book["volatility"],
        book["dividend"])


@pytest.mark.parametrize("n", [1, 31, 33, 1023, 1025])
def test_black_scholes_prices_round_trip_to_their_volatilities(rng, n):
    book = quotes(rng, n)
    terms = {k: book[k] for k in ("strike", "maturity", "rate")}
    price = gpukit.black_scholes(book["spot"], **terms, volatility=book["volatility"],
                                 dividend=book["dividend"], put=book["put"], device="cpu")
    volatility, status = gpukit.implied_volatility(price, **terms, spot=book["spot"],
                                                   dividend=book["dividend"], put=book["put"],
                                                   device="cpu")
    assert volatility.dtype == np.float64 and volatility.shape == (n,)
    assert status.dtype == np.uint8 and status.shape == (n,)
    np.testing.assert_array_equal(status, np.full(n, OK))
    error = np.abs(volatility - book["volatility"])
    bound = recovery_bound(book)
    assert np.all(error <= bound), error / bound
    if n > 1:  # not vacuous: for most rows the bound is tight, a wrong volatility would fail it
        assert np.mean(bound <= 1e-9 * book["volatility"]) >= 0.5


def test_float_precision_inverts_in_float(rng):
    book = quotes(rng, 4097)
    terms = {k: book[k].astype(np.float32) for k in ("spot", "strike", "maturity", "rate",
                                                      "dividend")}
    price = gpukit.black_scholes(**terms, volatility=book["volatility"].astype(np.float32),
                                 put=book["put"], precision="float", device="cpu")
    assert price.dtype == np.float32
    spot = terms.pop("spot")
    # None: the precision of a float32 price.
    volatility, status = gpukit.implied_volatility(price, **terms, spot=spot, put=book["put"],
                                                   device="cpu")
    assert volatility.dtype == np.float32
    rounded = {k: v.astype(np.float64) for k, v in dict(terms, spot=spot).items()}
    rounded["volatility"] = book["volatility"].astype(np.float32).astype(np.float64)
    recovered = status == OK
    # Prices beyond the float's resolution of a no-arbitrage bound may come back as bound
    # statuses; every other one is recovered within the float bound.
    assert np.mean(recovered) >= 0.9
    bound = recovery_bound(rounded, np.float32)
    error = np.abs(volatility.astype(np.float64) - rounded["volatility"])
    assert np.all(error[recovered] <= bound[recovered])
    explicit, _ = gpukit.implied_volatility(price.astype(np.float64), **terms, spot=spot,
                                            put=book["put"], precision="float", device="cpu")
    np.testing.assert_array_equal(explicit, volatility)


def test_every_status_and_the_names_of_the_codes():
    assert gpukit.iv_status_names == ("ok", "below-intrinsic", "above-maximum", "zero-maturity",
                                      "invalid-input")
    # rate 0: discount 1. At the money; a worthless call (at its intrinsic value, 0); below
    # intrinsic; at the call's bound (the forward); above the put's (the strike); zero maturity;
    # a worthless put.
    price = np.array([8.0, 0.0, 19.5, 100.0, 95.0, 1.0, 0.0])
    strike = np.array([100.0, 150.0, 120.0, 90.0, 90.0, 100.0, 50.0])
    maturity = np.array([1.0, 1.0, 1.0, 1.0, 0.5, 0.0, 1.0])
    put = np.array([False, False, True, False, True, False, True])
    volatility, status = gpukit.implied_volatility(price, strike, maturity, spot=100.0, put=put,
                                                   device="cpu")
    np.testing.assert_array_equal(status, [OK, OK, BELOW, ABOVE, ABOVE, ZERO_MATURITY, OK])
    assert 0.19 < volatility[0] < 0.21
    assert volatility[1] == 0 and volatility[6] == 0  # at intrinsic: volatility 0
    assert np.all(np.isnan(volatility[2:6]))
    words = np.asarray(gpukit.iv_status_names)[status]
    assert list(words) == ["ok", "ok", "below-intrinsic", "above-maximum", "above-maximum",
                           "zero-maturity", "ok"]


def test_arguments_broadcast_like_numpy():
    strike = np.array([[90.0], [100.0], [110.0]])  # (3, 1)
    maturity = np.array([0.5, 1.0])  # (2,)
    price = gpukit.black_scholes(100.0, strike, maturity, 0.02, 0.25, device="cpu")
    assert price.shape == (3, 2)
    volatility, status = gpukit.implied_volatility(price, strike, maturity, 0.02, spot=100.0,
                                                   device="cpu")
    assert volatility.shape == (3, 2) and status.shape == (3, 2)
    np.testing.assert_allclose(volatility, 0.25, rtol=1e-12)
    # Scalars alone: arrays of shape ().
    one, code = gpukit.implied_volatility(float(price[1, 1]), 100.0, 1.0, 0.02, spot=100.0,
                                          device="cpu")
    assert one.shape == () and code.shape == () and int(code) == OK
    with pytest.raises(ValueError, match=r"implied_volatility: the arguments do not broadcast"):
        gpukit.implied_volatility(np.ones(3), np.ones(2), 1.0, spot=1.0)


def test_put_takes_the_words_of_the_type_column():
    price = gpukit.black_scholes(100.0, [90.0, 110.0], 1.0, 0.01, 0.3, put=[False, True],
                                 device="cpu")
    volatility, status = gpukit.implied_volatility(price, [90.0, 110.0], 1.0, 0.01, spot=100.0,
                                                   put=["call", "P"], device="cpu")
    np.testing.assert_allclose(volatility, 0.3, rtol=1e-12)
    with pytest.raises(ValueError, match=r"implied_volatility: put\[1\]: expected True or False"):
        gpukit.implied_volatility(price, [90.0, 110.0], 1.0, spot=100.0, put=["call", "x"])


def black76_price(forward, strike, maturity, rate, volatility, put):
    s = volatility * np.sqrt(maturity)
    d1 = np.log(forward / strike) / s + s / 2
    call = np.exp(-rate * maturity) * (forward * norm.cdf(d1) - strike * norm.cdf(d1 - s))
    return np.where(put, call - np.exp(-rate * maturity) * (forward - strike), call)


def bachelier_price(forward, strike, maturity, rate, volatility, put):
    s = volatility * np.sqrt(maturity)
    d = (forward - strike) / s
    call = np.exp(-rate * maturity) * ((forward - strike) * norm.cdf(d) + s * norm.pdf(d))
    return np.where(put, call - np.exp(-rate * maturity) * (forward - strike), call)


@pytest.mark.parametrize("model", ["black76", "bachelier"])
def test_the_forward_models(rng, model):
    n = 513
    forward = rng.uniform(50, 150, n)
    maturity = rng.uniform(0.05, 5, n)
    rate = rng.uniform(0, 0.05, n)
    put = rng.integers(0, 2, n).astype(bool)
    if model == "black76":
        volatility = rng.uniform(0.05, 1.0, n)
        strike = forward * np.exp(rng.uniform(-2, 2, n) * volatility * np.sqrt(maturity))
        price = black76_price(forward, strike, maturity, rate, volatility, put)
        vega = np.exp(-rate * maturity) * forward * np.sqrt(maturity) * norm.pdf(
            np.log(forward / strike) / (volatility * np.sqrt(maturity))
            + volatility * np.sqrt(maturity) / 2)
    else:
        volatility = rng.uniform(1, 40, n)  # normal volatilities, in price units
        strike = np.maximum(forward + rng.uniform(-2, 2, n) * volatility * np.sqrt(maturity), 1)
        price = bachelier_price(forward, strike, maturity, rate, volatility, put)
        vega = np.exp(-rate * maturity) * np.sqrt(maturity) * norm.pdf(
            (forward - strike) / (volatility * np.sqrt(maturity)))
    got, status = gpukit.implied_volatility(price, strike, maturity, rate, forward=forward,
                                            put=put, model=model, device="cpu")
    np.testing.assert_array_equal(status, np.full(n, OK))
    # scipy's price has a few ulps of error relative to the option's scale: over the vega.
    bound = 64 * np.finfo(np.float64).eps * (forward + strike) / vega
    assert np.all(np.abs(got - volatility) <= bound)


def test_bad_input_names_the_python_argument():
    def refused(call, kind=ValueError) -> str:
        with pytest.raises(kind) as error:
            call()
        return str(error.value)

    iv = gpukit.implied_volatility
    assert refused(lambda: iv([1.0, -1.0], 100.0, 1.0, spot=100.0)) == \
        "implied_volatility: price[1]: must be >= 0, got -1"
    assert refused(lambda: iv(1.0, [[100.0, -5.0]], 1.0, spot=100.0)) == \
        "implied_volatility: strike[0, 1]: must be >= 0, got -5"
    assert refused(lambda: iv(1.0, 100.0, -1.0, spot=100.0)) == \
        "implied_volatility: maturity: must be >= 0, got -1"
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=0.0)) == \
        "implied_volatility: spot: must be > 0, got 0"
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=100.0, dividend=np.nan)) == \
        "implied_volatility: dividend: must be finite, got nan"
    assert refused(lambda: iv(1.0, 100.0, 1.0, forward=100.0, model="black76",
                              dividend=0.01)) == \
        "implied_volatility: dividend: a book of forwards takes no dividend (the forward holds it)"
    assert refused(lambda: iv(1e39, 100.0, 1.0, spot=100.0, precision="float")).startswith(
        "implied_volatility: price: out of the range of a float")
    assert refused(lambda: iv(1.0, 100.0, 1.0, forward=100.0)) == \
        "implied_volatility: model='black-scholes' inverts on the spot: give spot=, not forward="
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=100.0, model="bachelier")) == \
        "implied_volatility: model='bachelier' inverts on the forward: give forward=, not spot="
    assert refused(lambda: iv(1.0, 100.0, 1.0)) == \
        "implied_volatility: model='black-scholes' needs spot="
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=100.0, model="heston")) == \
        "model must be black-scholes, black76 or bachelier, got 'heston'"
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=100.0, model=3), TypeError).startswith(
        "model must be a string")
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=100.0, precision="half")) == \
        "precision must be double or float, got 'half'"
    assert refused(lambda: iv("1", 100.0, 1.0, spot=100.0), TypeError).startswith(
        "price must be a number")
    assert refused(lambda: iv(1.0, 100.0, 1.0, spot=100.0, device="gpu")) == \
        "device must be auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,..., got 'gpu'"


def test_the_cpu_device_and_auto_agree_bit_for_bit_without_a_gpu(rng):
    if gpukit.devices():
        pytest.skip("auto takes the GPU here: test_gpu.py compares the two")
    book = quotes(rng, 101)
    price = gpukit.black_scholes(book["spot"], book["strike"], book["maturity"], book["rate"],
                                 book["volatility"], book["dividend"], book["put"], device="cpu")
    args = (price, book["strike"], book["maturity"], book["rate"])
    keywords = dict(spot=book["spot"], dividend=book["dividend"], put=book["put"])
    cpu = gpukit.implied_volatility(*args, **keywords, device="cpu")
    auto = gpukit.implied_volatility(*args, **keywords)
    np.testing.assert_array_equal(cpu[0], auto[0])
    np.testing.assert_array_equal(cpu[1], auto[1])


QUOTES_CSV = """id,type,spot,strike,maturity,rate,price,desk
A,call,100,100,1,0.01,8.5,eq
B,put,100,120,1,0.01,15,eq
C,c,100,90,0,0.01,10.5,fx
D,P,100,80,0.5,0.01,0.75,fx
E,call,100,50,2,0.01,99.5,eq
"""


@pytest.mark.parametrize("precision", ["double", "float"])
def test_price_book_has_the_volatilities_and_statuses_of_gpukit_iv(cli, tmp_path, precision):
    import pandas as pd

    (tmp_path / "quotes.csv").write_text(QUOTES_CSV)
    subprocess.run([cli, "-q", "iv", "--precision", precision, "-i", str(tmp_path / "quotes.csv"),
                    "-o", str(tmp_path / "out.csv"), "--device", "cpu"], check=True)
    expected = read_priced(tmp_path / "out.csv")
    book = pd.read_csv(io.StringIO(QUOTES_CSV), dtype=str, keep_default_na=False)
    inverted = gpukit.price_book(book, "implied_volatility", precision=precision, device="cpu")
    got = inverted["implied_volatility"].to_numpy()
    if precision == "float":  # the CLI writes the float's shortest text
        got = got.astype(np.float32)
    np.testing.assert_array_equal(got, number(expected, "implied_volatility").astype(got.dtype))
    assert list(inverted["iv_status"].astype(str)) == list(expected["iv_status"])
    assert isinstance(inverted["iv_status"].dtype, pd.CategoricalDtype)
    assert list(inverted["iv_status"].cat.categories) == list(gpukit.iv_status_names)
    assert list(inverted.columns) == list(book.columns) + ["implied_volatility", "iv_status"]
    pd.testing.assert_frame_equal(inverted[book.columns], book)


def test_price_book_inverts_a_priced_frame_and_again_in_place():
    import pandas as pd

    frame = pd.DataFrame({"type": ["call", "put", "call"], "spot": [100.0, 90.0, 110.0],
                          "strike": [100.0, 95.0, 100.0], "maturity": [1.0, 0.5, 2.0],
                          "volatility": [0.2, 0.35, 0.5], "id": ["x", "y", "z"]})
    priced = gpukit.price_book(frame, rate=0.03, device="cpu")
    once = gpukit.price_book(priced, "implied_volatility", rate=0.03, device="cpu")
    np.testing.assert_allclose(once["implied_volatility"], frame["volatility"], rtol=1e-12)
    assert list(once["iv_status"]) == ["ok", "ok", "ok"]
    twice = gpukit.price_book(once, "implied_volatility", rate=0.03, device="cpu")
    assert list(twice.columns) == list(once.columns)  # replaced where they are
    np.testing.assert_array_equal(twice["implied_volatility"], once["implied_volatility"])
    # The quotes that admit no volatility are easy to list.
    spoilt = priced.assign(price=[0.0, 200.0, priced["price"][2]])
    flagged = gpukit.price_book(spoilt, "implied_volatility", rate=0.03, device="cpu")
    assert list(flagged.loc[flagged.iv_status != "ok", "id"]) == ["x", "y"]


def test_price_book_black76_on_forwards():
    import pandas as pd

    forward, strike, maturity, rate = 100.0, np.array([80.0, 100.0, 125.0]), 1.5, 0.02
    price = black76_price(forward, strike, maturity, rate, 0.3, np.array([True, False, False]))
    frame = pd.DataFrame({"Type": ["put", "call", "call"], "Forward": forward, "strike": strike,
                          "maturity": maturity, "price": price, "spot": "ignored"})
    inverted = gpukit.price_book(frame, "implied_volatility", rate=rate, model="black76",
                                 device="cpu")
    np.testing.assert_allclose(inverted["implied_volatility"], 0.3, rtol=1e-12)


@pytest.mark.parametrize("frame, keywords, message", [
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0]}, {"rate": 0.0},
     "price_book: price: required column is missing; the columns are type, spot, strike, "
     "maturity"),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": [-1.0]},
     {"rate": 0.0}, "price_book: row 0 (index 0): price: must be >= 0, got -1"),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": [1.0]},
     {}, "price_book: rate: required column is missing (or give rate=)"),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": ["x"]},
     {"rate": 0.0}, "price_book: row 0 (index 0): price: expected a number, got 'x'"),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": [1.0]},
     {"rate": 0.0, "model": "bachelier"},
     "price_book: forward: required column is missing (model='bachelier' inverts on the "
     "forward; a frame with a spot column is inverted with model='black-scholes')"),
    ({"type": ["call"], "forward": [100.0], "strike": [100.0], "maturity": [1.0],
      "price": [1.0]}, {"rate": 0.0, "model": "black76", "dividend": 0.01},
     "price_book: dividend=: a book of forwards takes no dividend (the forward holds it)"),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": [1.0]},
     {"rate": 0.0, "volatility": 0.2},
     "price_book: volatility= applies to method=\"black_scholes\" or \"monte_carlo\", not "
     "\"implied_volatility\""),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": [1.0]},
     {"rate": 0.0, "greeks": True}, "price_book: greeks= applies to method=\"black_scholes\""),
    ({"type": ["call"], "spot": [100.0], "strike": [100.0], "maturity": [1.0], "price": [1.0]},
     {"rate": 0.0, "model": "sabr"},
     "model must be black-scholes, black76 or bachelier, got 'sabr'"),
])
def test_price_book_errors_name_the_row_and_the_column(frame, keywords, message):
    import pandas as pd

    with pytest.raises(ValueError) as error:
        gpukit.price_book(pd.DataFrame(frame), "implied_volatility", device="cpu", **keywords)
    assert str(error.value).startswith(message), str(error.value)


def test_model_is_a_keyword_of_implied_volatility_only():
    import pandas as pd

    frame = pd.DataFrame({"type": ["call"], "spot": [100.0], "strike": [100.0],
                          "maturity": [1.0]})
    with pytest.raises(ValueError, match="price_book: model= applies to "
                                         "method=\"implied_volatility\", not \"black_scholes\""):
        gpukit.price_book(frame, rate=0.0, volatility=0.2, model="black76")
