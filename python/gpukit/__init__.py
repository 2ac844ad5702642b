"""gpukit: GPU case studies as verified, benchmarked software, from Python.

Every function calls the C++ library function the matching ``gpukit`` command calls, with the same
contract (exact integer sums, deterministic floating-point reductions and scans, the same Monte
Carlo bits for the same book and seed), on NumPy arrays (host memory) or on CuPy and PyTorch CUDA
arrays without a copy:

- host arrays run where ``device`` says: ``"auto"`` (a GPU when one is usable, as the CLI does),
  ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; results are NumPy arrays;
- CUDA arrays run on their GPU (``device`` may only confirm it) on the caller's current stream or
  ``stream=``; results are arrays of the same library on that GPU.

black_scholes, implied_volatility, monte_carlo, price_book, reduce and poisson also spread host
arrays over several
GPUs (``device="cuda:all"``, ``"cuda:0,1"`` or ``["cuda:0", "cuda:1"]``) and over the ranks of
an MPI job (``mpirun -np 2 python script.py``: every rank makes the same calls and gets the
result), with the bits of one device (docs/python.md, "Several GPUs and MPI").

The GIL is released while the library computes; a long Monte Carlo pricing stops on Ctrl-C
with KeyboardInterrupt. Errors: an argument of the wrong type raises TypeError and invalid input
ValueError (the CLI's message, naming the Python argument), running out of memory MemoryError
(``bytes_requested`` says how much was asked), I/O OSError, a failing CUDA call
:class:`CudaError`, no usable GPU where one was asked for :class:`DeviceUnavailable`. See
docs/python.md ("Arguments", "Errors").
"""

from __future__ import annotations

import os as _os

# OpenMP threads that wait for work sleep instead of spinning (README "Threads"); libgomp reads
# this once, when the compiled module below loads it. A user's own choice stands (the rule of
# gpukit::request_passive_openmp_waiting, include/gpukit/core/cpu_threads.hpp).
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = "passive"

import re
import warnings
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence, Union

import numpy as np

from . import _arrays, _checks
from ._gpukit import CudaError, DeviceUnavailable
from ._gpukit import __version__ as _library_version
from . import _gpukit as _core

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__version__: str = _library_version

__all__ = [
    "CudaError",
    "DeviceUnavailable",
    "__version__",
    "black_scholes",
    "built_with_cuda",
    "compact",
    "devices",
    "gemm",
    "implied_volatility",
    "iv_status_names",
    "monte_carlo",
    "poisson",
    "price_book",
    "reduce",
    "rng",
    "saxpy",
    "scan",
]

CudaError.__module__ = "gpukit"
DeviceUnavailable.__module__ = "gpukit"

if _core._mpi_ranks() > 1:
    # A rank of an MPI job (mpirun -np N python script.py): an exception that ends this rank's
    # script, which the other ranks may not share, would leave them waiting in a collective.
    # After the usual traceback, the whole job ends (MPI_Abort, exit code 1) instead of hanging.
    import sys as _sys

    _excepthook = _sys.excepthook

    def _end_the_job(kind, value, traceback):  # pragma: no cover (runs as the process ends)
        _excepthook(kind, value, traceback)
        _sys.stderr.flush()
        _core._abort_job(1)

    _sys.excepthook = _end_the_job

Device = str  # "auto" | "cpu" | "cuda" | "cuda:N"
# The calls that spread over several devices take more: "cuda:all", "cuda:N,M,...", or a list of
# "cuda:N" (docs/python.md, "Several GPUs and MPI").
Devices = Union[str, Sequence[str]]
ArrayLike = Any  # a NumPy, CuPy or PyTorch array, or what numpy.asarray takes


def built_with_cuda() -> bool:
    """True when this gpukit was built with its CUDA backend (nvcc was found at build time)."""
    return _core.built_with_cuda()


def devices() -> list[dict[str, Any]]:
    """The usable CUDA devices, one dict each: ``device`` ("cuda:0"), ``name``, ``pci_bus_id``,
    ``compute_capability`` (major, minor), ``sm_count``, ``total_memory_bytes``,
    ``l2_cache_bytes``. Empty without a GPU, without a driver, or in a CPU-only build (then
    ``device="cuda"`` raises DeviceUnavailable and ``"auto"`` computes on the CPU)."""
    return _core.devices()


# --------------------------------------------------------------------------------------------
# Reduction, scan, compaction


def reduce(
    x: ArrayLike,
    op: Literal["sum", "product", "min", "max", "and", "or", "xor"] = "sum",
    *,
    accurate: bool = False,
    device: Devices = "auto",
    stream: Any = None,
) -> Union[int, float]:
    """Reduces every element of ``x`` (any shape, taken in C order) with ``op``, as
    ``gpukit reduce`` does.

    ``x``: int32, int64, uint32, float32 or float64. Integer results are Python ints, exact:
    int32 and uint32 sums cannot overflow, an int64 sum that does not fit int64 raises
    ValueError ("sum overflows int64"); integer products wrap modulo 2**64 (as numpy.prod);
    and/or/xor need integers. Floating results are Python floats of the input's precision.

    Floating sums and products follow one fixed reduction tree (16384-element tiles of 1024
    lanes), so the result has the same bits on every run, thread count, GPU launch shape, and on
    the CPU and GPU; it is not numpy.sum's pairwise order, so the two differ by rounding.
    ``accurate=True`` accumulates floating sums in double (float32 input) or double-double
    (float64 input) along the same tree: within a few ulps of the exact sum. Any NaN gives NaN;
    min and max order -0.0 below +0.0; the empty sum is 0, the empty product 1, and min or max
    of an empty array is a ValueError.

    On a CUDA array the call waits for ``stream`` (it returns a host value). A host ``x`` with a
    device list, or under mpirun, is reduced over those devices and ranks with the same bits
    (the root rank's x; every rank gets the result).
    """
    op, accurate = _checks.text(op, "op"), _checks.flag(accurate, "accurate")
    device = _checks.spread_device(device)
    x, framework = _checks.input_array(x, "x")
    handle = _arrays.resolve_stream(x, framework, stream)
    return _core.reduce(_arrays.exported(x, framework, handle), op, accurate, device, handle)


def scan(
    x: ArrayLike,
    op: Literal["sum", "product", "min", "max"] = "sum",
    exclusive: bool = False,
    *,
    device: Device = "auto",
    stream: Any = None,
) -> Any:
    """The inclusive (or ``exclusive``) prefix scan of ``x`` in C order, as ``gpukit scan``: an
    array of x's shape and dtype (int32, int64, uint32, float32 or float64).

    ``y[i] = x[0] op ... op x[i]``; exclusive: ``y[0]`` is the identity (sums start at +0), then
    ``y[i] = x[0] op ... op x[i-1]``. Integer sums are exact: an output that does not fit the
    dtype raises ValueError naming the element; integer products wrap. Floating scans follow one
    fixed bracketing (4096-element tiles combined by a fixed tree), so they have the same bits on
    every run and on the CPU and GPU, within a few ulps of the partial sums of numpy.cumsum. On a
    CUDA array the call waits for ``stream``.
    """
    op, exclusive = _checks.text(op, "op"), _checks.flag(exclusive, "exclusive")
    device = _checks.device(device)
    x, framework = _checks.input_array(x, "x")
    handle = _arrays.resolve_stream(x, framework, stream)
    out = _arrays.empty_like(x, framework)
    _core.scan(_arrays.exported(x, framework, handle), _arrays.exported(out, framework, handle),
               op, exclusive, device, handle)
    return out


