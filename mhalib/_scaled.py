"""Arrays divided by their largest magnitude, for sums of squares that must not overflow or
underflow: ``||a|| = top * ||a / top||``, with every entry of ``a / top`` in [-1, 1].

Used where a float type's squares leave its range (float16 deviations past 256, float64 past
1e154 or below 1e-154): the circuit scores, the sentence embedding and LayerNorm's redone rows.

``largest_exponent`` gives the power of two at or above the largest magnitude instead; dividing
by it rounds nothing. The backward passes form ``dO V^T`` from factors scaled so and multiply
the exponents back in at the end (``np.ldexp``), so a product that would underflow (``dO`` and
``V`` near 1e-160 in float64) or overflow keeps its digits whenever the gradient itself fits;
attention writes scores past the float range the same way (``mhalib.attention._scores_pow2``).
"""
from __future__ import annotations

import numpy as np


def by_largest(a: np.ndarray, axis: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(a / top, top)`` with ``top = max |a|`` over ``axis`` (all of ``a`` when None), kept as
    a dimension of size 1 for an axis; where ``top`` is 0 the entries are 0 and are left as they
    are (divided by 1)."""
    top = np.abs(a).max(axis=axis, keepdims=axis is not None, initial=0.0)
    return a / np.where(top > 0, top, 1.0), top


def largest_exponent(a: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    """The binary exponent ``e`` of ``max |a|`` over ``axis`` (kept as dimensions of size 1), an
    integer array: ``max |a| = m * 2**e`` with ``m`` in [0.5, 1), and ``e = 0`` where ``a`` is all 0.
    ``np.ldexp(a, -e)`` is then ``a`` scaled exactly to a largest magnitude in [0.5, 1), except
    for entries about 2**-1074 times smaller than the largest, which become subnormal."""
    top = np.abs(a).max(axis=axis, keepdims=True, initial=0.0)
    return np.frexp(top)[1]  # frexp(0) = (0, 0)
