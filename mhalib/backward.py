"""The backward pass of attention in closed form, and what it must keep from the forward pass
(pages: attention; FlashAttention: exact attention, one tile at a time).

Given the gradient ``dO = dL/dO`` of a loss ``L`` with respect to the output
``O = P V`` of attention, ``P = softmax(scale * Q K^T + mask)``:

    dV = P^T dO                                  (..., S, d_v)
    dP = dO V^T                                  (..., T, S)
    dS = P o (dP - rowsum(dP o P))               (..., T, S)   o: elementwise product
    dQ = scale * dS K                            (..., T, d)
    dK = scale * dS^T Q                          (..., S, d)

``dS`` is the softmax's Jacobian applied row by row: ``dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik)``.
``rowsum(dP o P) = rowsum(dO o O)``, the identity FlashAttention's backward uses to avoid
keeping ``P``. A masked entry has ``P_ij = 0``, so ``dS_ij = 0``: no gradient flows through
a key a query may not see, and a query that sees no key at all gets zero gradients.

The naive backward keeps ``P (..., T, S)`` from the forward pass; the tiled one
(``mhalib.tiled_attention_backward``) keeps only ``O`` and one log-sum-exp per row and
recomputes ``P`` tile by tile. ``attention_memory_between_passes`` counts the difference.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _checks
from ._scaled import largest_exponent
from .attention import _checked_inputs, _queries_and_keys, scaled_dot_product_attention
from .costs import dtype_bytes


def _group_size(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> int:
    """``n_rep = H / H_kv`` when ``k`` and ``v`` hold ``H_kv`` heads on axis -3 shared by
    groups of ``q``'s ``H`` heads (grouped-query attention, ``1 < H_kv < H``); else 1."""
    if min(q.ndim, k.ndim, v.ndim) >= 3:
        H, H_kv = q.shape[-3], k.shape[-3]
        if H_kv not in (1, H) and v.shape[-3] == H_kv and H % H_kv == 0:
            return H // H_kv
    return 1


