"""Why scores are divided by sqrt(d_head) (page: attention).

For ``q, k`` with independent N(0, 1) entries, ``q . k = sum_i q_i k_i`` is a sum of
``d_head`` independent terms of mean 0 and variance 1, so ``Var(q . k) = d_head``: the scores'
spread grows like ``sqrt(d_head)`` and softmax saturates (one weight near 1). Dividing by
``sqrt(d_head)`` brings the variance back to 1.
"""
from __future__ import annotations

import math

import numpy as np

from . import _checks
from .softmax import softmax


def dot_products(d_head: int, n_samples: int, *, seed: int) -> np.ndarray:
    """``n_samples`` values of ``q . k`` for independent unit-normal ``q, k`` of length ``d_head``."""
    d_head = _checks.positive_int(d_head, "d_head")
    n = _checks.positive_int(n_samples, "n_samples")
    rng = np.random.default_rng(_checks.nonnegative_int(seed, "seed"))
    q = rng.standard_normal((n, d_head))
    k = rng.standard_normal((n, d_head))
    return np.einsum("nd,nd->n", q, k)


def dot_product_variance(d_head: int, n_samples: int = 100_000, *, seed: int = 0) -> float:
    """Sample variance of ``q . k`` over ``n`` draws, ``sum_i (x_i - mean)^2 / (n - 1)`` (the
    unbiased estimator: dividing by ``n`` would read 1% low at ``n = 100``); close to ``d_head``
    (relative std. error ``sqrt((2 + 6/d_head)/n)``). One sample has no spread to measure:
    ``n_samples`` must be >= 2."""
    if _checks.positive_int(n_samples, "n_samples") < 2:
        raise ValueError("n_samples must be an integer >= 2 (the variance of one sample reads 0, whatever "
                         "d_head is), got 1")
    return float(np.var(dot_products(d_head, n_samples, seed=seed), ddof=1))


def max_attention_weight(d_head: int, *, n_keys: int = 16, n_queries: int = 2000, scaled: bool, seed: int = 0) -> float:
    """Mean over queries of the largest softmax weight, for unit-normal q and keys.

    With ``scaled=False`` and large ``d_head`` this approaches 1 (saturation: one key takes
    everything); with ``scaled=True`` it stays well below 1 for every ``d_head``.
    """
    scaled = _checks.boolean(scaled, "scaled")
    both = max_attention_weights(d_head, n_keys=n_keys, n_queries=n_queries, seed=seed)
    return both["scaled" if scaled else "unscaled"]


def max_attention_weights(d_head: int, *, n_keys: int = 16, n_queries: int = 2000, seed: int = 0) -> dict:
    """`max_attention_weight` without and with the ``1/sqrt(d_head)`` factor, from the
    same samples (half the work of two calls, the same numbers): ``{"unscaled": .., "scaled": ..}``."""
    d_head = _checks.positive_int(d_head, "d_head")
    S = _checks.positive_int(n_keys, "n_keys")
    n = _checks.positive_int(n_queries, "n_queries")
    rng = np.random.default_rng(_checks.nonnegative_int(seed, "seed"))
    q = rng.standard_normal((n, 1, d_head))  # (n, 1, d_head)
    k = rng.standard_normal((n, S, d_head))  # (n, S, d_head)
    scores = np.einsum("nod,nsd->ns", q, k)  # (n, S)
    return {"unscaled": float(softmax(scores, axis=-1).max(axis=-1).mean()),
            "scaled": float(softmax(scores / math.sqrt(d_head), axis=-1).max(axis=-1).mean())}
