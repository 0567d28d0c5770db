"""Layer normalization of the numpy models (the tiny decoders and BERT), one implementation.

    LayerNorm(x) = g * (x - mean) / sqrt(var + eps) + b     over the last axis (biased variance, as torch)

Page: the real model (BERT's encoder layer) and the tiny decoders' architecture.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def layer_norm(x: ArrayLike, g: ArrayLike, b: ArrayLike, eps: float) -> np.ndarray:
    """``g * (x - mean) / sqrt(var + eps) + b`` over the last axis, in the type of ``x`` (with
    ``g`` and ``b``), its squares taken in that type as the models compute them.

    A row whose squares overflow that type (float16 deviations from the row's mean past 256,
    float32 past about 1e19, float64 past 1e154) gave var = inf and so returned ``b`` alone,
    silently. Such a row is computed again in float64 on its deviations ``c`` divided by their
    largest magnitude ``s``, where LayerNorm is the same: ``(c/s) / sqrt(var(c/s) + eps/s**2)``.
    Rows that do not overflow are computed exactly as before, bit for bit.
    """
    x = np.asarray(x)
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    with np.errstate(over="ignore"):  # an overflow is found below, row by row, and computed again
        var = (centred ** 2).mean(axis=-1, keepdims=True)
        out = g * centred / np.sqrt(var + eps) + b
    over = ~np.isfinite(var[..., 0]) & np.isfinite(x).all(axis=-1)  # (...): rows whose squares overflowed
    if over.any():
        c = x[over].astype(np.float64)  # (rows, D)
        c = c - c.mean(axis=-1, keepdims=True)
        s = np.abs(c).max(axis=-1, keepdims=True)  # > 0: the row's squares overflowed
        u = c / s  # entries in [-1, 1]
        with np.errstate(under="ignore", over="ignore"):  # eps / s**2 is 0 where s is huge: negligible there
            scaled_eps = eps / s ** 2
        fixed = np.asarray(g, np.float64) * u / np.sqrt((u * u).mean(axis=-1, keepdims=True) + scaled_eps) \
            + np.asarray(b, np.float64)
        out[over] = fixed.astype(out.dtype)
    return out
