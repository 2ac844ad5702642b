"""The checks of the arguments every public function takes, written once.

A wrong type or value is refused here, in the API's own words and naming the Python argument
(``seed must be a whole number from 0 to 18446744073709551615, got -1``), before it reaches the
compiled module, whose signature check would name internal functions. What a value means (a
device's spelling, an operation's name, a book's rules) stays the library's: these functions only
make sure the library is handed a value of the type it takes. The rules:

- integers: Python and NumPy integers, and floats that are exact integers (``1e4``, as the CLI
  takes ``1e4``); not bools, not strings, not ``1.5``;
- flags: bools, and the integers 0 and 1;
- numbers: real numbers (not bools, not strings);
- strings: ``str``;
- arrays: no masked arrays (gpukit does not read a mask), and only arrays of numbers (no object,
  string, bytes, datetime, timedelta or structured dtype);
- put: bools, 0 and 1, and the CSV book's words for the type column (call, put, c, p, any case,
  read by the library's own reader), element by element.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Callable

import numpy as np

from . import _arrays
from . import _gpukit as _core

UINT64_MAX = (1 << 64) - 1

# NumPy dtype kinds that are numbers: bool, signed and unsigned integer, floating, complex.
_NUMBER_KINDS = "biufc"


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def integer(value: Any, name: str, low: int, high: int) -> int:
    """`value` as an int in [low, high]: an integer, or a float that is an exact integer."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not a bool ({value})")
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    try:
        result = operator.index(value)
    except TypeError:
        if not isinstance(value, (float, np.floating)):
            raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
        if not math.isfinite(value) or value != math.floor(value):
            raise ValueError(f"{name} must be a whole number (such as 1000000 or 1e6) from {low} "
                             f"to {high}, got {_shown(value)}") from None
        result = int(value)
    if not low <= result <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, got {result}")
    return result


def flag(value: Any, name: str) -> bool:
    """`value` as a bool: True, False, or the integers 1 and 0."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_shown(value)}")


def number(value: Any, name: str) -> float:
    """`value` as a float: a real number (not a bool, not a string)."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, (bool, np.bool_)):
        try:
            return float(value)
        except OverflowError:  # an int beyond float64's range, such as 10**400
            raise ValueError(f"{name} must be a number within float64's range, got "
                             f"{_shown(value)}") from None
    raise TypeError(f"{name} must be a number, not {type(value).__name__} ({_shown(value)})")


def text(value: Any, name: str, expected: str = "") -> str:
    """`value` as a str; `expected` says what the library takes (its spellings)."""
    if isinstance(value, str):
        return str(value)
    what = f" ({expected})" if expected else ""
    raise TypeError(f"{name} must be a string{what}, not {type(value).__name__} "
                    f"({_shown(value)})")


def device(value: Any) -> str:
    """The device argument as a str (its spellings are the library's rule)."""
    return text(value, "device", "auto, cpu, cuda or cuda:N")


SPREAD_DEVICES = "auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,...; or a list of 'cuda:N'"


def spread_device(value: Any) -> str:
    """The device argument of a call that spreads over several devices (black_scholes,
    monte_carlo, price_book, reduce, poisson) as the str the library reads: a str as it is, a
    list or tuple of 'cuda:N' as 'cuda:N,M,...' (the CLI's --device cuda:0,1). The spellings and
    the ordinals are the library's rule; only the list's form is checked here."""
    if isinstance(value, (list, tuple)):
        ordinals = []
        for position, entry in enumerate(value):
            if not isinstance(entry, str) or not entry.startswith("cuda:") or \
                    "," in entry or entry == "cuda:all":
                raise ValueError(f"device[{position}] must be 'cuda:N' (a list of GPUs), got "
                                 f"{_shown(entry)}")
            ordinals.append(entry[len("cuda:"):])
        if not ordinals:
            raise ValueError("device must name at least one device, got an empty list")
        return "cuda:" + ",".join(ordinals)
    if isinstance(value, str):
        return str(value)
    raise TypeError(f"device must be a string or a list ({SPREAD_DEVICES}), not "
                    f"{type(value).__name__} ({_shown(value)})")


