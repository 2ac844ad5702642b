"""gpukit.price_book: a pandas DataFrame read as ``gpukit bs``, ``gpukit mc`` and ``gpukit iv``
read a CSV book.

The columns are matched as the CSV reader matches its header (ignoring case and the blanks around
a name), the words of the type and barrier_type columns are read by the library's own readers,
and every value is checked by the CSV reader's rules (io::find_book_term_problem,
io::find_quote_term_problem), so that a
DataFrame and the CSV it was read from are priced alike or refused alike. Only the location in
the messages differs: a row (its position and index label) instead of file:line:column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _checks
from . import _gpukit as _core

_EUROPEAN = ("type", "spot", "strike", "maturity", "rate", "volatility", "dividend")
_BARRIERS = ("barrier", "barrier_type", "steps")
# The word columns of Asian, early-exercise and Heston rows: read by both methods, as `gpukit bs`
# reads them to refuse the rows the formula cannot price and `gpukit mc` to price them.
_PRODUCTS = ("average", "exercise", "model")
# A heston row's parameters (Monte Carlo only; pass-through columns for Black-Scholes).
_HESTON = ("v0", "kappa", "theta", "sigma_v", "rho")
# A book of quotes (gpukit iv): the underlying is spot (with dividend) or forward, by the model.
_QUOTES_ON_SPOT = ("type", "price", "spot", "strike", "maturity", "rate", "dividend")
_QUOTES_ON_FORWARD = ("type", "price", "forward", "strike", "maturity", "rate")


def _blanks_trimmed(name: Any) -> str:
    return str(name).strip(" \t")


def _key(name: Any) -> str:
    return _blanks_trimmed(name).lower()


def _require_frame(df) -> None:
    """TypeError unless `df` is a pandas DataFrame."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"price_book: df must be a pandas DataFrame, not {type(df).__name__} "
                        "(pandas.DataFrame(...) makes one of a dict of columns)")


class _Frame:
    """The DataFrame's known columns and the messages that name its rows."""

    def __init__(self, df, known: tuple[str, ...]):
        self.df = df
        self.count = len(df)
        self.column_of: dict[str, int] = {}
        for position, name in enumerate(df.columns):
            key = _key(name)
            if key not in known:
                continue
            if key in self.column_of:
                raise ValueError(f"price_book: {name}: duplicate column (also column "
                                 f"{self.column_of[key] + 1})")
            self.column_of[key] = position

    def has(self, key: str) -> bool:
        return key in self.column_of

    def name(self, key: str) -> str:
        return str(self.df.columns[self.column_of[key]]) if key in self.column_of else key

    def series(self, key: str):
        return self.df.iloc[:, self.column_of[key]]

    def missing(self, key: str, detail: str = "") -> ValueError:
        """A required column is missing: the frame's columns and the one probably meant
        (io::nearest_column_name, as the CSV reader says it)."""
        names = [str(c) for c in self.df.columns]
        shown = ", ".join(_blanks_trimmed(n) for n in names[:12])
        if len(names) > 12:
            shown += f", ... ({len(names)} columns)"
        meant = _core.nearest_column_name(key, names)
        hint = "" if meant is None else f": is \"{_blanks_trimmed(meant)}\" meant to be \"{key}\"?"
        return ValueError(f"price_book: {key}: required column is missing{detail}; the columns "
                          f"are {shown}{hint}")

    def error(self, row: int, key: str, what: str) -> ValueError:
        label = self.df.index[row]
        return ValueError(f"price_book: row {row} (index {label!r}): {self.name(key)}: {what}")

    def numbers(self, key: str, missing_allowed: bool = False) -> np.ndarray:
        """The column as float64; a value that is no number, or a missing one (unless allowed:
        then NaN), is an error naming its row."""
        import pandas as pd

        series = self.series(key)
        if not pd.api.types.is_numeric_dtype(series):
            # A blank text field is an empty CSV field: missing (pd.read_csv with
            # keep_default_na=False keeps it as "").
            blank = series.astype(str).str.strip(" \t") == ""
            series = series.mask(blank & series.notna())
        try:
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            coerced = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
            bad = np.isnan(coerced) & series.notna().to_numpy()
            row = int(np.argmax(bad))
            raise self.error(row, key, f"expected a number, got {series.iloc[row]!r}") from None
        if not missing_allowed:
            missing = np.isnan(values) & series.isna().to_numpy()
            if missing.any():
                raise self.error(int(np.argmax(missing)), key, "empty field, expected a number")
        return np.ascontiguousarray(values)

    def words(self, key: str, read, rule: str) -> np.ndarray:
        """The column's words through `read` (the library's reader of that CSV column), one call
        per distinct word; an unread word is an error naming its first row."""
        text = self.series(key).fillna("").astype(str).to_numpy()
        uniques, inverse = np.unique(text, return_inverse=True)
        codes = []
        for position, word in enumerate(uniques):
            code = read(word)
            if code is None:
                row = int(np.argmax(inverse == position))
                raise self.error(row, key, f"{rule}, got \"{word}\"")
            codes.append(int(code))
        return np.asarray(codes, dtype=np.uint8)[inverse.reshape(-1)]

    def book_wide(self, key: str, given: float | None, fallback: float | None) -> Any:
        """A per-option column, or the keyword's value for the whole book."""
        if self.has(key):
            if given is not None:
                raise ValueError(f"price_book: {self.name(key)}: {key} is both a column and "
                                 f"{key}=; give one")
            return self.numbers(key)
        if given is None and fallback is None:
            raise self.missing(key, f" (or give {key}=)")
        return float(given if given is not None else fallback)