def compact(
    x: ArrayLike,
    keep: Literal["nonzero", "positive", "negative", "finite"] = "nonzero",
    *,
    device: Device = "auto",
    stream: Any = None,
) -> Any:
    """The elements of ``x`` (C order) that satisfy ``keep``, in order, as a 1-D array of x's
    dtype, as ``gpukit compact``.

    nonzero drops 0 and -0.0 and keeps NaN; positive and negative keep neither NaN nor a zero;
    finite drops NaN and infinities (every integer is finite). The result is a view of the first
    elements of an array of x.size elements. On a CUDA array the call waits for ``stream``.
    """
    keep, device = _checks.text(keep, "keep"), _checks.device(device)
    x, framework = _checks.input_array(x, "x")
    handle = _arrays.resolve_stream(x, framework, stream)
    out = _arrays.empty(framework, x, (int(np.prod(x.shape, dtype=np.int64)),),
                        _dtype_of(x, framework))
    count = _core.compact(_arrays.exported(x, framework, handle),
                          _arrays.exported(out, framework, handle), keep, device, handle)
    return out[:count]


def _dtype_of(x: Any, framework: str) -> Any:
    return np.dtype(_arrays.dtype_name(x, framework))


# --------------------------------------------------------------------------------------------
# Option pricing


def _precision_dtype(precision: str) -> Any:
    """The dtype a pricing `precision` computes in, by the library's rule
    (finance::parse_precision)."""
    _checks.text(precision, "precision", "double or float")
    return np.dtype(_core.precision_dtype(precision)).type


class _Book:
    """The per-option arguments of a pricing call, broadcast against each other and made flat,
    C-contiguous arrays in the framework and on the device of the first array among them.

    Each argument is checked to be a number or an array of numbers (TypeError naming it), but
    those the caller has read already and gives in `checked` (put's sides, barrier_type's
    codes); ``terms`` holds them as they are priced (host arrays as NumPy arrays)."""

    def __init__(self, what: str, arguments: dict[str, Any],
                 checked: dict[str, Any] | None = None):
        self.what = what
        checked = checked or {}
        given_as_array = [name for name, value in arguments.items() if _arrays.is_array(value)]
        arguments = {name: checked[name] if name in checked else _checks.numbers(value, name)
                     for name, value in arguments.items()}
        self.terms = arguments
        # Each argument's own shape, for naming an element in it ("spot[1, 0]", or "spot").
        self.shapes = {name: tuple(v.shape) if _arrays.is_array(v) else np.shape(v)
                       for name, v in arguments.items()}
        arrays = [arguments[name] for name in given_as_array]
        first = arrays[0] if arrays else None
        self.framework = _arrays.framework_of(first) if first is not None else _arrays.NUMPY
        self.like = first
        self.xp = _arrays.module_of(self.framework)
        shapes = list(self.shapes.values())
        try:
            self.shape = np.broadcast_shapes(*shapes) if shapes else ()
        except ValueError:
            described = ", ".join(f"{name} {shape}" for name, shape in self.shapes.items())
            raise ValueError(f"{what}: the arguments do not broadcast together: {described}") from None
        self.count = int(np.prod(self.shape, dtype=np.int64))
        self.on_cuda = first is not None and _arrays.on_cuda(first, self.framework)

    def column(self, value: Any, dtype: Any) -> Any:
        """A flat, C-contiguous array of `count` elements of `dtype`."""
        xp, framework = self.xp, self.framework
        if framework == _arrays.TORCH:
            torch = xp
            if _arrays.framework_of(value) != _arrays.TORCH:
                value = torch.as_tensor(np.asarray(value), device=self.like.device)
            value = value.to(_arrays.torch_dtype(dtype))
            return torch.broadcast_to(value, self.shape).reshape(-1).contiguous()
        if framework == _arrays.CUPY:
            with xp.cuda.Device(self.like.device.id):
                value = xp.asarray(value, dtype=dtype)
                return xp.ascontiguousarray(xp.broadcast_to(value, self.shape)).reshape(-1)
        if _arrays.framework_of(value) != _arrays.NUMPY:
            raise ValueError(
                f"{self.what}: the arguments are in different places (a "
                f"{_arrays.framework_of(value)} array beside host arrays)"
            )
        value = np.asarray(value, dtype=dtype)
        return np.ascontiguousarray(np.broadcast_to(value, self.shape)).reshape(-1)

    def parameter(self, value: Any, dtype: Any) -> Any:
        """A float for a scalar (the book-wide value), else a column."""
        if not _arrays.is_array(value) and np.ndim(value) == 0:
            return float(value)
        return self.column(value, dtype)

    def empty(self, dtype: Any) -> Any:
        return _arrays.empty(self.framework, self.like, (self.count,), dtype)

    def exported(self, values: list[Any], stream: int) -> list[Any]:
        """The arrays among `values` as the module takes them (CUDA arrays: DLPack capsules for
        `stream`); floats and None as they are."""
        return [_arrays.exported(v, _arrays.framework_of(v), stream) if _arrays.is_array(v)
                else v for v in values]

    def shaped(self, flat: Any) -> Any:
        return flat.reshape(self.shape)

    def at(self, row: int) -> str:
        """The index of flat element `row` as a message writes it: "[3]", "[0, 1]", or "" for a
        scalar book."""
        if not self.shape:
            return ""
        return "[" + ", ".join(str(int(i)) for i in np.unravel_index(row, self.shape)) + "]"

    def option_at(self, row: int) -> str:
        """Option `row` (a flat index) as a message names it: "option [0, 1]", or "the option" in
        a scalar book."""
        return f"option {self.at(row)}" if self.shape else "the option"

    def check_terms(self, is_put, spot, strike, maturity, rate, volatility, dividend,
                    barrier_type=None, barrier=None, steps=None, average=None, exercise=None,
                    model=None, v0=0.0, kappa=0.0, theta=0.0, sigma_v=0.0, rho=0.0,
                    precision="double") -> None:
        """ValueError for the first term a CSV book priced in `precision` may not hold (the
        library's io::find_book_term_problem), named by its argument and index. Host arrays only:
        CUDA arrays are priced as the C++ device API prices them, unchecked (a NaN gives NaN)."""
        if self.on_cuda:
            return
        problem = _core.book_term_problem(
            self.count, is_put, spot, strike, maturity, rate, volatility, dividend,
            barrier_type, barrier, steps, average, exercise, model, v0, kappa, theta, sigma_v,
            rho, precision)
        if problem is None:
            return
        row, column, what = problem
        where = self.index_in(column, row) if row >= 0 else ""
        raise ValueError(f"{self.what}: {column}{where}: {what}")

    def index_in(self, name: str, row: int) -> str:
        """Where option `row` (a flat index of the broadcast shape) is in argument `name`: "[i, j]"
        in the argument's own shape, or "" for a scalar argument."""
        shape = self.shapes.get(name, self.shape)
        if not shape:
            return ""
        index = np.unravel_index(row, self.shape)[len(self.shape) - len(shape):]
        own = (0 if n == 1 else int(i) for i, n in zip(index, shape))
        return "[" + ", ".join(str(i) for i in own) + "]"


