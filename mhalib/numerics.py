"""Floating-point limits of softmax and masking (page: numerics and pitfalls).

``exp(x)`` overflows once ``x > ln(max_float)``: about 88.72 in float32 (max ~ 2^128, so
the threshold is ~ 128 ln 2) and about 11.09 in float16 (max 65504). A softmax that
exponentiates raw scores therefore returns inf/inf = NaN for scores that are perfectly
ordinary; subtracting the row maximum first (``mhalib.softmax``) never overflows.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _checks


def exp_overflow_threshold(dtype: DTypeLike = "float32") -> float:
    """The largest ``x`` with finite ``exp(x)`` in ``dtype``: ``ln(finfo(dtype).max)``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f":
        raise ValueError(f"dtype must be a numpy float dtype such as 'float16' or 'float32', got {dtype!r}")
    return float(np.log(np.finfo(dt).max.astype(np.float64)))


def naive_softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:
    """DEMONSTRATION ONLY: ``exp(x) / sum(exp(x))`` without subtracting the maximum.

    Kept so the numerics page can show it failing: in float32 any score above ~88.72
    overflows to inf and the row becomes NaN. Computed in ``x``'s own dtype. Use
    ``mhalib.softmax`` for real work.
    """
    arr = _checks.float_array(x, "x", finite=False)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(arr)
        return e / e.sum(axis=axis, keepdims=True)


def masked_fill_value(value: float, dtype: DTypeLike = "float16") -> float:
    """What a mask constant such as ``-1e9`` becomes when stored in ``dtype``.

    ``-1e9`` is below float16's range (min -65504) and becomes ``-inf``; that is harmless
    for a partly masked row but a fully masked row then gives NaN in a naive softmax.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"value must be a real number, got {value!r}")
    with np.errstate(over="ignore"):
        return float(np.asarray(value, dtype=np.float64).astype(dtype))