def _sum_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``x`` over the axes that broadcasting added or stretched, back to ``shape``
    (the gradient of a broadcast is the sum over its copies)."""
    x = x.sum(axis=tuple(range(x.ndim - len(shape)))) if x.ndim > len(shape) else x
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1)
    return x.sum(axis=stretched, keepdims=True) if stretched else x


def _group_sum(x: np.ndarray, n_rep: int) -> np.ndarray:
    """The gradient of ``repeat_kv_heads(., n_rep)``: sum over each group of ``n_rep`` heads."""
    if n_rep == 1:
        return x
    *lead, H, S, w = x.shape
    grouped = x.reshape(*lead, H // n_rep, n_rep, S, w)  # (..., H, S, w) -> (..., H_kv, n_rep, S, w)
    return grouped.sum(axis=-3)  # (..., H_kv, n_rep, S, w) -> (..., H_kv, S, w)


def _inputs(q, k, v, causal, scale):
    """Check ``q``, ``k``, ``v``, ``causal`` and ``scale`` as the forward pass does, allowing
    ``k`` and ``v`` with fewer heads than ``q`` (grouped-query attention). Returns
    ``(q, k_all, v_all, scale, causal, n_rep)``, where ``k_all`` and ``v_all`` hold one
    head per query head (``k`` and ``v`` repeated ``n_rep`` times along axis -3)."""
    q, k, scale = _queries_and_keys(q, k, scale)
    v = _checks.float_array(v, "v", min_ndim=2)
    n_rep = _group_size(q, k, v)
    k_all = np.repeat(k, n_rep, axis=-3) if n_rep > 1 else k  # (..., H_kv, S, d) -> (..., H, S, d)
    v_all = np.repeat(v, n_rep, axis=-3) if n_rep > 1 else v  # (..., H_kv, S, d_v) -> (..., H, S, d_v)
    q, k_all, v_all, scale, causal = _checked_inputs(q, k_all, v_all, causal, scale)
    return q, k_all, v_all, scale, causal, n_rep


def _gradient_like(g, name: str, shape: tuple[int, ...], of: str) -> np.ndarray:
    """``g`` as a finite float array of exactly ``shape`` (the shape of ``of``)."""
    g = _checks.float_array(g, name, min_ndim=2)
    if g.shape != tuple(shape):
        raise ValueError(f"{name} must have the shape of {of}, {tuple(shape)} (..., T, d_v); got {g.shape}")
    return g


def _gradients(dq, dk, dv, q, k_all, v_all, n_rep):
    """Reduce gradients computed for the broadcast inputs to the shapes of ``q``, ``k`` and ``v``
    (``k_all`` and ``v_all``: one K/V head per query head); refuse overflow."""
    dq = _sum_to(dq, q.shape)  # (..., T, d), summed over the axes q was broadcast along
    dk = _group_sum(_sum_to(dk, k_all.shape), n_rep)  # (..., H, S, d) -> (..., H_kv, S, d)
    dv = _group_sum(_sum_to(dv, v_all.shape), n_rep)  # (..., H, S, d_v) -> (..., H_kv, S, d_v)
    for g, name in ((dq, "dq"), (dk, "dk"), (dv, "dv")):
        _checks.no_overflow(g, f"the gradient {name}", "q, k, v or d_out is too large for its gradient to be stored")
    return dq, dk, dv


def attention_backward(q: ArrayLike, k: ArrayLike, v: ArrayLike, d_out: ArrayLike, *,
                       mask: ArrayLike | None = None, causal: bool = False,
                       scale: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of scaled dot-product attention with respect to ``q``, ``k`` and ``v``, in
    closed form (page: attention).

        P  = softmax(scale * Q K^T, masked)          as in scaled_dot_product_attention
        dV = P^T dO        dP = dO V^T        dS = P o (dP - rowsum(dP o P))
        dQ = scale * dS K                      dK = scale * dS^T Q

    Args:
        q: queries ``(..., T, d)``.
        k: keys ``(..., S, d)``.
        v: values ``(..., S, d_v)``; leading axes of q, k, v broadcast, as in the forward pass.
            Grouped-query attention: ``k`` and ``v`` may hold ``H_kv`` heads on axis -3 where
            ``q`` holds ``H`` (``H_kv`` dividing ``H``), query head ``h`` reading K/V head
            ``h // (H / H_kv)``: the forward pass of
            ``scaled_dot_product_attention(q, repeat_kv_heads(k, n), repeat_kv_heads(v, n))``.
        d_out: the gradient of the loss with respect to the output, ``(..., T, d_v)``, the
            shape of the forward pass's output.
        mask: boolean, True = may attend, broadcastable to ``(..., T, S)``.
        causal: also forbid keys after the query, top-left aligned, as in the forward pass.
        scale: multiplies the scores; defaults to ``1/sqrt(d)``.

    Returns:
        tuple[np.ndarray, np.ndarray, np.ndarray]: ``(dq, dk, dv)``, of the shapes of ``q``,
        ``k`` and ``v``. A gradient of an input that was broadcast (a key shared by every
        head, a K/V head shared by a group of query heads) is the sum over the copies that
        used it. A query with no key to attend to gets ``dq = 0`` and contributes nothing
        to ``dk`` and ``dv``.

    Gradients that overflow the float range are refused with a ``ValueError``. ``dP`` is formed
    from ``d_out`` and ``v`` scaled by powers of two (per row, per head) and the powers are
    multiplied back into the gradients at the end, so a gradient that fits its type keeps its
    digits even where ``dO V^T`` itself would underflow or overflow (``_units``).

    Limits, as of any computation in the float type: a weight that underflows to 0 (``exp(-800)``
    in float64) adds nothing, here as in the forward pass whose weight it is, even where a
    ``d_out`` near 1e300 would have made its term a normal number; and ``dk`` sums the rows of
    ``dS`` in one unit, so a row more than 2**1074 below the largest is dropped even where a
    query near 1e300 would have made its term count.

    Example: one query and two keys, ``q = [[0, 0]]``, ``k = [[1, 0], [0, 1]]``,
    ``v = [[1], [0]]``, ``scale=1`` and ``d_out = [[1]]``: ``P = [1/2, 1/2]``, ``dV = [[1/2],
    [1/2]]``, ``dP = [1, 0]``, ``dS = [1/2 (1 - 1/2), 1/2 (0 - 1/2)] = [1/4, -1/4]``, so
    ``dq = [[1/4, -1/4]]`` and ``dk = 0`` (``q`` is zero).
    """
    q, k_all, v_all, scale, causal, n_rep = _inputs(q, k, v, causal, scale)
    guess = np.promote_types(np.result_type(q, k_all, v_all, *_float_type_of(d_out)), np.float32)
    # the weights as the forward pass computes them inside, in float32 for float16 inputs, not
    # rounded back to float16 (a weight of e^-18 kept 3 digits there, and dq read 0 for -0.0164:
    # pass forty-three)
    out, P = scaled_dot_product_attention(*(np.asarray(x, guess) for x in (q, k_all, v_all)), mask,
                                          causal=causal, scale=scale)  # (..., T, S)
    d_out = _gradient_like(d_out, "d_out", out.shape, "the output")  # (..., T, d_v)
    dtype = np.result_type(q, k_all, v_all, d_out)  # the gradients' type: the inputs'
    wide = np.promote_types(dtype, np.float32)  # worked in: float16 in float32, as the forward pass
    P = np.asarray(P, wide)
    u = _units(v_all, d_out, scale, wide)
    with np.errstate(over="ignore", invalid="ignore"):
        dv = np.swapaxes(P, -1, -2) @ np.asarray(d_out, wide)  # (..., S, T) @ (..., T, d_v) -> (..., S, d_v)
        dP = u.g(d_out) @ np.swapaxes(u.v(v_all), -1, -2)  # (..., T, d_v) @ (..., d_v, S) -> (..., T, S), in units 2**u.row
        dS = _softmax_vjp(P, dP)  # (..., T, S), in the same units; 0 where P is 0
        dq = _dq(dS, k_all, u, u.row)  # (..., T, d)
        dk = _dk(dS, q, u, u.row)  # (..., S, d)
    return _stored(_gradients(dq, dk, dv, q, k_all, v_all, n_rep), dtype)