def black_scholes(
    spot: ArrayLike,
    strike: ArrayLike,
    maturity: ArrayLike,
    rate: ArrayLike,
    volatility: ArrayLike,
    dividend: ArrayLike = 0.0,
    put: ArrayLike = False,
    greeks: bool = False,
    precision: Literal["double", "float"] = "double",
    *,
    cdf: Literal["erfc", "hull", "hull-fast"] = "erfc",
    variant: str = "",
    device: Devices = "auto",
    stream: Any = None,
) -> Any:
    """Black-Scholes-Merton prices (and Greeks) of European options, as ``gpukit bs`` prices a
    book: every argument per option, scalars broadcasting against arrays (NumPy's rules).

    ``spot`` > 0, ``strike`` >= 0, ``maturity`` >= 0 in years, ``rate`` and ``dividend``
    continuously compounded, ``volatility`` >= 0 annualized. ``put``: each option's side as the
    CSV book's type column says it, True or 1 for a put and False or 0 for a call, or the words
    call, put, c, p in any case (a pandas type column works as it is); anything else is a
    ValueError naming put.
    With F = S e^{-qT}, K = X e^{-rT}, s = sigma sqrt(T): call = F N(d1) - K N(d2), put =
    K N(-d2) - F N(-d1); sigma sqrt(T) == 0 or X == 0 gives the discounted intrinsic value. N is
    taken from erfc (``cdf="hull"``: the 2008 case study's polynomial, error 7.5e-8). Double
    prices are within 1e-9 of an exact closed form.

    Returns an array of the broadcast shape in ``precision`` (float64 or float32), or with
    ``greeks=True`` a dict of such arrays: price, delta, gamma, vega, theta (per year), rho
    (each option's own side). Each option gets the bits ``gpukit bs`` gives it on the same
    device and precision.

    Host arrays are checked as a CSV book is (ValueError naming the argument and, in its own
    shape, the index, e.g. "black_scholes: strike[3]: must be >= 0, got -1"; a scalar without
    one; with ``precision="float"`` every number must also fit a float: "spot[0]: out of the
    range of a float ..."); CUDA arrays are not (the device API's contract: a NaN gives NaN for
    that option), and are priced on ``stream`` without waiting. ``variant`` must be a name of the
    CUDA registry (as ``gpukit bs --variant``) on every backend. Host arrays with a device list
    (``"cuda:all"``, ``["cuda:0", "cuda:1"]``), or under mpirun, are priced over those devices
    and ranks as ``gpukit bs --device cuda:all`` prices a book: the same bits, every rank the
    result.
    """
    dtype = _precision_dtype(precision)
    greeks = _checks.flag(greeks, "greeks")
    cdf, variant = _checks.text(cdf, "cdf"), _checks.text(variant, "variant")
    device = _checks.spread_device(device)
    is_put = _checks.put_sides(put, "black_scholes", _core.option_type)
    book = _Book("black_scholes", dict(spot=spot, strike=strike, maturity=maturity, rate=rate,
                                       volatility=volatility, dividend=dividend, put=put),
                 checked=dict(put=is_put))
    spot, strike, maturity, rate, volatility, dividend = (
        book.terms[k] for k in ("spot", "strike", "maturity", "rate", "volatility", "dividend"))
    if not book.on_cuda:  # checked before any rounding to float, as the CLI checks its book
        checked_columns = [book.column(v, np.float64) for v in (spot, strike, maturity)]
        checked_parameters = [book.parameter(v, np.float64) for v in (rate, volatility, dividend)]
        book.check_terms(np.zeros(book.count, np.uint8), *checked_columns, *checked_parameters,
                         precision=precision)
        if _core.spreads(device):
            # Over a device list or the ranks of an MPI job: the book's call, as `gpukit bs`
            # makes it (each option's own side, the bits of one device), every rank the result.
            spread = _core.price_european_book(book.count, book.column(is_put, np.uint8),
                                               *checked_columns, *checked_parameters, precision,
                                               greeks, cdf, variant, device)
            priced = {name: book.shaped(v.astype(dtype, copy=False))
                      for name, v in spread.items()}
            _refuse_non_finite("black_scholes", priced, precision, False, book.option_at)
            return priced if greeks else priced["price"]
    if not book.on_cuda and dtype is np.float64:
        columns, parameters = checked_columns, checked_parameters
    else:
        columns = [book.column(v, dtype) for v in (spot, strike, maturity)]
        parameters = [book.parameter(v, dtype) for v in (rate, volatility, dividend)]
    # Each option's side goes through: the library computes and writes that side only.
    sides = is_put if isinstance(is_put, bool) else book.column(is_put, np.uint8)
    handle = _arrays.resolve_stream(book.like, book.framework, stream) if book.like is not None \
        else _arrays.resolve_stream(None, _arrays.NUMPY, stream)
    names = ["price", "delta", "gamma", "vega", "theta", "rho"] if greeks else ["price"]
    outputs = {name: book.empty(dtype) for name in names}
    _core.black_scholes(*book.exported(columns + parameters + [sides], handle),
                        {k: book.exported([v], handle)[0] for k, v in outputs.items()}, cdf,
                        variant, device, handle)
    priced = {name: book.shaped(v) for name, v in outputs.items()}
    if not book.on_cuda:
        _refuse_non_finite("black_scholes", priced, precision, False, book.option_at)
    return priced if greeks else priced["price"]


def _refuse_non_finite(what: str, columns: dict[str, Any], precision: str, as_float: bool,
                       option_at) -> None:
    """ValueError for the first priced value that is no price (io::find_non_finite_output), as
    ``gpukit bs`` and ``gpukit mc`` refuse it: terms within the book's rules can still overflow
    the arithmetic (a rate of -100 discounts by e^100, beyond a float). Host arrays; a float32
    column is converted only once one of its values is not finite. ``option_at(row)`` names the
    option."""
    if all(v.dtype == np.float32 and np.isfinite(v).all() for v in columns.values()):
        return
    problem = _core.non_finite_output(
        [(name, np.ascontiguousarray(v, dtype=np.float64).reshape(-1))
         for name, v in columns.items()], precision, as_float)
    if problem is None:
        return
    row, _, text = problem
    hint = " (precision='double' may)" if precision == "float" else ""
    raise ValueError(f"{what}: {option_at(row)}: {text}{hint}")


_BARRIER_TYPES = ("none", "down-out", "down-in", "up-out", "up-in")

# The word columns of a Monte Carlo book: the library's reader of each CSV column (a word to its
# enumeration's code, None for another word) and the words it reads, for messages.
_WORD_COLUMNS = {
    "barrier_type": (_core.barrier_type, "none, down-out, down-in, up-out or up-in"),
    "average": (_core.average_type, "none, arithmetic or geometric"),
    "exercise": (_core.exercise_style, "european, bermudan or american"),
    "model": (_core.asset_model, "black-scholes or heston"),
}
#: The parameters of a heston row (model="heston"), in the CSV book's column order.
_HESTON_PARAMETERS = ("v0", "kappa", "theta", "sigma_v", "rho")


def _word_codes(value: Any, what: str, name: str) -> Any:
    """The words of argument `name` (one, or one per option: barrier_type, average, exercise,
    model) as their enumeration's codes (uint8), read by the library's reader of the CSV
    column."""
    read, words_read = _WORD_COLUMNS[name]
    _checks.not_masked(value, name)
    words = np.asarray(value, dtype=object)
    flat = words.reshape(-1)
    uniques, inverse = np.unique(flat.astype(str), return_inverse=True)
    codes = []
    for position, word in enumerate(uniques):
        code = read(word)
        if code is None:
            row = int(np.argmax(inverse == position))
            raise ValueError(f"{what}: {name}{_checks.where(row, words.shape)}: expected "
                             f"{words_read}, got \"{word}\"")
        codes.append(code)
    return np.asarray(codes, dtype=np.uint8)[inverse].reshape(words.shape)


_LIBRARY_ROW_ERROR = re.compile(r"monte carlo: option (\d+): (.*)", re.DOTALL)


def _priced_naming_rows(price: Callable[[], Any], what: str, option_at: Callable[[int], str]):
    """price(), with the library's refusal of a row ("monte carlo: option 3: early exercise allows
    at most 65536 dates (steps), got 70000") raised in the caller's words: "monte_carlo:
    option [3]: ..." or "price_book: row 3 (index 'T4'): ..." (``option_at(row)``)."""
    try:
        return price()
    except ValueError as error:
        found = _LIBRARY_ROW_ERROR.fullmatch(str(error))
        if found is None:
            raise
        raise ValueError(f"{what}: {option_at(int(found[1]))}: {found[2]}") from None


