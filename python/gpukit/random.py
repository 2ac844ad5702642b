"""gpukit.random: the older name of :mod:`gpukit.rng` (deprecated; the random-number case study
answers to its stem, rng, everywhere). The same functions, with a DeprecationWarning when this
module is first imported (``gpukit.random`` or ``import gpukit.random``)."""

from __future__ import annotations

import warnings

from .rng import __all__, bits, normal, uniform  # noqa: F401  (the names scripts used)

warnings.warn("gpukit.random is deprecated: use gpukit.rng (the same functions)",
              DeprecationWarning, stacklevel=2)
