"""Generating with the tiny decoder: a KV-cached numpy step and a decoding loop
(pages: Generating text: the KV cache; Sampling: from logits to text).

``forward`` runs the whole sequence at every step; ``decode`` runs only the new tokens and
reads every earlier token's keys and values from a ``mhalib.KVCache`` (one layer of the
cache per layer of the model):

    x_t    = E[tokens_t]                                positions P .. P+t-1, P = cache length
    layer: x = x + decode_step(LN_1(x), cache, layer=l)  RoPE at positions P .., causal bottom-right
           x = x + relu(LN_2(x) W_1 + b_1) W_2 + b_2
    logits = LN_f(x) W_U + b_U

so ``decode`` over the rows of a sequence, one chunk after another, gives the rows of
``forward``'s logits (a test holds them equal within 1e-9). ``generate`` appends one token
at a time, by ``mhalib.greedy`` or ``mhalib.sample_next``, with the cache or, as the
reference the site's live generator is held to without its cache, the whole forward pass
at every step.
"""
from __future__ import annotations

import weakref
import zlib

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..decoding import KVCache, decode_step
from ..sampling import greedy, sample_next
from .tiny_numpy import TinyConfig, checked_weights, forward, layer_norm, token_batch

#: Methods whose positions a cached step can place by itself (``decode_step`` rotates RoPE at
#: the cache's length; NoPE has no positions).
DECODE_METHODS = ("none", "rope")


def new_cache(config: TinyConfig, *, batch: int = 1) -> KVCache:
    """An empty ``KVCache`` for ``config``: one layer per model layer, float64."""
    return KVCache(config.n_layers, batch=batch, n_kv_heads=config.n_heads, d_head=config.d_head)


def _check_cache(cache: KVCache, config: TinyConfig) -> None:
    """Refuse a cache that ``new_cache(config)`` would not have made, or whose layers hold
    different numbers of tokens: every layer places the new tokens at its own length, so such
    a cache would give plausible but wrong logits (a float16 cache rounds every key)."""
    if cache.n_layers != config.n_layers or cache.dtype != np.float64:
        raise ValueError(f"cache must come from new_cache(config): {config.n_layers} layers in float64 for this "
                         f"model; got n_layers={cache.n_layers}, dtype={cache.dtype.name}")
    lengths = [cache.length(l) for l in range(cache.n_layers)]
    if len(set(lengths)) > 1:
        raise ValueError(f"cache's layers must hold the same number of tokens (one decode appends to each); "
                         f"got lengths {lengths}")


#: Per cache, the model whose tokens it holds (its config and :func:`_model_print` of its
#: weights) and how many tokens decode left in it.
_FILLED_BY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _model_print(w: dict) -> int:
    """A checksum of a model's weights: every array's name, shape and bytes, CRC-32 (any one
    changed value changes it; it reads the weights once, as fast as the float64 copy it
    replaces, about 4 ms for the site's 6.5 MB model)."""
    crc = 0
    for name in sorted(w):
        crc = zlib.crc32(f"{name}{w[name].shape}".encode(), crc)
        crc = zlib.crc32(np.ascontiguousarray(w[name]).data, crc)
    return crc


def decode(weights: dict, config: TinyConfig, tokens: ArrayLike, cache: KVCache) -> np.ndarray:
    """The logits of ``tokens (B, t)`` (or ``(t,)``) that follow the tokens already in ``cache``,
    in float64, appending their keys and values to ``cache``.

    Returns ``logits (B, t, V)``. Only methods ``"none"`` and ``"rope"`` are supported (a
    ``ValueError`` names the others); ``cache`` must come from :func:`new_cache` for the same
    config and batch (a cache with another number of layers or heads, another ``d_head`` or
    batch, a dtype other than float64, or layers of unequal lengths is refused before anything
    is appended), and the sequence may not pass ``config.max_len`` tokens. A cache holds one
    model's keys and values: a cache that another model's weights or config (another
    ``rope_base`` or method: the same weights, other keys), or ``decode_step`` by hand, filled is
    refused, since its keys would give plausible but wrong logits.
    """
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    if config.method not in DECODE_METHODS:
        raise ValueError(f"decode supports method in {DECODE_METHODS}; this model's method is {config.method!r}")
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a mhalib.KVCache (new_cache(config)), got {type(cache).__name__}")
    ids = token_batch(np.asarray(_checks.not_masked(tokens, "tokens")), config.vocab)  # (B, t)
    _check_cache(cache, config)
    P = cache.length(0)
    if P + ids.shape[1] > config.max_len:
        raise ValueError(f"tokens: {P} cached + {ids.shape[1]} new = {P + ids.shape[1]} tokens, past this "
                         f"model's max_len of {config.max_len}")
    # float64 arrays are read as they are (decode never writes to them), others converted once
    w = {name: np.asarray(a, dtype=np.float64) for name, a in checked_weights(weights, config).items()}
    model = (config, _model_print(w))  # the same weights under another rope_base or method give other keys
    filled = _FILLED_BY.get(cache)
    if P and (filled is None or filled[1] != P):
        raise ValueError(f"cache holds {P} tokens, {P - (filled[1] if filled else 0)} of them not put there by "
                         "decode: start the cache with new_cache(config) and fill it with decode only")
    if P and filled[0][0] != config:  # its keys and values came from another configuration
        raise ValueError(f"cache holds the keys and values that config {filled[0][0]} gave, not config {config}: a "
                         "cache serves the model that filled it; start one with new_cache(config) for each model")
    if P and filled[0][1] != model[1]:  # its keys and values came from other weights
        raise ValueError("cache holds the keys and values of another model's tokens (its weights differ from "
                         "these): a cache serves the model that filled it; start one with new_cache(config) for "
                         "each model")
    rope = dict(rope_base=config.rope_base) if config.method == "rope" else {}
    x = w["tok_emb"][ids]  # (B, t) -> (B, t, D)
    for l in range(config.n_layers):
        h = layer_norm(x, w[f"{l}.ln1.g"], w[f"{l}.ln1.b"])  # (B, t, D)
        out, _ = decode_step(h, cache, w[f"{l}.w_q"], w[f"{l}.w_k"], w[f"{l}.w_v"], w[f"{l}.w_o"],
                             n_heads=config.n_heads, layer=l, **rope)
        x = x + out  # (B, t, D)
        if config.d_ff:
            h = layer_norm(x, w[f"{l}.ln2.g"], w[f"{l}.ln2.b"])
            hidden = np.maximum(h @ w[f"{l}.w_1"] + w[f"{l}.b_1"], 0.0)  # (B, t, D) -> (B, t, F)
            x = x + hidden @ w[f"{l}.w_2"] + w[f"{l}.b_2"]  # (B, t, F) -> (B, t, D)
    _FILLED_BY[cache] = (model, cache.length(0))
    return layer_norm(x, w["ln_f.g"], w["ln_f.b"]) @ w["w_u"] + w["b_u"]  # (B, t, D) -> (B, t, V)