def monte_carlo(
    spot: ArrayLike,
    strike: ArrayLike,
    maturity: ArrayLike,
    rate: ArrayLike,
    volatility: ArrayLike,
    dividend: ArrayLike = 0.0,
    put: ArrayLike = False,
    *,
    barrier: ArrayLike = None,
    barrier_type: Any = "none",
    steps: ArrayLike = None,
    average: Any = "none",
    exercise: Any = "european",
    model: Any = "black-scholes",
    v0: ArrayLike = None,
    kappa: ArrayLike = None,
    theta: ArrayLike = None,
    sigma_v: ArrayLike = None,
    rho: ArrayLike = None,
    paths: int = 1 << 20,
    seed: int = 2008,
    monitoring: Literal["discrete", "continuous"] = "discrete",
    antithetic: bool = False,
    control_variate: bool = False,
    greeks: bool = False,
    precision: Literal["double", "float"] = "double",
    sampler: Literal["philox", "sobol"] = "philox",
    replicates: int = 16,
    ids: Sequence[Any] | None = None,
    device: Devices = "auto",
    stream: Any = None,
) -> dict[str, Any]:
    """Monte Carlo prices of European, barrier, Asian and early-exercise options under geometric
    Brownian motion or Heston's stochastic variance, as ``gpukit mc`` prices a book (the same bits
    for the same book, options and seed).

    Per option, broadcasting: the terms of :func:`black_scholes`, ``barrier`` (> 0 where
    ``barrier_type`` is not none), ``barrier_type`` ("none", "down-out", "down-in", "up-out",
    "up-in") and ``steps`` (1 to 2**20: a barrier's monitoring dates, an Asian option's fixings,
    the exercise dates, a heston row's time steps; default 1, which Asian, early-exercise and heston
    options must not leave to the default: a ValueError naming steps). The columns of the CSV book
    of ``gpukit mc``, each a word or a word per option (an array of strings), or a number or an
    array per option:

    - ``average``: "none", "arithmetic" or "geometric": an Asian (average price) option on the
      ``steps`` fixings t_i = i T / steps (no barrier, european exercise);
    - ``exercise``: "european", "bermudan" or "american": early exercise at the ``steps`` dates
      t_i = i T / steps ("american" is the Bermudan approximation on them), priced by
      Longstaff-Schwartz (host arrays on one device; not with control_variate or
      sampler="sobol"; with antithetic the pricing pass prices pairs);
    - ``model``: "black-scholes" or "heston", whose rows take ``v0`` (>= 0, the initial variance),
      ``kappa`` (> 0), ``theta`` (>= 0, the long-run variance), ``sigma_v`` (>= 0, the volatility
      of variance) and ``rho`` (in [-1, 1]), all five required where a row is heston, and ignore
      ``volatility`` (give 0 there). Heston paths follow Andersen's QE scheme on ``steps`` steps
      (no Greeks, discretely monitored barriers only).

    The words are read as the CSV reader reads them (any case); a row the library cannot price
    (an Asian barrier option, early exercise under Heston) is a ValueError naming the option and
    its argument or the reason. ``paths`` per option (2 to 2**34;
    even with ``antithetic``), ``seed`` the Philox key. Option i's random numbers follow its
    stream key: its flat index, or with ``ids`` (one per option) the FNV-1a 64 hash of
    ``str(id)``'s UTF-8 bytes, as ``gpukit mc`` keys a book with an ``id`` column, so a trade
    keeps its price wherever it sits; ids found on several rows give a RuntimeWarning with the
    counts (their rows get the same numbers). ``put`` as for :func:`black_scholes`; ``paths`` and
    ``seed`` take integers or floats that are exact integers (``paths=1e6``).

    ``sampler="sobol"`` draws Joe and Kuo's Sobol points, Owen-scrambled, through a Brownian
    bridge over the dates, as ``gpukit mc --sampler sobol``: the price is the mean of
    ``replicates`` (2 to 65536) independent scramblings and std_error their spread over
    sqrt(replicates); ``paths`` is their total and a multiple of ``replicates`` (of twice it with
    ``antithetic``). One device only (no device list, no mpirun), European and barrier options.

    Returns a dict of float64 arrays of the broadcast shape: price, std_error, ci_low, ci_high
    (95%), paths; delta, gamma and vega with ``greeks`` (pathwise on European options, gamma the
    difference of pathwise deltas at spot +- 1%; central differences of prices on barrier options
    and with ``sampler="sobol"``, as ``gpukit mc --greeks``); vrf_antithetic / vrf_control with the
    variance reductions. Host terms are checked as a CSV book is (ValueError; with ``precision="float"``
    every number must also fit a float); CUDA terms are priced on their device (the call waits for
    ``stream``). As ``gpukit mc``, a RuntimeWarning names each barrier already breached at the
    start (priced as knocked out or in at once: usually a typo) and the options none of whose
    paths paid (price, std_error and ci 0: no confidence interval, only that a path pays with a
    probability below 3/paths); host terms only. Ctrl-C stops a long pricing between blocks of
    work (a chunk of paths on the CPU, a kernel launch on a GPU) with KeyboardInterrupt, leaving
    nothing queued and no result. Host terms with a device list (``"cuda:all"``,
    ``["cuda:0", "cuda:1"]``), or under mpirun, are priced over those devices and ranks as
    ``gpukit mc --device cuda:all`` prices a book: the same bits, every rank the result (and on
    Ctrl-C of any rank, every rank a KeyboardInterrupt).
    """
    settings = _monte_carlo_settings(paths, seed, monitoring, antithetic, control_variate, greeks,
                                     precision, sampler, replicates, device)
    greeks, antithetic, control_variate = (settings[k] for k in
                                           ("greeks", "antithetic", "control_variate"))
    sides = _checks.put_sides(put, "monte_carlo", _core.option_type)
    words = dict(barrier_type=barrier_type, average=average, exercise=exercise, model=model)
    codes = {name: _word_codes(value, "monte_carlo", name) for name, value in words.items()}
    heston = dict(v0=v0, kappa=kappa, theta=theta, sigma_v=sigma_v, rho=rho)
    if np.any(codes["model"] != 0):
        for name, value in heston.items():
            if value is None:
                raise ValueError(f"monte_carlo: {name}: a heston row needs v0, kappa, theta, "
                                 "sigma_v and rho")
    # Not read on the other rows (the CSV book's empty fields: 0).
    heston = {name: 0.0 if value is None else value for name, value in heston.items()}
    book = _Book("monte_carlo", dict(spot=spot, strike=strike, maturity=maturity, rate=rate,
                                     volatility=volatility, dividend=dividend, put=put,
                                     barrier=0.0 if barrier is None else barrier,
                                     steps=1 if steps is None else steps, **words, **heston),
                 checked=dict(put=sides, **codes))
    spot, strike, maturity, rate, volatility, dividend = (
        book.terms[k] for k in ("spot", "strike", "maturity", "rate", "volatility", "dividend"))
    f64 = np.float64
    spot_c, strike_c, maturity_c = (book.column(v, f64) for v in (spot, strike, maturity))
    rate_p, volatility_p, dividend_p = (book.parameter(v, f64) for v in (rate, volatility, dividend))
    is_put = book.column(sides, np.uint8)
    if barrier is None:
        if np.any(codes["barrier_type"] != 0):
            raise ValueError("monte_carlo: barrier: a barrier option needs a barrier level")
    barrier_c = book.column(book.terms["barrier"], f64)
    if steps is None:
        _require_steps(book, codes)
    steps_c = _steps_column(book, book.terms["steps"])
    type_c = book.column(codes["barrier_type"], np.uint8)
    # A word column whose every option has the default is not passed (as a CSV book without the
    # column): the rows are priced as before the column existed.
    product_c = [None if not np.any(codes[k]) else book.column(codes[k], np.uint8)
                 for k in ("average", "exercise", "model")]
    heston_p = [book.parameter(book.terms[k], f64) for k in _HESTON_PARAMETERS]
    if product_c[1] is not None and book.on_cuda:
        raise ValueError("monte_carlo: exercise: bermudan and american options are priced from "
                         "host arrays (NumPy), not CUDA arrays")
    keys = None
    if ids is not None:
        if isinstance(ids, (str, bytes)) or np.ndim(ids) == 0:
            raise TypeError(f"ids must be a sequence of trade ids (one per option), not "
                            f"{type(ids).__name__}")
        _checks.not_masked(ids, "ids")
        id_list = [str(i) for i in np.asarray(ids, dtype=object).reshape(-1)]
        if len(id_list) != book.count:
            raise ValueError(f"monte_carlo: ids has {len(id_list)} entries, the book has "
                             f"{book.count} options")
        keys = book.column(_checks.stream_keys(id_list, "monte_carlo", 2).reshape(book.shape),
                           np.uint64)
    book.check_terms(is_put, spot_c, strike_c, maturity_c, rate_p, volatility_p, dividend_p,
                     type_c, barrier_c, steps_c, *product_c, *heston_p, precision)
    handle = _arrays.resolve_stream(book.like, book.framework, stream) if book.like is not None \
        else _arrays.resolve_stream(None, _arrays.NUMPY, stream)
    names = ["price", "std_error", "ci_low", "ci_high", "paths"]
    if greeks:
        names += ["delta", "gamma", "vega"]
    if antithetic:
        names.append("vrf_antithetic")
    if control_variate:
        names.append("vrf_control")
    outputs = {name: book.empty(f64) for name in names} if book.on_cuda else {}
    terms = book.exported([is_put, spot_c, strike_c, maturity_c, rate_p, volatility_p,
                           dividend_p, type_c, barrier_c, steps_c, keys, *product_c, *heston_p],
                          handle)
    result = _priced_naming_rows(
        lambda: _core.monte_carlo(book.count, *terms,
                                  {k: book.exported([v], handle)[0] for k, v in outputs.items()},
                                  *settings.values(), handle),
        "monte_carlo", book.option_at)
    if not book.on_cuda:
        _refuse_non_finite("monte_carlo", {k: v for k, v in result.items() if k in names},
                           settings["precision"], settings["precision"] == "float",
                           book.option_at)
        _warn_about_rows(result, "monte_carlo", book.count, settings["paths"], antithetic,
                         lambda row: "barrier" + book.index_in("barrier", row),
                         lambda row: "price" + book.at(row))
    columns = outputs if book.on_cuda else result
    return {name: book.shaped(columns[name]) for name in names}


