"""Torch counterparts, for cross-checking mhalib against the implementations people use.

Importing this module needs ``torch`` (the ``test`` extra); the rest of mhalib does not.
``torch_sdpa`` and ``torch_mha`` take and return numpy arrays in mhalib's
conventions (row-vector weights ``(in, out)``, boolean masks with True = may attend) and
translate to torch's: ``nn.Linear`` weights are ``(out, in)`` and ``nn.MultiheadAttention``'s
boolean ``attn_mask`` means the opposite, True = *blocked*.

``MultiHeadAttention``, ``torch_sinusoidal_encoding`` and ``torch_rope``
are short torch versions written to be read: the pages show them beside mhalib's code.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from . import _checks

torch = _checks.require_torch(__name__)  # a clear ImportError naming the extra
import torch.nn.functional as F  # noqa: E402


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


# The three pieces below are written for reading: the pages show them beside mhalib's numpy
# code, and tests/test_torch_code.py holds them equal to it (and to torch's own module).

# --8<-- [start:torch-mha]
class MultiHeadAttention(torch.nn.Module):
    """Multi-head self-attention, step by step (page: multi-head attention).

    Given the same weights, it computes what ``mhalib.multi_head_attention``
    (with biases) and ``torch.nn.MultiheadAttention(D, H, batch_first=True)``
    compute. ``nn.Linear`` stores its weight as ``(out, in)``, so
    ``self.w_q.weight`` is ``W_Q`` transposed.
    """

    def __init__(self, d_model: int, n_heads: int, *, bias: bool = True):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model must be a multiple of n_heads, "
                             f"got d_model={d_model}, n_heads={n_heads}")
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        # D -> H*d = D: one matrix computes every head's queries (keys, values)
        self.w_q = torch.nn.Linear(d_model, d_model, bias=bias)
        self.w_k = torch.nn.Linear(d_model, d_model, bias=bias)
        self.w_v = torch.nn.Linear(d_model, d_model, bias=bias)
        self.w_o = torch.nn.Linear(d_model, d_model, bias=bias)  # mixes heads

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        """x (B, T, D); mask broadcastable to (B, H, T, T), True = may attend.

        Returns out (B, T, D) and the weights (B, H, T, T).
        """
        B, T, D = x.shape
        H, d = self.n_heads, self.d_head
        # Split into heads, (B, T, D) -> (B, T, H, d) -> (B, H, T, d):
        # head h gets columns h*d to (h+1)*d - 1 of every token.
        q = self.w_q(x).view(B, T, H, d).transpose(1, 2)
        k = self.w_k(x).view(B, T, H, d).transpose(1, 2)
        v = self.w_v(x).view(B, T, H, d).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, H, T, T)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # forbidden keys
        weights = torch.softmax(scores, dim=-1)  # (B, H, T, T), rows sum to 1
        if mask is not None:  # a query with no key: zeros, not NaN (as mhalib)
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        heads = weights @ v  # (B, H, T, T) @ (B, H, T, d) -> (B, H, T, d)
        # Concatenate, (B, H, T, d) -> (B, T, H, d) -> (B, T, D)
        concat = heads.transpose(1, 2).reshape(B, T, D)
        return self.w_o(concat), weights  # (B, T, D), (B, H, T, T)
# --8<-- [end:torch-mha]


# --8<-- [start:torch-sinusoidal]
def torch_sinusoidal_encoding(n_positions: int, d_model: int,
                              base: float = 10000.0,
                              dtype=torch.float64) -> torch.Tensor:
    """The sinusoidal table PE (n_positions, D): sin on even, cos on odd."""
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got {d_model}")
    p = torch.arange(n_positions, dtype=dtype)  # (n,) the positions 0 .. n-1
    two_i = torch.arange(0, d_model, 2, dtype=dtype)  # (D/2,) even dimensions
    omega = base ** (-two_i / d_model)  # (D/2,) radians per position
    angles = p[:, None] * omega[None, :]  # (n, 1) * (1, D/2) -> (n, D/2)
    pe = torch.empty(n_positions, d_model, dtype=dtype)
    pe[:, 0::2] = torch.sin(angles)  # dimension 2i: sin(p * omega_i)
    pe[:, 1::2] = torch.cos(angles)  # dimension 2i+1: cos(p * omega_i)
    return pe
# --8<-- [end:torch-sinusoidal]


# --8<-- [start:torch-rope]
def torch_rope(x: torch.Tensor, positions: torch.Tensor | None = None,
               base: float = 10000.0) -> torch.Tensor:
    """RoPE in the interleaved layout: plane i is dimensions (2i, 2i+1).

    x (..., T, d) with even d; positions (T,), by default 0 .. T-1. The pair
    (x[2i], x[2i+1]) is read as the complex number x[2i] + 1j*x[2i+1], and
    multiplying it by exp(1j*a) rotates it by the angle a = p * theta_i.
    """
    T, d = x.shape[-2:]
    if d % 2:
        raise ValueError(f"d_head (x's last axis) must be even, got {d}")
    p = torch.arange(T, dtype=x.dtype) if positions is None else positions
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)  # (d/2,)
    angles = p.to(x.dtype)[:, None] * theta[None, :]  # (T, d/2)
    turn = torch.polar(torch.ones_like(angles), angles)  # (T, d/2): e^(1j*a)
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)  # (..., T, d/2, 2): the planes
    z = torch.view_as_complex(pairs.contiguous())  # (..., T, d/2) complex
    # Rotate every plane; back to real: (..., T, d/2, 2) -> (..., T, d)
    return torch.view_as_real(z * turn).flatten(-2)
# --8<-- [end:torch-rope]
