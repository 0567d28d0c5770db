"""Multi-head latent attention (MLA), DeepSeek-V2's way to shrink the KV cache (page: long context).

Keys and values come from one low-rank latent per token, shared by every head; a small
RoPE key, also shared, carries the position:

    c   = x W_DKV                        (..., T, d_c)        the latent: all a cache keeps,
    k_R = RoPE(x W_KR)                   (..., T, d_R)        with k_R
    k_h = [c W_UK,h ; k_R]               (..., T, d_h + d_R)  head h's keys
    v_h = c W_UV,h                       (..., T, d_v)        head h's values
    q_h = [x W_Q,h ; RoPE(x W_QR,h)]     (..., T, d_h + d_R)
    out = concat_h softmax(q_h k_h^T / sqrt(d_h + d_R)) v_h  W_O

``W_UK,h`` is columns ``[h d_h, (h+1) d_h)`` of ``W_UK (d_c, H d_h)``, and likewise for the
other per-head matrices. RoPE cannot act on ``c W_UK,h`` (the rotation would sit between
``W_UK`` and the cached ``c``), hence the separate ``d_R``-wide RoPE part.

The *absorbed* form never builds a per-head key or value. Since
``q_h . (c_j W_UK,h) = (q_h W_UK,h^T) . c_j``, each head's query is carried into the latent
space, and since ``(sum_j p_j c_j W_UV,h) W_O,h = (sum_j p_j c_j) (W_UV,h W_O,h)``, ``W_UV``
folds into the output projection:

    q~_h = [x W_Q,h W_UK,h^T ; RoPE(x W_QR,h)]       (..., T, d_c + d_R)
    k~   = [c ; k_R]                                 (..., T, d_c + d_R), one for all heads
    out  = sum_h softmax(q~_h k~^T / sqrt(d_h + d_R)) c  (W_UV,h W_O,h)

which is multi-query attention over the cached ``[c ; k_R]`` itself. A cache holds
``d_c + d_R`` numbers per token and layer (``mla_cache_bytes``): DeepSeek-V2's ``512 + 64 =
576``, against ``2 H d_h = 32,768`` for multi-head attention with its 128 heads of 128.

DeepSeek-V2 also compresses the queries (``c_Q = x W_DQ``, then ``W_UQ`` and ``W_QR`` from
``c_Q``) and normalises each latent (RMSNorm) before its up-projection; both are left out
here. Passing ``w_q = W_DQ W_UQ`` and ``w_qr = W_DQ W_QR`` gives the same queries as the
compressed ones (without the normalisation).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _checks
from .attention import scaled_dot_product_attention
from .costs import dtype_bytes
from .heads import combine_heads, split_heads
from .mha import _matrix, _project
from .rope import apply_rope
from .sinusoidal import DEFAULT_BASE


def mla_random_weights(d_model: int, n_heads: int, d_head: int, d_latent: int, d_rope: int, *,
                       d_v: int | None = None, seed: int = 0) -> dict:
    """Seeded random weights for ``mla_attention``, entries ``N(0, 1/fan_in)`` (page: long context).

    Returns:
        dict: ``w_dkv (D, d_c)``, ``w_uk (d_c, H d_h)``, ``w_uv (d_c, H d_v)``,
        ``w_kr (D, d_R)``, ``w_q (D, H d_h)``, ``w_qr (D, H d_R)`` and ``w_o (H d_v, D)``,
        named as ``mla_attention``'s arguments: ``mla_attention(x, **w, n_heads=H)``.
        ``d_v`` defaults to ``d_head``.

    Example: ``mla_random_weights(64, 4, 16, 32, 8)["w_uk"].shape == (32, 64)``.
    """
    D = _checks.positive_int(d_model, "d_model")
    H = _checks.positive_int(n_heads, "n_heads")
    d_h = _checks.positive_int(d_head, "d_head")
    d_c = _checks.positive_int(d_latent, "d_latent")
    d_R = _checks.even_int(d_rope, "d_rope")
    d_v = d_h if d_v is None else _checks.positive_int(d_v, "d_v")
    rng = np.random.default_rng(_checks.nonnegative_int(seed, "seed"))
    shapes = dict(w_dkv=(D, d_c), w_uk=(d_c, H * d_h), w_uv=(d_c, H * d_v), w_kr=(D, d_R),
                  w_q=(D, H * d_h), w_qr=(D, H * d_R), w_o=(H * d_v, D))
    return {name: rng.normal(scale=1 / math.sqrt(rows), size=(rows, cols)) for name, (rows, cols) in shapes.items()}


def _checked_weights(x, w_dkv, w_uk, w_uv, w_kr, w_q, w_qr, w_o, n_heads):
    """Check the seven matrices against ``x (..., T, D)`` and each other; return them and
    ``(H, d_h, d_v, d_R)``."""
    H = _checks.positive_int(n_heads, "n_heads")
    D = x.shape[-1]
    w_dkv = _matrix(w_dkv, "w_dkv", D, "x's last axis (d_model)")
    d_c = w_dkv.shape[1]
    latent = "the latent width d_latent (columns of w_dkv)"
    w_uk = _matrix(w_uk, "w_uk", d_c, latent)
    d_h = _checks.divisible(w_uk.shape[1], H, "columns of w_uk", "n_heads")
    w_uv = _matrix(w_uv, "w_uv", d_c, latent)
    d_v = _checks.divisible(w_uv.shape[1], H, "columns of w_uv", "n_heads")
    w_kr = _matrix(w_kr, "w_kr", D, "x's last axis (d_model)")
    d_R = _checks.even_int(w_kr.shape[1], "d_rope (columns of w_kr)")
    w_q = _matrix(w_q, "w_q", D, "x's last axis (d_model)")
    w_qr = _matrix(w_qr, "w_qr", D, "x's last axis (d_model)")
    for w, name, want, what in ((w_q, "w_q", H * d_h, "n_heads * d_head (as w_uk)"),
                                (w_qr, "w_qr", H * d_R, "n_heads * d_rope (d_rope: columns of w_kr)")):
        if w.shape[1] != want:
            raise ValueError(f"{name} must have {what} = {want} columns, got shape {w.shape}")
    w_o = _matrix(w_o, "w_o", H * d_v, "n_heads * d_v (the concatenated heads)")
    return (w_dkv, w_uk, w_uv, w_kr, w_q, w_qr, w_o), (H, d_h, d_v, d_R)


def mla_attention(x: ArrayLike, w_dkv: ArrayLike, w_uk: ArrayLike, w_uv: ArrayLike, w_kr: ArrayLike,
                  w_q: ArrayLike, w_qr: ArrayLike, w_o: ArrayLike, *, n_heads: int, absorbed: bool = False,
                  causal: bool = False, scale: float | None = None,
                  rope_base: float = DEFAULT_BASE) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head latent attention (DeepSeek-V2), naive or with the up-projections absorbed
    (page: long context).

        c = x W_DKV,  k_R = RoPE(x W_KR),  k_h = [c W_UK,h ; k_R],  v_h = c W_UV,h
        q_h = [x W_Q,h ; RoPE(x W_QR,h)]
        out = concat_h softmax(q_h k_h^T * scale, causal) v_h  W_O

    Args:
        x: the input ``(..., T, D)``.
        w_dkv: down-projection to the latent, ``(D, d_c)``.
        w_uk: up-projection of the latent to the keys, ``(d_c, H*d_h)``.
        w_uv: up-projection of the latent to the values, ``(d_c, H*d_v)``.
        w_kr: the shared RoPE key's projection, ``(D, d_R)``, ``d_R`` even.
        w_q: the queries' content part, ``(D, H*d_h)``.
        w_qr: the queries' RoPE part, ``(D, H*d_R)``.
        w_o: output projection ``(H*d_v, D_out)``.
        n_heads: ``H``.
        absorbed: compute with ``W_UK`` absorbed into the queries and ``W_UV`` into ``W_O``,
            attending over the latent ``[c ; k_R]`` itself (one key head shared by all):
            no per-head key or value is ever formed. The result is the same within rounding.
        causal: query ``i`` sees keys ``j <= i``.
        scale: multiplies the scores; defaults to ``1/sqrt(d_h + d_R)``, the width of a
            head's query (in both forms: absorption changes the widths, not the scores).
        rope_base: RoPE's base for the positional parts, at positions ``0 .. T-1``
            (``apply_rope``, interleaved layout).

    Returns:
        tuple[np.ndarray, np.ndarray]: ``(out, weights)``, the output ``(..., T, D_out)`` and
        the per-head weights ``(..., H, T, T)``.

    Projections or outputs that overflow the float range are refused with a ``ValueError``.

    Example: with ``w = mla_random_weights(64, 4, 16, 32, 8, seed=0)`` and any ``x``,
    ``mla_attention(x, **w, n_heads=4)`` and ``mla_attention(x, **w, n_heads=4,
    absorbed=True)`` agree within 1e-12 in float64.
    """
    x = _checks.float_array(x, "x", min_ndim=2)
    (w_dkv, w_uk, w_uv, w_kr, w_q, w_qr, w_o), (H, d_h, d_v, d_R) = _checked_weights(
        x, w_dkv, w_uk, w_uv, w_kr, w_q, w_qr, w_o, n_heads)
    absorbed = _checks.boolean(absorbed, "absorbed")
    causal = _checks.boolean(causal, "causal")
    scale = 1.0 / math.sqrt(d_h + d_R) if scale is None else _checks.positive_float(scale, "scale")
    rope_base = _checks.positive_float(rope_base, "rope_base")
    blame = "x or the weights are too large"
    c = _project(x, w_dkv, None, "the latent x @ w_dkv", blame)  # (..., T, D) -> (..., T, d_c)
    k_r = apply_rope(_project(x, w_kr, None, "the RoPE key x @ w_kr", blame), base=rope_base)  # (..., T, d_R)
    q_c = split_heads(_project(x, w_q, None, "the queries x @ w_q", blame), H)  # (..., T, H*d_h) -> (..., H, T, d_h)
    q_r = apply_rope(split_heads(_project(x, w_qr, None, "the RoPE queries x @ w_qr", blame), H),
                     base=rope_base)  # (..., T, H*d_R) -> (..., H, T, d_R)
    if absorbed:
        return _absorbed(c, k_r, q_c, q_r, w_uk, w_uv, w_o, H, d_h, d_v, causal, scale, blame)
    k_c = split_heads(_project(c, w_uk, None, "the keys c @ w_uk", blame), H)  # (..., T, H*d_h) -> (..., H, T, d_h)
    v = split_heads(_project(c, w_uv, None, "the values c @ w_uv", blame), H)  # (..., T, H*d_v) -> (..., H, T, d_v)
    k_r_heads = np.broadcast_to(k_r[..., None, :, :], k_c.shape[:-1] + (d_R,))  # (..., T, d_R) -> (..., H, T, d_R)
    q = np.concatenate([q_c, q_r], axis=-1)  # (..., H, T, d_h + d_R)
    k = np.concatenate([k_c, k_r_heads], axis=-1)  # (..., H, T, d_h + d_R)
    heads_out, weights = scaled_dot_product_attention(q, k, v, causal=causal, scale=scale)  # (..., H, T, d_v)
    out = _project(combine_heads(heads_out), w_o, None, "the output concat @ w_o",
                   blame)  # (..., H, T, d_v) -> (..., T, H*d_v) -> (..., T, D_out)
    return out, weights


