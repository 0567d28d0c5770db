"""Multi-head attention: project -> split -> attend -> concat -> W_O (page: multi-head attention).

    Q = x W_Q + b_Q         K = c W_K + b_K         V = c_v W_V + b_V     (c = context, or x; c_v = value_context, or c)
    head_h = softmax(Q_h K_g(h)^T / sqrt(d) + bias_h, masked) V_g(h)
    out    = concat(head_1, ..., head_H) W_O + b_O

Row-vector convention, as on the pages: ``x`` is ``(..., T, D)`` and ``W_Q`` is
``(D, H*d)``, so ``Q = x @ W_Q``. (torch's ``nn.Linear`` stores the transpose.)

Self-attention uses ``context=None``; cross-attention passes the other sequence as
``context (..., S, D_ctx)``. Grouped-query attention uses ``n_kv_heads`` < ``n_heads``
key/value heads, each shared by ``n_heads // n_kv_heads`` consecutive query heads
(``n_kv_heads=1`` is multi-query attention); ``g(h) = h // (n_heads // n_kv_heads)``.

Positions, for RoPE and ALiBi inside the layer: the queries sit at ``positions``
(default ``0 .. T-1``) and the keys at ``key_positions`` (default: the queries' positions
in self-attention, where keys and queries are the same tokens; ``0 .. S-1`` with a
``context``). With ``rope_base`` the per-head queries and keys are rotated,
``q_h <- R(p_i) q_h`` and ``k_g <- R(p_j) k_g`` (page: RoPE); with ``alibi=True`` each head
adds ``-m_h |p_i - p_j|`` to its scores (page: ALiBi). Cached decoding feeds the new
tokens as queries at positions ``P .. P+t-1`` against every token so far as the context
(page: Generating text: the KV cache).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .alibi import alibi_slopes
from .attention import scaled_dot_product_attention
from .heads import combine_heads, repeat_kv_heads, split_heads
from .rope import LAYOUTS, apply_rope


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


def _weights_and_heads(x, c, c_v, w_q, w_k, w_v, b_q, b_k, b_v, n_heads, n_kv_heads, *,
                       q_name="x's last axis (d_model)", k_name="the context's last axis",
                       v_name="the context's last axis"):
    """Check the projection weights against ``x``, ``c`` (keys) and ``c_v`` (values), whose
    last axes the messages call ``q_name``, ``k_name`` and ``v_name``; return
    ``(w_q, w_k, w_v, b_q, b_k, b_v, H, H_kv, n_rep, d, d_v)``."""
    H = _checks.positive_int(n_heads, "n_heads")
    H_kv = H if n_kv_heads is None else _checks.positive_int(n_kv_heads, "n_kv_heads")
    n_rep = _checks.divisible(H, H_kv, "n_heads", "n_kv_heads")
    w_q = _matrix(w_q, "w_q", x.shape[-1], q_name)
    d = _checks.divisible(w_q.shape[1], H, "d_model (columns of w_q)", "n_heads")
    if d == 0:
        raise ValueError(
            f"w_q has 0 columns, so each head would have d_head = 0 query/key features; "
            f"attention needs d_head >= 1, got w_q of shape {w_q.shape}"
        )
    w_k = _matrix(w_k, "w_k", c.shape[-1], k_name)
    if w_k.shape[1] != H_kv * d:
        raise ValueError(
            f"w_k must have n_kv_heads * d_head = {H_kv} * {d} = {H_kv * d} columns, got shape {w_k.shape}"
        )
    w_v = _matrix(w_v, "w_v", c_v.shape[-1], v_name)
    d_v = _checks.divisible(w_v.shape[1], H_kv, "columns of w_v", "n_kv_heads")
    b_q, b_k, b_v = _bias(b_q, "b_q", H * d), _bias(b_k, "b_k", H_kv * d), _bias(b_v, "b_v", H_kv * d_v)
    return w_q, w_k, w_v, b_q, b_k, b_v, H, H_kv, n_rep, d, d_v


def _rope_args(rope_base, rope_layout, d: int):
    """Check ``rope_base`` and ``rope_layout`` (``d`` from w_q's columns); return them."""
    rope_layout = _checks.choice(rope_layout, "rope_layout", LAYOUTS)
    if rope_base is None:
        if rope_layout != "interleaved":
            raise ValueError(f"rope_layout={rope_layout!r} was given without rope_base; pass rope_base too "
                             "(e.g. 10000.0) or drop rope_layout")
        return None, rope_layout
    rope_base = _checks.positive_float(rope_base, "rope_base")
    if d % 2:
        raise ValueError(f"rope_base needs an even d_head (RoPE rotates pairs of features); "
                         f"the columns of w_q give d_head = {d}")
    return rope_base, rope_layout


def _positions(p, n: int, name: str, default, *, exact: bool) -> np.ndarray:
    """``p`` as float64 positions of shape ``(n,)``, or ``default`` when ``p`` is None. With
    ``exact`` (RoPE), ``|p| >= 2**53`` is refused here, under ``name``: float64 cannot tell such
    positions apart. (ALiBi's positions are checked in ``_with_alibi``, after its overflow checks.)"""
    if p is None:
        return default
    p = _checks.float_array(p, name, min_ndim=1)
    if p.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one position per token, got {p.shape}")
    if exact:
        _checks.exact_positions(p, name)
    return p.astype(np.float64)


def _with_alibi(bias, H: int, q_pos: np.ndarray, k_pos: np.ndarray, dtype) -> np.ndarray:
    """``bias`` (or 0) plus ALiBi's ``-m_h |p_i - p_j|`` with ``alibi_slopes``, shape ``(..., H, T, S)``.

    For keys at or before the query (``p_j <= p_i``) this is the paper's ``-m_h (p_i - p_j)``
    (``mhalib.alibi_bias`` with ``causal=True``); elsewhere it is the symmetric form for
    encoders (``causal=False``). With a causal mask the two agree on every allowed key.
    ALiBi's part is rounded to ``dtype``, the scores' float type, so that it does not turn
    float32 or float16 attention into float64; one beyond that type's range is refused
    (it would pose as a mask), and so are positions ``|p| >= 2**53``, which float64 cannot
    tell apart.
    """
    slopes = alibi_slopes(H)[:, None, None]  # (H,) -> (H, 1, 1)
    with np.errstate(over="ignore", invalid="ignore"):
        distance = -np.abs(q_pos[:, None] - k_pos[None, :])  # (T, 1) - (1, S) -> (T, S)
    _checks.no_overflow(distance, "the ALiBi distances -|p_i - p_j|",
                        "positions and key_positions lie too far apart")
    with np.errstate(over="ignore"):
        alibi_b = (slopes * distance).astype(dtype, copy=False)  # (H, 1, 1) * (T, S) -> (H, T, S)
    _checks.no_overflow(alibi_b, f"the ALiBi bias -m_h |p_i - p_j| in {np.dtype(dtype)}",
                        "positions and key_positions lie too far apart for the scores' float type")
    if bias is not None:
        alibi_b = _plus_bias(bias, alibi_b, H, q_pos, k_pos)
    # after the overflow checks, which say more where both fail: |p| >= 2**53 makes p and p + 1 one position
    _checks.exact_positions(q_pos, "positions")
    _checks.exact_positions(k_pos, "key_positions")
    return alibi_b


def _plus_bias(bias, alibi_b: np.ndarray, H: int, q_pos: np.ndarray, k_pos: np.ndarray) -> np.ndarray:
    """``bias + alibi_b``, refusing a ``bias`` that does not broadcast or a sum that overflows."""
    bias = _checks.float_array(bias, "bias", finite=False)
    try:
        np.broadcast_shapes(bias.shape, alibi_b.shape)
    except ValueError:
        raise ValueError(
            f"bias of shape {bias.shape} does not broadcast to the scores' shape (..., H, T, S) = "
            f"(..., {H}, {len(q_pos)}, {len(k_pos)})"
        ) from None
    with np.errstate(over="ignore", invalid="ignore"):
        total = bias + alibi_b  # (..., T, S) + (H, T, S) -> (..., H, T, S)
    if (np.isinf(total) & np.isfinite(bias)).any():  # a finite sum that overflows would pose as a mask
        raise ValueError("overflow in bias + the ALiBi bias: bias is too large in size to add ALiBi to it")
    return total


def _output(heads_out, w_o, b_o, H: int, d_v: int):
    """``concat(heads) W_O + b_O`` (or the concatenation when ``w_o`` is None)."""
    concat = combine_heads(heads_out)  # (..., H, T, d_v) -> (..., T, H*d_v)
    if w_o is None:
        if b_o is not None:
            raise ValueError("b_o was given without w_o; pass w_o too or drop b_o")
        return concat, concat
    w_o = _matrix(w_o, "w_o", H * d_v, "n_heads * d_v (the concatenated heads)")
    out = _project(concat, w_o, _bias(b_o, "b_o", w_o.shape[1]), "the output concat @ w_o + b_o",
                   "w_o or b_o is too large for the heads' outputs")  # (..., T, H*d_v) -> (..., T, D_out)
    return concat, out


def mha_trace(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, w_o: ArrayLike | None = None, *,
              n_heads: int, n_kv_heads: int | None = None, context: ArrayLike | None = None,
              mask: ArrayLike | None = None, causal: bool = False, scale: float | None = None,
              bias: ArrayLike | None = None, b_q: ArrayLike | None = None, b_k: ArrayLike | None = None,
              b_v: ArrayLike | None = None, b_o: ArrayLike | None = None,
              head_mask: ArrayLike | None = None, positions: ArrayLike | None = None,
              key_positions: ArrayLike | None = None, rope_base: float | None = None,
              rope_layout: str = "interleaved", alibi: bool = False,
              value_context: ArrayLike | None = None) -> dict:
    """Multi-head attention with every intermediate array kept, for figures and labs.

    Takes the same arguments as ``multi_head_attention`` and returns a dict with
    ``q, k, v`` (projected, ``(..., T|S, H*d)``), ``q_heads (..., H, T, d)``,
    ``k_heads, v_heads (..., H_kv, S, d)``, ``weights (..., H, T, S)``,
    ``heads_out (..., H, T, d_v)``, ``concat (..., T, H*d_v)`` and ``out``. With
    ``rope_base``, ``q_heads`` and ``k_heads`` are the rotated heads that attention uses
    (what a KV cache stores); ``q`` and ``k`` stay unrotated.

    ``head_mask`` (shape ``(H,)``) multiplies each head's output before the concatenation:
    0 removes a head, as in head-ablation studies (Michel et al., 2019). A stack of masks
    gives several results at once, its leading axes broadcasting with the batch axes of ``x``
    as numpy broadcasts: for ``x (T, D)``, masks ``(M, H)`` give ``heads_out``, ``concat`` and
    ``out`` a leading axis of size ``M``; for a batch ``x (B, T, D)``, masks ``(M, 1, H)`` give
    every mask on every sequence, ``(M, B, ...)``, while masks ``(B, H)`` pair mask ``b`` with
    sequence ``b`` (one result per sequence, not ``M x B``).

    Edge cases as in ``multi_head_attention``.
    """
    x = _checks.float_array(x, "x", min_ndim=2)
    c = x if context is None else _checks.float_array(context, "context", min_ndim=2)
    if value_context is None:
        c_v, v_name = c, "the context's last axis"
    else:
        c_v = _checks.float_array(value_context, "value_context", min_ndim=2)
        v_name = "value_context's last axis"
        keys_name = "x" if context is None else "context"
        if c_v.shape[-2] != c.shape[-2]:
            raise ValueError(
                f"value_context must have as many tokens S as the keys' input, {keys_name}: "
                f"got value_context {c_v.shape} and {keys_name} {c.shape} (..., S, features)"
            )
    w_q, w_k, w_v, b_q, b_k, b_v, H, H_kv, n_rep, d, d_v = _weights_and_heads(
        x, c, c_v, w_q, w_k, w_v, b_q, b_k, b_v, n_heads, n_kv_heads, v_name=v_name)
    rope_base, rope_layout = _rope_args(rope_base, rope_layout, d)
    alibi = _checks.boolean(alibi, "alibi")
    T, S = x.shape[-2], c.shape[-2]
    if (positions is not None or key_positions is not None) and rope_base is None and not alibi:
        raise ValueError("positions or key_positions was given without rope_base or alibi=True, so it would "
                         "change nothing; pass rope_base or alibi=True too, or drop the positions")
    q_pos = _positions(positions, T, "positions", np.arange(T, dtype=np.float64),
                       exact=rope_base is not None)  # (T,)
    k_pos = _positions(key_positions, S, "key_positions",
                       q_pos if context is None else np.arange(S, dtype=np.float64),
                       exact=rope_base is not None)  # (S,)

    w_o, b_o = _output_weights(w_o, b_o, H * d_v)
    head_mask = _head_mask(head_mask, H)
    say = _overflow_words(value_context is not None)  # what an overflow error would say

    # --8<-- [start:mha]
    # From the checks above: the queries come from x (..., T, D), the keys from
    # c (..., S, D_c), which is x in self-attention, and the values from c_v (c
    # unless value_context is given); H_kv = n_kv_heads (H by default) and
    # n_rep = H // H_kv; q_pos and k_pos are the positions of queries and keys.
    # _project(a, w, b, ...) is a @ w + b, refusing a result that overflows.
    q = _project(x, w_q, b_q, *say["q"])  # (..., T, H*d)
    k = _project(c, w_k, b_k, *say["k"])  # (..., S, H_kv*d)
    v = _project(c_v, w_v, b_v, *say["v"])  # (..., S, H_kv*d_v)
    q_heads = split_heads(q, H)  # (..., T, H*d) -> (..., H, T, d)
    k_heads = split_heads(k, H_kv)  # (..., S, H_kv*d) -> (..., H_kv, S, d)
    v_heads = split_heads(v, H_kv)  # (..., S, H_kv*d_v) -> (..., H_kv, S, d_v)
    if rope_base is not None:  # rotate queries and keys (page: RoPE)
        q_heads = apply_rope(q_heads, q_pos, base=rope_base, layout=rope_layout)
        k_heads = apply_rope(k_heads, k_pos, base=rope_base, layout=rope_layout)
    if alibi:  # add -m_h |p_i - p_j| to head h's scores (page: ALiBi)
        dtype = np.result_type(q_heads, k_heads)  # the scores' float type
        bias = _with_alibi(bias, H, q_pos, k_pos, dtype)  # (..., H, T, S)
    # Query head h reads key/value head h // n_rep (grouped-query attention):
    # each is repeated n_rep times, (..., H_kv, S, .) -> (..., H, S, .)
    k_all = repeat_kv_heads(k_heads, n_rep)  # (..., H, S, d)
    v_all = repeat_kv_heads(v_heads, n_rep)  # (..., H, S, d_v)
    heads_out, weights = scaled_dot_product_attention(
        q_heads, k_all, v_all, mask, causal=causal, scale=scale, bias=bias,
    )  # heads_out (..., H, T, d_v), weights (..., H, T, S)
    if head_mask is not None:  # 0 switches a head off (ablation studies)
        heads_out = _times_head_mask(heads_out, head_mask)  # (..., H, T, d_v)
    concat = combine_heads(heads_out)  # (..., H, T, d_v) -> (..., T, H*d_v)
    out = concat  # without w_o, the concatenated heads
    if w_o is not None:  # (..., T, H*d_v) -> (..., T, D_out)
        out = _project(concat, w_o, b_o, *say["out"])
    return dict(q=q, k=k, v=v, q_heads=q_heads, k_heads=k_heads,
                v_heads=v_heads, weights=weights, heads_out=heads_out,
                concat=concat, out=out)
    # --8<-- [end:mha]


def _output_weights(w_o, b_o, rows: int):
    """Check ``w_o (H*d_v, D_out)`` and ``b_o (D_out,)``; ``b_o`` needs ``w_o``."""
    if w_o is None:
        if b_o is not None:
            raise ValueError("b_o was given without w_o; pass w_o too or drop b_o")
        return None, None
    w_o = _matrix(w_o, "w_o", rows, "n_heads * d_v (the concatenated heads)")
    return w_o, _bias(b_o, "b_o", w_o.shape[1])


def _head_mask(head_mask, H: int):
    """Check ``head_mask``: shape ``(H,)``, or ``(M, H)`` for ``M`` masks at once."""
    if head_mask is None:
        return None
    head_mask = _checks.float_array(head_mask, "head_mask", min_ndim=1)
    if head_mask.shape[-1] != H:
        raise ValueError(
            f"head_mask must have shape (n_heads,) = ({H},), or (M, {H}) for M masks, got {head_mask.shape}"
        )
    return head_mask


def _times_head_mask(heads_out: np.ndarray, head_mask: np.ndarray) -> np.ndarray:
    """``heads_out (..., H, T, d_v)`` times ``head_mask (..., H)``, one factor per head."""
    try:
        np.broadcast_shapes(heads_out.shape[:-3], head_mask.shape[:-1])
    except ValueError:
        raise ValueError(f"head_mask has shape {head_mask.shape}: its leading axes {head_mask.shape[:-1]} (M masks) must "
                         f"broadcast with the batch axes of x, {heads_out.shape[:-3]}") from None
    with np.errstate(over="ignore", invalid="ignore"):
        heads_out = heads_out * head_mask.astype(heads_out.dtype)[..., None, None]  # (..., H) -> (..., H, 1, 1)
    return _checks.no_overflow(heads_out, "the heads' outputs times head_mask", "head_mask is too large")


def _overflow_words(own_values: bool) -> dict[str, tuple[str, str]]:
    """For each projection, what overflowed and which arguments to blame (``own_values``:
    the values come from ``value_context``)."""
    if own_values:
        v = ("the values value_context @ w_v + b_v", "value_context, w_v or b_v is too large")
    else:
        v = ("the values context @ w_v + b_v (context = x in self-attention)",
             "context (or x), w_v or b_v is too large")
    return dict(
        q=("the queries x @ w_q + b_q", "x, w_q or b_q is too large"),
        k=("the keys context @ w_k + b_k (context = x in self-attention)",
           "context (or x), w_k or b_k is too large"),
        v=v,
        out=("the output concat @ w_o + b_o", "w_o or b_o is too large for the heads' outputs"),
    )


def multi_head_attention(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike,
                         w_o: ArrayLike | None = None, *, n_heads: int, n_kv_heads: int | None = None,
                         context: ArrayLike | None = None, mask: ArrayLike | None = None, causal: bool = False,
                         scale: float | None = None, bias: ArrayLike | None = None,
                         b_q: ArrayLike | None = None, b_k: ArrayLike | None = None,
                         b_v: ArrayLike | None = None, b_o: ArrayLike | None = None,
                         positions: ArrayLike | None = None, key_positions: ArrayLike | None = None,
                         rope_base: float | None = None, rope_layout: str = "interleaved",
                         alibi: bool = False, value_context: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head (self- or cross-) attention with optional grouped-query heads, RoPE and ALiBi.

    Args:
        x: queries' input ``(..., T, D)``.
        w_q: query projection ``(D, H*d)``.
        w_k: key projection ``(D_ctx, H_kv*d)``.
        w_v: value projection ``(D_ctx, H_kv*d_v)`` (``(D_val, H_kv*d_v)`` with ``value_context``).
        w_o: ``(H*d_v, D_out)`` or None to return the concatenated heads.
        n_heads: query heads ``H``; ``d = w_q.shape[1] / H`` must be whole.
        n_kv_heads: key/value heads ``H_kv`` (default ``H``); ``H`` must be a multiple.
        context: keys' and values' input ``(..., S, D_ctx)`` for cross-attention.
        mask: boolean, True = may attend, broadcastable to ``(..., H, T, S)``.
        causal: top-left causal mask, as in ``scaled_dot_product_attention``. Queries
            that are the last ``T`` of ``S`` tokens (a prompt's continuation against a
            cache) need ``mask=causal_mask(T, S, align="bottom_right")`` instead.
        scale: defaults to ``1/sqrt(d)``.
        bias: additive, broadcastable to ``(..., H, T, S)`` (e.g. ALiBi).
        b_q: optional bias of the query projection, ``(H*d,)``.
        b_k: optional bias of the key projection, ``(H_kv*d,)``.
        b_v: optional bias of the value projection, ``(H_kv*d_v,)``.
        b_o: optional bias of the output projection, ``(D_out,)``.
        positions: absolute positions of the queries, ``(T,)``; default ``0 .. T-1``.
            Used by RoPE and ALiBi only (given without either, it is refused). A position
            ``|p| >= 2**53`` is refused: float64 cannot tell ``p`` from ``p + 1`` there.
        key_positions: absolute positions of the keys, ``(S,)``; default ``positions`` in
            self-attention (keys and queries are the same tokens) and ``0 .. S-1`` with a
            ``context``; refused alike from ``2**53`` on.
        rope_base: apply RoPE with this base (e.g. :data:`DEFAULT_BASE`) to every query
            and key head after the projections, ``R(p) q_h`` (``apply_rope``); needs an
            even ``d``. None (the default): no RoPE.
        rope_layout: ``"interleaved"`` (planes (2i, 2i+1)) or ``"half"`` (``rotate_half``).
        alibi: add ALiBi's bias ``-m_h |p_i - p_j|`` with ``alibi_slopes`` per query
            head (on top of ``bias``); under a causal mask this is ``alibi_bias``.
        value_context: the values' input ``(..., S, D_val)`` when it is not the keys'
            (keys from ``context`` or ``x``, values from ``value_context``, both ``S`` long).

    Returns:
        tuple[np.ndarray, np.ndarray]: the pair ``(out, weights)``, the output ``(..., T, D_out)``
        and the per-head weights ``(..., H, T, S)``, in the inputs' float type (float32 inputs
        give float32 results with RoPE and ALiBi too; mixed types promote as numpy does).

    Edge cases: scores beyond the float range are handled exactly, as in
    ``scaled_dot_product_attention``; a projection or output that overflows is refused
    with a ``ValueError`` naming the arguments involved. ``T = 0`` gives empty results; an
    empty context (``S = 0``) gives every head a zero output, so ``out`` is ``b_o`` (or 0);
    ``w_q`` with fewer columns than heads (``d_head = 0``) is refused.

    Parameter count with biases: ``4 D^2 + 4 D`` for any ``H`` (see ``mha_param_count``).

    Example: one head, ``x = [[1, 0], [0, 1]]``, identity weights and ``scale=1`` give the
    weights ``[[0.7311, 0.2689], [0.2689, 0.7311]]``. With ``rope_base=10000.0`` (``d = 2``:
    one plane turning 1 rad per position) key 1 is rotated by 1 rad, query 0's scores become
    ``[1, -sin 1] = [1, -0.8415]`` and the weights ``[[0.8631, 0.1369], [0.1369, 0.8631]]``;
    ``positions=[5, 6]`` gives the same weights (RoPE sees only the offsets ``p_j - p_i``).
    """
    t = mha_trace(x, w_q, w_k, w_v, w_o, n_heads=n_heads, n_kv_heads=n_kv_heads, context=context,
                  mask=mask, causal=causal, scale=scale, bias=bias, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o,
                  positions=positions, key_positions=key_positions, rope_base=rope_base,
                  rope_layout=rope_layout, alibi=alibi, value_context=value_context)
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