def not_masked(x: Any, name: str) -> None:
    """TypeError for a NumPy masked array: gpukit reads every element, a mask would be ignored."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array, whose mask gpukit would ignore: pass "
                        f"{name}.filled(value) or {name}.compressed()")


def array(x: Any, name: str) -> Any:
    """`x` as the compiled module may take it: a CuPy or PyTorch array as it is, anything else
    as a NumPy array (numpy.asarray) of numbers. TypeError for a masked array and for an array
    of object, string, bytes, datetime, timedelta or structured dtype (no number to compute
    on); which numeric dtypes a call takes is the call's rule."""
    not_masked(x, name)
    if _arrays.framework_of(x) != _arrays.NUMPY:
        return x
    converted = np.asarray(x)
    if converted.dtype.kind not in _NUMBER_KINDS:
        raise TypeError(f"{name} is an array of {converted.dtype} ({_kind_name(converted.dtype)}), "
                        "not of numbers")
    return converted


def input_array(x: Any, name: str) -> tuple[Any, str]:
    """An input array checked by array() and made C-contiguous in its framework (a copy only
    where it is not): (the array, its framework)."""
    x = array(x, name)
    framework = _arrays.framework_of(x)
    return _arrays.contiguous(x, framework), framework


def output_array(out: Any, name: str) -> Any:
    """An array gpukit writes into: a NumPy, CuPy or PyTorch array (not a list, whose copy would
    be written), not masked, of numbers, and writable (TypeError, ValueError for a read-only
    one)."""
    not_masked(out, name)
    if not _arrays.is_array(out):
        raise TypeError(f"{name} must be an array (NumPy, CuPy or PyTorch) to write into, not "
                        f"{type(out).__name__}")
    if isinstance(out, np.ndarray):
        if out.dtype.kind not in _NUMBER_KINDS:
            raise TypeError(f"{name} is an array of {out.dtype} ({_kind_name(out.dtype)}), not of "
                            "numbers")
        if not out.flags.writeable:
            raise ValueError(f"{name} is read-only: pass a writable array (or none, for a new one)")
    return out


def numbers(x: Any, name: str) -> Any:
    """A pricing term: a real number (kept as it is), or an array of numbers; an object array
    (a pandas column of mixed objects) only where every element is a real number."""
    not_masked(x, name)
    if _arrays.framework_of(x) != _arrays.NUMPY:
        return x
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        number(x, name)
        return x
    converted = np.asarray(x)
    if converted.dtype.kind == "O":
        flat = converted.reshape(-1)
        for index, value in enumerate(flat):
            try:
                number(value, name)
            except TypeError:
                raise TypeError(f"{name}{where(index, converted.shape)} must be a number, not "
                                f"{type(value).__name__} ({_shown(value)})") from None
        return converted.astype(np.float64)
    if converted.dtype.kind not in "iuf":
        raise TypeError(f"{name} is an array of {converted.dtype} ({_kind_name(converted.dtype)}), "
                        "not of real numbers")
    return converted


def _kind_name(dtype: np.dtype) -> str:
    return {"O": "Python objects", "U": "strings", "S": "bytes", "M": "datetimes",
            "m": "timedeltas", "V": "structured records", "b": "bools",
            "c": "complex numbers"}.get(dtype.kind, dtype.name)


def where(flat_index: int, shape: tuple[int, ...]) -> str:
    """`[i, j]` of a flat index in an array of `shape`, or "" for a scalar."""
    if not shape:
        return ""
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat_index, shape)) + "]"


_PUT_RULE = "expected True or False, 1 or 0, or call, put, c or p"