def _absorbed(c, k_r, q_c, q_r, w_uk, w_uv, w_o, H, d_h, d_v, causal, scale, blame):
    """``mla_attention`` with ``W_UK`` absorbed into the queries and ``W_UV`` into ``W_O``."""
    d_c, D_out = c.shape[-1], w_o.shape[1]
    w_uk_heads = np.swapaxes(w_uk.reshape(d_c, H, d_h), 0, 1)  # (d_c, H*d_h) -> (d_c, H, d_h) -> (H, d_c, d_h)
    w_uv_heads = np.swapaxes(w_uv.reshape(d_c, H, d_v), 0, 1)  # (d_c, H*d_v) -> (d_c, H, d_v) -> (H, d_c, d_v)
    w_o_heads = w_o.reshape(H, d_v, D_out)  # (H*d_v, D_out) -> (H, d_v, D_out): head h's rows of W_O
    with np.errstate(over="ignore", invalid="ignore"):
        q_lat = q_c @ np.swapaxes(w_uk_heads, -1, -2)  # (..., H, T, d_h) @ (H, d_h, d_c) -> (..., H, T, d_c)
        w_ov = w_uv_heads @ w_o_heads  # (H, d_c, d_v) @ (H, d_v, D_out) -> (H, d_c, D_out)
    _checks.no_overflow(q_lat, "the absorbed queries q W_UK^T", blame)
    _checks.no_overflow(w_ov, "the absorbed output projection W_UV W_O", "w_uv or w_o is too large")
    q = np.concatenate([q_lat, q_r], axis=-1)  # (..., H, T, d_c + d_R)
    k = np.concatenate([c, k_r], axis=-1)[..., None, :, :]  # (..., T, d_c + d_R) -> (..., 1, T, d_c + d_R)
    latent_out, weights = scaled_dot_product_attention(q, k, c[..., None, :, :], causal=causal,
                                                       scale=scale)  # (..., H, T, d_c): sum_j p_j c_j
    with np.errstate(over="ignore", invalid="ignore"):
        per_head = latent_out @ w_ov  # (..., H, T, d_c) @ (H, d_c, D_out) -> (..., H, T, D_out)
        out = per_head.sum(axis=-3)  # (..., H, T, D_out) -> (..., T, D_out): the sum over heads
    return _checks.no_overflow(out, "the output", blame), weights


