"""Boolean attention masks, True = "may attend" (page: attention).

A mask has shape broadcastable to ``(..., T, S)``: entry ``[i, j]`` says whether query
``i`` may look at key ``j``.

Causal masks when T != S: two conventions exist, and they differ only when the query and
key lengths differ:

* ``align="top_left"`` (the default; what ``torch.nn.functional.scaled_dot_product_attention``
  does with ``is_causal=True``): query ``i`` and key ``j`` both count from position 0,
  and ``i`` may attend to ``j <= i``.
* ``align="bottom_right"`` (what cached decoding needs; torch's ``causal_lower_right``):
  the ``T`` queries are the *last* ``T`` of ``S`` positions, so query ``i`` sits at
  position ``i + S - T`` and may attend to ``j <= i + S - T``. With ``T > S`` the first
  ``T - S`` queries then see nothing, and attention gives them zero weights.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks


def causal_mask(T: int, S: int | None = None, *, align: str = "top_left") -> np.ndarray:
    """Lower-triangular boolean mask of shape ``(T, S)``.

    ``mask[i, j] = j <= i + offset`` with ``offset = 0`` (``top_left``) or
    ``offset = S - T`` (``bottom_right``). ``S`` defaults to ``T``.

    Example: ``causal_mask(3)`` is ``[[1,0,0],[1,1,0],[1,1,1]]`` (as booleans). A mask larger
    than this machine's memory (``T * S`` bytes) is refused before it is allocated, with its
    size (``mhalib._checks.MemoryRefused``, a ``ValueError`` and a ``MemoryError``).
    """
    T = _checks.positive_int(T, "T")
    S = T if S is None else _checks.positive_int(S, "S")
    _checks.choice(align, "align", ("top_left", "bottom_right"))
    offset = 0 if align == "top_left" else S - T
    _checks.fits_in_memory(T * S, f"causal_mask's ({T}, {S}) boolean array",
                           "use smaller T and S, or build the mask one block of rows at a time")
    i = np.arange(T)[:, None]  # (T, 1)
    j = np.arange(S)[None, :]  # (1, S)
    return j <= i + offset


def padding_mask(lengths: ArrayLike, S: int) -> np.ndarray:
    """Key-padding mask of shape ``(B, 1, 1, S)``: key ``j`` is real when ``j < lengths[b]``.

    The two singleton axes broadcast over heads and queries. A mask larger than this machine's
    memory is refused before it is allocated, with its size.
    """
    S = _checks.positive_int(S, "S")
    lengths = np.asarray(_checks.not_masked(lengths, "lengths"))
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
        raise TypeError(f"lengths must be a 1-D array of integers, got dtype {lengths.dtype} and shape {lengths.shape}")
    if np.any(lengths < 0) or np.any(lengths > S):
        raise ValueError(f"lengths must lie in [0, S={S}], got {lengths.tolist()}")
    _checks.fits_in_memory(lengths.size * S, f"padding_mask's ({lengths.size}, 1, 1, {S}) boolean array",
                           "use a smaller S (the longest sequence's length is enough)")
    return (np.arange(S)[None, :] < lengths[:, None])[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
