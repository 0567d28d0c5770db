"""Scaled dot-product attention (page: attention).

    scores  = (Q K^T) * scale + bias          scale = 1/sqrt(d) by default
    weights = softmax(scores where mask else -inf)      row-wise over keys
    out     = weights V

Shapes: ``q (..., T, d)``, ``k (..., S, d)``, ``v (..., S, d_v)``; leading axes broadcast.
Returns ``out (..., T, d_v)`` and ``weights (..., T, S)``, so a figure can draw the weights.

At the edges of floating point: scores beyond the float range (``q k^T`` of ``1e200`` and
``-1e200``: ``-1e400``) cannot be stored, but their softmax is well defined. When the
ordinary computation overflows, the scores are recomputed as ``t * 2**E`` with ``t``
finite and one exponent ``E`` per query (q's rows and k are rescaled by powers of two,
which changes no significant bit), and the softmax works on the differences
``t_j - t_max`` scaled back. The result is what float64 arithmetic with an unbounded
exponent would give: exact where the products are (``2^600 * 2^600 - 2^600 * 2^600 = 0``),
and as sensitive to cancellation as any float64 dot product elsewhere. Only the mask (or a
``-inf`` bias) empties a row.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._scaled import largest_exponent
from .masks import causal_mask
from .softmax import _softmax_pow2, softmax


def _integer_scores_exact(q, k) -> None:
    """Refuse integer ``q`` and ``k`` whose scores ``q . k`` can pass ``2**53``: in float64, where
    the scores are computed, 2**80 + 1 and 2**80 + 2 are one number, and the weights of two keys
    that differ come out equal (q = [2**40, 1] against keys [2**40, 1] and [2**40, 2])."""
    q, k = np.asarray(q), np.asarray(k)
    if q.dtype.kind not in "iu" or k.dtype.kind not in "iu" or not q.size or not k.size or q.ndim < 1:
        return
    largest = max(int(q.max()), -int(q.min())) * max(int(k.max()), -int(k.min())) * q.shape[-1]
    if largest > 2**53:
        raise ValueError(f"q and k are integers whose scores q . k can reach {largest:,}, beyond 2**53 = "
                         f"{2**53:,}: the scores are float64, which does not hold every integer past it "
                         "(2**53 + 1 reads as 2**53), so keys with different scores could get one weight; "
                         "scale q or k down")


def _queries_and_keys(q, k, scale) -> tuple[np.ndarray, np.ndarray, float]:
    """Check ``q (..., T, d)``, ``k (..., S, d)`` and ``scale``; return them with the scale resolved.
    Integer ``q`` and ``k`` whose scores could pass ``2**53`` are refused, as ``softmax`` refuses
    such integers: the scores are float64, which does not hold every integer past it."""
    _integer_scores_exact(q, k)
    q = _checks.float_array(q, "q", min_ndim=2)
    k = _checks.float_array(k, "k", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last dimension d; got q {q.shape} and k {k.shape}"
        )
    d = q.shape[-1]
    if d == 0:
        raise ValueError(
            f"q and k must have d >= 1 features on their last axis; got q {q.shape} and k {k.shape} "
            "(with d = 0 every score is an empty sum and the default scale 1/sqrt(d) is undefined)"
        )
    scale = 1.0 / math.sqrt(d) if scale is None else _checks.positive_float(scale, "scale")
    return q, k, scale


def _raw_scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """``(q @ k^T) * scale``, which holds inf or NaN where it overflows (checked by the callers)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (q @ np.swapaxes(k, -1, -2)) * scale  # (..., T, d) @ (..., d, S) -> (..., T, S)


