"""Exact attention one tile at a time, with the online softmax (page: FlashAttention: exact
attention, one tile at a time).

Attention's ``T x S`` score matrix never needs to exist. Split the queries into blocks of
``block_q`` rows and the keys into blocks of ``block_k``; for each query block, visit the
key blocks in order and keep, per query row, three running quantities:

    m   the largest score seen so far                           (..., block_q)
    l   sum_j exp(s_j - m) over the keys seen so far            (..., block_q)
    o   the softmax-weighted average of their values so far     (..., block_q, d_v)

A new key block with scores ``s (..., block_q, block_k)`` updates them as

    m_new = max(m_old, max_j s_j)
    p_j   = exp(s_j - m_new)                                    (the tile's unnormalised weights)
    l_new = exp(m_old - m_new) * l_old + sum_j p_j
    o_new = (exp(m_old - m_new) * l_old * o_old + p V_block) / l_new

``exp(m_old - m_new) <= 1`` rescales what was accumulated against the old maximum to the
new one; after the last key block ``o`` *is* the exact attention output, ``softmax(s) V``,
up to rounding. The largest arrays are the ``block_q x block_k`` tiles and the
``(..., T, d_v)`` output; nothing grows with ``T * S``. FlashAttention (Dao et al., 2022)
runs this loop in on-chip SRAM; ``mhalib.attention_hbm_bytes`` counts what that saves
in memory traffic.

With ``return_lse=True`` the forward pass also returns each row's log-sum-exp,
``lse = m + log(l) = log sum_j exp(s_j)``: ``exp(s - lse)`` is the row of weights, so the
backward pass (``mhalib.tiled_attention_backward``) can recompute ``P`` one tile at a time
instead of keeping it.
"""
from __future__ import annotations

import math
import sys

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .attention import _queries_and_keys


_ARRAY_HEADER = sys.getsizeof(np.zeros(0))  # bytes a numpy array takes beyond its data


class _Largest:
    """Records the element count of the largest array seen (for the memory assertion)."""

    def __init__(self) -> None:
        self.elements = 0

    def __call__(self, *arrays: np.ndarray) -> None:
        for a in arrays:
            self.elements = max(self.elements, int(np.size(a)))