def _monte_carlo_settings(paths: Any, seed: Any, monitoring: Any, antithetic: Any,
                          control_variate: Any, greeks: Any, precision: Any, sampler: Any,
                          replicates: Any, device: Any) -> dict[str, Any]:
    """The book-wide options of a Monte Carlo pricing (monte_carlo, price_book), checked, in the
    order the compiled module takes them."""
    return dict(
        paths=_checks.integer(paths, "paths", 2, _core.monte_carlo_max_paths),
        seed=_checks.integer(seed, "seed", 0, _checks.UINT64_MAX),
        monitoring=_checks.text(monitoring, "monitoring", "discrete or continuous"),
        antithetic=_checks.flag(antithetic, "antithetic"),
        control_variate=_checks.flag(control_variate, "control_variate"),
        greeks=_checks.flag(greeks, "greeks"),
        precision=_checks.text(precision, "precision", "double or float"),
        sampler=_checks.text(sampler, "sampler", "philox or sobol"),
        replicates=_checks.integer(replicates, "replicates", 2, _core.monte_carlo_max_replicates),
        device=_checks.spread_device(device))


def _warn_about_rows(columns: dict, what: str, count: int, paths: int, antithetic: bool,
                     breached_at, unpaid_at, stacklevel: int = 3) -> None:
    """RuntimeWarnings about the rows ``gpukit mc`` warns about, in its words: a barrier breached
    at the start (finance::monte_carlo_rows_breached_at_start), named by ``breached_at(row)``, and
    the rows none of whose paths paid (finance::monte_carlo_rows_without_paying_path), the first
    named by ``unpaid_at(row)``. Takes the binding's private keys out of ``columns``."""
    breached = columns.pop("_breached_at_start", ())
    notes = columns.pop("_breached_notes", ())
    for row, note in list(zip(breached, notes))[:12]:
        warnings.warn(f"{what}: {breached_at(int(row))}: {note}", RuntimeWarning,
                      stacklevel=stacklevel)
    if len(breached) > 12:
        warnings.warn(f"{what}: {len(breached) - 12} more options have a barrier breached at the "
                      "start", RuntimeWarning, stacklevel=stacklevel)
    unpaid = columns.pop("_no_paying_path", ())
    if len(unpaid):
        where = [unpaid_at(int(row)) for row in unpaid[:5]]
        warnings.warn(f"{what}: " + _core.no_paying_path_note(where, len(unpaid), count, paths,
                                                              antithetic),
                      RuntimeWarning, stacklevel=stacklevel)


def _require_steps(book: _Book, codes: dict[str, Any]) -> None:
    """ValueError naming steps when an option whose dates are part of its terms (an Asian,
    early-exercise or heston option: io::steps_requirement) was left the default of 1 step. A
    barrier option keeps that default, as before these options were priced."""
    kinds = [np.broadcast_to(codes[k], book.shape).reshape(-1)
             for k in ("average", "exercise", "model")]
    needs = np.logical_or.reduce([k != 0 for k in kinds])
    if not np.any(needs):
        return
    row = int(np.argmax(needs))
    why = _core.steps_requirement(0, *(int(k[row]) for k in kinds))
    raise ValueError(f"monte_carlo: steps: {why} (give steps=; {book.option_at(row)})")


def _steps_column(book: _Book, steps: Any) -> Any:
    """steps as uint32, refusing what the cast would change (2.5, -3, 2**40)."""
    values = np.asarray(steps) if not _arrays.is_array(steps) else steps
    if book.framework == _arrays.NUMPY:
        as_float = np.asarray(values, dtype=np.float64)
        bad = (as_float != np.floor(as_float)) | (as_float < 1) | (as_float > 1 << 20)
        if np.any(bad):
            row = int(np.argmax(np.broadcast_to(bad, book.shape).reshape(-1)))
            value = np.broadcast_to(as_float, book.shape).reshape(-1)[row]
            raise ValueError(f"monte_carlo: steps{book.index_in('steps', row)}: expected an "
                             f"integer in [1, 1048576], got {value:g}")
    return book.column(values, np.uint32)


# --------------------------------------------------------------------------------------------
# Implied volatility

#: The names of implied_volatility's status codes, indexed by the code (status 2 is
#: ``iv_status_names[2]``): ok, below-intrinsic, above-maximum, zero-maturity, invalid-input, as
#: ``gpukit iv`` writes them in its iv_status column.
iv_status_names: tuple[str, ...] = tuple(_core.iv_status_names())


