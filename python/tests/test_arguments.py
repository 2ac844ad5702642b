"""Every public function's arguments: what each takes, and a refusal in the API's own words
naming the Python argument for anything else (never nanobind's signature dump of an internal
function, never a CLI flag, never a silent wrong result). Host arrays."""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import pytest

import gpukit

# nanobind's words when a value reaches a binding of the wrong type: they name internal functions
# (saxpy(), generate()) and must never reach a user.
SIGNATURE_DUMP = "incompatible function arguments"


def refused(call, error=(TypeError, ValueError)) -> str:
    """The message of the TypeError or ValueError `call` raises (a failure if it does not)."""
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert SIGNATURE_DUMP not in message, message
    assert "--" not in message, message  # no CLI flag
    return message


# ---- put: bools, 0 and 1, and the CSV book's words --------------------------------------------

TERMS = (100.0, 100.0, 1.0, 0.02, 0.3)


def prices(put, **keywords):
    return gpukit.black_scholes(np.full(2, 100.0), 100.0, 1.0, 0.02, 0.3, put=put, device="cpu",
                                **keywords)


def test_put_takes_the_csv_words_any_case_element_by_element():
    import pandas as pd

    call = gpukit.black_scholes(*TERMS, put=False, device="cpu")
    put = gpukit.black_scholes(*TERMS, put=True, device="cpu")
    assert call != put
    for word, expected in (("call", call), ("CALL", call), ("c", call), (" Call ", call),
                           ("put", put), ("Put", put), ("P", put), ("p", put)):
        assert gpukit.black_scholes(*TERMS, put=word, device="cpu") == expected, word
    np.testing.assert_array_equal(prices(["call", "P"]), [call, put])
    np.testing.assert_array_equal(prices(np.array(["put", "c"])), [put, call])
    # A pandas type column, as price_book reads one: each row its own side.
    book = pd.DataFrame({"type": ["call", "put"]})
    np.testing.assert_array_equal(prices(book.type), [call, put])
    np.testing.assert_array_equal(prices(book.type.astype("category")), [call, put])
    # Bools and 0/1, and a mixed object column.
    np.testing.assert_array_equal(prices([1, 0]), [put, call])
    np.testing.assert_array_equal(prices(np.array([0.0, 1.0])), [call, put])
    np.testing.assert_array_equal(prices(np.array([True, "call"], dtype=object)), [put, call])
    assert gpukit.black_scholes(*TERMS, put=1, device="cpu") == put
    assert gpukit.black_scholes(*TERMS, put=np.bool_(False), device="cpu") == call


@pytest.mark.parametrize("put, where, shown", [
    ("call?", "put", "'call?'"), ("False", "put", "'False'"), ("", "put", "''"),
    (0.5, "put", "0.5"), (np.nan, "put", "nan"), (2, "put", "2"), (None, "put", "None"),
    ([1, -1], r"put\[1\]", "-1"), (["call", "straddle"], r"put\[1\]", "'straddle'"),
    ([[True], [0.5]], r"put\[1, 0\]", "0.5"), (np.array([np.nan, 1.0]), r"put\[0\]", "nan"),
])
@pytest.mark.parametrize("pricer", ["black_scholes", "monte_carlo"])
def test_put_refuses_anything_else_in_both_pricers(pricer, put, where, shown):
    call = getattr(gpukit, pricer)
    extra = {"paths": 64} if pricer == "monte_carlo" else {}
    message = refused(lambda: call(np.full((2, 1), 100.0), 100.0, 1.0, 0.02, 0.3, put=put,
                                   device="cpu", **extra), ValueError)
    assert message.startswith(f"{pricer}: "), message
    import re

    assert re.search(rf"{where}: expected True or False, 1 or 0, or call, put, c or p, got "
                     rf"{re.escape(shown)}$", message), message


