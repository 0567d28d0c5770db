"""Scaled dot-product attention (page: attention).

    scores  = (Q K^T) * scale + bias          scale = 1/sqrt(d) by default
    weights = softmax(scores where mask else -inf)      row-wise over keys
    out     = weights V

Shapes: ``q (..., T, d)``, ``k (..., S, d)``, ``v (..., S, d_v)``; leading axes broadcast.
Returns ``out (..., T, d_v)`` and ``weights (..., T, S)``, so a figure can draw the weights.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .masks import causal_mask
from .softmax import softmax


def attention_scores(q: ArrayLike, k: ArrayLike, *, scale: float | None = None) -> np.ndarray:
    """Scaled scores ``(q @ k^T) * scale`` of shape ``(..., T, S)``; ``scale`` defaults to 1/sqrt(d)."""
    q = _checks.float_array(q, "q", min_ndim=2)
    k = _checks.float_array(k, "k", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last dimension d; got q {q.shape} and k {k.shape}"
        )
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d) if scale is None else _checks.positive_float(scale, "scale")
    return (q @ np.swapaxes(k, -1, -2)) * scale  # (..., T, d) @ (..., d, S) -> (..., T, S)


def scaled_dot_product_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = None, *,
                                 causal: bool = False, scale: float | None = None,
                                 bias: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Attention of queries over keys: ``softmax(q k^T * scale + bias, masked) v``.

    Args:
        q: queries ``(..., T, d)``.
        k: keys ``(..., S, d)``.
        v: values ``(..., S, d_v)``.
        mask: boolean, True = may attend, broadcastable to ``(..., T, S)``.
        causal: also forbid keys after the query, top-left aligned: query ``i`` sees
            keys ``j <= i`` (the convention of torch's ``is_causal``). For cached decoding
            pass ``mask=causal_mask(T, S, align="bottom_right")`` instead.
        scale: multiplies the scores; defaults to ``1/sqrt(d)``. The lecture's
            cat/sat/mat example uses ``scale=1``.
        bias: additive float bias broadcastable to ``(..., T, S)`` (ALiBi uses it).

    Returns:
        The pair ``(out, weights)`` with shapes ``(..., T, d_v)`` and ``(..., T, S)``. A
        query with no key to attend to gets zero weights and a zero output.

    Example: ``q = k = v = [[1, 0], [0, 1]]`` with ``scale=1`` gives weights
    ``[[0.7311, 0.2689], [0.2689, 0.7311]]``.
    """
    q = _checks.float_array(q, "q", min_ndim=2)
    k = _checks.float_array(k, "k", min_ndim=2)
    v = _checks.float_array(v, "v", min_ndim=2)
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys S; got k {k.shape} and v {v.shape}"
        )
    causal = _checks.boolean(causal, "causal")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch, head) axes of q {q.shape}, k {k.shape} and v {v.shape} do not broadcast"
        ) from None
    scores = attention_scores(q, k, scale=scale)  # (..., T, S)
    T, S = q.shape[-2], k.shape[-2]
    if bias is not None:
        bias = _checks.float_array(bias, "bias", finite=False)
        if np.isnan(bias).any() or np.isposinf(bias).any():
            raise ValueError("bias must not hold NaN or +inf (-inf is allowed and masks the entry)")
        _checks.scores_like(bias, scores.shape, "bias")
        scores = scores + bias
    allowed = None
    if mask is not None:
        allowed = _checks.bool_array(mask, "mask")
        _checks.scores_like(allowed, scores.shape, "mask")
    if causal:
        allowed = causal_mask(T, S) if allowed is None else allowed & causal_mask(T, S)
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    weights = softmax(scores, axis=-1)  # (..., T, S)
    out = weights @ v  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
    return out, weights