def _float_type_of(d_out) -> list:
    """``[the float type d_out's gradients take]``, before ``_gradient_like`` checks it by name
    (``[]`` where it holds no numbers: that check says so): integers count as float64, as it
    reads them (``d_out=[[1]]`` left the weights in float32 beside float64 gradients, and e^-110
    read 0: pass forty-five)."""
    try:
        kind = np.asarray(d_out).dtype
    except (ValueError, TypeError):  # a ragged list: _gradient_like names it
        return []
    return [kind] if kind.kind == "f" else [np.float64] if kind.kind in "iu" else []


def softmax_backward(weights: ArrayLike, d_weights: ArrayLike) -> np.ndarray:
    """The gradient of the scores from the gradient of their softmax weights, row by row along
    the last axis (page: backward):

        dZ = P o (dP - rowsum(dP o P)),    dZ_i = P_i sum_j P_j (dP_i - dP_j)

    Args:
        weights: ``P``, softmax weights ``(..., S)``: each row sums to 1, or is all 0 (a query
            with no key to attend to, whose gradient is 0).
        d_weights: ``dP``, the gradient of the loss with respect to them, of the same shape.

    Returns:
        np.ndarray: ``dZ``, of their shape and float type (float16 is worked in float32 and
        rounded once); each row sums to 0.

    The two forms are equal in exact arithmetic but not in floats. Only the differences between
    the ``dP`` of a row matter, and ``dP_i - rowsum(dP o P)`` forms them from two large numbers:
    where one weight holds nearly all of its row (``P_m = 1 - 1e-17`` rounds to 1), or the ``dP``
    of a row share their leading digits (``1`` and ``1 + 2**-52``), every digit of the
    difference was lost and ``dZ`` read 0 for a gradient near 1e-16 (passes forty and
    forty-one). So each row's ``dP`` is first taken relative to the ``dP`` of its largest weight,
    ``dP_j - dP_m`` (exact where they are close), and the first form applied to those
    differences, which gives the same ``dZ`` (a row's weights sum to 1) without forming
    ``1 - P_m``. A row is scaled down only where its differences could pass the float range.

    Example: ``weights = [[1/2, 1/2]]``, ``d_weights = [[1, 0]]``: ``rowsum(dP o P) = 1/2``,
    ``dZ = [[1/4, -1/4]]``.
    """
    P = _checks.float_array(weights, "weights", min_ndim=1)
    dP = _checks.float_array(d_weights, "d_weights", min_ndim=1)
    if P.shape != dP.shape:
        raise ValueError(f"weights and d_weights must have one shape, got {P.shape} and {dP.shape}")
    if ((P < 0) | (P > 1)).any():
        raise ValueError("weights must lie in [0, 1] (softmax weights), got values from "
                         f"{float(P.min())!r} to {float(P.max())!r}")
    # a softmax row rounded entry by entry sums to 1 within about eps of its type, whatever its
    # length (the bound grew with S: a float16 row of 128 summing to 1.29 passed, pass forty-three);
    # summed in float64, or in P's own type where that is wider (longdouble)
    sums = P.sum(axis=-1, dtype=np.result_type(P, np.float64))  # (...,)
    off = (sums != 0) & (np.abs(sums - 1) > 8 * np.finfo(P.dtype).eps)
    if off.any():
        at = tuple(int(i) for i in np.argwhere(off)[0])
        raise ValueError(f"weights must be softmax rows, each summing to 1 (or all 0: a query with no key); row "
                         f"{at} sums to {float(sums[at])!r}, and the two forms of dZ differ for it")
    dtype = np.result_type(P, dP)
    wide = np.promote_types(dtype, np.float32)  # float16 is worked in float32, as the backward passes
    dP = dP.astype(wide, copy=False)
    # a row whose differences could pass the float range (|dP| above a quarter of it) is scaled down
    e = np.maximum(largest_exponent(dP, -1) - (np.finfo(wide).maxexp - 2), 0)  # (..., 1)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ldexp(_softmax_vjp(P.astype(wide, copy=False), np.ldexp(dP, -e) if e.any() else dP), e)
    return out.astype(dtype, copy=False)