def price_book(df, method: str, *, rate, volatility, dividend, greeks, precision, device,
               cdf="erfc", variant="", paths=1 << 20, seed=2008, monitoring="discrete",
               antithetic=False, control_variate=False, sampler="philox", replicates=16):
    """gpukit.price_book on keywords gpukit/__init__.py has checked (the method's own ones)."""
    _require_frame(df)
    barriers = method == "monte_carlo"
    frame = _Frame(df, _EUROPEAN + _PRODUCTS + (_BARRIERS + _HESTON if barriers else ()))
    for required in ("type", "spot", "strike", "maturity"):
        if not frame.has(required):
            raise frame.missing(required)
    if barriers and frame.has("barrier") != frame.has("barrier_type"):
        given, missing = ("barrier", "barrier_type") if frame.has("barrier") else (
            "barrier_type", "barrier")
        raise frame.missing(missing, f" (the {given} column is given)")
    rate_p = frame.book_wide("rate", rate, None)
    volatility_p = frame.book_wide("volatility", volatility, None)
    dividend_p = frame.book_wide("dividend", dividend, 0.0)
    is_put = frame.words("type", _core.option_type, "expected call, put, c or p")
    spot, strike, maturity = (frame.numbers(k) for k in ("spot", "strike", "maturity"))
    n = frame.count
    products = _product_columns(frame)
    barrier_type = barrier = steps = None
    heston = checked_heston = [0.0] * len(_HESTON)
    checked_model = products[2]
    if barriers:
        barrier_type, barrier, steps = _barrier_columns(frame, products)
        heston, checked_model = _heston_columns(frame, products[2])
        # Where a row that is not heston gives a parameter, the CSV reader checks it by the same
        # rules (and does not use it): it is checked as a heston row's, the fields left empty
        # there with values that keep the rules.
        checked_heston = [np.where(np.isnan(h), fill, h) if isinstance(h, np.ndarray) else h
                          for h, fill in zip(heston, (0.0, 1.0, 0.0, 0.0, 0.0))]
        heston = [np.nan_to_num(h, nan=0.0) if isinstance(h, np.ndarray) else h for h in heston]
    else:
        _refuse_what_black_scholes_cannot_price(frame, products)

    problem = _core.book_term_problem(n, is_put, spot, strike, maturity, rate_p, volatility_p,
                                      dividend_p, barrier_type, barrier, steps, products[0],
                                      products[1], checked_model, *checked_heston, precision)
    if problem is not None:
        row, column, what = problem
        if row < 0:
            raise ValueError(f"price_book: {column}=: {what}")
        raise frame.error(row, column, what)

    if barriers:
        keys = None
        id_position = next((i for i, c in enumerate(df.columns) if _key(c) == "id"), None)
        if id_position is not None:
            ids = [str(v) for v in df.iloc[:, id_position].to_numpy(dtype=object)]
            keys = _checks.stream_keys(ids, "price_book", 3)
        from . import _priced_naming_rows

        columns = _priced_naming_rows(
            lambda: _core.monte_carlo(n, is_put, spot, strike, maturity, rate_p, volatility_p,
                                      dividend_p, barrier_type, barrier, steps, keys, *products,
                                      *heston, {}, paths, seed, monitoring, antithetic,
                                      control_variate, greeks, precision, sampler, replicates,
                                      device, 0),
            "price_book", lambda row: f"row {row} (index {df.index[row]!r})")
        names = ["price", "std_error", "ci_low", "ci_high", "paths"]
        if greeks:
            names += ["delta", "gamma", "vega"]
        if antithetic:
            names.append("vrf_antithetic")
        if control_variate:
            names.append("vrf_control")
        columns["paths"] = columns["paths"].astype(np.int64)
        from . import _warn_about_rows

        def row_at(row: int) -> str:
            return f"row {row} (index {df.index[row]!r})"

        _warn_about_rows(columns, "price_book", n, paths, antithetic,
                         lambda row: f"{row_at(row)}: {frame.name('barrier')}", row_at,
                         stacklevel=4)
    else:
        columns = _core.price_european_book(n, is_put, spot, strike, maturity, rate_p,
                                            volatility_p, dividend_p, precision, greeks, cdf,
                                            variant, device)
        names = ["price"] + (["delta", "gamma", "vega", "theta", "rho"] if greeks else [])

    from . import _refuse_non_finite

    _refuse_non_finite("price_book", {name: columns[name] for name in names}, precision,
                       precision == "float",
                       lambda row: f"row {row} (index {df.index[row]!r})")
    # As write_priced_book: an output whose name an input column has takes that column's place.
    priced = df.copy()
    for name in names:
        existing = [i for i, c in enumerate(priced.columns) if _key(c) == name]
        if existing:
            for position in existing:
                priced.isetitem(position, columns[name])
        else:
            priced[name] = columns[name]
    return priced