def tiled_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, *, block_q: int = 64, block_k: int = 64,
                    causal: bool = False, scale: float | None = None, mask: ArrayLike | None = None,
                    trace: bool = False, return_lse: bool = False) -> np.ndarray | tuple:
    """Exact attention ``softmax(q k^T * scale) v``, one ``block_q x block_k`` score tile at a time
    (page: FlashAttention: exact attention, one tile at a time).

        for each block of queries Q_i:   m = -inf, l = 0, o = 0
            for each block of keys K_j, V_j (in order):
                s = Q_i K_j^T * scale               (masked entries -inf)
                m_new = max(m, rowmax(s));  p = exp(s - m_new);  a = exp(m - m_new)
                l_new = a l + rowsum(p);    o = (a l o + p V_j) / l_new;  m, l = m_new, l_new
            out_i = o;   lse_i = m + log(l)         (the row log-sum-exp, for the backward pass)

    Args:
        q: queries ``(..., T, d)``.
        k: keys ``(..., S, d)``.
        v: values ``(..., S, d_v)``; leading axes of q, k, v broadcast.
        block_q: query rows per block, an integer >= 1 (larger than ``T`` means one block).
        block_k: keys per block, an integer >= 1.
        causal: query ``i`` sees keys ``j <= i``, top-left aligned as in
            ``scaled_dot_product_attention`` and torch's ``is_causal=True``. Tiles
            entirely above the diagonal are skipped; a row with no allowed key in a tile
            leaves its running values unchanged (no NaN).
        scale: multiplies the scores; defaults to ``1/sqrt(d)``.
        mask: boolean, True = may attend, broadcastable to ``(..., T, S)``, as in
            ``scaled_dot_product_attention``; each tile reads its ``block_q x block_k`` part.
        trace: also return the running state after each key block.
        return_lse: also return each query row's log-sum-exp of its allowed scores,
            ``lse = m + log(l) = log sum_j exp(s_j)`` of shape ``(..., T)`` (``-inf`` for a row
            with no allowed key): all that ``tiled_attention_backward`` needs, besides the
            inputs and the output, to recompute the weights ``P = exp(s - lse)``.

    Returns:
        ``out (..., T, d_v)``, equal to ``scaled_dot_product_attention``'s output within
        rounding (1e-12 in float64). A query with no key at all (``S = 0``) gets a zero
        output, as there. With ``trace=True``, ``(out, trace)`` where ``trace`` holds,
        for key block ``j`` in order, ``m[j] (..., T)`` the running maximum (``-inf`` while
        a row has seen no allowed key), ``l[j] (..., T)`` the running sum of
        ``exp(s - m)``, ``o[j] (..., T, d_v)`` the normalised output so far and
        ``key_blocks[j] = (start, stop)``; plus ``largest_array_elements`` (the element
        count of the largest array this function allocated: tiles, per-block state, the
        output and the trace's own arrays; the inputs are not counted) and
        ``largest_tile_elements`` (of the largest score tile, ``(..., block_q, block_k)``).
        ``tiles_visited`` counts the ``(query block, key block)`` tiles whose scores were
        computed (a tile counts once, whatever the leading axes) and ``tiles_masked`` those
        of them with at least one masked entry; with ``causal`` and no ``mask`` they are
        ``mhalib.causal_tile_counts``' ``visited`` and ``partial``.
        The trace's arrays each hold ``T`` rows; the trace never stacks them. A trace
        larger than this machine's memory is refused before it is allocated, with its size
        (``S = 200000`` keys in blocks of 1 and ``T = 2000`` queries: 8.9 GiB).
        With ``return_lse=True``, ``(out, lse)``, or ``(out, lse, trace)`` with both.
        ``out`` has the inputs' float type; float16 inputs keep their running state (and
        the trace) in float32, as ``scaled_dot_product_attention`` does, so that ``l``,
        a sum over up to ``S`` keys, does not overflow float16's 65504.

    Scores that overflow the float range are refused with a ``ValueError`` (use
    ``scaled_dot_product_attention``, which computes such a softmax exactly).

    Example: ``q = k = v = [[1, 0], [0, 1]]``, ``scale=1`` and ``block_k=1``: row 0 sees
    key 0 (``s = 1``: ``m = 1``, ``l = 1``, ``o = [1, 0]``), then key 1 (``s = 0``: ``m``
    stays 1, ``l = 1 + e^-1 = 1.3679``, ``o = [1, e^-1] / 1.3679 = [0.7311, 0.2689]``),
    the exact softmax-weighted average.
    """
    q, k, scale = _queries_and_keys(q, k, scale)
    v = _checks.float_array(v, "v", min_ndim=2)
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys S; got k {k.shape} and v {v.shape}")
    block_q = _checks.positive_int(block_q, "block_q")
    block_k = _checks.positive_int(block_k, "block_k")
    causal = _checks.boolean(causal, "causal")
    trace = _checks.boolean(trace, "trace")
    return_lse = _checks.boolean(return_lse, "return_lse")
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch, head) axes of q {q.shape}, k {k.shape} and v {v.shape} do not broadcast"
        ) from None
    T, S, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    mask, lead = _tile_mask(mask, lead, T, S)
    dtype = np.result_type(q, k, v)  # the output's type
    wide = np.promote_types(dtype, np.float32)  # the running state's: float16 is summed in float32
    largest, largest_tile = _Largest(), _Largest()
    n_blocks = -(-S // block_k)  # ceil(S / block_k) key blocks
    if trace:
        _trace_fits(n_blocks, math.prod(lead) * T, d_v, np.dtype(wide).itemsize)
    out = np.zeros(lead + (T, d_v), dtype)  # (..., T, d_v); rows with no key stay 0
    lse = np.full(lead + (T,), -np.inf, wide)  # (..., T); rows with no key stay -inf
    largest(out, lse)
    starts = list(range(0, S, block_k))
    key_blocks = [(j0, min(j0 + block_k, S)) for j0 in starts]
    if trace:
        m_tr = [np.full(lead + (T,), -np.inf, wide) for _ in key_blocks]  # (..., T) per key block
        l_tr = [np.zeros(lead + (T,), wide) for _ in key_blocks]  # (..., T) per key block
        o_tr = [np.zeros(lead + (T, d_v), wide) for _ in key_blocks]  # (..., T, d_v) per key block
        largest(*m_tr, *l_tr, *o_tr)
    tiles_visited = tiles_masked = 0  # (query block, key block) tiles computed, and those with a masked entry
    for i0 in range(0, T, block_q):
        i1 = min(i0 + block_q, T)
        q_i = q[..., i0:i1, :]  # (..., bq, d), a view
        m = np.full(lead + (i1 - i0,), -np.inf, wide)  # (..., bq)
        l = np.zeros(lead + (i1 - i0,), wide)  # (..., bq)
        o = np.zeros(lead + (i1 - i0, d_v), wide)  # (..., bq, d_v)
        largest(m, l, o)
        for jb, (j0, j1) in enumerate(key_blocks):
            if not (causal and j0 > i1 - 1):  # with causal, a tile wholly above the diagonal is skipped
                allowed = _tile_allowed(mask, causal, i0, i1, j0, j1)  # (..., bq, bk) or None
                tiles_visited += 1
                tiles_masked += allowed is not None and not allowed.all()
                m, l, o = _update(q_i, k[..., j0:j1, :], v[..., j0:j1, :], m, l, o, scale,
                                  allowed, largest, largest_tile)
            if trace:
                m_tr[jb][..., i0:i1], l_tr[jb][..., i0:i1], o_tr[jb][..., i0:i1, :] = m, l, o
        with np.errstate(over="ignore"):
            out[..., i0:i1, :] = o  # rounded to the output's type once, at the end
        _checks.no_overflow(out[..., i0:i1, :], f"the output of tiled attention stored as {dtype}",
                            "v holds values so close to the largest float that their weighted average rounds past it")
        lse[..., i0:i1] = m + np.log(np.where(l > 0, l, 1.0))  # (..., bq); log l: l > 0 wherever m is finite
    head = (out, lse) if return_lse else (out,)
    if not trace:
        return head if return_lse else out
    return head + (dict(m=m_tr, l=l_tr, o=o_tr, key_blocks=key_blocks,
                        largest_array_elements=largest.elements, largest_tile_elements=largest_tile.elements,
                        tiles_visited=tiles_visited, tiles_masked=int(tiles_masked)),)


def _trace_fits(n_blocks: int, rows: int, d_v: int, itemsize: int) -> None:
    """Refuse a trace larger than this machine's memory before allocating it: for each key
    block, ``m`` and ``l`` ``(..., T)`` and ``o`` ``(..., T, d_v)``, plus each array's header."""
    nbytes = n_blocks * (rows * (2 + d_v) * itemsize + 3 * _ARRAY_HEADER)
    _checks.fits_in_memory(nbytes, f"tiled_attention's trace (m, l and o after each of {n_blocks} key blocks, "
                           f"for {rows} query rows)", "use trace=False, a larger block_k or fewer queries")


def _tile_mask(mask, lead: tuple[int, ...], T: int, S: int) -> tuple[np.ndarray | None, tuple[int, ...]]:
    """``mask`` checked (boolean, broadcastable to ``(..., T, S)``) and broadcast to
    ``(..., T, S)`` as a read-only view, so that a tile can slice it; and the leading axes
    of the output, which a mask may extend (a batch axis)."""
    if mask is None:
        return None, lead
    mask = _checks.bool_array(mask, "mask")
    full = _checks.scores_like(mask, lead + (T, S), "mask")  # (..., T, S)
    return np.broadcast_to(mask, full), full[:-2]  # a view: no (T, S) copy


def _tile_allowed(mask: np.ndarray | None, causal: bool, i0: int, i1: int, j0: int, j1: int) -> np.ndarray | None:
    """Which entries of the tile of queries ``[i0, i1)`` and keys ``[j0, j1)`` may attend:
    ``mask``'s part of it (``(..., bq, bk)``), and with ``causal`` keys ``j <= i`` only
    (top-left); None when everything may."""
    allowed = None if mask is None else mask[..., i0:i1, j0:j1]  # (..., bq, bk), a view
    if causal:
        past = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]  # (bq, bk), top-left
        allowed = past if allowed is None else allowed & past
    return allowed