def test_monte_carlo_reads_put_as_black_scholes_does():
    terms = dict(paths=1 << 12, seed=3, device="cpu")
    as_bools = gpukit.monte_carlo([100.0] * 4, 100.0, 1.0, 0.02, 0.3,
                                  put=[False, True, True, False], **terms)
    as_words = gpukit.monte_carlo([100.0] * 4, 100.0, 1.0, 0.02, 0.3,
                                  put=["call", "put", "P", "c"], **terms)
    np.testing.assert_array_equal(as_words["price"], as_bools["price"])
    assert gpukit.monte_carlo(*TERMS, put="call", **terms)["price"] == \
        gpukit.monte_carlo(*TERMS, put=False, **terms)["price"]


# ---- integers: exact integer floats as the CLI takes them ------------------------------------

def test_integers_take_exact_integer_floats():
    terms = dict(device="cpu")
    np.testing.assert_array_equal(gpukit.monte_carlo(*TERMS, paths=1e4, seed=5.0, **terms)["price"],
                                  gpukit.monte_carlo(*TERMS, paths=10000, seed=5, **terms)["price"])
    np.testing.assert_array_equal(gpukit.rng.uniform(1e1, seed=2.0, offset=1e3, device="cpu"),
                                  gpukit.rng.uniform(10, seed=2, offset=1000, device="cpu"))
    assert gpukit.rng.bits((2.0, np.int64(3)), device="cpu").shape == (2, 3)
    assert gpukit.monte_carlo(*TERMS, paths=np.int64(64), seed=np.uint64(2**64 - 1),
                              device="cpu")["paths"] == 64


@pytest.mark.parametrize("keywords, name", [
    ({"seed": -1}, "seed"), ({"seed": 2**64}, "seed"), ({"seed": 1.5}, "seed"),
    ({"seed": "7"}, "seed"), ({"seed": None}, "seed"), ({"seed": True}, "seed"),
    ({"paths": 1e4 + 0.5}, "paths"), ({"paths": 1}, "paths"), ({"paths": 2**40}, "paths"),
    ({"paths": "1e4"}, "paths"), ({"paths": np.inf}, "paths"), ({"paths": 2**70}, "paths"),
])
def test_monte_carlo_integers_are_refused_by_name(keywords, name):
    message = refused(lambda: gpukit.monte_carlo(*TERMS, device="cpu", **keywords))
    assert message.startswith(name), message


@pytest.mark.parametrize("call, name", [
    (lambda: gpukit.rng.normal(4, offset=-1), "offset"),
    (lambda: gpukit.rng.normal(4, offset=2**64), "offset"),
    (lambda: gpukit.rng.normal(4, offset=0.5), "offset"),
    (lambda: gpukit.rng.uniform(4, seed=-1), "seed"),
    (lambda: gpukit.rng.bits(4, seed=2**64), "seed"),
    (lambda: gpukit.rng.uniform(2.5), "n"),
    (lambda: gpukit.rng.uniform(-1), "n"),
    (lambda: gpukit.rng.uniform("3"), "n"),
    (lambda: gpukit.rng.uniform(None), "n"),
    (lambda: gpukit.rng.uniform((2, 2.5)), r"n\[1\]"),
    (lambda: gpukit.rng.uniform(4, dtype="float128x"), "dtype"),
    (lambda: gpukit.rng.uniform(4, like="cuda"), "like"),
    (lambda: gpukit.rng.normal(4, transform=None), "transform"),
    (lambda: gpukit.rng.normal(4, generator=None), "generator"),
])
def test_random_arguments_are_refused_by_name(call, name):
    import re

    message = refused(call)
    assert re.match(name, message), message


def test_random_shape_is_an_integer_shape():
    assert gpukit.rng.uniform(3, device="cpu").shape == (3,)
    assert gpukit.rng.uniform(0, device="cpu").shape == (0,)
    assert gpukit.rng.uniform((2, 0), device="cpu").shape == (2, 0)


# ---- strings, flags and numbers --------------------------------------------------------------

X = np.arange(1.0, 5.0)
GRID = np.zeros((4, 4))