def implied_volatility(
    price: ArrayLike,
    strike: ArrayLike,
    maturity: ArrayLike,
    rate: ArrayLike = 0.0,
    *,
    spot: ArrayLike = None,
    forward: ArrayLike = None,
    dividend: ArrayLike = 0.0,
    put: ArrayLike = False,
    model: Literal["black-scholes", "black76", "bachelier"] = "black-scholes",
    precision: Literal["double", "float", None] = None,
    device: Devices = "auto",
    stream: Any = None,
) -> tuple[Any, Any]:
    """Implied volatilities of option quotes, as ``gpukit iv`` inverts a book: the volatility at
    which ``model`` reprices each ``price`` (the option's present value), every argument per
    option, scalars broadcasting against arrays (NumPy's rules).

    ``model="black-scholes"`` inverts on ``spot`` (> 0, with ``dividend``, a continuous yield);
    ``"black76"`` on ``forward`` (> 0, discounted at ``rate``); ``"bachelier"`` on ``forward``
    with a normal (absolute) volatility. Give the underlying the model reads, and only that one.
    ``price`` >= 0, ``strike`` >= 0, ``maturity`` >= 0 in years, ``rate`` continuously
    compounded; ``put`` as for :func:`black_scholes`. Method: Jaeckel's "Let's Be Rational" and
    "Implied Normal Volatility": the volatility reprices the price within a few units of rounding
    (the bound of include/gpukit/finance/implied_volatility.hpp).

    Returns ``(volatility, status)``, two arrays of the broadcast shape on the input's device:
    volatility in ``precision`` (float64 or float32; None: float32 when ``price`` is a float32
    array, else float64), NaN unless the status is ok; status as uint8 codes, whose names are
    :data:`iv_status_names` (``numpy.asarray(gpukit.iv_status_names)[status]`` gives the words):
    0 ok (0 for a price exactly at intrinsic), 1 below-intrinsic (under the discounted intrinsic
    value: no volatility reproduces it), 2 above-maximum (at or above the discounted forward for
    a call, strike for a put), 3 zero-maturity, 4 invalid-input (CUDA arrays only, which are not
    checked: a NaN or negative term). A quote without a volatility is data, not an error: every
    option is answered.

    Host arrays are checked as a CSV book of quotes is (ValueError naming the argument and its
    index: "implied_volatility: price[2]: must be >= 0, got -1"; with ``precision="float"`` every
    number must fit a float); CUDA arrays are inverted on ``stream`` without waiting. Host arrays
    with a device list (``"cuda:all"``, ``["cuda:0", "cuda:1"]``), or under mpirun, are
    inverted over those devices and ranks as ``gpukit iv --device cuda:all``: the same bits,
    every rank the result.
    """
    model = _checks.text(model, "model", "black-scholes, black76 or bachelier")
    underlying_name = _core.quote_underlying(model)
    other_name = "forward" if underlying_name == "spot" else "spot"
    underlying, other = (spot, forward) if underlying_name == "spot" else (forward, spot)
    if other is not None:
        raise ValueError(f"implied_volatility: model='{model}' inverts on the {underlying_name}: "
                         f"give {underlying_name}=, not {other_name}=")
    if underlying is None:
        raise ValueError(f"implied_volatility: model='{model}' needs {underlying_name}=")
    device = _checks.spread_device(device)
    is_put = _checks.put_sides(put, "implied_volatility", _core.option_type)
    book = _Book("implied_volatility", {"price": price, underlying_name: underlying,
                                        "strike": strike, "maturity": maturity, "rate": rate,
                                        "dividend": dividend, "put": put},
                 checked=dict(put=is_put))
    if precision is None:
        given = book.terms["price"]
        precision = "float" if _arrays.is_array(given) and \
            _arrays.dtype_name(given, _arrays.framework_of(given)) == "float32" else "double"
    dtype = _precision_dtype(precision)
    terms = [book.terms[k] for k in ("price", underlying_name, "strike", "maturity")]
    rate, dividend = book.terms["rate"], book.terms["dividend"]
    if not book.on_cuda:  # checked before any rounding to float, as the CLI checks its book
        columns = [book.column(v, np.float64) for v in terms]
        parameters = [book.parameter(v, np.float64) for v in (rate, dividend)]
        sides = book.column(is_put, np.uint8)
        problem = _core.quote_term_problem(book.count, sides, *columns, *parameters, model,
                                           precision)
        if problem is not None:
            row, column, what = problem
            where = book.index_in(column, row) if row >= 0 else ""
            raise ValueError(f"implied_volatility: {column}{where}: {what}")
        if _core.spreads(device):
            # Over a device list or the ranks of an MPI job: the book's call, as `gpukit iv`
            # makes it (the bits of one device), every rank the result.
            volatility, status = _core.implied_volatility_book(
                book.count, sides, *columns, *parameters, model, precision, device)
            return book.shaped(volatility.astype(dtype, copy=False)), book.shaped(status)
        if dtype is not np.float64:
            columns = [book.column(v, dtype) for v in terms]
            parameters = [book.parameter(v, dtype) for v in (rate, dividend)]
    else:
        columns = [book.column(v, dtype) for v in terms]
        parameters = [book.parameter(v, dtype) for v in (rate, dividend)]
        sides = is_put if isinstance(is_put, bool) else book.column(is_put, np.uint8)
    handle = _arrays.resolve_stream(book.like, book.framework, stream) if book.like is not None \
        else _arrays.resolve_stream(None, _arrays.NUMPY, stream)
    volatility, status = book.empty(dtype), book.empty(np.uint8)
    _core.implied_volatility(*book.exported(columns + parameters + [sides, volatility, status],
                                            handle), model, device, handle)
    return book.shaped(volatility), book.shaped(status)


# --------------------------------------------------------------------------------------------
# Poisson


def poisson(
    f: ArrayLike,
    lengths: Union[float, Sequence[float], None] = None,
    gauge: Literal["mean", "corner"] = "mean",
    strict: bool = False,
    *,
    length: Union[float, Sequence[float], None] = None,
    boundary: Union[str, Sequence[str], None] = None,
    operator: Literal["spectral", "fd2"] = "spectral",
    helmholtz: float = 0.0,
    precision: Literal["double", "float", None] = None,
    variant: str = "",
    device: Devices = "auto",
    stream: Any = None,
) -> Any:
    """Solves (lap - helmholtz) u = f on a 2-D or 3-D grid whose every axis is periodic,
    dirichlet or neumann, by fast Fourier, sine and cosine transforms, as ``gpukit poisson``: u of
    f's shape and dtype (float32 or float64).

    Axes in C order, axis a of length ``lengths[a]`` (one number for all; default 1; the keyword
    ``length=`` is the same argument, as the CLI's ``--length`` spells it) and boundary
    ``boundary[a]`` (one name for all, a list, or "dirichlet,neumann"; default periodic):
    periodic nodes x_j = j L / n; ``"dirichlet"`` (u = 0 at both ends) the interior nodes
    x_j = (j + 1) L / (n + 1), modes sin(pi k x / L), k = 1..n (scipy's ``dst(type=1)``);
    ``"neumann"`` (du/dn = 0) the cell centres x_j = (j + 1/2) L / n, modes cos(pi k x / L),
    k = 0..n-1 (scipy's ``dct(type=2)``). ``operator="spectral"`` divides by the Laplacian's
    eigenvalues -(pi k / L)^2 (periodic -(2 pi m / L)^2); ``"fd2"`` solves the second-order
    5/7-point stencil with the same boundaries exactly (eigenvalues -(4 / h^2) sin^2(theta / 2)).
    ``helmholtz`` (lambda, finite and >= 0) is subtracted from every eigenvalue: an implicit heat
    step.

    With no dirichlet axis and ``helmholtz=0`` the constant solves the homogeneous problem, so
    f must have mean zero: an f whose mean is not zero to rounding (|mean| > 64 eps mean|f|) is
    solved as f - mean with a RuntimeWarning, or refused (ValueError) with ``strict``.
    ``gauge="mean"`` returns the mean-zero solution, ``"corner"`` the one with u[0, ..., 0] = 0.
    Any other problem has one solution: nothing is removed, ``strict`` and ``gauge`` change
    nothing. A NaN or an Inf in f is a ValueError naming it. Dirichlet and neumann axes, fd2 and
    ``helmholtz`` are solved on the CPU, on one CUDA device (variant "cufft-r2r", or its
    per-axis step "cufft-r2r-axes") and under mpirun on the CPU (``device="cpu"``); a device
    list or GPU ranks refuse them for now (ValueError). The solve runs in f's
    precision unless ``precision`` says otherwise; a CUDA f uses the best CUDA variant for the
    grid (``variant`` picks another); one device takes grids of fewer than 2^31 elements (a
    larger one is a ValueError saying so). The plan (FFT plans, tables, buffers) is kept per thread
    for the next solve of the same grid. On a CUDA array the call waits for the sums of f, then
    queues the solve on ``stream``. A host f with a device list (``"cuda:all"``,
    ``["cuda:0", "cuda:1"]``), or under mpirun, is solved in slabs over those devices and ranks
    as ``gpukit poisson --device cuda:all`` solves it (every rank passes the whole f and gets the
    whole u), within the bound of docs/scale-out.md of the one-device solve.
    """
    gauge, strict = _checks.text(gauge, "gauge"), _checks.flag(strict, "strict")
    operator = _checks.text(operator, "operator", "spectral or fd2")
    helmholtz = _checks.number(helmholtz, "helmholtz")
    # None, one name for every axis, or one per axis (a list, or the CLI's comma list): the rule
    # of `gpukit poisson --boundary` (pde::axis_boundaries), applied by the library.
    if boundary is None:
        boundary_text = ""
    elif isinstance(boundary, str):
        boundary_text = boundary
    elif isinstance(boundary, (list, tuple)):
        names = [_checks.text(b, f"boundary[{axis}]", "periodic, dirichlet or neumann")
                 for axis, b in enumerate(boundary)]
        for axis, name in enumerate(names):
            if "," in name:
                raise ValueError(f"boundary[{axis}] must be one name (periodic, dirichlet or "
                                 f"neumann), got {name!r}")
        if not names:
            raise ValueError("boundary must name at least one boundary, got an empty list")
        boundary_text = ",".join(names)
    else:
        raise TypeError(f"boundary must be a string or a list of strings (periodic, dirichlet "
                        f"or neumann), not {type(boundary).__name__}")
    variant, device = _checks.text(variant, "variant"), _checks.spread_device(device)
    f, framework = _checks.input_array(f, "f")
    dtype = _dtype_of(f, framework)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"poisson takes float32 or float64, not {dtype.name}")
    solve_dtype = dtype if precision is None else np.dtype(_precision_dtype(precision))
    # `length=` (the CLI's spelling) is `lengths` by another name; the messages use the one given.
    lengths_name = "lengths"
    if length is not None:
        if lengths is not None:
            raise TypeError("poisson takes lengths or length (one argument, two spellings), "
                            "not both")
        lengths, lengths_name = length, "length"
    _checks.not_masked(lengths, lengths_name)
    # None, one number for every axis, or one per axis: the rule of `gpukit poisson --length`
    # (pde::axis_lengths), applied by the library.
    if lengths is None:
        length_list: list[float] = []
    elif np.ndim(lengths) == 0:
        length_list = [_checks.number(lengths, lengths_name)]
    else:
        length_list = [_checks.number(v, f"{lengths_name}[{axis}]")
                       for axis, v in enumerate(lengths)]
    handle = _arrays.resolve_stream(f, framework, stream, "f")
    f_solve = f if solve_dtype == dtype else _arrays.as_dtype(f, framework, solve_dtype)
    u = _arrays.empty_like(f_solve, framework)
    info = _core.poisson(_arrays.exported(f_solve, framework, handle),
                         _arrays.exported(u, framework, handle), length_list, lengths_name,
                         boundary_text, gauge, strict, operator, helmholtz, variant, device,
                         handle)
    if info["warning"]:
        warnings.warn(info["warning"], RuntimeWarning, stacklevel=2)
    return u if solve_dtype == dtype else _arrays.as_dtype(u, framework, dtype)