def _scores_pow2(q: np.ndarray, k: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The scores ``(q @ k^T) * scale`` as ``u * 2**E``, for when they overflow.

    Each row of ``q`` and each key (row of ``k``) is divided by a power of two (exact) so that
    its entries are below 1 in size; then ``|u| < d`` cannot overflow. Returns ``u (..., T, S)``
    and the integer exponents ``E (..., T, S)``, one per score. (One power for all the keys of a
    head turned a key near 1e-300 beside one near 1e300 into 0, and its score with it: pass
    thirty-four.) float16 is worked in float32, as everywhere."""
    wide = np.promote_types(np.result_type(q, k), np.float32)
    q, k = np.asarray(q, wide), np.asarray(k, wide)
    e_q = largest_exponent(q, -1)  # (..., T, 1)
    e_k = largest_exponent(k, -1)  # (..., S, 1)
    m_s, e_s = math.frexp(scale)  # scale = m_s * 2**e_s, 1/2 <= m_s < 1
    q_n, k_n = np.ldexp(q, -e_q), np.ldexp(k, -e_k)  # same shapes, entries in (-1, 1)
    u = (q_n @ np.swapaxes(k_n, -1, -2)) * m_s  # (..., T, d) @ (..., d, S) -> (..., T, S)
    return u, e_q + np.swapaxes(e_k, -1, -2) + e_s  # (..., T, S)


def _product_underflows(q: np.ndarray, k: np.ndarray) -> bool:
    """Whether some product of a query's and a key's largest entries lies so near the subnormal
    range (within the type's digits and the d terms of the sum) that ``q @ k^T`` may lose digits
    before ``scale`` is applied; the scores are then formed as :func:`_scores_pow2` forms them."""
    wide = np.promote_types(np.result_type(q, k), np.float32)
    info, d = np.finfo(wide), q.shape[-1]
    e = largest_exponent(q, -1) + np.swapaxes(largest_exponent(k, -1), -1, -2)  # (..., T, S)
    return bool((e < info.minexp + info.nmant + 2 + math.ceil(math.log2(d))).any())


def _in_row_units(w: np.ndarray, H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values ``w * 2**H`` (per entry; ``-inf`` masked) as ``t * 2**F`` with one exponent per row,
    ``F (..., T, 1)``: that of the row's largest value, and never below 0 (the inputs' own unit).

    The softmax needs the values near the row's largest; one far below it has weight 0 whatever
    its digits, and a value within about 745 of it must keep its own. So ``F`` is the binary
    exponent of the largest value where that is above 1, else 0: then every value within 745
    of the largest is written as it is. (The largest *magnitude* served first, and scores
    ``-1e600, 1, 2`` gave weights ``[0, 0.5, 0.5]``: pass thirty-four; then a largest value of 0
    or of 1e-310 took the unit of ``-1e600`` or of ``1e-310``, and ``-1`` beside it read as 0 or
    as ``-inf``: pass thirty-five.) Where every value is negative, the largest is the one
    nearest 0."""
    finite = np.isfinite(w)
    X = H + np.frexp(np.where(finite, w, 0.0))[1]  # (..., T, S): each value's binary exponent
    low, high = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    pos = finite & (w > 0)
    neg = finite & (w < 0)
    top_pos = np.where(pos, X, low).max(axis=-1, keepdims=True)  # (..., T, 1): the largest value's, if positive
    near_zero = np.where(neg, X, high).min(axis=-1, keepdims=True)  # the largest value's, if all are negative
    largest = np.where(pos.any(axis=-1, keepdims=True), top_pos,
                       np.where((finite & (w == 0)).any(axis=-1, keepdims=True) | ~neg.any(axis=-1, keepdims=True),
                                0, near_zero))  # (..., T, 1); a largest value of 0: 0
    F = np.maximum(largest, 0)
    with np.errstate(over="ignore"):
        t = np.ldexp(w, H - F)  # (..., T, S): the largest value at most ~1, or itself; far below it, -inf
    return t, F


def attention_scores(q: ArrayLike, k: ArrayLike, *, scale: float | None = None) -> np.ndarray:
    """Scaled scores ``(q @ k^T) * scale`` of shape ``(..., T, S)``; ``scale`` defaults to 1/sqrt(d).

    Empty sequences (``T = 0`` or ``S = 0``) give an empty ``(..., T, S)`` array; ``d = 0`` is
    refused. Scores are exact even when ``q @ k^T`` alone would overflow but the scaled
    result fits (``q = 2^600``, ``k = 2^474``, ``scale = 2^-1074`` gives 1), or would underflow
    (``q = k = 1e-200``, ``scale = 1e300`` gives 1e-100, not 0: pass seventy-eight); scores
    beyond the float range are refused with a ``ValueError`` (``scaled_dot_product_attention``
    still computes the weights of such scores).
    """
    q, k, scale = _queries_and_keys(q, k, scale)
    scores = _raw_scores(q, k, scale)  # (..., T, S)
    if np.isfinite(scores).all() and not _product_underflows(q, k):
        return scores
    u, E = _scores_pow2(q, k, scale)  # scores = u * 2**E
    with np.errstate(over="ignore"):
        scores = np.ldexp(u, E).astype(np.result_type(q, k, scale), copy=False)  # (..., T, S)
    return _checks.no_overflow(
        scores, "the scores (q @ k^T) * scale",
        "they lie beyond the float range, so q, k or scale is too large to return them "
        "(scaled_dot_product_attention computes the softmax of such scores exactly)",
    )


def _overflow_weights(q, k, scale, bias, allowed) -> np.ndarray:
    """Attention weights when the scores (plus bias) overflow: softmax of ``t * 2**F``, row by row."""
    u, E = _scores_pow2(q, k, scale)  # scores = u * 2**E: u, E (..., T, S)
    if bias is None:
        w, H = u, E
    else:
        finite = np.where(np.isfinite(bias), bias, 0.0)
        H = np.maximum(E, np.frexp(finite)[1])  # (..., T, S): covers the score and its bias
        wide = np.result_type(u, bias)  # a float64 bias beside float32 scores stays float64 (-1e39 is finite)
        w = np.ldexp(u.astype(wide), E - H) + np.ldexp(np.asarray(bias, wide), -H)  # |w| < d + 1; -inf stays -inf
    if allowed is not None:
        w = np.where(allowed, w, -np.inf)
    t, F = _in_row_units(w, H)
    return _softmax_pow2(t, F)


# --8<-- [start:attention-signature]
def scaled_dot_product_attention(
        q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = None,
        *, causal: bool = False, scale: float | None = None,
        bias: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
# --8<-- [end:attention-signature]
    """Attention of queries over keys: ``softmax(q k^T * scale + bias, masked) v``.

        weights = softmax(q k^T * scale + bias, masked entries -inf)     out = weights v

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
        bias: additive float bias broadcastable to ``(..., T, S)`` (ALiBi uses it); a
            ``-inf`` entry masks its key.

    Returns:
        The pair ``(out, weights)`` with shapes ``(..., T, d_v)`` and ``(..., T, S)``. A
        query with no key to attend to (every key masked, or ``S = 0``) gets zero weights
        and a zero output. ``T = 0`` gives empty results; ``d = 0`` is refused. Both keep
        the inputs' float type (``weights`` that of ``q k^T``, ``out`` that and ``v``'s
        together; a wider ``bias``, a list of Python floats included, is added in its own type
        and does not widen them); float16 is worked in float32 and rounded once at the end, so
        70 000 equal keys with ``v = 1`` give exactly 1.

    Scores beyond the float range are handled exactly: ``q = [[1e200]]`` against keys
    ``[[-1e200], [-2e200]]`` with ``scale=1`` has scores ``-1e400`` and ``-2e400``, and the
    weights are ``[1, 0]`` (the gap, 1e400, is far beyond where ``exp`` underflows).

    Example: ``q = k = v = [[1, 0], [0, 1]]`` with ``scale=1`` gives weights
    ``[[0.7311, 0.2689], [0.2689, 0.7311]]``.
    """
    # --8<-- [start:attention]
    # Check the shapes of q, k and v; scale=None becomes 1/sqrt(d).
    q, k, v, scale, causal = _checked_inputs(q, k, v, causal, scale)
    T, S = q.shape[-2], k.shape[-2]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: see below
        # (..., T, d) @ (..., d, S) -> (..., T, S): each query against each key
        scores = (q @ np.swapaxes(k, -1, -2)) * scale
    overflow = not np.isfinite(scores).all()  # beyond the float range?
    # the inputs' float type, kept in both results (a float64 bias
    # beside float32 q and k is added in float64, the results rounded back)
    dtype = scores.dtype
    if bias is not None:
        bias = _checked_bias(bias, scores.shape)  # (..., T, S); -inf: masked
        with np.errstate(over="ignore"):
            scores = scores + bias  # (..., T, S)
        overflow = overflow or _sum_overflowed(scores, bias)
    allowed = None  # (..., T, S) booleans, True = may attend; None: all may
    if mask is not None:
        allowed = _checked_mask(mask, scores.shape)
    if causal and T and S:  # query i may attend to keys j <= i only
        past = causal_mask(T, S)  # (T, S), True on and below the diagonal
        allowed = past if allowed is None else allowed & past
    wide = np.promote_types(scores.dtype, np.float32)  # float16 is worked in float32
    if overflow:  # the same softmax, on scores held as t * 2**E (numerics page)
        weights = _overflow_weights(q, k, scale, bias, allowed)  # (..., T, S)
    else:
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)  # forbidden: weight 0
        # (..., T, S), rows sum to 1 (or 0)
        weights = softmax(scores.astype(wide, copy=False), axis=-1)
    with np.errstate(over="ignore", invalid="ignore"):
        out = weights @ v  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
        out = out.astype(np.result_type(dtype, v.dtype), copy=False)
    _checks.no_overflow(out, "the output weights @ v",
                        "v holds values so close to the largest float that "
                        "their weighted average rounds past it")
    return out, weights.astype(dtype, copy=False)
    # --8<-- [end:attention]


def _checked_inputs(q, k, v, causal, scale) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """Check ``q (..., T, d)``, ``k (..., S, d)``, ``v (..., S, d_v)``, ``causal`` and ``scale``;
    return ``(q, k, v, scale, causal)`` with the scale resolved (default ``1/sqrt(d)``)."""
    q, k, scale = _queries_and_keys(q, k, scale)
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
    return q, k, v, scale, causal


def _checked_bias(bias, scores_shape: tuple[int, ...]) -> np.ndarray:
    """``bias`` as a float array broadcastable to the scores; NaN and +inf are refused."""
    bias = _checks.float_array(bias, "bias", finite=False)
    if np.isnan(bias).any() or np.isposinf(bias).any():
        raise ValueError("bias must not hold NaN or +inf (-inf is allowed and masks the entry)")
    _checks.scores_like(bias, scores_shape, "bias")
    return bias


def _sum_overflowed(scores: np.ndarray, bias: np.ndarray) -> bool:
    """Whether ``scores + bias`` overflowed: to +inf, or to -inf where the bias was finite
    (only a ``-inf`` bias means "masked"; an overflow must not pose as a mask)."""
    return bool((np.isposinf(scores) | (np.isneginf(scores) & np.isfinite(bias))).any())


def _checked_mask(mask, scores_shape: tuple[int, ...]) -> np.ndarray:
    """``mask`` as a boolean array (True = may attend) broadcastable to the scores."""
    allowed = _checks.bool_array(mask, "mask")
    _checks.scores_like(allowed, scores_shape, "mask")
    return allowed
