"""Multi-head attention: project -> split -> attend -> concat -> W_O (page: multi-head attention).

    Q = x W_Q + b_Q         K = c W_K + b_K         V = c W_V + b_V       (c = context, or x)
    head_h = softmax(Q_h K_g(h)^T / sqrt(d) + bias_h, masked) V_g(h)
    out    = concat(head_1, ..., head_H) W_O + b_O

Row-vector convention, as on the pages: ``x`` is ``(..., T, D)`` and ``W_Q`` is
``(D, H*d)``, so ``Q = x @ W_Q``. (torch's ``nn.Linear`` stores the transpose.)

Self-attention uses ``context=None``; cross-attention passes the other sequence as
``context (..., S, D_ctx)``. Grouped-query attention uses ``n_kv_heads`` < ``n_heads``
key/value heads, each shared by ``n_heads // n_kv_heads`` consecutive query heads
(``n_kv_heads=1`` is multi-query attention); ``g(h) = h // (n_heads // n_kv_heads)``.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .attention import scaled_dot_product_attention
from .heads import combine_heads, repeat_kv_heads, split_heads


def _matrix(w, name: str, rows: int, rows_name: str) -> np.ndarray:
    w = _checks.float_array(w, name)
    if w.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (in_features, out_features), got shape {w.shape}")
    if w.shape[0] != rows:
        raise ValueError(
            f"{name} must have {rows} rows to match {rows_name}, got shape {w.shape}"
        )
    return w


def _bias(b, name: str, width: int):
    if b is None:
        return None
    b = _checks.float_array(b, name)
    if b.shape != (width,):
        raise ValueError(f"{name} must have shape ({width},), got {b.shape}")
    return b


def _project(x, w, b, what: str, blame: str):
    with np.errstate(over="ignore", invalid="ignore"):
        y = x @ w  # (..., T, D_in) @ (D_in, D_out) -> (..., T, D_out)
        y = y if b is None else y + b
    return _checks.no_overflow(y, what, blame)


def mha_trace(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, w_o: ArrayLike | None = None, *,
              n_heads: int, n_kv_heads: int | None = None, context: ArrayLike | None = None,
              mask: ArrayLike | None = None, causal: bool = False, scale: float | None = None,
              bias: ArrayLike | None = None, b_q: ArrayLike | None = None, b_k: ArrayLike | None = None,
              b_v: ArrayLike | None = None, b_o: ArrayLike | None = None,
              head_mask: ArrayLike | None = None) -> dict:
    """Multi-head attention with every intermediate array kept, for figures and labs.

    Takes the same arguments as :func:`multi_head_attention` and returns a dict with
    ``q, k, v`` (projected, ``(..., T|S, H*d)``), ``q_heads (..., H, T, d)``,
    ``k_heads, v_heads (..., H_kv, S, d)``, ``weights (..., H, T, S)``,
    ``heads_out (..., H, T, d_v)``, ``concat (..., T, H*d_v)`` and ``out``.

    ``head_mask`` (shape ``(H,)``) multiplies each head's output before the concatenation:
    0 removes a head, as in head-ablation studies (Michel et al., 2019). A stack of masks
    ``(M, H)`` gives ``M`` results at once: ``heads_out``, ``concat`` and ``out`` gain a
    leading axis of size ``M`` (it broadcasts like any batch axis of ``x``).

    Edge cases as in :func:`multi_head_attention`.
    """
    x = _checks.float_array(x, "x", min_ndim=2)
    c = x if context is None else _checks.float_array(context, "context", min_ndim=2)
    H = _checks.positive_int(n_heads, "n_heads")
    H_kv = H if n_kv_heads is None else _checks.positive_int(n_kv_heads, "n_kv_heads")
    n_rep = _checks.divisible(H, H_kv, "n_heads", "n_kv_heads")
    w_q = _matrix(w_q, "w_q", x.shape[-1], "x's last axis (d_model)")
    d = _checks.divisible(w_q.shape[1], H, "d_model (columns of w_q)", "n_heads")
    if d == 0:
        raise ValueError(
            f"w_q has 0 columns, so each head would have d_head = 0 query/key features; "
            f"attention needs d_head >= 1, got w_q of shape {w_q.shape}"
        )
    w_k = _matrix(w_k, "w_k", c.shape[-1], "the context's last axis")
    if w_k.shape[1] != H_kv * d:
        raise ValueError(
            f"w_k must have n_kv_heads * d_head = {H_kv} * {d} = {H_kv * d} columns, got shape {w_k.shape}"
        )
    w_v = _matrix(w_v, "w_v", c.shape[-1], "the context's last axis")
    d_v = _checks.divisible(w_v.shape[1], H_kv, "columns of w_v", "n_kv_heads")
    b_q, b_k, b_v = _bias(b_q, "b_q", H * d), _bias(b_k, "b_k", H_kv * d), _bias(b_v, "b_v", H_kv * d_v)

    q = _project(x, w_q, b_q, "the queries x @ w_q + b_q",
                 "x, w_q or b_q is too large")  # (..., T, D) -> (..., T, H*d)
    k = _project(c, w_k, b_k, "the keys context @ w_k + b_k (context = x in self-attention)",
                 "context (or x), w_k or b_k is too large")  # (..., S, D_ctx) -> (..., S, H_kv*d)
    v = _project(c, w_v, b_v, "the values context @ w_v + b_v (context = x in self-attention)",
                 "context (or x), w_v or b_v is too large")  # (..., S, D_ctx) -> (..., S, H_kv*d_v)
    q_heads = split_heads(q, H)  # (..., T, H*d) -> (..., H, T, d)
    k_heads = split_heads(k, H_kv)  # (..., S, H_kv*d) -> (..., H_kv, S, d)
    v_heads = split_heads(v, H_kv)  # (..., S, H_kv*d_v) -> (..., H_kv, S, d_v)
    heads_out, weights = scaled_dot_product_attention(
        q_heads,
        repeat_kv_heads(k_heads, n_rep),  # (..., H_kv, S, d) -> (..., H, S, d)
        repeat_kv_heads(v_heads, n_rep),  # (..., H_kv, S, d_v) -> (..., H, S, d_v)
        mask, causal=causal, scale=scale, bias=bias,
    )  # heads_out (..., H, T, d_v), weights (..., H, T, S)
    if head_mask is not None:
        head_mask = _checks.float_array(head_mask, "head_mask", min_ndim=1)
        if head_mask.shape[-1] != H:
            raise ValueError(
                f"head_mask must have shape (n_heads,) = ({H},), or (M, {H}) for M masks, got {head_mask.shape}"
            )
        with np.errstate(over="ignore", invalid="ignore"):
            heads_out = heads_out * head_mask.astype(heads_out.dtype)[..., None, None]  # (..., H) -> (..., H, 1, 1)
        _checks.no_overflow(heads_out, "the heads' outputs times head_mask", "head_mask is too large")
    concat = combine_heads(heads_out)  # (..., H, T, d_v) -> (..., T, H*d_v)
    if w_o is None:
        if b_o is not None:
            raise ValueError("b_o was given without w_o; pass w_o too or drop b_o")
        out = concat
    else:
        w_o = _matrix(w_o, "w_o", H * d_v, "n_heads * d_v (the concatenated heads)")
        out = _project(concat, w_o, _bias(b_o, "b_o", w_o.shape[1]), "the output concat @ w_o + b_o",
                       "w_o or b_o is too large for the heads' outputs")  # (..., T, H*d_v) -> (..., T, D_out)
    return dict(q=q, k=k, v=v, q_heads=q_heads, k_heads=k_heads, v_heads=v_heads,
                weights=weights, heads_out=heads_out, concat=concat, out=out)


def multi_head_attention(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike,
                         w_o: ArrayLike | None = None, *, n_heads: int, n_kv_heads: int | None = None,
                         context: ArrayLike | None = None, mask: ArrayLike | None = None, causal: bool = False,
                         scale: float | None = None, bias: ArrayLike | None = None,
                         b_q: ArrayLike | None = None, b_k: ArrayLike | None = None,
                         b_v: ArrayLike | None = None, b_o: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head (self- or cross-) attention with optional grouped-query heads.

    Args:
        x: queries' input ``(..., T, D)``.
        w_q: query projection ``(D, H*d)``.
        w_k: key projection ``(D_ctx, H_kv*d)``.
        w_v: value projection ``(D_ctx, H_kv*d_v)``.
        w_o: ``(H*d_v, D_out)`` or None to return the concatenated heads.
        n_heads: query heads ``H``; ``d = w_q.shape[1] / H`` must be whole.
        n_kv_heads: key/value heads ``H_kv`` (default ``H``); ``H`` must be a multiple.
        context: keys' and values' input ``(..., S, D_ctx)`` for cross-attention.
        mask: boolean, True = may attend, broadcastable to ``(..., H, T, S)``.
        causal: top-left causal mask, as in :func:`scaled_dot_product_attention`.
        scale: defaults to ``1/sqrt(d)``.
        bias: additive, broadcastable to ``(..., H, T, S)`` (e.g. ALiBi).
        b_q: optional bias of the query projection, ``(H*d,)``.
        b_k: optional bias of the key projection, ``(H_kv*d,)``.
        b_v: optional bias of the value projection, ``(H_kv*d_v,)``.
        b_o: optional bias of the output projection, ``(D_out,)``.

    Returns:
        The pair ``(out, weights)``: ``(..., T, D_out)`` and the per-head weights ``(..., H, T, S)``.

    Edge cases: scores beyond the float range are handled exactly, as in
    :func:`scaled_dot_product_attention`; a projection or output that overflows is refused
    with a ``ValueError`` naming the arguments involved. ``T = 0`` gives empty results; an
    empty context (``S = 0``) gives every head a zero output, so ``out`` is ``b_o`` (or 0);
    ``w_q`` with fewer columns than heads (``d_head = 0``) is refused.

    Parameter count with biases: ``4 D^2 + 4 D`` for any ``H`` (see :func:`mha_param_count`).
    """
    t = mha_trace(x, w_q, w_k, w_v, w_o, n_heads=n_heads, n_kv_heads=n_kv_heads, context=context,
                  mask=mask, causal=causal, scale=scale, bias=bias, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o)
    return t["out"], t["weights"]


def per_head_output(heads_out: ArrayLike, w_o: ArrayLike) -> np.ndarray:
    """Each head's output through its own block of rows of ``W_O``.

        concat(head_1..head_H) W_O = sum_h head_h W_O[h*d_v:(h+1)*d_v, :]

    ``heads_out (..., H, T, d_v)`` and ``w_o (H*d_v, D_out)`` give ``(..., H, T, D_out)``;
    summing over the head axis gives the MHA output (before ``b_O``).
    """
    heads_out = _checks.float_array(heads_out, "heads_out", min_ndim=3)
    *_, H, T, d_v = heads_out.shape
    w_o = _matrix(w_o, "w_o", H * d_v, "n_heads * d_v")
    blocks = w_o.reshape(H, d_v, w_o.shape[1])  # (H*d_v, D_out) -> (H, d_v, D_out)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.einsum("...htv,hvo->...hto", heads_out, blocks)  # (..., H, T, D_out)
    return _checks.no_overflow(out, "the per-head outputs heads_out @ w_o", "heads_out or w_o is too large")
