"""Layer normalization of the numpy models (the tiny decoders and BERT), one implementation.

    LayerNorm(x) = g * (x - mean) / sqrt(var + eps) + b     over the last axis (biased variance, as torch)

Page: the real model (BERT's encoder layer) and the tiny decoders' architecture.
"""
from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

from .._scaled import by_largest


def layer_norm(x: ArrayLike, g: ArrayLike, b: ArrayLike, eps: float) -> np.ndarray:
    """``g * (x - mean) / sqrt(var + eps) + b`` over the last axis, in the type of ``x`` (with
    ``g`` and ``b``), its mean and squares taken in that type as the models compute them;
    float16 is worked in float32 and rounded once at the end, as torch does (its mean of
    1000.25 rounded to 1000 turned a row of 1000 and 1001 into 0 and 2: pass eighty-six).

    That type can fail a row silently: its squares overflow (float16 deviations past 256,
    float32 near 1e20, float64 near 1e154: var = inf, and the row came out as ``b`` alone), its
    mean overflows (float64 near 1e308: NaN), or its squares fall below the type's normal range
    (float16 deviations near 1e-4, where BERT's eps of 1e-12 is 0 too: a division by 0, or a
    variance of one or two bits). Such a row is computed again in float64, on the row divided by
    its largest magnitude ``m`` and centred, ``c``, divided by its largest deviation ``s``, where
    LayerNorm is the same: ``(c/s) / sqrt(var(c/s) + eps/(m s)**2)``; a row of equal values
    gives ``b``. Every other row is computed exactly as the models always did, bit for bit.
    ``eps`` must be a number > 0.
    """
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < float(eps) < np.inf:
        raise ValueError(f"eps must be a number > 0 (LayerNorm's guard against a zero variance), got {eps!r}")
    eps = float(eps)  # a Python float: a numpy float64 eps made a float16 result float64
    x = np.asarray(x)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"x must hold real numbers, got dtype {x.dtype}")
    kept = np.result_type(x, g, b)  # the type of the result
    half = kept == np.float16
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):  # the rows redone below
        xw = x.astype(np.float32) if half else x  # float16 worked in float32
        mean = xw.mean(axis=-1, keepdims=True)
        centred = xw - mean
        var = (centred ** 2).mean(axis=-1, keepdims=True)
        out = g * centred / np.sqrt(var + eps) + b
        if half:
            out = out.astype(np.float16)
    if not np.issubdtype(out.dtype, np.floating):
        return out
    shape = out.shape  # x, g and b broadcast together: each row of out has its own x, g and b
    xb = np.broadcast_to(x, shape)
    v = np.broadcast_to(var, shape[:-1] + (1,))[..., 0]  # (...)
    tiny = np.finfo(var.dtype).tiny if np.issubdtype(var.dtype, np.floating) else 0.0
    with np.errstate(over="ignore"):  # var + eps past the type (float16 var 2e4 with eps 6e4): b alone
        finite_sum = np.isfinite(v + eps)
    redo = (~np.isfinite(v) | (v < tiny) | ~finite_sum | ~np.isfinite(out).all(axis=-1)) & np.isfinite(xb).all(axis=-1)
    if redo.any():
        out = np.array(out)  # (writable)
        work = np.result_type(out.dtype, np.float64)  # float64, or longdouble for longdouble input
        rows = xb[redo].astype(work)  # (rows, D)
        gb = np.broadcast_to(g, shape)[redo].astype(work)
        bb = np.broadcast_to(b, shape)[redo].astype(work)
        y, m = by_largest(rows, axis=-1)  # entries in [-1, 1]: no mean overflows
        u, s = by_largest(y - y.mean(axis=-1, keepdims=True), axis=-1)  # a row of equal values: u = 0, so b
        with np.errstate(under="ignore", over="ignore"):  # eps/(m s)**2, taken in steps: 0 where m s is huge
            scaled_eps = eps / np.where(m > 0, m, 1.0) / np.where(s > 0, s, 1.0)  # (negligible there)
            scaled_eps = scaled_eps / np.where(m > 0, m, 1.0) / np.where(s > 0, s, 1.0)
            spread = (u * u).mean(axis=-1, keepdims=True)  # >= 1/D where s > 0
            fixed = gb * u / np.sqrt(np.where(s > 0, spread + scaled_eps, 1.0)) + bb  # (u = 0 where s = 0)
            # where m s is so small that eps/(m s)**2 is inf, var is negligible beside eps: the
            # deviation itself, u m s, over sqrt(eps) (u / sqrt(inf) gave 0 for 3e-156: pass twenty-nine)
            tiny_rows = ~np.isfinite(scaled_eps)
            fixed = np.where(tiny_rows, gb * (u * s * m) / np.sqrt(work.type(eps)) + bb, fixed)
        out[redo] = fixed.astype(out.dtype)
    return out