def implied_volatility_book(df, *, rate, dividend, precision, model, device):
    """gpukit.price_book(df, "implied_volatility") on keywords gpukit/__init__.py has checked:
    the frame read as ``gpukit iv`` reads a CSV book of quotes, inverted by the library's call,
    with implied_volatility and iv_status (a Categorical of the status names) added."""
    import pandas as pd

    _require_frame(df)
    underlying = _core.quote_underlying(model)
    on_spot = underlying == "spot"
    frame = _Frame(df, _QUOTES_ON_SPOT if on_spot else _QUOTES_ON_FORWARD)
    for required in ("type", "price", underlying, "strike", "maturity"):
        if not frame.has(required):
            other = "forward" if on_spot else "spot"
            detail = ""
            if any(_key(c) == other for c in df.columns):
                detail = (f" (model='{model}' inverts on the {underlying}; a frame with a "
                          f"{other} column is inverted with model="
                          + ("'black76' or 'bachelier'" if on_spot else "'black-scholes'") + ")")
            raise frame.missing(required, detail if required == underlying else "")
    rate_p = frame.book_wide("rate", rate, None)
    if on_spot:
        dividend_p = frame.book_wide("dividend", dividend, 0.0)
    else:
        # The forward holds the dividend: a dividend= is refused by the library's rule below.
        dividend_p = 0.0 if dividend is None else float(dividend)
    is_put = frame.words("type", _core.option_type, "expected call, put, c or p")
    price, under, strike, maturity = (frame.numbers(k) for k in
                                      ("price", underlying, "strike", "maturity"))
    n = frame.count
    problem = _core.quote_term_problem(n, is_put, price, under, strike, maturity, rate_p,
                                       dividend_p, model, precision)
    if problem is not None:
        row, column, what = problem
        if row < 0:
            raise ValueError(f"price_book: {column}=: {what}")
        raise frame.error(row, column, what)
    volatility, status = _core.implied_volatility_book(n, is_put, price, under, strike, maturity,
                                                       rate_p, dividend_p, model, precision,
                                                       device)
    names = list(_core.iv_status_names())
    words = pd.Categorical.from_codes(status.astype(np.int64), categories=names)
    priced = df.copy()
    for name, values in (("implied_volatility", volatility), ("iv_status", words)):
        existing = [i for i, c in enumerate(priced.columns) if _key(c) == name]
        if existing:
            for position in existing:
                priced.isetitem(position, values)
        else:
            priced[name] = values
    return priced


_WORD_RULES = {
    "average": (_core.average_type, "expected none, arithmetic or geometric"),
    "exercise": (_core.exercise_style, "expected european, bermudan or american"),
    "model": (_core.asset_model, "expected black-scholes or heston"),
}


def _product_columns(frame: _Frame) -> list:
    """average, exercise and model as their enumerations' codes (uint8; an empty field is the
    default, as in the CSV book), each None where the frame has no such column or every row has
    the default (priced as a book without the column)."""
    columns = []
    for key in _PRODUCTS:
        codes = None
        if frame.has(key):
            codes = frame.words(key, *_WORD_RULES[key])
            if not codes.any():
                codes = None
        columns.append(codes)
    return columns


