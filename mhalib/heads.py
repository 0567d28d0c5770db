"""Splitting the model dimension into heads and back (page: multi-head attention).

    split_heads:   (..., T, D) -> (..., T, H, d) -> (..., H, T, d)      d = D // H
    combine_heads: (..., H, T, d) -> (..., T, H, d) -> (..., T, H*d)

Head ``h`` owns columns ``[h*d, (h+1)*d)`` of the projected matrix. The transpose is
essential: reshaping ``(T, D)`` straight to ``(H, T, d)`` would hand each head a mix of
different tokens' features (the numerics page shows that bug next to the fix).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks


# --8<-- [start:split_combine]
def split_heads(x: ArrayLike, n_heads: int) -> np.ndarray:
    """Split the last axis into heads: ``(..., T, D) -> (..., H, T, d)``, where
    ``H = n_heads`` and ``d = D / H``.

    Example: ``split_heads(np.eye(2), 2)`` gives head 0 = column 0 =
    ``[[1], [0]]`` and head 1 = column 1 = ``[[0], [1]]``.

    The result is a copy: writing into a head never changes ``x`` (a view did,
    unseen: pass sixty-nine).
    """
    x = _checks.float_array(x, "x", min_ndim=2)
    H = _checks.positive_int(n_heads, "n_heads")
    *lead, T, D = x.shape
    d = _checks.divisible(D, H, "d_model (last axis of x)", "n_heads")  # D / H
    x = x.reshape(*lead, T, H, d)  # (..., T, D) -> (..., T, H, d)
    return np.swapaxes(x, -3, -2).copy()  # (..., T, H, d) -> (..., H, T, d)


def combine_heads(x: ArrayLike) -> np.ndarray:
    """Inverse of ``split_heads``: ``(..., H, T, d) -> (..., T, H*d)``."""
    x = _checks.float_array(x, "x", min_ndim=3)
    *lead, H, T, d = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., H, T, d) -> (..., T, H, d)
    return x.reshape(*lead, T, H * d)  # (..., T, H, d) -> (..., T, D)
# --8<-- [end:split_combine]


def repeat_kv_heads(x: ArrayLike, n_rep: int) -> np.ndarray:
    """Share each key/value head with ``n_rep`` consecutive query heads (grouped-query attention).

    ``(..., H_kv, S, d) -> (..., H_kv * n_rep, S, d)``; query head ``h`` reads KV head
    ``h // n_rep``, as in LLaMA's ``repeat_kv`` and torch's ``enable_gqa``.
    """
    x = _checks.float_array(x, "x", min_ndim=3)
    n_rep = _checks.positive_int(n_rep, "n_rep")
    return np.repeat(x, n_rep, axis=-3)  # (..., H_kv, S, d) -> (..., H_kv*n_rep, S, d)
