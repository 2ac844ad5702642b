"""Arrays of NumPy, CuPy and PyTorch as the compiled module takes them.

The rules every public function follows (docs/python.md, "Arrays, devices and streams"):

- An input is taken where it is, without a copy, when it is C-contiguous and of a dtype the call
  takes. Otherwise it is copied first, and only then: a non-contiguous array to a C-contiguous
  one in its own framework and on its own device, a non-native byte order to the native one, a
  list or a scalar to a NumPy array. Dtypes are converted only where the call says so (the
  pricing inputs, to the precision); elsewhere a dtype the call does not take is a ValueError.
- Outputs are made in the first input's framework and on its device (NumPy in, NumPy out; CuPy
  or PyTorch on a GPU in, the same library's array on that GPU out).
- CUDA arrays are used on a stream: the caller's current one (CuPy's current stream, PyTorch's
  current stream of the array's device), or `stream=` (a CuPy or PyTorch stream, an object with
  ``__cuda_stream__``, or a ``cudaStream_t`` as an int). ``stream=`` with host arrays is an error.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

NUMPY = "numpy"
CUPY = "cupy"
TORCH = "torch"


def framework_of(x: Any) -> str:
    """'cupy', 'torch' or 'numpy' (anything else is read as a NumPy array)."""
    module = type(x).__module__
    if module.startswith("cupy"):
        return CUPY
    if module.startswith("torch"):
        return TORCH
    return NUMPY


def is_array(x: Any) -> bool:
    """True for an array of one of the three libraries (not for a Python scalar or a list)."""
    return isinstance(x, np.ndarray) or framework_of(x) != NUMPY


def on_cuda(x: Any, framework: str) -> bool:
    if framework == CUPY:
        return True
    if framework == TORCH:
        return bool(x.is_cuda)
    return False


def _torch():
    return sys.modules["torch"]


def _cupy():
    return sys.modules["cupy"]


_TORCH_DTYPES = ("float32", "float64", "int32", "int64", "uint32", "uint8", "uint64", "bool")


def torch_dtype(dtype: Any):
    """The PyTorch dtype of a NumPy dtype (by name)."""
    name = np.dtype(dtype).name
    if name not in _TORCH_DTYPES or not hasattr(_torch(), name):
        raise ValueError(f"this PyTorch has no {name} tensors")
    return getattr(_torch(), name)


def dtype_name(x: Any, framework: str) -> str:
    """NumPy's name of an array's dtype ('float64', 'int32', ...)."""
    if framework == TORCH:
        return str(x.dtype).removeprefix("torch.")
    return np.dtype(x.dtype).name


def contiguous(x: Any, framework: str | None = None) -> Any:
    """x itself when it is a C-contiguous array in native byte order; else a C-contiguous copy in
    its framework and on its device (lists and scalars become NumPy arrays; a PyTorch tensor that
    requires grad is detached, as DLPack cannot export it)."""
    framework = framework or framework_of(x)
    if framework == NUMPY:
        x = np.asarray(x)
        if not x.dtype.isnative:
            x = x.astype(x.dtype.newbyteorder("="))
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    if framework == CUPY:
        return x if x.flags.c_contiguous else _cupy().ascontiguousarray(x)
    if x.requires_grad:
        x = x.detach()
    return x if x.is_contiguous() else x.contiguous()


def exported(x: Any, framework: str, stream: int) -> Any:
    """What the compiled module is handed for x: host arrays themselves; a CUDA array as the
    DLPack capsule its library exports for the call's stream. The exporter then orders the work
    it has queued on its current stream before that stream (nothing to do when they are the same
    stream, the common case), as the DLPack protocol has it; DLPack spells the legacy default
    stream 1, where CUDA spells it 0."""
    if not on_cuda(x, framework):
        return x
    return x.__dlpack__(stream=stream if stream else 1)


def as_dtype(x: Any, framework: str, dtype: Any) -> Any:
    """x converted to `dtype` (a NumPy dtype) in its framework, C-contiguous; x itself when it is
    already so."""
    if framework == NUMPY:
        return np.ascontiguousarray(x, dtype=dtype)
    if framework == CUPY:
        return _cupy().ascontiguousarray(x, dtype=dtype)
    return x.to(torch_dtype(dtype)).contiguous()


def empty(framework: str, like: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised array of `shape` and `dtype` in `framework`, on `like`'s device."""
    if framework == NUMPY:
        return np.empty(shape, dtype=dtype)
    if framework == CUPY:
        cupy = _cupy()
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    return _torch().empty(shape, dtype=torch_dtype(dtype), device=like.device)


def empty_like(x: Any, framework: str) -> Any:
    """An uninitialised array of x's shape, dtype and device, C-contiguous."""
    if framework == NUMPY:
        return np.empty(x.shape, dtype=x.dtype)
    if framework == CUPY:
        cupy = _cupy()
        with cupy.cuda.Device(x.device.id):
            return cupy.empty(x.shape, dtype=x.dtype)
    return _torch().empty(x.shape, dtype=x.dtype, device=x.device)


def module_of(framework: str):
    """numpy, cupy or torch."""
    if framework == NUMPY:
        return np
    return _cupy() if framework == CUPY else _torch()


def stream_handle(stream: Any) -> int:
    """A cudaStream_t as an int, from an int, a CuPy stream (.ptr), a PyTorch stream
    (.cuda_stream) or an object with __cuda_stream__."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        if not 0 <= stream < 1 << 64:
            raise ValueError(f"stream must be a cudaStream_t (an address, 0 to 2**64 - 1), got "
                             f"{stream}")
        return stream
    for attribute in ("ptr", "cuda_stream"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    raise TypeError(
        "stream must be a CuPy or PyTorch stream, an object with __cuda_stream__, or a "
        f"cudaStream_t as an int, not {type(stream).__name__}"
    )


def resolve_stream(x: Any, framework: str, stream: Any, name: str = "x") -> int:
    """The stream a call on `x` uses: 0 for host arrays (where stream= is an error), else
    `stream` or the caller's current stream of x's framework."""
    if not on_cuda(x, framework):
        if stream is not None:
            raise ValueError(
                f"stream= applies to CUDA arrays, and {name} is in host memory (device= says "
                "where host arrays are computed)"
            )
        return 0
    if stream is not None:
        return stream_handle(stream)
    if framework == CUPY:
        # The current stream of x's device (CuPy keeps one per device).
        cupy = _cupy()
        try:
            return cupy.cuda.get_current_stream(x.device.id).ptr
        except TypeError:  # CuPy before 12 takes no device
            with x.device:
                return cupy.cuda.get_current_stream().ptr
    return _torch().cuda.current_stream(x.device).cuda_stream


def to_host(x: Any, framework: str) -> np.ndarray:
    """A NumPy copy of a CUDA array (for a message about one of its elements)."""
    if framework == CUPY:
        return _cupy().asnumpy(x)
    if framework == TORCH:
        return x.detach().cpu().numpy()
    return np.asarray(x)