def _refuse_what_black_scholes_cannot_price(frame: _Frame, products: list) -> None:
    """ValueError at the first row Black-Scholes cannot price (an Asian, an early-exercise or a
    heston row), as `gpukit bs` refuses it at its field."""
    average, exercise, model = (np.zeros(frame.count, np.uint8) if c is None else c
                                for c in products)
    cannot = (average != 0) | (exercise != 0) | (model != 0)
    if not cannot.any():
        return
    row = int(np.argmax(cannot))
    if average[row]:
        raise frame.error(row, "average", "an Asian option: method=\"black_scholes\" prices "
                          "European options only (method=\"monte_carlo\" prices Asian ones)")
    if exercise[row]:
        word = ("european", "bermudan", "american")[exercise[row]]
        raise frame.error(row, "exercise", f"a {word} option: method=\"black_scholes\" prices "
                          "European exercise only (method=\"monte_carlo\" prices early exercise)")
    raise frame.error(row, "model", "a heston row: the Black-Scholes formula prices the "
                      "black-scholes model only (method=\"monte_carlo\" prices heston rows)")


def _heston_columns(frame: _Frame, model):
    """The Heston parameters as the CSV reader of `gpukit mc` reads them: a column's values (NaN
    where a field is empty), 0.0 without the column; and the model codes to check them by (the
    rows that are heston, and those that give a parameter, whose values keep the same rules).
    A heston row needs all five (ValueError naming the row and the first missing one)."""
    n = frame.count
    heston = model == 1 if model is not None else np.zeros(n, dtype=bool)
    values, given = [], np.zeros(n, dtype=bool)
    for key in _HESTON:
        if not frame.has(key):
            if heston.any():
                row = int(np.argmax(heston))
                raise ValueError(f"price_book: row {row} (index {frame.df.index[row]!r}): {key}: "
                                 "required column is missing (a heston row needs v0, kappa, "
                                 "theta, sigma_v and rho)")
            values.append(0.0)
            continue
        column = frame.numbers(key, missing_allowed=True)
        empty = np.isnan(column)
        if (heston & empty).any():
            raise frame.error(int(np.argmax(heston & empty)), key,
                              "empty field, a heston row needs v0, kappa, theta, sigma_v and rho")
        given |= ~empty
        values.append(column)
    checked_model = None
    if (heston | given).any():
        checked_model = np.where(heston | given, 1, 0).astype(np.uint8)
    return values, checked_model


def _barrier_columns(frame: _Frame, products: list):
    """barrier_type, barrier and steps as the CSV reader of `gpukit mc` stores them: none, 0 and
    1 where a European row leaves them empty; a barrier row needs both, and a row whose dates are
    part of its terms (barrier, Asian, early-exercise and heston rows: io::steps_requirement) its
    steps."""
    n = frame.count
    if frame.has("barrier_type"):
        barrier_type = frame.words("barrier_type", _core.barrier_type,
                                   "expected none, down-out, down-in, up-out or up-in")
        barrier = frame.numbers("barrier", missing_allowed=True)
    else:
        barrier_type = np.zeros(n, dtype=np.uint8)
        barrier = np.zeros(n)
    is_barrier = barrier_type != 0
    missing_level = is_barrier & np.isnan(barrier)
    if missing_level.any():
        raise frame.error(int(np.argmax(missing_level)), "barrier",
                          "empty field, a barrier option needs a barrier level")
    barrier = np.where(is_barrier, barrier, 0.0)
    kinds = [barrier_type] + [np.zeros(n, np.uint8) if c is None else c for c in products]
    needs_steps = np.logical_or.reduce([k != 0 for k in kinds])

    def requirement(row: int) -> str:
        return _core.steps_requirement(*(int(k[row]) for k in kinds))

    if frame.has("steps"):
        values = frame.numbers("steps", missing_allowed=True)
        missing_steps = needs_steps & np.isnan(values)
        if missing_steps.any():
            row = int(np.argmax(missing_steps))
            raise frame.error(row, "steps", f"empty field, {requirement(row)}")
        values = np.where(np.isnan(values), 1.0, values)
        bad = (values != np.floor(values)) | (values < 1) | (values > 1 << 20)
        if bad.any():
            row = int(np.argmax(bad))
            raise frame.error(row, "steps", "expected an integer in [1, 1048576], got "
                              f"{frame.series('steps').iloc[row]!r}")
        steps = values.astype(np.uint32)
    else:
        if needs_steps.any():
            row = int(np.argmax(needs_steps))
            label = frame.df.index[row]
            raise ValueError(f"price_book: row {row} (index {label!r}): steps: required column "
                             f"is missing ({requirement(row)})")
        steps = np.ones(n, dtype=np.uint32)
    return barrier_type, np.ascontiguousarray(barrier), steps
