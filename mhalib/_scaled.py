"""Arrays divided by their largest magnitude, for sums of squares that must not overflow or
underflow: ``||a|| = top * ||a / top||``, with every entry of ``a / top`` in [-1, 1].

Used where a float type's squares leave its range (float16 deviations past 256, float64 past
1e154 or below 1e-154): the circuit scores, the sentence embedding, LayerNorm's redone rows and
the tiled backward pass's check of ``out``.
"""
from __future__ import annotations

import numpy as np


def by_largest(a: np.ndarray, axis: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(a / top, top)`` with ``top = max |a|`` over ``axis`` (all of ``a`` when None), kept as
    a dimension of size 1 for an axis; where ``top`` is 0 the entries are 0 and are left as they
    are (divided by 1)."""
    top = np.abs(a).max(axis=axis, keepdims=axis is not None, initial=0.0)
    return a / np.where(top > 0, top, 1.0), top