def _softmax_vjp(P: np.ndarray, dP: np.ndarray) -> np.ndarray:
    """:func:`softmax_backward` without the checks, ``(..., S)``, for the backward passes: the
    first form applied to each row's ``dP`` taken relative to that of its largest weight."""
    if P.shape[-1] == 0:  # no key at all: nothing to differentiate
        return P * dP
    top = np.argmax(P, axis=-1)[..., None]  # (..., 1): the key of each row's largest weight
    d = dP - np.take_along_axis(dP, top, axis=-1)  # (..., S): 0 at the largest weight
    return P * (d - (P * d).sum(axis=-1, keepdims=True))  # (..., S)


#: dP = dO V^T is worked in its own units (the inputs' values) wherever its largest entry per
#: row, about 2**n, lies between 1 and 2**(maxexp - HEADROOM) (2**960 in float64, 2**64 in
#: float32); below, the row of d_out (and values below 1) are scaled up to it, above, the row is
#: scaled down to it: room for sums of up to 2**60 terms.
HEADROOM = 64


class _Units(NamedTuple):
    """The powers of two the backward passes scale ``dP = dO V^T``'s factors by (exactly, with
    ``np.ldexp``): ``d_out``'s row ``i`` times ``2**a_i``, ``v`` times ``2**b`` per head;
    ``dP``'s row ``i`` is then in units of ``2**row_i``, ``row = -(a + b)``. ``scale = m *
    2**e_s``. ``q`` and ``k`` are used as they are (``_times`` scales one only where a product
    with it overflows)."""
    a: np.ndarray  # (..., T, 1)
    b: np.ndarray  # (..., 1, 1)
    m: float
    e_s: int
    wide: np.dtype

    @property
    def row(self) -> np.ndarray:
        """``(..., T, 1)``: dP's row ``i`` is in units of ``2**row_i``."""
        return -(self.a + self.b)

    def g(self, d_out, rows: slice = slice(None)) -> np.ndarray:
        """``d_out``'s ``rows`` times ``2**a``, ``(..., t, d_v)``."""
        a = self.a[..., rows, :]
        return np.ldexp(np.asarray(d_out, self.wide), a) if a.any() else np.asarray(d_out, self.wide)

    def v(self, v) -> np.ndarray:
        """Values (or outputs, their weighted means) times ``2**b``."""
        return np.ldexp(np.asarray(v, self.wide), self.b) if self.b.any() else np.asarray(v, self.wide)


