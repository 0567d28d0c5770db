"""Sliding-window attention masks (page: long context).

A sliding window of ``W`` keys lets each query see itself and the ``W - 1`` keys just before
it, and nothing older: the cost of attention grows as ``T * W`` instead of ``T * S``, and a
KV cache need hold only the last ``W`` keys. Stacked layers still pass information further
back, ``W - 1`` positions per layer.

Positions follow ``causal_mask(T, S, align="bottom_right")``: the ``T`` queries are the *last*
``T`` of ``S`` positions, so query ``i`` sits at position ``p_i = i + S - T`` (cached
decoding, a chunk of new tokens after a prompt), and

    mask[i, j] = p_i - W < j <= p_i            True = may attend

With ``W >= S`` this is the bottom-right causal mask. flash-attn's
``window_size=(W - 1, 0)`` with ``causal=True`` describes the same keys.

``n_sink`` keeps the first ``n_sink`` keys visible to every query that has reached them, beside
the window: the "attention sinks" of StreamingLLM (Xiao et al., 2023), which keeps the first few
tokens' keys and values in a rolling cache because many heads of a trained model park weight on
them:

    mask[i, j] = j <= p_i  and  (j > p_i - W  or  j < n_sink)
"""
from __future__ import annotations

import numpy as np

from . import _checks


def sliding_window_mask(T: int, window: int, *, S: int | None = None, n_sink: int = 0) -> np.ndarray:
    """Causal sliding-window mask of shape ``(T, S)``: each query sees the last ``window`` keys up
    to and including its own position, and the first ``n_sink`` keys (page: long context).

        mask[i, j] = j <= p_i  and  (j > p_i - window  or  j < n_sink),      p_i = i + S - T

    Args:
        T: number of queries, an integer >= 1.
        window: how many keys each query may see, itself included, an integer >= 1
            (``window=1``: only itself).
        S: number of keys, an integer >= 1; defaults to ``T``. The queries are the last
            ``T`` of the ``S`` positions, as in ``causal_mask(T, S, align="bottom_right")``;
            with ``T > S`` the first ``T - S`` queries sit before every key and see none.
        n_sink: how many of the first keys every query sees as well (attention sinks), an
            integer >= 0; 0 (the default) is the plain window. A sink never lets a query see
            past its own position.

    Returns:
        np.ndarray: a boolean ``(T, S)`` array, True = may attend; each row holds
        ``min(window, p_i + 1) + min(n_sink, max(0, p_i + 1 - window))`` True entries (its
        window, and the sinks that lie before it; none where ``p_i < 0``). A mask larger than
        this machine's memory is refused before it is allocated, with its size.

    Example: ``sliding_window_mask(4, 2)`` is ``[[1,0,0,0],[1,1,0,0],[0,1,1,0],[0,0,1,1]]``
    (as booleans); ``sliding_window_mask(2, 2, S=4)`` is ``[[0,1,1,0],[0,0,1,1]]``;
    ``sliding_window_mask(2, 2, S=4, n_sink=1)`` is ``[[1,1,1,0],[1,0,1,1]]``.
    """
    T = _checks.positive_int(T, "T")
    window = _checks.positive_int(window, "window")
    S = T if S is None else _checks.positive_int(S, "S")
    n_sink = _checks.nonnegative_int(n_sink, "n_sink")
    _checks.fits_in_memory(3 * T * S, f"sliding_window_mask's ({T}, {S}) boolean array, with the two it is "
                           "combined from,", "use smaller T and S, or build the mask one block of rows at a time")
    # a window or a sink count past the S keys is all of them: compared as S, they fit int64
    window, n_sink = min(window, S), min(n_sink, S)
    p = np.arange(T)[:, None] + (S - T)  # (T, 1): each query's position among the keys
    j = np.arange(S)[None, :]  # (1, S)
    return (j <= p) & ((j > p - window) | (j < n_sink))  # (T, S)
