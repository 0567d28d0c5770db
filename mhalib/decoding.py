"""Generating text one token at a time with a KV cache (page: Generating text: the KV cache).

A decoder generates token ``t`` from tokens ``0 .. t-1``. Without a cache every step
recomputes the keys and values of the whole prefix; with one, each step projects only the
new token and appends its key and value:

    q_t = R(t) (x_t W_Q)_h        k_t = R(t) (x_t W_K)_g        v_t = (x_t W_V)_g
    K <- [K; k_t]   V <- [V; v_t]                   (per layer: (B, H_kv, S, d), S = t + 1)
    head_h = softmax(q_t K_g(h)^T / sqrt(d)) V_g(h)        g(h) = h // (H / H_kv)
    out_t  = concat(head_1, ..., head_H) W_O

``R(t)`` is RoPE at the token's absolute position ``t`` (the cache length before the
append), so keys are stored already rotated and never touched again. The one new query
attends to every cached key (all are in its past), so a step needs no mask; a chunk of
``t > 1`` new tokens (a prompt) needs the causal mask aligned bottom-right,
``causal_mask(t, S, align="bottom_right")``: its queries are the *last* ``t`` of ``S``
positions. T steps from an empty cache reproduce the causal full-sequence
``multi_head_attention`` output.

The cache holds ``2 * layers * B * H_kv * S * d`` numbers (``mhalib.kv_cache_bytes``):
grouped-query attention (``H_kv < H``) shrinks it by ``H / H_kv``, and multi-query
attention (``H_kv = 1``) by ``H``.
"""
from __future__ import annotations

import sys

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _checks
from .attention import scaled_dot_product_attention
from .heads import repeat_kv_heads, split_heads
from .masks import causal_mask
from .mha import _output, _project, _rope_args, _weights_and_heads
from .numerics import stored_as
from .rope import apply_rope

_CACHE_DTYPES = ("float16", "float32", "float64")