# --------------------------------------------------------------------------------------------
# GEMM and SAXPY


def _c_order_operand(x: Any, framework: str, transpose: bool) -> tuple[Any, bool]:
    """A C-contiguous operand: x itself, or for an F-contiguous x its transpose (a C-contiguous
    view) with the transpose flag flipped, so that neither layout is copied."""
    if framework == _arrays.NUMPY:
        x = np.asarray(x)
        f_contiguous = x.ndim == 2 and x.flags.f_contiguous and not x.flags.c_contiguous
    elif framework == _arrays.CUPY:
        f_contiguous = x.ndim == 2 and x.flags.f_contiguous and not x.flags.c_contiguous
    else:
        f_contiguous = x.dim() == 2 and not x.is_contiguous() and x.t().is_contiguous()
    if f_contiguous:
        return x.T, not transpose
    return _arrays.contiguous(x, framework), transpose


def gemm(
    a: ArrayLike,
    b: ArrayLike,
    precision: Literal["float", "double", "tf32", "bf16", None] = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    alpha: float = 1.0,
    beta: float = 0.0,
    c: ArrayLike = None,
    *,
    variant: str = "",
    device: Device = "auto",
    stream: Any = None,
) -> Any:
    """C = alpha op(a) @ op(b) + beta c for 2-D float32 or float64 matrices of one dtype, as
    ``gpukit gemm`` (numpy.matmul's result for 2-D arrays): a new M x N array of their dtype.

    op(x) is x, or x.T with ``transpose_a`` / ``transpose_b``. ``c`` (M x N) is read only when
    ``beta`` != 0, and is not changed. ``precision``: the inputs' dtype by default; "tf32" or
    "bf16" round float32 inputs to the tensor-core format and accumulate in float32. ``alpha``
    and ``beta`` are rounded once to the inputs' dtype (float32 for tf32 and bf16); one that is
    not finite, beyond the dtype's range or non-zero but rounding to 0 is a ValueError naming it,
    as ``gpukit gemm`` refuses it. BLAS's rules: K = 0 or alpha = 0 gives beta c; NaN and Inf
    propagate. A given variant gives the same
    bits run after run; CPU (OpenBLAS) and GPU (cuBLAS) results agree within the bound of
    ``gemm --check``, not bitwise. F-contiguous inputs are used without a copy (as the transposes
    of C-contiguous ones). On CUDA arrays the product is queued on ``stream``; the plan (a cuBLAS
    handle) is kept per thread for the next product of the same shape.
    """
    transpose_a = _checks.flag(transpose_a, "transpose_a")
    transpose_b = _checks.flag(transpose_b, "transpose_b")
    if precision is not None:
        _checks.text(precision, "precision", "float, double, tf32 or bf16, or None")
    variant, device = _checks.text(variant, "variant"), _checks.device(device)
    a, b = _checks.array(a, "a"), _checks.array(b, "b")
    framework = _arrays.framework_of(a)
    a, transpose_a = _c_order_operand(a, framework, transpose_a)
    b, transpose_b = _c_order_operand(b, framework, transpose_b)
    # The library's rules of the problem (blas::gemm_problem, as `gpukit gemm`'s), before
    # anything is allocated: 2-D float32 or float64 matrices of one dtype, shapes that match, a
    # precision that computes on that dtype.
    shape = ([int(v) for v in a.shape], _arrays.dtype_name(a, framework),
             [int(v) for v in b.shape], _arrays.dtype_name(b, framework), transpose_a,
             transpose_b, precision or "")
    m, n = _core.gemm_shape(*shape)
    dtype = _dtype_of(a, framework)
    # The scalar rule of `gpukit gemm` (gpukit/blas/scalar.hpp), before beta decides whether c is
    # read: a ValueError naming alpha or beta.
    alpha = _core.blas_scalar("alpha", _checks.number(alpha, "alpha"), dtype.name)
    beta = _core.blas_scalar("beta", _checks.number(beta, "beta"), dtype.name)
    handle = _arrays.resolve_stream(a, framework, stream, "a")
    out = _arrays.empty(framework, a, (m, n), dtype)
    if beta != 0:
        if c is None:
            raise ValueError("gemm: beta != 0 needs c (the M x N matrix beta scales)")
        c = _arrays.contiguous(_checks.array(c, "c"), framework)
        _core.gemm_shape(*shape, [int(v) for v in c.shape], _arrays.dtype_name(c, framework))
        out[...] = c
    _core.gemm(*(_arrays.exported(v, framework, handle) for v in (a, b, out)), transpose_a,
               transpose_b, precision or "", float(alpha), float(beta), variant, device, handle)
    return out


def saxpy(
    alpha: float,
    x: ArrayLike,
    y: ArrayLike,
    *,
    out: ArrayLike = None,
    device: Device = "auto",
    stream: Any = None,
) -> Any:
    """out = alpha x + y, element by element, for x and y of one shape and dtype (float32 or
    float64, no broadcasting), as ``gpukit saxpy``: a new array, or ``out`` (which may be y; a
    writable array of their shape and dtype: a read-only one is a ValueError).

    alpha is rounded once to the arrays' dtype; one that is not finite, beyond the dtype's range
    or non-zero but rounding to 0 is a ValueError naming it, as ``gpukit saxpy`` refuses it.
    On the GPU each element is round(alpha*x + y) (one fused multiply-add); on the CPU
    (OpenBLAS) it may be round(round(alpha*x) + y).
    alpha = 0 gives y exactly (x is not read, BLAS's rule); otherwise NaN and infinities
    propagate. On CUDA arrays the work is queued on ``stream``.
    """
    alpha, device = _checks.number(alpha, "alpha"), _checks.device(device)
    x, framework = _checks.input_array(x, "x")
    y = _checks.input_array(y, "y")[0]
    if out is not None:
        _checks.output_array(out, "out")
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(f"saxpy: the shapes differ: x is {tuple(x.shape)} and y is "
                         f"{tuple(y.shape)}")
    handle = _arrays.resolve_stream(x, framework, stream)
    if out is None:
        out = _arrays.empty_like(y, _arrays.framework_of(y))
    _core.saxpy(float(alpha), *(_arrays.exported(v, _arrays.framework_of(v), handle)
                                for v in (x, y, out)), device, handle)
    return out