def _units(v, d_out, scale: float, wide) -> _Units:
    """The units the backward passes work ``dP``, ``D`` and ``dS`` in.

    A scaling loses the entries of a row or head more than 2**1074 below its largest when it
    scales down, and nothing when it scales up; so each factor is scaled up where it is small
    and down only as far as the product needs. In the inputs' units ``dP`` underflowed where
    ``dO`` and ``V`` were near 1e-162 (every gradient came back 0, though ``dq`` was near
    1e-225) and overflowed near 1e160 (gradients near 1e220 refused); scaled to a largest entry
    near 1, one large entry (a masked key's value, a padded row's ``d_out``, one column of a row)
    set every other to 0 (passes thirty-one and thirty-two). The exponents go back once, at
    the end (``_dq``, ``_dk``), so a gradient loses digits only where it is itself subnormal,
    and overflows only where it does not fit its type (refused)."""
    wide = np.dtype(wide)
    e_v = largest_exponent(v, (-2, -1))  # (..., 1, 1)
    b = np.maximum(-e_v, 0)  # values below 1 up to it
    n = largest_exponent(d_out, -1) + e_v + b  # (..., T, 1): dP's row i is below 2**n * d_v
    top = np.finfo(wide).maxexp - HEADROOM
    a = np.where(n < 0, -n, np.where(n > top, top - n, 0))  # (..., T, 1)
    m, e_s = np.frexp(scale)  # scale = m * 2**e_s, |m| in [0.5, 1)
    return _Units(a, b, float(m), int(e_s), wide)


def _times(x: np.ndarray, y, u: _Units, e: np.ndarray) -> np.ndarray:
    """``(x @ y) * scale * 2**e`` (``x (..., n, s)``, ``y (..., s, d)``, ``e`` broadcasting to
    the result), the exponents applied once, at the end. A row of ``x`` or a head of ``y`` whose
    largest entry is below 1 is first scaled up to it (which loses nothing: ``dS K`` of a key
    near 1e-306 underflowed in between, though ``scale`` near 1e306 brought the gradient back
    to 1e-18, pass thirty-three); where ``x @ y`` still overflows (``y`` near the float's
    largest), ``y`` is divided by its own largest power of two."""
    y = np.asarray(y, u.wide)
    e_x = np.minimum(largest_exponent(x, -1), 0)  # (..., n, 1): rows below 1, up to it
    e_y = np.minimum(largest_exponent(y, (-2, -1)), 0)  # (..., 1, 1)
    if e_x.any():  # (a pass over each only where some part is below 1)
        x, e = np.ldexp(x, -e_x), e + e_x
    if e_y.any():
        y, e = np.ldexp(y, -e_y), e + e_y
    xy = (x @ y) * u.m  # (..., n, s) @ (..., s, d) -> (..., n, d)
    if not np.isfinite(xy).all():
        e_big = largest_exponent(y, (-2, -1))  # (..., 1, 1)
        xy, e = (x @ np.ldexp(y, -e_big)) * u.m, e + e_big
    return np.ldexp(xy, e + u.e_s)


def _dq(ds: np.ndarray, k, u: _Units, row: np.ndarray) -> np.ndarray:
    """``scale * dS K`` for a block of query rows: ``ds (..., t, s)`` is ``dS`` in units of
    ``2**row`` (``(..., t, 1)``); returns ``(..., t, d)``."""
    return _times(ds, k, u, row)