class KVCache:
    """Per layer, the keys and values of every token seen so far, each ``(B, H_kv, S, d)``
    (page: Generating text: the KV cache).

    ``KVCache(n_layers=1, *, batch=1, n_kv_heads, d_head, dtype=np.float64)`` starts empty
    (``S = 0``); ``append`` adds ``t`` tokens to one layer and returns that layer's
    full keys and values. Values may have their own width ``d_v`` (default ``d_head``).
    Arrays are stored in ``dtype`` (float16, float32 or float64; None and other types are
    refused) and handed out read-only. A number of layers whose empty arrays alone exceed
    this machine's memory (``KVCache(10**9, ...)``: about 300 GiB) is refused at once.

    Like ``transformers.DynamicCache``, each append concatenates along the sequence axis;
    a real server would preallocate (or page) the memory instead, with the same contents.

    Example: ``KVCache(2, n_kv_heads=8, d_head=128, dtype=np.float16)`` after 1000 tokens
    holds ``nbytes == 2 * 2 * 8 * 1000 * 128 * 2 == 8_192_000`` bytes, as
    ``mhalib.kv_cache_bytes`` ``(2, 8, 128, 1000)`` says.
    """

    def __init__(self, n_layers: int = 1, *, batch: int = 1, n_kv_heads: int, d_head: int,
                 dtype: DTypeLike = np.float64, d_v: int | None = None) -> None:
        self.n_layers = _checks.positive_int(n_layers, "n_layers")
        self.batch = _checks.positive_int(batch, "batch")
        self.n_kv_heads = _checks.positive_int(n_kv_heads, "n_kv_heads")
        self.d_head = _checks.positive_int(d_head, "d_head")
        self.d_v = self.d_head if d_v is None else _checks.positive_int(d_v, "d_v")
        dt = np.dtype(_checks.dtype_choice(dtype, "dtype", _CACHE_DTYPES))  # None refused, not float64
        self.dtype = dt
        B, H_kv = self.batch, self.n_kv_heads
        per_layer = 2 * (sys.getsizeof(np.zeros((B, H_kv, 0, self.d_head), dt)) + 8)  # two empty arrays, listed
        _checks.fits_in_memory(self.n_layers * per_layer,
                               f"a KVCache of n_layers={self.n_layers} (two empty arrays a layer, {per_layer} bytes)",
                               "n_layers is the number of the model's attention layers")
        self._k = [self._frozen(np.zeros((B, H_kv, 0, self.d_head), dt)) for _ in range(self.n_layers)]
        self._v = [self._frozen(np.zeros((B, H_kv, 0, self.d_v), dt)) for _ in range(self.n_layers)]

    @staticmethod
    def _frozen(a: np.ndarray) -> np.ndarray:
        a.flags.writeable = False
        return a

    def _layer(self, layer) -> int:
        layer = _checks.nonnegative_int(layer, "layer")
        if layer >= self.n_layers:
            raise ValueError(f"layer must be in [0, {self.n_layers - 1}] for a cache of n_layers={self.n_layers}, "
                             f"got {layer}")
        return layer

    def _new(self, value, name: str, width: int) -> np.ndarray:
        arr = _checks.float_array(value, name)
        want = (self.batch, self.n_kv_heads, width)
        if arr.ndim != 4 or (arr.shape[0], arr.shape[1], arr.shape[3]) != want:
            raise ValueError(
                f"{name} must have shape (B, H_kv, t, {'d' if name == 'k' else 'd_v'}) = "
                f"({self.batch}, {self.n_kv_heads}, t, {width}) for this cache, got {arr.shape}"
            )
        return arr

    def _extended(self, layer, k, v) -> tuple[int, np.ndarray, np.ndarray]:
        """Check ``layer``, ``k`` and ``v``; return the layer and its keys and values with them
        appended, without storing anything (the caller stores them once its work succeeds)."""
        layer = self._layer(layer)
        k = self._new(k, "k", self.d_head)
        v = self._new(v, "v", self.d_v)
        if k.shape[2] != v.shape[2]:
            raise ValueError(f"k and v must hold the same number of new tokens t; got k {k.shape} and v {v.shape}")
        with np.errstate(over="ignore"):
            k, v = stored_as(k, self.dtype), stored_as(v, self.dtype)  # (one rounding, longdouble included)
        _checks.no_overflow(k, f"k stored as {self.dtype}", f"k holds values beyond the cache's dtype {self.dtype}")
        _checks.no_overflow(v, f"v stored as {self.dtype}", f"v holds values beyond the cache's dtype {self.dtype}")
        keys = np.concatenate([self._k[layer], k], axis=2)  # (B, H_kv, S, d), (B, H_kv, t, d) -> (B, H_kv, S+t, d)
        values = np.concatenate([self._v[layer], v], axis=2)  # likewise with d_v -> (B, H_kv, S+t, d_v)
        return layer, keys, values

    def _store(self, layer: int, keys: np.ndarray, values: np.ndarray) -> None:
        self._k[layer], self._v[layer] = self._frozen(keys), self._frozen(values)

    def append(self, layer: int, k: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Append ``t`` tokens' keys ``k (B, H_kv, t, d)`` and values ``v (B, H_kv, t, d_v)`` to ``layer``.

        Returns the layer's full keys ``(B, H_kv, S, d)`` and values ``(B, H_kv, S, d_v)``
        after the append (``S`` = the old length + ``t``), read-only, in the cache's dtype.
        """
        layer, keys, values = self._extended(layer, k, v)
        self._store(layer, keys, values)
        return keys, values

    def length(self, layer: int = 0) -> int:
        """Number of tokens cached in ``layer``: ``S``, and the position of the next token."""
        return self._k[self._layer(layer)].shape[2]

    def keys(self, layer: int = 0) -> np.ndarray:
        """The cached keys of ``layer``, ``(B, H_kv, S, d)`` (read-only)."""
        return self._k[self._layer(layer)]

    def values(self, layer: int = 0) -> np.ndarray:
        """The cached values of ``layer``, ``(B, H_kv, S, d_v)`` (read-only)."""
        return self._v[self._layer(layer)]

    @property
    def nbytes(self) -> int:
        """Bytes held by every layer's keys and values, ``L * B * H_kv * S * (d_head + d_v) *
        bytes``: ``mhalib.kv_cache_bytes`` for ``S`` tokens where ``d_v == d_head`` (that count
        takes values as wide as keys)."""
        return sum(a.nbytes for a in self._k) + sum(a.nbytes for a in self._v)

    def __repr__(self) -> str:
        lengths = [self.length(i) for i in range(self.n_layers)]
        return (f"KVCache(n_layers={self.n_layers}, batch={self.batch}, n_kv_heads={self.n_kv_heads}, "
                f"d_head={self.d_head}, dtype={self.dtype.name}, lengths={lengths}, nbytes={self.nbytes})")


def decode_step(x_t: ArrayLike, cache: KVCache, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike,
                w_o: ArrayLike | None = None, *, n_heads: int, n_kv_heads: int | None = None,
                rope_base: float | None = None, rope_layout: str = "interleaved", layer: int = 0,
                scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One step of cached decoding: attend the new token(s) to every token so far, and cache them
    (page: Generating text: the KV cache).

        P = cache.length(layer)                   positions of the new tokens: P .. P+t-1
        q = RoPE(split(x_t W_Q)),  k = RoPE(split(x_t W_K)),  v = split(x_t W_V)
        K, V = cache.append(layer, k, v)                                 (B, H_kv, S, d), S = P + t
        out = concat_h softmax(q_h K_g(h)^T * scale [bottom-right causal]) V_g(h)  W_O

    Args:
        x_t: the new token's input ``(B, D)`` or ``(B, 1, D)``; a chunk of ``t`` tokens
            ``(B, t, D)`` (a prompt, processed in one pass) is attended with the causal
            mask aligned bottom-right, ``causal_mask(t, S, align="bottom_right")``.
        cache: the ``KVCache``; ``t`` tokens are appended to ``cache`` at ``layer``
            only when the step succeeds (a refused step leaves it unchanged).
        w_q: query projection ``(D, H*d)``, as in ``multi_head_attention``.
        w_k: key projection ``(D, H_kv*d)``.
        w_v: value projection ``(D, H_kv*d_v)``.
        w_o: output projection ``(H*d_v, D_out)``, or None to return the concatenated heads.
        n_heads: query heads ``H``.
        n_kv_heads: key/value heads ``H_kv`` (default ``H``); must equal the cache's.
            Each K/V head serves ``H / H_kv`` consecutive query heads (GQA; 1 is MQA).
        rope_base: rotate the new queries and keys by RoPE at positions ``P .. P+t-1``
            (the cache stores rotated keys); None: no RoPE.
        rope_layout: ``"interleaved"`` or ``"half"``, as in ``apply_rope``.
        layer: which of the cache's layers this attention is.
        scale: defaults to ``1/sqrt(d)``.

    Returns:
        tuple[np.ndarray, np.ndarray]: the pair ``(out, weights)``, ``out (B, t, D_out)``
        (``(B, t, H*d_v)`` without ``w_o``; ``t = 1`` for one token) and ``weights (B, H, t, S)``
        over every cached token. Both keep the float type of the inputs and the cache
        (RoPE included: a float32 cache and float32 weights give float32 results).

    Example: ``T`` calls from an empty cache with the rows of ``x (B, T, D)`` give the rows
    of ``multi_head_attention(x, ..., causal=True)`` (equal within 1e-12, RoPE or not); the
    first step attends to itself only, with weight 1, so its output is its own value
    ``x_0 W_V`` through ``W_O``.
    """
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")
    x = _checks.float_array(x_t, "x_t", min_ndim=2)
    if x.ndim == 2:
        x = x[:, None, :]  # (B, D) -> (B, 1, D)
    if x.ndim != 3:
        raise ValueError(f"x_t must have shape (B, D), (B, 1, D) or (B, t, D), got {x.shape}")
    B, t, _ = x.shape
    if B != cache.batch:
        raise ValueError(f"x_t holds a batch of B={B} sequences but the cache holds batch={cache.batch}; "
                         f"got x_t of shape {x.shape}")
    if t == 0:
        raise ValueError(f"x_t must hold at least one new token, got shape {x.shape}")
    w_q, w_k, w_v, _, _, _, H, H_kv, n_rep, d, d_v = _weights_and_heads(
        x, x, x, w_q, w_k, w_v, None, None, None, n_heads, n_kv_heads,
        q_name="x_t's last axis (d_model)", k_name="x_t's last axis (d_model)", v_name="x_t's last axis (d_model)")
    if (H_kv, d, d_v) != (cache.n_kv_heads, cache.d_head, cache.d_v):
        raise ValueError(
            f"n_kv_heads={H_kv} ({'given' if n_kv_heads is not None else 'n_heads, the default'}), "
            f"d_head={d} (from w_q) and d_v={d_v} (from w_v) must match the cache's "
            f"n_kv_heads={cache.n_kv_heads}, d_head={cache.d_head}, d_v={cache.d_v}"
        )
    rope_base, rope_layout = _rope_args(rope_base, rope_layout, d)
    P = cache.length(layer)  # tokens already cached: the first new token's position
    positions = np.arange(P, P + t, dtype=np.float64)  # (t,)

    q = _project(x, w_q, None, "the queries x_t @ w_q", "x_t or w_q is too large")  # (B, t, D) -> (B, t, H*d)
    k = _project(x, w_k, None, "the keys x_t @ w_k", "x_t or w_k is too large")  # (B, t, D) -> (B, t, H_kv*d)
    v = _project(x, w_v, None, "the values x_t @ w_v", "x_t or w_v is too large")  # (B, t, D) -> (B, t, H_kv*d_v)
    q_heads = split_heads(q, H)  # (B, t, H*d) -> (B, H, t, d)
    k_heads = split_heads(k, H_kv)  # (B, t, H_kv*d) -> (B, H_kv, t, d)
    v_heads = split_heads(v, H_kv)  # (B, t, H_kv*d_v) -> (B, H_kv, t, d_v)
    if rope_base is not None:
        q_heads = apply_rope(q_heads, positions, base=rope_base, layout=rope_layout)  # (B, H, t, d)
        k_heads = apply_rope(k_heads, positions, base=rope_base, layout=rope_layout)  # (B, H_kv, t, d)
    layer, keys, values = cache._extended(layer, k_heads, v_heads)  # (B, H_kv, S, d), (B, H_kv, S, d_v)
    S = keys.shape[2]
    heads_out, weights = scaled_dot_product_attention(
        q_heads,
        keys if n_rep == 1 else repeat_kv_heads(keys, n_rep),  # (B, H_kv, S, d) -> (B, H, S, d)
        values if n_rep == 1 else repeat_kv_heads(values, n_rep),  # (B, H_kv, S, d_v) -> (B, H, S, d_v)
        None if t == 1 else causal_mask(t, S, align="bottom_right"),  # one new token sees all S keys
        scale=scale,
    )  # heads_out (B, H, t, d_v), weights (B, H, t, S)
    _, out = _output(heads_out, w_o, None, H, d_v)  # (B, H, t, d_v) -> (B, t, D_out)
    cache._store(layer, keys, values)
    return out, weights
