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


# --8<-- [start:softmax-signature]
def softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:
# --8<-- [end:softmax-signature]
    """Softmax along ``axis`` with the row maximum subtracted.

        softmax(x)_j = exp(x_j - m) / sum_k exp(x_k - m),   m = max_k x_k

    Args:
        x: real array with at least one dimension; ``-inf`` marks a masked entry. NaN
            and ``+inf`` are refused, and so is a numpy masked array (``TypeError``: its
            mask would be ignored; fill the masked entries with ``-inf`` instead).
        axis: the axis that sums to one.

    Returns:
        np.ndarray: an array of the same shape and float dtype, non-negative; each slice
        along ``axis`` sums to 1, or is all zeros when every entry was ``-inf``. An empty
        ``axis`` (length 0) gives an empty result of the same shape. float16 input is
        worked in float32 and rounded back once (a float16 sum overflows past 65504:
        70 000 equal scores each get ``1/70000``, not 0); float32 and float64 are worked
        in their own precision. Integers become float64.

    A difference ``x_j - m`` below the float range (``softmax([1e308, -1e308])``: the
    difference is ``-2e308``) becomes ``-inf`` and its weight exactly 0, which is also
    what the exact ``exp(-2e308)`` rounds to.

    Example: ``softmax([1.0, 0.0])`` is ``[e/(e+1), 1/(e+1)] = [0.7311, 0.2689]``.
    """
    # --8<-- [start:softmax]
    arr = _checked_scores(x, axis)  # refuses NaN, +inf and a bad axis
    if arr.shape[axis] == 0:
        return np.zeros_like(arr)  # nothing to normalise: the empty result
    # float16 is worked in float32: a row of 70 000 ones sums past its max
    wide = arr.astype(np.promote_types(arr.dtype, np.float32), copy=False)
    row_max = np.max(wide, axis=axis, keepdims=True)  # the largest per row
    # A fully masked row has max -inf; shift it by 0: exp then gives exact 0s.
    row_max = np.where(np.isfinite(row_max), row_max, 0.0).astype(wide.dtype)
    with np.errstate(over="ignore"):  # a gap below -max_float: -inf, weight 0
        e = np.exp(wide - row_max)  # every exponent <= 0: nothing overflows
    total = np.sum(e, axis=axis, keepdims=True)  # >= 1, or 0 if fully masked
    w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return w.astype(arr.dtype, copy=False)  # float16 in, float16 out
    # --8<-- [end:softmax]


def _checked_scores(x: ArrayLike, axis: int) -> np.ndarray:
    """``x`` as a float array with at least one dimension, after checking it and ``axis``."""
    arr = _checks.float_array(x, "x", finite=False)
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(
            "x must not hold NaN or +inf (only -inf, meaning 'masked', is allowed); "
            f"got {int(np.isnan(arr).sum())} NaN and {int(np.isposinf(arr).sum())} +inf"
        )
    _checks.integer(axis, "axis")
    if arr.ndim == 0:
        raise ValueError(f"x must have at least 1 dimension (softmax normalises along an axis), got shape {arr.shape}")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis must be in [{-arr.ndim}, {arr.ndim - 1}] for x of shape {arr.shape}, got {axis}")
    return arr


def _softmax_pow2(t: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of scores too large for their float type, given as ``t * 2**F``.

        softmax(s)_j = exp(2**F (t_j - t_max)) / sum_k exp(2**F (t_k - t_max)),   s = t * 2**F

    ``t (..., T, S)`` holds finite mantissas (or ``-inf`` for masked entries) and
    ``F (..., T, 1)`` integer exponents, one per row, so that ``s`` itself need never be
    formed. Only the differences ``t_j - t_max`` are scaled back; where that overflows the
    weight is exactly 0, as it is for the exact scores. Used by attention when ``q k^T``
    overflows (private: ``mhalib.attention.scaled_dot_product_attention`` calls it). The
    weights are float32 for float16 input (the caller rounds them back).
    """
    t = t.astype(np.promote_types(t.dtype, np.float32), copy=False)  # float16 is summed in float32
    t_max = np.max(t, axis=-1, keepdims=True)  # (..., T, 1)
    t_max = np.where(np.isfinite(t_max), t_max, 0.0).astype(t.dtype)  # a fully masked row: shift by 0
    with np.errstate(over="ignore"):
        z = np.ldexp(t - t_max, F)  # (..., T, S), <= 0; -inf where the gap is beyond the float range
    e = np.exp(z)
    total = np.sum(e, axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