@pytest.mark.parametrize("call, name", [
    (lambda: gpukit.reduce(X, op=None), "op"),
    (lambda: gpukit.reduce(X, accurate="yes"), "accurate"),
    (lambda: gpukit.scan(X, op=1), "op"),
    (lambda: gpukit.scan(X, exclusive="no"), "exclusive"),
    (lambda: gpukit.compact(X, keep=None), "keep"),
    (lambda: gpukit.black_scholes(*TERMS, greeks="yes"), "greeks"),
    (lambda: gpukit.black_scholes(*TERMS, precision=None), "precision"),
    (lambda: gpukit.black_scholes(*TERMS, precision=["double"]), "precision"),
    (lambda: gpukit.black_scholes(*TERMS, cdf=None), "cdf"),
    (lambda: gpukit.black_scholes(*TERMS, variant=None), "variant"),
    (lambda: gpukit.black_scholes("100", *TERMS[1:]), "spot"),
    (lambda: gpukit.black_scholes(*TERMS, dividend=None), "dividend"),
    (lambda: gpukit.black_scholes(*TERMS[:3], True, 0.3), "rate"),
    (lambda: gpukit.monte_carlo(*TERMS, monitoring=None), "monitoring"),
    (lambda: gpukit.monte_carlo(*TERMS, antithetic=None), "antithetic"),
    (lambda: gpukit.monte_carlo(*TERMS, control_variate="True"), "control_variate"),
    (lambda: gpukit.monte_carlo(*TERMS, greeks=2), "greeks"),
    (lambda: gpukit.monte_carlo(*TERMS, precision=None), "precision"),
    (lambda: gpukit.monte_carlo(*TERMS, steps="12"), "steps"),
    (lambda: gpukit.monte_carlo(*TERMS, barrier="90", barrier_type="down-out"), "barrier"),
    (lambda: gpukit.monte_carlo(*TERMS, ids="T1"), "ids"),
    (lambda: gpukit.poisson(GRID, gauge=None), "gauge"),
    (lambda: gpukit.poisson(GRID, strict="no"), "strict"),
    (lambda: gpukit.poisson(GRID, variant=None), "variant"),
    (lambda: gpukit.poisson(GRID, precision=1), "precision"),
    (lambda: gpukit.poisson(GRID, lengths="1"), "lengths"),
    (lambda: gpukit.poisson(GRID, lengths=[1.0, None]), r"lengths\[1\]"),
    (lambda: gpukit.poisson(GRID, boundary=3), "boundary"),
    (lambda: gpukit.poisson(GRID, boundary=["dirichlet", None]), r"boundary\[1\]"),
    (lambda: gpukit.poisson(GRID, operator=2), "operator"),
    (lambda: gpukit.poisson(GRID, helmholtz="1"), "helmholtz"),
    (lambda: gpukit.gemm(GRID, GRID, transpose_a="T"), "transpose_a"),
    (lambda: gpukit.gemm(GRID, GRID, transpose_b=None), "transpose_b"),
    (lambda: gpukit.gemm(GRID, GRID, precision=32), "precision"),
    (lambda: gpukit.gemm(GRID, GRID, variant=None), "variant"),
])
def test_arguments_of_the_wrong_type_are_refused_by_name(call, name):
    import re

    message = refused(call)
    assert re.match(name, message), message


ALL_CALLS = {
    "reduce": lambda device: gpukit.reduce(X, device=device),
    "scan": lambda device: gpukit.scan(X, device=device),
    "compact": lambda device: gpukit.compact(X, device=device),
    "black_scholes": lambda device: gpukit.black_scholes(*TERMS, device=device),
    "monte_carlo": lambda device: gpukit.monte_carlo(*TERMS, paths=64, device=device),
    "poisson": lambda device: gpukit.poisson(GRID, device=device),
    "gemm": lambda device: gpukit.gemm(GRID, GRID, device=device),
    "saxpy": lambda device: gpukit.saxpy(1.0, X, X, device=device),
    "rng.uniform": lambda device: gpukit.rng.uniform(4, device=device),
    "rng.normal": lambda device: gpukit.rng.normal(4, device=device),
    "rng.bits": lambda device: gpukit.rng.bits(4, device=device),
}


