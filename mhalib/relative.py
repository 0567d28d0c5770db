"""Relative-position indices: Shaw et al.'s clipped distances and T5's log-spaced buckets
(page: comparing the methods, section "The relative-position family").

Both methods look at the signed distance from a query to a key, *key minus query*:

    rel[i, j] = j - i           query at position i (0 .. T-1), key at position j (0 .. S-1)

so a key to the left of the query (earlier in the text) has ``rel < 0``. This is the sign
of Shaw et al. (2018), who write ``clip(j - i, k)``, and of the T5 code in ``transformers``
(``relative_position = memory_position - query_position``).

Neither method uses ``rel`` directly: it is first turned into a small integer, an index into
a table that the model learns. Shaw et al. clip ``rel`` to ``[-k, k]`` (``shaw_relative_index``,
``2k + 1`` table rows); T5 puts it in one of ``num_buckets`` buckets, one per distance near the
query and logarithmically wider ones further away (``t5_relative_position_bucket``).
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike

from . import _checks


def relative_positions(T: int, S: int) -> np.ndarray:
    """The signed distances ``rel[i, j] = j - i`` (key minus query), shape ``(T, S)``, int64.

    Queries sit at positions ``0 .. T-1`` and keys at ``0 .. S-1``. Example: ``T = S = 3``
    gives ``[[0, 1, 2], [-1, 0, 1], [-2, -1, 0]]``: row ``i`` is the query, and the keys
    before it have negative distances. A table larger than this machine's memory is refused
    before it is allocated, with its size.
    """
    T = _checks.positive_int(T, "T")
    S = _checks.positive_int(S, "S")
    _checks.fits_in_memory(T * S * 8, f"relative_positions' ({T}, {S}) int64 table",
                           "use smaller T and S, or compute the distances one block of rows at a time")
    return np.arange(S, dtype=np.int64)[None, :] - np.arange(T, dtype=np.int64)[:, None]  # (T, S)


def shaw_relative_index(T: int, S: int, k: int) -> np.ndarray:
    """Shaw et al.'s table index ``clip(j - i, -k, k) + k`` for every query ``i`` and key ``j``, shape ``(T, S)``.

    Shaw, Uszkoreit and Vaswani (2018), *Self-Attention with Relative Position Representations*,
    learn ``2k + 1`` vectors ``w_{-k} .. w_k`` and give the pair (query ``i``, key ``j``) the vector
    ``w_{clip(j - i, k)}``, where ``clip(x, k) = max(-k, min(k, x))``: every distance beyond ``k``
    in either direction shares the vector of distance ``k``. This function returns the row of
    the table, ``clip(j - i, k) + k``, in ``0 .. 2k``. Example: ``k = 2`` and ``T = S = 4`` give
    row 0 ``[2, 3, 4, 4]`` and row 3 ``[0, 0, 1, 2]``.
    """
    k = _checks.nonnegative_int(k, "k")
    T = _checks.positive_int(T, "T")
    S = _checks.positive_int(S, "S")
    if 2 * k > np.iinfo(np.int64).max:  # the index runs to 2k, an int64 (np.clip failed on a larger k)
        raise ValueError(f"k must be at most 2**62 - 1, so that the index clip(j - i, k) + k, up to 2k, is an "
                         f"int64; got {k} (any k of at least max(T, S) - 1 clips nothing)")
    _checks.fits_in_memory(2 * T * S * 8, f"shaw_relative_index's ({T}, {S}) int64 table, with the distances it is made from,",
                           "use smaller T and S, or compute the index one block of rows at a time")
    rel = relative_positions(T, S)  # (T, S)
    return np.clip(rel, -k, k) + k


def _integer_positions(relative_position: ArrayLike) -> np.ndarray:
    """``relative_position`` as an int64 array; floats, booleans and values beyond int64 are refused."""
    if isinstance(relative_position, bool) or isinstance(relative_position, np.bool_):
        raise TypeError("relative_position must hold integers (key position - query position), got a bool")
    if isinstance(relative_position, numbers.Integral):
        value = int(relative_position)
        if abs(value) > np.iinfo(np.int64).max:
            raise ValueError(f"relative_position must fit in int64 (|value| < 2**63), got {value}")
        return np.asarray(value, dtype=np.int64)
    arr = np.asarray(_checks.not_masked(relative_position, "relative_position"))
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iu":
        raise TypeError(
            "relative_position must hold integers (key position - query position), "
            f"got dtype {arr.dtype}; distances between positions are whole numbers"
        )
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"relative_position must fit in int64, got a value of {arr.max()}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() == np.iinfo(np.int64).min:
        raise ValueError("relative_position must fit in int64 with its sign flipped (|value| < 2**63), "
                         f"got {arr.min()}")
    return arr


def t5_relative_position_bucket(relative_position: ArrayLike, *, bidirectional: bool = True, num_buckets: int = 32,
                                max_distance: int = 128) -> np.ndarray:
    """T5's bucket, ``0 .. num_buckets - 1``, for each signed distance ``relative_position = j - i``.

    T5 (Raffel et al., 2020, *Exploring the Limits of Transfer Learning with a Unified
    Text-to-Text Transformer*) learns one scalar per bucket and head and adds it to the
    attention score of every (query, key) pair whose distance falls in that bucket. The
    buckets, with ``n = num_buckets`` and ``r = relative_position``:

    * ``bidirectional`` (encoder): half the buckets for keys after the query, half for
      the rest: ``n <- n / 2``, the bucket gets ``+ n`` when ``r > 0``, and ``r <- |r|``.
      Causal (decoder): only keys at or before the query count: ``r <- max(-r, 0)``
      (a key after the query gets bucket 0, like the query itself; the causal mask hides it).
    * ``max_exact = n // 2``. A distance ``r < max_exact`` is its own bucket ``r``.
    * A larger one gets ``max_exact + floor(log(r / max_exact) / log(max_distance / max_exact)
      * (n - max_exact))``, at most ``n - 1``: buckets widen geometrically up to
      ``max_distance``, and every distance from ``max_distance`` on shares the last bucket.

    Worked values for the defaults (32 buckets, ``max_distance = 128``, bidirectional): ``r = 0``
    gives 0, ``r = -7`` gives 7, ``r = -16`` gives ``8 + floor(log 2 / log 16 * 8) = 10``,
    ``r <= -128`` gives 15, and ``r = +1`` gives ``16 + 1 = 17``.

    The floor is exact: where a distance's bucket boundary falls exactly on an integer (``r =
    -64`` with 18 buckets: ``4 + floor(log 16 / log 32 * 5) = 8``) it is settled with integers,
    not by how a float logarithm rounds. ``transformers``' ``T5Attention._relative_position_bucket``
    (float32), whose sign convention this shares, agrees at T5's settings and misses a few such
    boundaries elsewhere.

    Args:
        relative_position: integer array (or int) of distances ``key position - query position``.
        bidirectional: True for an encoder (both directions), False for a causal decoder.
        num_buckets: number of buckets, ``>= 4`` and even when bidirectional, ``>= 2`` otherwise.
        max_distance: the distance from which on everything shares one bucket; must exceed
            ``max_exact`` (so that the logarithmic buckets have a range to cover).

    Returns:
        int64 array of the same shape as ``relative_position`` (0-d for a scalar).
    """
    rel = _integer_positions(relative_position)
    bidirectional = _checks.boolean(bidirectional, "bidirectional")
    n = _checks.positive_int(num_buckets, "num_buckets")
    max_distance = _checks.positive_int(max_distance, "max_distance")
    if bidirectional:
        if n < 4 or n % 2:
            raise ValueError(f"num_buckets must be an even number >= 4 when bidirectional=True (half of the "
                             f"buckets for each direction, and at least one exact bucket per half), got {n}")
        n //= 2
        offset = np.where(rel > 0, n, 0)  # keys after the query use the upper half
        r = np.abs(rel)
    else:
        if n < 2:
            raise ValueError(f"num_buckets must be >= 2 when bidirectional=False (one exact bucket at least), got {n}")
        offset = np.zeros_like(rel)
        r = np.maximum(-rel, 0)  # distance back to the key; keys after the query count as 0
    max_exact = n // 2
    if max_distance <= max_exact:
        raise ValueError(f"max_distance must exceed max_exact = {max_exact} (half of the "
                         f"{'per-direction ' if bidirectional else ''}buckets), got {max_distance}")
    r = np.asarray(r)
    dists, where = np.unique(r, return_inverse=True)  # each distance once: (U,), and r's index into it
    with np.errstate(divide="ignore"):  # log(0) for r = 0: that entry takes the exact branch
        # (log of each integer apart: max_distance / max_exact as a float overflowed past 1e308)
        ratio = np.log(dists.astype(np.float64) / max_exact) / (math.log(max_distance) - math.log(max_exact))  # (U,)
    steps = np.floor(np.maximum(ratio, 0.0) * (n - max_exact)).astype(np.int64)  # (U,): t, from floats
    # The floor of an exact integer lands one below where the float product rounds down (r = 64,
    # 18 buckets: 5 log 16 / log 32 = 4, computed as 3.999...): settle t with integers,
    # t <= m log(r/e) / log(M/e)  <=>  M^t e^m <= r^m e^t   (e = max_exact, m = n - e, M = max_distance)
    m_, e, top = n - max_exact, max_exact, max_distance
    for i in np.flatnonzero((dists >= max_exact) & (dists < max_distance)).tolist():  # the logarithmic buckets
        dist, t = int(dists[i]), int(steps[i])
        while t + 1 <= m_ and top ** (t + 1) * e**m_ <= dist**m_ * e ** (t + 1):
            t += 1
        while t > 0 and top**t * e**m_ > dist**m_ * e**t:
            t -= 1
        steps[i] = t
    steps = steps[where].reshape(r.shape)  # (U,) -> the shape of r
    large = np.minimum(max_exact + steps, n - 1)
    return np.asarray(offset + np.where(r < max_exact, r, large), dtype=np.int64)