# --------------------------------------------------------------------------------------------
# pandas


def price_book(
    df: "pandas.DataFrame",
    method: Literal["black_scholes", "monte_carlo", "implied_volatility"] = "black_scholes",
    *,
    rate: float | None = None,
    volatility: float | None = None,
    dividend: float | None = None,
    greeks: bool = False,
    precision: Literal["double", "float"] = "double",
    cdf: Literal["erfc", "hull", "hull-fast"] = "erfc",
    variant: str = "",
    paths: int = 1 << 20,
    seed: int = 2008,
    monitoring: Literal["discrete", "continuous"] = "discrete",
    antithetic: bool = False,
    control_variate: bool = False,
    sampler: Literal["philox", "sobol"] = "philox",
    replicates: int = 16,
    model: Literal["black-scholes", "black76", "bachelier"] = "black-scholes",
    device: Devices = "auto",
) -> "pandas.DataFrame":
    """Prices an option book held in a pandas DataFrame, as ``gpukit bs`` (``method=
    "black_scholes"``) or ``gpukit mc`` (``"monte_carlo"``) prices the same book as CSV, or
    inverts a book of quotes as ``gpukit iv`` does (``"implied_volatility"``): a copy of ``df``
    with the output columns appended (a column already named like one is replaced in place, so
    pricing a priced book again gives the same columns).

    Columns as in the CSV book, matched ignoring case and blanks: type (call, put, c, p), spot,
    strike, maturity, rate and volatility (or ``rate=`` / ``volatility=``), dividend (a column,
    ``dividend=``, or 0); for Monte Carlo also barrier, barrier_type and steps, and an id column
    keys each trade's random numbers (the FNV-1a hash of ``str(id)``; read ids from CSV as
    strings, ``dtype={"id": str}``, to get ``gpukit mc``'s numbers). Every value is checked by
    the CSV reader's rules, and an error names the row: "price_book: row 3 (index 'T4'):
    strike: must be >= 0, got -1". Outputs: price (+ delta, gamma, vega, theta, rho with
    ``greeks``) for Black-Scholes; price, std_error, ci_low, ci_high, paths (+ delta, gamma, vega;
    vrf_antithetic, vrf_control) for Monte Carlo.

    ``"implied_volatility"`` reads the columns of ``gpukit iv``: type, price (the option's
    present value), strike, maturity, rate (or ``rate=``), and spot with dividend (a column,
    ``dividend=``, or 0) for ``model="black-scholes"``, forward for ``"black76"`` and
    ``"bachelier"``; a volatility column passes through, so a frame priced by ``"black_scholes"``
    is inverted as it is. It adds implied_volatility (float64, NaN unless the status is ok) and
    iv_status, a pandas Categorical of the words of :data:`iv_status_names` (ok,
    below-intrinsic, above-maximum, zero-maturity): ``df[df.iv_status != "ok"]`` lists the quotes
    without a volatility. ``precision="float"`` inverts in float.

    For Monte Carlo also the columns of Asian, early-exercise and Heston rows, as ``gpukit mc``
    reads them (:func:`monte_carlo`'s keywords of the same names: average, exercise, model, v0,
    kappa, theta, sigma_v, rho; an empty field is the default, and such a row needs its steps);
    Black-Scholes reads average, exercise and model to refuse, naming the row and the column,
    the rows the formula cannot price (as ``gpukit bs``; the Heston parameters pass through there).
    ``df`` must be a DataFrame (TypeError otherwise). Every keyword is checked as the matching
    function and command check it; ``cdf`` and ``variant`` belong to Black-Scholes, ``paths``,
    ``seed``, ``monitoring``, ``antithetic``, ``control_variate``, ``sampler`` and
    ``replicates`` to Monte Carlo,
    ``volatility`` and ``greeks`` to both, ``model`` to implied volatility, and a value other
    than the default for another method is a ValueError (``gpukit bs`` has no ``--paths``). Repeated ids give a RuntimeWarning; Ctrl-C stops a Monte Carlo pricing with
    KeyboardInterrupt, as in :func:`monte_carlo`. ``device`` takes a device list, and under
    mpirun the book is priced over the job's ranks, as :func:`black_scholes` and
    :func:`monte_carlo` say.
    """
    from ._pandas import price_book as _price_book

    method = _checks.text(method, "method", "black_scholes, monte_carlo or implied_volatility")
    if method not in _PRICE_BOOK_METHODS:
        raise ValueError(f"price_book: method must be black_scholes, monte_carlo or "
                         f"implied_volatility, got '{method}'")
    # What the method's command does not take (its own options are checked as the method's
    # function checks them).
    _refuse_other_methods_keywords(
        method, volatility=volatility, greeks=greeks, cdf=cdf, variant=variant, paths=paths,
        seed=seed, monitoring=monitoring, antithetic=antithetic, control_variate=control_variate,
        sampler=sampler, replicates=replicates, model=model)
    if method == "monte_carlo":
        settings = _monte_carlo_settings(paths, seed, monitoring, antithetic, control_variate,
                                         greeks, precision, sampler, replicates, device)
    elif method == "black_scholes":
        settings = dict(greeks=_checks.flag(greeks, "greeks"),
                        precision=_checks.text(precision, "precision", "double or float"),
                        cdf=_checks.text(cdf, "cdf"), variant=_checks.text(variant, "variant"),
                        device=_checks.spread_device(device))
    else:
        settings = dict(precision=_checks.text(precision, "precision", "double or float"),
                        model=_checks.text(model, "model", "black-scholes, black76 or bachelier"),
                        device=_checks.spread_device(device))
    book_wide = {name: None if value is None else _checks.number(value, name)
                 for name, value in (("rate", rate), ("volatility", volatility),
                                     ("dividend", dividend))}
    if method == "implied_volatility":
        from ._pandas import implied_volatility_book

        del book_wide["volatility"]
        return implied_volatility_book(df, **book_wide, **settings)
    return _price_book(df, method, **book_wide, **settings)


_PRICE_BOOK_METHODS = ("black_scholes", "monte_carlo", "implied_volatility")

# The keywords of price_book that some methods only take: (default, the methods that take it).
_METHOD_KEYWORDS = {
    "volatility": (None, ("black_scholes", "monte_carlo")),
    "greeks": (False, ("black_scholes", "monte_carlo")),
    "cdf": ("erfc", ("black_scholes",)),
    "variant": ("", ("black_scholes",)),
    "paths": (1 << 20, ("monte_carlo",)),
    "seed": (2008, ("monte_carlo",)),
    "monitoring": ("discrete", ("monte_carlo",)),
    "antithetic": (False, ("monte_carlo",)),
    "control_variate": (False, ("monte_carlo",)),
    "sampler": ("philox", ("monte_carlo",)),
    "replicates": (16, ("monte_carlo",)),
    "model": ("black-scholes", ("implied_volatility",)),
}


def _refuse_other_methods_keywords(method: str, **given: Any) -> None:
    """ValueError for a keyword of price_book given a value (other than its default) that only
    other methods take, as `gpukit bs` has no --paths and `gpukit mc` no --cdf."""
    for name, value in given.items():
        default, methods = _METHOD_KEYWORDS[name]
        if method in methods:
            continue
        if value is None and default is None:
            continue
        if not (isinstance(value, (str, int, float, np.generic)) and value == default):
            others = " or ".join(f"\"{m}\"" for m in methods)
            raise ValueError(f"price_book: {name}= applies to method={others}, not "
                             f"\"{method}\" (got {name}={value!r})")


from . import rng  # noqa: E402  (the submodule needs the names above)


def __getattr__(name: str) -> Any:
    # gpukit.random, the older name of gpukit.rng: imported (and its DeprecationWarning given)
    # only when a script asks for it.
    if name == "random":
        # Not `from . import random`: that asks this function for the name again.
        import importlib

        return importlib.import_module(".random", __name__)
    raise AttributeError(f"module 'gpukit' has no attribute {name!r}")