# The calls that spread over device lists say more (test_scale_out.py checks their words).
SPREADING_CALLS = {"reduce", "black_scholes", "monte_carlo", "poisson"}


@pytest.mark.parametrize("function", sorted(ALL_CALLS))
def test_device_is_named_device(function):
    call = ALL_CALLS[function]
    if function in SPREADING_CALLS:
        assert refused(lambda: call(None), TypeError).startswith("device must be a string or a list")
        assert refused(lambda: call("gpu"), ValueError).startswith("device must be auto, cpu, ")
        return
    assert refused(lambda: call(None), TypeError).startswith(
        "device must be a string (auto, cpu, cuda or cuda:N)")
    assert refused(lambda: call(0), TypeError).startswith("device must be a string")
    assert refused(lambda: call("gpu"), ValueError) == \
        "device must be auto, cpu, cuda or cuda:N, got 'gpu'"
    assert refused(lambda: call("cuda:x"), ValueError) == "device: bad CUDA ordinal in 'cuda:x'"


def test_stream_handles_are_addresses():
    assert refused(lambda: gpukit._arrays.stream_handle(-1)).startswith("stream must be")
    assert refused(lambda: gpukit._arrays.stream_handle(True)).startswith("stream must be")


# ---- arrays: numbers only, no masks ---------------------------------------------------------

OBJECTS = np.array([1.0, object()], dtype=object)
WORDS = np.array(["1", "2"])
DATES = np.array(["2026-01-01", "2026-01-02"], dtype="datetime64[D]")


@pytest.mark.parametrize("bad", [OBJECTS, WORDS, DATES, [datetime.date(2026, 1, 1)], "abc", None],
                         ids=["object", "str", "datetime", "dates", "text", "None"])
@pytest.mark.parametrize("call, name", [
    (lambda v: gpukit.reduce(v), "x"),
    (lambda v: gpukit.scan(v), "x"),
    (lambda v: gpukit.compact(v), "x"),
    (lambda v: gpukit.poisson(v), "f"),
    (lambda v: gpukit.gemm(v, GRID), "a"),
    (lambda v: gpukit.gemm(GRID, v), "b"),
    (lambda v: gpukit.gemm(GRID, GRID, beta=1.0, c=v), "c"),
    (lambda v: gpukit.saxpy(1.0, v, X[:2]), "x"),
    (lambda v: gpukit.saxpy(1.0, X[:2], v), "y"),
    (lambda v: gpukit.black_scholes(v, *TERMS[1:]), "spot"),
    (lambda v: gpukit.black_scholes(*TERMS[:2], v, *TERMS[3:]), "maturity"),
    (lambda v: gpukit.monte_carlo(*TERMS[:4], v, paths=64), "volatility"),
    (lambda v: gpukit.monte_carlo(*TERMS, steps=v, paths=64), "steps"),
    (lambda v: gpukit.monte_carlo(*TERMS, steps=4, model="heston", v0=v, kappa=1.0, theta=0.04,
                                  sigma_v=0.3, rho=0.0, paths=64), "v0"),
])
def test_arrays_of_no_numbers_are_refused_by_name(call, name, bad):
    import re

    if bad is None and name == "c":
        pytest.skip("c=None is gemm's default (no C)")
    if bad is None and name in ("steps", "v0"):
        pytest.skip(f"{name}=None is monte_carlo's default (1 step; no v0 without a heston row)")
    message = refused(lambda: call(bad), TypeError)
    assert re.match(rf"{name}(\[\d+\])? ", message), message