def generate(weights: dict, config: TinyConfig, prompt: ArrayLike, n_new: int, *, rng=None,
             temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
             cached: bool = True) -> np.ndarray:
    """``prompt`` followed by ``n_new`` generated token ids, an int64 array ``(len(prompt) + n_new,)``.

        x_{t+1} = sample_next(logits(x_0 .. x_t)[-1], rng, temperature, top_k, top_p)
                  (greedy(...) when rng is None; the filters are then not used)

    Args:
        weights, config: the model (``tiny_numpy.forward``'s arguments).
        prompt: 1-D token ids in ``[0, vocab)``, at least one.
        n_new: tokens to add, >= 1; ``len(prompt) + n_new`` may not pass ``config.max_len``
            (the model's context: it was trained on windows of that length), a ``ValueError``
            says by how much.
        rng: a ``numpy.random.Generator`` or an ``mhalib.Pcg32`` (one draw per token), or None
            for greedy decoding (then a filter given is refused: greedy would ignore it).
        temperature, top_k, top_p: as in ``mhalib.filter_logits``.
        cached: True runs each step with the KV cache (:func:`decode`); False runs
            ``tiny_numpy.forward`` on the whole prefix at every step, as the site's live
            generator does with its cache switched off. Both give the same logits within
            1e-9, so the same tokens unless a draw or the top-p cut falls that close to
            the line between two tokens.

    With ``rng = mhalib.Pcg32(seed)`` the live generator (``docs/javascripts/generator.js``)
    draws the same numbers, so it writes the same text, with the same proviso: its sums
    are rounded in another order (left to right; numpy's are pairwise), and a probability can
    differ in its last bit.
    """
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    prompt = np.asarray(_checks.not_masked(prompt, "prompt"))
    if prompt.size == 0:
        raise ValueError("prompt must hold at least one token id, got none: the model continues a text, "
                         "so it needs one token to predict the next from")
    ids = token_batch(prompt, config.vocab)  # (T,) -> (1, T)
    if ids.shape[0] != 1:
        raise ValueError(f"prompt must be one sequence of token ids (1-D), got shape {np.shape(prompt)}")
    n_new = _checks.positive_int(n_new, "n_new")
    if not isinstance(cached, (bool, np.bool_)):
        raise TypeError(f"cached must be True (the KV cache) or False (the full pass), got {cached!r}")
    if rng is None and (temperature != 1.0 or top_k is not None or top_p is not None):
        raise ValueError(f"temperature, top_k and top_p filter a sampled draw (rng given); greedy decoding "
                         f"(rng=None) would ignore them, got temperature={temperature!r}, top_k={top_k!r}, "
                         f"top_p={top_p!r}: pass rng=mhalib.Pcg32(seed) to sample, or leave them out")
    if ids.shape[1] + n_new > config.max_len:
        raise ValueError(f"prompt ({ids.shape[1]} tokens) + n_new ({n_new}) = {ids.shape[1] + n_new} passes the "
                         f"model's context of max_len={config.max_len} tokens")
    w = {k: a.astype(np.float64) for k, a in checked_weights(weights, config).items()}  # once, not per step
    out = list(ids[0])
    cache = new_cache(config) if cached else None
    last = decode(w, config, ids, cache)[0, -1] if cached else None  # (V,): the logits after the prompt
    for step in range(n_new):
        if not cached:
            last = forward(w, config, np.asarray(out))["logits"][0, -1]  # (1, T, V) -> (V,)
        token = greedy(last) if rng is None else sample_next(last, rng, temperature=temperature, top_k=top_k,
                                                             top_p=top_p)
        out.append(token)
        if cached and step + 1 < n_new:
            last = decode(w, config, np.array([token]), cache)[0, -1]  # (1, 1, V) -> (V,)
    return np.asarray(out, dtype=np.int64)
