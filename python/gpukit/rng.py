"""gpukit.rng: counter-based random numbers (Philox4x32-10), the same on the CPU and the GPU.

Element j of a fill is element ``offset + j`` of the flat stream of ``seed``, so a stream can be
drawn in pieces (consecutive offsets) and the numbers depend on neither the backend, the thread
count nor the chunking: uniforms and 32-bit words are bitwise identical on the CPU and a GPU;
normals differ by the last bits of the platforms' log and sin/cos (Box-Muller), or not at all for
the inverse-CDF transform of the central 85% of uniforms. Philox is checked against Random123's
published known-answer vectors.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence, Union

import numpy as np

from . import _arrays, _checks
from . import _gpukit as _core

__all__ = ["bits", "normal", "uniform"]

Shape = Union[int, Sequence[int]]

_INT64_MAX = (1 << 63) - 1


def _fill(distribution: str, n: Shape, seed: int, generator: str, dtype: Any, offset: int,
          transform: str, device: str, like: Any, stream: Any) -> Any:
    if _checks.text(generator, "generator", "'philox'") != "philox":
        raise ValueError(f"generator must be 'philox' (the flat Philox4x32-10 streams), got "
                         f"'{generator}'")
    _checks.not_masked(n, "n")
    if isinstance(n, (str, bytes)):
        raise TypeError(f"n must be an integer or a shape (a sequence of integers), not "
                        f"{type(n).__name__} ({n!r})")
    shape = ((_checks.integer(n, "n", 0, _INT64_MAX),) if np.ndim(n) == 0 else
             tuple(_checks.integer(v, f"n[{axis}]", 0, _INT64_MAX) for axis, v in enumerate(n)))
    seed = _checks.integer(seed, "seed", 0, _checks.UINT64_MAX)
    offset = _checks.integer(offset, "offset", 0, _checks.UINT64_MAX)
    transform, device = _checks.text(transform, "transform"), _checks.device(device)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be float32 or float64 (a NumPy dtype or its name), not "
                        f"{dtype!r}") from None
    _checks.not_masked(like, "like")
    if like is not None and not _arrays.is_array(like):
        raise TypeError(f"like must be a CuPy or PyTorch array (or None), not "
                        f"{type(like).__name__}")
    if like is None:
        framework, handle = _arrays.NUMPY, _arrays.resolve_stream(None, _arrays.NUMPY, stream)
    else:
        framework = _arrays.framework_of(like)
        handle = _arrays.resolve_stream(like, framework, stream, "like")
    out = _arrays.empty(framework, like, shape, dtype)
    _core.generate(distribution, _arrays.exported(out, framework, handle), seed, offset,
                   transform, device, handle)
    return out


def uniform(n: Shape, seed: int = 2008, generator: Literal["philox"] = "philox", *,
            dtype: Any = np.float64, offset: int = 0, device: str = "auto", like: Any = None,
            stream: Any = None) -> Any:
    """Uniforms in the open interval (0, 1), float64 or float32, of shape ``n`` (an int or a
    shape): elements offset, offset + 1, ... of the flat Philox stream of ``seed``. ``n``,
    ``seed`` and ``offset`` are integers (floats that are exact integers too, ``n=1e6``; 2.5 is
    a ValueError); ``seed`` and ``offset`` from 0 to 2**64 - 1.

    The result is a NumPy array computed where ``device`` says (``"auto"``: a GPU when one is
    usable), or, with ``like`` a CuPy or PyTorch CUDA array, an array of that library filled on
    its GPU on the caller's current stream (or ``stream``), not waited for.
    """
    return _fill("uniform", n, seed, generator, dtype, offset, "box_muller", device, like, stream)


def normal(n: Shape, seed: int = 2008, generator: Literal["philox"] = "philox", *,
           dtype: Any = np.float64, offset: int = 0,
           transform: Literal["box_muller", "inverse_cdf"] = "box_muller", device: str = "auto",
           like: Any = None, stream: Any = None) -> Any:
    """Standard normals, float64 or float32, of shape ``n``, from the flat Philox stream of
    ``seed``: ``transform="box_muller"`` (the 2008 case study's: two uniforms per pair of
    normals) or ``"inverse_cdf"`` (Wichura's AS241: one uniform per normal, order-preserving).
    Where the result lives and where it is computed: as :func:`uniform`."""
    return _fill("normal", n, seed, generator, dtype, offset, transform, device, like, stream)


def bits(n: Shape, seed: int = 2008, generator: Literal["philox"] = "philox", *, offset: int = 0,
         device: str = "auto", like: Any = None, stream: Any = None) -> Any:
    """Random 32-bit words (uint32) of shape ``n`` from the flat Philox stream of ``seed``: the
    raw output the uniforms and normals are made from. As :func:`uniform` otherwise."""
    return _fill("bits", n, seed, generator, np.uint32, offset, "box_muller", device, like, stream)
