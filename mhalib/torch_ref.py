"""Torch counterparts, for cross-checking mhalib against the implementations people use.

Importing this module needs ``torch`` (the ``test`` extra); the rest of mhalib does not.
Both functions take and return numpy arrays in mhalib's conventions (row-vector weights
``(in, out)``, boolean masks with True = may attend) and translate to torch's:
``nn.Linear`` weights are ``(out, in)`` and ``nn.MultiheadAttention``'s boolean
``attn_mask`` means the opposite, True = *blocked*.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike


def _t(a, dtype):
    return None if a is None else torch.as_tensor(np.asarray(a), dtype=dtype)


def torch_sdpa(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = None, *, causal: bool = False,
               scale: float | None = None, n_rep: int = 1, dtype=torch.float64) -> np.ndarray:
    """``F.scaled_dot_product_attention`` on numpy inputs; ``n_rep > 1`` turns on ``enable_gqa``."""
    with torch.no_grad():
        out = F.scaled_dot_product_attention(
            _t(q, dtype), _t(k, dtype), _t(v, dtype),
            attn_mask=None if mask is None else torch.as_tensor(np.asarray(mask)),
            is_causal=causal, scale=scale, enable_gqa=n_rep > 1,
        )
    return out.numpy()


def torch_mha(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, w_o: ArrayLike, *, n_heads: int,
              context: ArrayLike | None = None, mask: ArrayLike | None = None, causal: bool = False,
              b_q: ArrayLike | None = None, b_k: ArrayLike | None = None, b_v: ArrayLike | None = None,
              b_o: ArrayLike | None = None, dtype=torch.float64) -> tuple[np.ndarray, np.ndarray]:
    """``nn.MultiheadAttention`` loaded with our weights; returns ``(out, per-head weights)``.

    ``x (B, T, D)``; ``context (B, S, D_ctx)`` for cross-attention. Biases are all given
    or all omitted (torch's module has one switch for them).
    """
    x = np.asarray(x)
    c = x if context is None else np.asarray(context)
    D = x.shape[-1]
    has_bias = b_q is not None
    mha = torch.nn.MultiheadAttention(D, n_heads, bias=has_bias, batch_first=True,
                                      kdim=c.shape[-1], vdim=c.shape[-1]).to(dtype)
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            # (D, 3D) -> (3D, D): nn.Linear stores (out, in)
            mha.in_proj_weight.copy_(_t(np.concatenate([w_q, w_k, w_v], axis=1).T, dtype))
        else:
            mha.q_proj_weight.copy_(_t(np.asarray(w_q).T, dtype))  # (D, D) -> its transpose, (out, in)
            mha.k_proj_weight.copy_(_t(np.asarray(w_k).T, dtype))  # (D_ctx, D) -> (D, D_ctx)
            mha.v_proj_weight.copy_(_t(np.asarray(w_v).T, dtype))  # (D_ctx, D) -> (D, D_ctx)
        mha.out_proj.weight.copy_(_t(np.asarray(w_o).T, dtype))  # (D, D_out) -> (D_out, D)
        if has_bias:
            mha.in_proj_bias.copy_(_t(np.concatenate([b_q, b_k, b_v]), dtype))
            mha.out_proj.bias.copy_(_t(b_o, dtype))
        T, S = x.shape[-2], c.shape[-2]
        blocked = None
        if mask is not None:
            blocked = ~torch.as_tensor(np.broadcast_to(mask, (T, S)).copy())
        if causal:
            future = torch.ones(T, S, dtype=torch.bool).triu(1)
            blocked = future if blocked is None else blocked | future
        out, weights = mha(_t(x, dtype), _t(c, dtype), _t(c, dtype), attn_mask=blocked,
                           need_weights=True, average_attn_weights=False)
    return out.numpy(), weights.numpy()
