"""Numerically stable softmax (page: numerics; used by attention).

    softmax(x)_j = exp(x_j - m) / sum_k exp(x_k - m),   m = max_k x_k

Subtracting the row maximum changes nothing mathematically (the factor exp(-m) cancels)
but keeps every exponent <= 0, so nothing overflows. Entries equal to -inf are masked
positions: they get weight 0. A row that is entirely -inf has nothing to attend to and
gets all-zero weights, never NaN.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks


def softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis`` with the row maximum subtracted.

    Args:
        x: real array; ``-inf`` marks a masked entry. NaN and ``+inf`` are refused.
        axis: the axis that sums to one.

    Returns:
        Array of the same shape and float dtype: non-negative, each slice along
        ``axis`` sums to 1, or is all zeros when every entry was ``-inf``.

    Example: ``softmax([1.0, 0.0])`` is ``[e/(e+1), 1/(e+1)] = [0.7311, 0.2689]``.
    """
    arr = _checks.float_array(x, "x", finite=False)
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(
            "x must not hold NaN or +inf (only -inf, meaning 'masked', is allowed); "
            f"got {int(np.isnan(arr).sum())} NaN and {int(np.isposinf(arr).sum())} +inf"
        )
    _checks.integer(axis, "axis")
    if not -arr.ndim <= axis < max(arr.ndim, 1):
        raise ValueError(f"axis must be in [{-arr.ndim}, {arr.ndim - 1}] for x of shape {arr.shape}, got {axis}")
    row_max = np.max(arr, axis=axis, keepdims=True)
    # A fully masked row has max -inf; shift it by 0 instead so exp gives exact zeros.
    row_max = np.where(np.isfinite(row_max), row_max, 0.0).astype(arr.dtype)
    e = np.exp(arr - row_max)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