def test_a_pandas_column_of_numbers_held_as_objects_is_priced():
    import pandas as pd

    spot = pd.Series([100.0, 110.0], dtype=object)
    np.testing.assert_array_equal(
        gpukit.black_scholes(spot, 100.0, 1.0, 0.02, 0.3, device="cpu"),
        gpukit.black_scholes([100.0, 110.0], 100.0, 1.0, 0.02, 0.3, device="cpu"))
    message = refused(lambda: gpukit.black_scholes(pd.Series([100.0, None], dtype=object),
                                                   *TERMS[1:], device="cpu"), TypeError)
    assert message == "spot[1] must be a number, not NoneType (None)"


MASKED = np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])


@pytest.mark.parametrize("call, name", [
    (lambda: gpukit.reduce(MASKED), "x"),
    (lambda: gpukit.scan(MASKED), "x"),
    (lambda: gpukit.compact(MASKED), "x"),
    (lambda: gpukit.poisson(np.ma.masked_array(GRID, mask=GRID != 0)), "f"),
    (lambda: gpukit.gemm(np.ma.masked_array(GRID), GRID), "a"),
    (lambda: gpukit.saxpy(1.0, MASKED, X), "x"),
    (lambda: gpukit.saxpy(1.0, X, X, out=np.ma.masked_array(X.copy())), "out"),
    (lambda: gpukit.black_scholes(MASKED * 100, 100.0, 1.0, 0.02, 0.3), "spot"),
    (lambda: gpukit.black_scholes(100.0, 100.0, 1.0, MASKED / 100, 0.3), "rate"),
    (lambda: gpukit.black_scholes(*TERMS, put=np.ma.masked_array([True, False])), "put"),
    (lambda: gpukit.monte_carlo(*TERMS, barrier=MASKED * 50, barrier_type="down-out"),
     "barrier"),
    (lambda: gpukit.monte_carlo(*TERMS, barrier=50.0,
                                barrier_type=np.ma.masked_array(["down-out"])), "barrier_type"),
    (lambda: gpukit.monte_carlo(*TERMS, ids=np.ma.masked_array(["a"])), "ids"),
    (lambda: gpukit.poisson(GRID, lengths=np.ma.masked_array([1.0, 2.0])), "lengths"),
    (lambda: gpukit.rng.uniform(np.ma.masked_array([2, 2])), "n"),
    (lambda: gpukit.rng.uniform(2, like=MASKED), "like"),
])
def test_masked_arrays_are_refused_by_name(call, name):
    assert refused(call, TypeError).startswith(f"{name} is a masked array, whose mask gpukit "
                                               "would ignore")


# ---- out= ------------------------------------------------------------------------------------

def test_saxpy_refuses_an_out_it_cannot_write():
    x, y = np.ones(3), np.arange(3.0)
    read_only = np.zeros(3)
    read_only.flags.writeable = False
    assert refused(lambda: gpukit.saxpy(2.0, x, y, out=read_only, device="cpu"), ValueError) \
        .startswith("out is read-only")
    assert not read_only.any()
    broadcast = np.broadcast_to(np.zeros(1), (3,))  # NumPy's broadcast views are read-only
    assert refused(lambda: gpukit.saxpy(2.0, x, y, out=broadcast, device="cpu"), ValueError) \
        .startswith("out is read-only")
    assert refused(lambda: gpukit.saxpy(2.0, x, y, out=[0.0, 0.0, 0.0], device="cpu"),
                   TypeError).startswith("out must be an array")
    assert refused(lambda: gpukit.saxpy(2.0, x, y, out=np.zeros(3, dtype=object), device="cpu"),
                   TypeError).startswith("out is an array of object")
    out = np.zeros(3)
    assert gpukit.saxpy(2.0, x, y, out=out, device="cpu") is out
    np.testing.assert_array_equal(out, [2.0, 3.0, 4.0])


# ---- scalars are named without brackets -------------------------------------------------------