def mla_cache_bytes(n_layers: int, d_latent: int, d_rope: int, tokens: int, *, batch: int = 1,
                    dtype: DTypeLike = "float16") -> int:
    """Bytes an MLA cache holds: the latent ``c`` and the shared RoPE key ``k_R`` of every token,
    in every layer (page: long context).

        batch * tokens * n_layers * (d_latent + d_rope) * bytes_per_element

    Example: DeepSeek-V2 (60 layers, ``d_c = 512``, ``d_R = 64``) in float16 caches
    ``60 * 576 * 2 = 69,120`` bytes per token, the paper's ``(d_c + d_R) l = 4.5 d_h l``
    elements with ``d_h = 128``; multi-head attention with its 128 heads of 128 would cache
    ``2 * 60 * 128 * 128 * 2 = 3,932,160`` (``kv_cache_bytes_per_token``), 56.9 x more. An
    empty cache (``tokens=0``) holds 0 bytes. ``d_rope`` is even, as RoPE turns pairs of
    entries; 0 counts a latent cache without a decoupled RoPE key (``mla_attention`` itself
    needs a RoPE key, ``d_rope >= 2``).
    """
    L = _checks.positive_int(n_layers, "n_layers")
    d_c = _checks.positive_int(d_latent, "d_latent")
    d_R = _checks.nonnegative_int(d_rope, "d_rope")
    if d_R % 2:
        raise ValueError(f"d_rope must be even (RoPE turns pairs of entries), or 0 for no RoPE key; got {d_R}")
    tokens = _checks.nonnegative_int(tokens, "tokens")
    batch = _checks.positive_int(batch, "batch")
    return batch * tokens * L * (d_c + d_R) * dtype_bytes(dtype)