def _update(q_i, k_j, v_j, m, l, o, scale, allowed, largest, largest_tile):
    """One online-softmax step: the running ``(m, l, o)`` of a query block after key block ``j``."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = (q_i @ np.swapaxes(k_j, -1, -2)) * scale  # (..., bq, d) @ (..., d, bk) -> (..., bq, bk)
    _checks.no_overflow(s, "the scores (q @ k^T) * scale of a tile",
                        "q, k or scale is too large for tiled attention; scaled_dot_product_attention "
                        "computes the softmax of scores beyond the float range exactly")
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)  # (..., bq, bk)
    s = s.astype(m.dtype, copy=False)  # float16 scores join the float32 running state
    largest(s)
    largest_tile(s)
    m_new = np.maximum(m, s.max(axis=-1))  # (..., bq); -inf while a row has seen no allowed key
    shift = np.where(np.isfinite(m_new), m_new, 0.0)  # a row with nothing so far: shift by 0, exp gives 0
    p = np.exp(s - shift[..., None])  # (..., bq, bk); masked entries give exactly 0
    alpha = np.exp(m - shift)  # (..., bq) rescales the old state; 0 when m = -inf
    l_new = alpha * l + p.sum(axis=-1)  # (..., bq)
    safe = np.where(l_new > 0, l_new, 1.0)  # (..., bq); rows with no allowed key yet keep o = 0
    with np.errstate(over="ignore", invalid="ignore"):
        # weights that sum to 1 over old and new keys, so nothing grows past max |v|
        pv = (p / safe[..., None]) @ v_j  # (..., bq, bk) @ (..., bk, d_v) -> (..., bq, d_v)
        o_new = (alpha * l / safe)[..., None] * o + pv  # (..., bq, d_v)
    largest(p, pv, m_new, l_new)
    _checks.no_overflow(o_new, "the running output of tiled attention",
                        "v holds values so close to the largest float that their weighted average rounds past it")
    largest(o_new)
    return m_new, l_new, o_new