def put_sides(put: Any, what: str, read_word: Callable[[str], Any]) -> Any:
    """`put` as the pricers take it: a bool for one side for the whole book, else a bool array of
    put's shape (on put's device for a CUDA array). Each value is a bool, the integer 0 or 1, or
    a word of the CSV book's type column, read by `read_word` (the library's reader: True for a
    put, False for a call, None for another word); anything else is a ValueError naming put and
    its index."""
    not_masked(put, "put")
    framework = _arrays.framework_of(put)
    if framework != _arrays.NUMPY:
        return _put_sides_on_device(put, what, framework)
    if np.ndim(put) == 0 and not isinstance(put, np.ndarray):
        side = _put_side(put, read_word)
        if side is None:
            raise ValueError(f"{what}: put: {_PUT_RULE}, got {_shown(put)}")
        return side
    values = np.asarray(put)
    if values.dtype.kind in "US" and not isinstance(put, np.ndarray):
        # A list mixing words and numbers (["call", 1]): NumPy would make the numbers strings.
        values = np.asarray(put, dtype=object)
    kind = values.dtype.kind
    if kind == "b":
        return values
    if kind in "iuf":
        bad = ~((values == 0) | (values == 1))
        if bad.any():
            index = int(np.argmax(bad.reshape(-1)))
            raise ValueError(f"{what}: put{where(index, values.shape)}: {_PUT_RULE}, got "
                             f"{values.reshape(-1)[index]}")
        return values != 0
    if kind not in "OUS":
        raise ValueError(f"{what}: put is an array of {values.dtype}: {_PUT_RULE}")
    flat = values.reshape(-1)
    sides = np.empty(flat.shape, dtype=np.bool_)
    read: dict[Any, Any] = {}  # one reading per distinct value: a book repeats two words
    for index, value in enumerate(flat.tolist()):
        key = (type(value), value) if _hashable(value) else None
        side = read.get(key) if key is not None else None
        if side is None:
            side = _put_side(value, read_word)
            if side is None:
                raise ValueError(f"{what}: put{where(index, values.shape)}: {_PUT_RULE}, got "
                                 f"{_shown(value)}")
            if key is not None:
                read[key] = side
        sides[index] = side
    return sides.reshape(values.shape)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _put_side(value: Any, read_word: Callable[[str], Any]) -> bool | None:
    """One value of put: True (a put), False (a call), or None when it is none of the spellings."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return bool(value) if value in (0, 1) else None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        side = read_word(value)
        return None if side is None else bool(side)
    return None


def _put_sides_on_device(put: Any, what: str, framework: str) -> Any:
    """A CuPy or PyTorch put array: bools as they are, numbers checked to be 0 or 1 (on the
    device; the index of a bad one is found on the host)."""
    name = _arrays.dtype_name(put, framework)
    if name == "bool":
        return put
    if not (name.startswith("int") or name.startswith("uint") or name.startswith("float")):
        raise ValueError(f"{what}: put is an array of {name}: {_PUT_RULE}")
    is_side = (put == 0) | (put == 1)
    if not bool(is_side.all()):
        host = _arrays.to_host(is_side, framework).reshape(-1)
        index = int(np.argmin(host))
        value = _arrays.to_host(put, framework).reshape(-1)[index]
        raise ValueError(f"{what}: put{where(index, tuple(put.shape))}: {_PUT_RULE}, got {value}")
    return put != 0


def stream_keys(ids: list[str], what: str, stacklevel: int) -> np.ndarray:
    """The Monte Carlo stream keys of trade ids (the library's monte_carlo_stream_keys), with a
    RuntimeWarning where ids repeat (their rows get the same random numbers), as ``gpukit mc``
    notes it on stderr. `stacklevel`: the caller's, for warnings.warn."""
    keys, repeated_ids, rows_with_repeated_ids = _core.stream_keys(ids)
    if repeated_ids:
        warnings.warn(f"{what}: {repeated_ids} ids appear on more than one row "
                      f"({rows_with_repeated_ids} rows); rows with the same id get the same "
                      "random numbers", RuntimeWarning, stacklevel=stacklevel + 1)
    return keys