def test_a_term_is_named_in_its_own_shape():
    with pytest.raises(ValueError, match=r"^black_scholes: spot: must be finite, got nan$"):
        gpukit.black_scholes(np.nan, *TERMS[1:], device="cpu")
    with pytest.raises(ValueError, match=r"^black_scholes: spot: must be > 0, got -1$"):
        gpukit.black_scholes(-1.0, [90.0, 100.0, 110.0], 1.0, 0.02, 0.3, device="cpu")
    # Broadcast (2, 1) against (1, 3): spot's own index, not the book's.
    with pytest.raises(ValueError, match=r"^black_scholes: spot\[1, 0\]: must be > 0, got 0$"):
        gpukit.black_scholes([[100.0], [0.0]], [[90.0, 100.0, 110.0]], 1.0, 0.02, 0.3,
                             device="cpu")
    with pytest.raises(ValueError, match=r"^black_scholes: strike\[0, 2\]: must be >= 0"):
        gpukit.black_scholes([[100.0], [50.0]], [[90.0, 100.0, -1.0]], 1.0, 0.02, 0.3,
                             device="cpu")
    with pytest.raises(ValueError, match=r"^monte_carlo: maturity: must be finite, got inf$"):
        gpukit.monte_carlo(*TERMS[:2], np.inf, *TERMS[3:], paths=64, device="cpu")
    with pytest.raises(ValueError, match=r"^monte_carlo: steps: expected an integer in "):
        gpukit.monte_carlo([100.0, 90.0], *TERMS[1:], barrier=80.0, barrier_type="down-out",
                           steps=2.5, device="cpu")
    with pytest.raises(ValueError, match=r"^monte_carlo: barrier\[1\]: must be > 0, got -5$"):
        gpukit.monte_carlo(100.0, [100.0, 90.0], *TERMS[2:], barrier=[80.0, -5.0],
                           barrier_type="down-out", steps=4, device="cpu")


# ---- ids -------------------------------------------------------------------------------------