_NO_ROW = -(1 << 20)  # the exponent of a row of zeros: below any other


def _dk(ds: np.ndarray, q, u: _Units, row: np.ndarray) -> np.ndarray:
    """``scale * dS^T Q`` for a block of query rows (``ds`` and ``row`` as in ``_dq``). The sum
    over rows needs them in one unit: the inputs' own, unless the largest row's ``dS`` (a row of
    zeros, a padded query's, does not count) is above 2**(maxexp - HEADROOM) (then down to it)
    or below 1 (then up to it). ``(..., s, d)``."""
    top_abs = np.abs(ds).max(axis=-1, keepdims=True, initial=0.0)  # (..., t, 1)
    ex = np.where(top_abs > 0, np.frexp(top_abs)[1] + row, _NO_ROW)  # (..., t, 1): each row's largest, 2**ex
    big = ex.max(axis=-2, keepdims=True, initial=_NO_ROW)  # (..., t, 1) -> (..., 1, 1)
    top = np.finfo(u.wide).maxexp - HEADROOM
    unit = np.where(big == _NO_ROW, 0, np.where(big > top, big - top, np.minimum(big, 0)))  # (..., 1, 1)
    rows = np.ldexp(ds, row - unit)  # (..., t, s), in units of 2**unit
    return _times(np.swapaxes(rows, -1, -2), q, u, unit)  # (..., s, t) @ (..., t, d) -> (..., s, d)


def _stored(grads: tuple, dtype) -> tuple:
    """The gradients, worked in a wider type, rounded once to the inputs' ``dtype``; a gradient
    that does not fit it is refused (``ValueError``), never stored as an infinity."""
    if all(g.dtype == dtype for g in grads):
        return grads
    with np.errstate(over="ignore"):
        return tuple(_checks.no_overflow(g.astype(dtype), f"the gradient {name} stored as {np.dtype(dtype)}",
                                         "q, k, v or d_out is too large for its gradient to be stored")
                     for g, name in zip(grads, ("dq", "dk", "dv")))


def attention_memory_between_passes(T: int, S: int, d: int, *, heads: int = 1, batch: int = 1,
                                    dtype: DTypeLike = "float32", lse_dtype: DTypeLike = "float32") -> dict:
    """Bytes attention keeps from its forward pass for its backward pass, naive vs tiled (page:
    FlashAttention: exact attention, one tile at a time).

        naive = batch * heads * T * S * bytes(dtype)                          the weights P
        tiled = batch * heads * (T * d * bytes(dtype) + T * bytes(lse_dtype))  O and the row log-sum-exp

    The naive backward reads ``P (B, H, T, S)``; the tiled one (``tiled_attention_backward``)
    recomputes ``P`` tile by tile from ``Q``, ``K`` and one log-sum-exp per query row, and
    needs ``O`` for ``rowsum(dO o O)``. FlashAttention keeps the log-sum-exp in float32
    whatever the dtype of ``O`` (hence ``lse_dtype``). Both keep ``Q``, ``K`` and ``V``,
    which are not counted here; ``d`` is the width of the values (the output).

    Returns:
        dict: ``naive`` and ``tiled``, in bytes.

    Example: ``T = S = 4096``, ``d = 64``, 32 heads in float16: naive ``32 * 4096^2 * 2 =
    1,073,741,824`` bytes (1 GiB) per sequence; tiled ``32 * 4096 * (64 * 2 + 4) =
    17,301,504`` bytes (16.5 MiB), 62 x less.
    """
    T = _checks.positive_int(T, "T")
    S = _checks.positive_int(S, "S")
    d = _checks.positive_int(d, "d")
    heads = _checks.positive_int(heads, "heads")
    batch = _checks.positive_int(batch, "batch")
    size = dtype_bytes(dtype)
    try:
        lse_size = dtype_bytes(lse_dtype)
    except ValueError as exc:
        raise ValueError(f"lse_dtype: {exc}") from None
    return dict(naive=batch * heads * T * S * size, tiled=batch * heads * T * (d * size + lse_size))
