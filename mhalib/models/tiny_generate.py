"""Text from the tiny decoder, one token at a time, in numpy (page: Generating text: the KV cache).

The reference the site's live generator (``docs/javascripts/generator.js``) is held to: each
step runs ``tiny_numpy.forward`` on the whole prefix (no cache) and draws the next token from
the last position's logits,

    x_{t+1} = sample_next(forward(x_0 .. x_t)[-1], rng, temperature, top_k, top_p)
              (or greedy(...) when rng is None)

With ``rng = mhalib.Pcg32(seed)`` the browser draws the same numbers, so it writes the same text.
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..sampling import greedy, sample_next
from .tiny_numpy import TinyConfig, checked_weights, forward, token_batch


def generate(weights: dict, config: TinyConfig, prompt, n_new: int, *, rng=None, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None) -> np.ndarray:
    """``prompt`` followed by ``n_new`` generated token ids, an int64 array ``(len(prompt) + n_new,)``.

    Args:
        weights, config: the model (``tiny_numpy.forward``'s arguments).
        prompt: 1-D token ids in ``[0, vocab)``, at least one.
        n_new: tokens to add, >= 1; ``len(prompt) + n_new`` may not pass ``config.max_len``
            (the model's context: it was trained on windows of that length, and its text
            past it is untested), a ``ValueError`` says by how much.
        rng: a ``numpy.random.Generator`` or an ``mhalib.Pcg32`` (one draw per token), or
            None for greedy decoding (the filters are then not used).
        temperature, top_k, top_p: as in ``mhalib.filter_logits``.
    """
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    ids = token_batch(np.asarray(_checks.not_masked(prompt, "prompt")), config.vocab)  # (T,) -> (1, T)
    if ids.shape[0] != 1:
        raise ValueError(f"prompt must be one sequence of token ids (1-D), got shape {np.shape(prompt)}")
    n_new = _checks.positive_int(n_new, "n_new")
    if ids.shape[1] + n_new > config.max_len:
        raise ValueError(f"prompt ({ids.shape[1]} tokens) + n_new ({n_new}) = {ids.shape[1] + n_new} passes the "
                         f"model's context of max_len={config.max_len} tokens")
    w = {k: a.astype(np.float64) for k, a in checked_weights(weights, config).items()}  # once, not per step
    out = list(ids[0])
    for _ in range(n_new):
        last = forward(w, config, np.asarray(out))["logits"][0, -1]  # (1, T, V) -> (V,)
        if rng is None:
            out.append(greedy(last))
        else:
            out.append(sample_next(last, rng, temperature=temperature, top_k=top_k, top_p=top_p))
    return np.asarray(out, dtype=np.int64)
