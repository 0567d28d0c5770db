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
    """The largest ``x`` with finite ``exp(x)`` in ``dtype``: ``ln(finfo(dtype).max)``.

    Computed in float64, or in ``dtype``'s own precision where that is wider, so a type
    wider than float64 gets its own value
    (``np.longdouble``, 80-bit on x86: about 11356.52, beyond float64's 709.78), returned as a
    Python float. A dtype that is not a numpy float dtype (integers, bool, None) is refused
    with a ``ValueError``.
    """
    dt = _checks.float_dtype(dtype, "dtype")
    wide = np.promote_types(dt, np.float64)  # float64, or longdouble: its max does not fit float64
    return float(np.log(np.finfo(dt).max.astype(wide)))


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

    ``-inf``, the constant of an exact mask, stays ``-inf``. Refused: a ``value`` that is not a
    real number (``TypeError``), one that is NaN or ``+inf`` or beyond float64's range
    (``10**400``; ``ValueError``), and a ``dtype`` that is not a numpy float dtype (``'int8'``,
    ``'bool'``, None: ``ValueError``), where a mask constant would silently become 0 or 1.
    """
    v = _checks.finite_real(value, "value", neg_inf=True)
    dt = _checks.float_dtype(dtype, "dtype")
    with np.errstate(over="ignore"):
        return float(np.asarray(v, dtype=np.float64).astype(dt))