def test_repeated_ids_are_a_runtime_warning_with_the_clis_counts():
    with pytest.warns(RuntimeWarning, match=r"^monte_carlo: 1 ids appear on more than one row "
                                            r"\(2 rows\); rows with the same id get the same "
                                            r"random numbers$"):
        r = gpukit.monte_carlo([100.0, 100.0], 100.0, 1.0, 0.02, 0.3, ids=[None, None], paths=64,
                               device="cpu")
    assert r["price"][0] == r["price"][1]  # what the warning is about
    with pytest.warns(RuntimeWarning, match=r"2 ids appear on more than one row \(5 rows\)"):
        gpukit.monte_carlo([100.0] * 6, 100.0, 1.0, 0.02, 0.3, ids=["a", "b", "a", "b", "b", "c"],
                           paths=64, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpukit.monte_carlo([100.0, 100.0], 100.0, 1.0, 0.02, 0.3, ids=["a", "b"], paths=64,
                           device="cpu")


# ---- price_book ------------------------------------------------------------------------------

def book():
    import pandas as pd

    return pd.DataFrame({"id": ["T1", "T2"], "type": ["call", "put"], "spot": [100.0, 101.0],
                         "strike": [95.0, 110.0], "maturity": [1.0, 2.0]})


@pytest.mark.parametrize("frame", [
    {"type": ["call"], "spot": [100.0], "strike": [95.0], "maturity": [1.0]},
    np.ones((2, 4)), [[1, 2]], None, "book.csv"])
def test_price_book_takes_a_dataframe(frame):
    message = refused(lambda: gpukit.price_book(frame, rate=0.02, volatility=0.2, device="cpu"),
                      TypeError)
    assert message.startswith(f"price_book: df must be a pandas DataFrame, not "
                              f"{type(frame).__name__}"), message


@pytest.mark.parametrize("keywords, error, message", [
    # Without CUDA there is no variant to name (the CLI's rule too).
    ({"variant": "nosuch"}, (ValueError, gpukit.DeviceUnavailable),
     "unknown Black-Scholes variant 'nosuch'" if gpukit.built_with_cuda() else
     "Black-Scholes CUDA variants: this gpukit was built without CUDA"),
    ({"cdf": "bogus"}, ValueError, "cdf must be erfc, hull or hull-fast, got 'bogus'"),
    ({"cdf": None}, TypeError, "cdf must be a string"),
    ({"precision": "half"}, ValueError, "precision must be double or float, got 'half'"),
    ({"greeks": "no"}, TypeError, "greeks must be True or False"),
    ({"rate": "0.05"}, TypeError, "rate must be a number"),
    ({"volatility": [0.2]}, TypeError, "volatility must be a number"),
    ({"method": "binomial"}, ValueError, "price_book: method must be black_scholes, "
                                         "monte_carlo or implied_volatility, got 'binomial'"),
    ({"method": None}, TypeError, "method must be a string"),
    ({"device": None}, TypeError, "device must be a string"),
    ({"paths": 1000}, ValueError, "price_book: paths= applies to method=\"monte_carlo\""),
    ({"seed": 7}, ValueError, "price_book: seed= applies to method=\"monte_carlo\""),
    ({"monitoring": "continuous"}, ValueError, "price_book: monitoring= applies"),
    ({"antithetic": True}, ValueError, "price_book: antithetic= applies"),
    ({"method": "monte_carlo", "cdf": "bogus"}, ValueError,
     "price_book: cdf= applies to method=\"black_scholes\", not \"monte_carlo\""),
    ({"method": "monte_carlo", "variant": "nosuch"}, ValueError, "price_book: variant= applies"),
    ({"method": "monte_carlo", "paths": 1e4 + 0.5}, ValueError, "paths must be a whole number"),
    ({"method": "monte_carlo", "seed": -1}, ValueError, "seed must be a whole number from 0"),
    ({"method": "monte_carlo", "monitoring": "bogus"}, ValueError,
     "monitoring must be discrete or continuous, got 'bogus'"),
    ({"method": "monte_carlo", "antithetic": "yes"}, TypeError, "antithetic must be True or"),
    ({"method": "monte_carlo", "precision": "half"}, ValueError, "precision must be double or"),
])
def test_price_book_checks_every_keyword(keywords, error, message):
    arguments = {"rate": 0.02, "volatility": 0.2, "device": "cpu"}
    arguments.update(keywords)
    got = refused(lambda: gpukit.price_book(book(), **arguments), error)
    assert got.startswith(message), got


def test_price_book_takes_its_methods_keywords():
    plain = gpukit.price_book(book(), rate=0.02, volatility=0.2, device="cpu")
    hull = gpukit.price_book(book(), rate=0.02, volatility=0.2, cdf="hull", device="cpu")
    # Hull's polynomial is within 7.5e-8 of N: a price within 7.5e-8 (S + K) of erfc's, not equal.
    frame = book()
    assert (hull.price != plain.price).all()
    assert (np.abs(hull.price - plain.price) <= 7.5e-8 * (frame.spot + frame.strike)).all()
    priced = gpukit.price_book(book(), "monte_carlo", rate=0.02, volatility=0.2, paths=1e4,
                               seed=5.0, antithetic=1, device="cpu")
    assert (priced.paths == 10000).all()


def test_price_book_warns_of_repeated_ids():
    frame = book()
    frame["id"] = ["T1", "T1"]
    with pytest.warns(RuntimeWarning, match=r"^price_book: 1 ids appear on more than one row "
                                            r"\(2 rows\)"):
        gpukit.price_book(frame, "monte_carlo", rate=0.02, volatility=0.2, paths=64,
                          device="cpu")


def test_black_scholes_variant_is_checked_on_every_backend():
    # The CLI's --variant rule: a name of the registry, or, in a build without CUDA, none at all.
    error = ValueError if gpukit.built_with_cuda() else gpukit.DeviceUnavailable
    with pytest.raises(error, match="variant"):
        gpukit.black_scholes(*TERMS, variant="nosuch", device="cpu")
