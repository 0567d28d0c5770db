"""The backward pass of exact attention, one tile at a time, as FlashAttention computes it (page:
FlashAttention: exact attention, one tile at a time).

The closed form (``mhalib.attention_backward``) needs the weights ``P (..., T, S)``. The
tiled backward never holds them: the forward pass keeps only its output ``O`` and one
number per query row, the log-sum-exp of the row's allowed scores, ``lse_i = log sum_j
exp(s_ij)`` (``mhalib.tiled_attention(..., return_lse=True)``). Then every weight is one
exponential away,

    P_ij = exp(s_ij - lse_i)              s_ij = scale * q_i . k_j, recomputed in its tile

and the row sum the softmax's gradient needs comes from ``O`` instead of ``P``:

    D_i = rowsum(dP o P)_i = sum_j P_ij (dO_i . v_j) = dO_i . O_i

So, for each tile of ``block_q`` queries and ``block_k`` keys (FlashAttention-2's order: an
outer loop over key blocks, whose ``dK_j`` and ``dV_j`` stay in fast memory, and an inner
loop over query blocks, whose ``dQ_i`` is accumulated in main memory):

    P  = exp(Q_i K_j^T * scale - lse_i)          masked entries 0
    dV_j += P^T dO_i                              dP = dO_i V_j^T
    dS = P o (dP - D_i)
    dQ_i += scale * dS K_j                        dK_j += scale * dS^T Q_i

The largest arrays are the tiles and the ``(..., T, d)`` and ``(..., S, d)`` gradients;
nothing grows with ``T * S``.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._scaled import largest_exponent
from .backward import _dk, _dq, _gradient_like, _gradients, _inputs, _stored, _units
from .tiled import _tile_allowed, _tile_mask


#: A weight above this holds most of its row: its entry of dS is computed from the row's other
#: weights, after every tile (``_add_top``). Not 1/2: two weights of 0.5 each can both round above
#: it in ``exp(s - lse)``.
DOMINANT = 2 / 3


def tiled_attention_backward(q: ArrayLike, k: ArrayLike, v: ArrayLike, d_out: ArrayLike, out: ArrayLike,
                             lse: ArrayLike, *, block_q: int = 64, block_k: int = 64, causal: bool = False,
                             mask: ArrayLike | None = None,
                             scale: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of attention with respect to ``q``, ``k`` and ``v``, recomputing the weights tile
    by tile from the forward pass's row log-sum-exp (page: FlashAttention: exact attention, one
    tile at a time).

        D = rowsum(dO o O)                                       (..., T)
        for each block of keys K_j, V_j:      dK_j = 0, dV_j = 0
            for each block of queries Q_i:
                P = exp(Q_i K_j^T * scale - lse_i)               (masked entries 0)
                dV_j += P^T dO_i;   dS = P o (dO_i V_j^T - D_i)
                dQ_i += scale * dS K_j;   dK_j += scale * dS^T Q_i

    Args:
        q: queries ``(..., T, d)``.
        k: keys ``(..., S, d)``.
        v: values ``(..., S, d_v)``; leading axes broadcast, and ``k`` and ``v`` may hold
            fewer heads than ``q`` (grouped-query attention), as in ``attention_backward``.
        d_out: the gradient of the loss with respect to the output, ``(..., T, d_v)``.
        out: the forward pass's output ``(..., T, d_v)``.
        lse: the forward pass's row log-sum-exp ``(..., T)``, ``-inf`` for a row with no
            allowed key: the second result of ``tiled_attention(q, k, v, ...,
            return_lse=True)`` with the same mask, ``causal`` and ``scale``.
        block_q: query rows per block, an integer >= 1.
        block_k: keys per block, an integer >= 1.
        causal: query ``i`` sees keys ``j <= i`` (top-left); tiles wholly above the
            diagonal are skipped.
        mask: boolean, True = may attend, broadcastable to ``(..., T, S)``.
        scale: multiplies the scores; defaults to ``1/sqrt(d)``.

    Returns:
        tuple[np.ndarray, np.ndarray, np.ndarray]: ``(dq, dk, dv)``, of the shapes of ``q``,
        ``k`` and ``v`` and in their float type (``np.result_type`` of ``q``, ``k``, ``v``,
        ``d_out`` and ``out``; ``lse``'s float32 does not widen float16 inputs, whose
        gradients are summed in float32 and rounded once), equal to ``attention_backward``'s
        within rounding for any block sizes (1e-12 in float64 for scores of order 1; scores
        recomputed in other tiles differ by about ``|s| eps``, and the weights with them). A query with no key to attend
        to gets ``dq = 0``.

    ``out`` and ``lse`` are not recomputed (that is the point), but each is checked against what
    the tiles give anyway: an ``lse`` whose weights do not sum to 1 in every row (another mask,
    scale or input) would scale the row's gradients, and an ``out`` whose ``dO . out`` is not the
    weights' ``sum_j P_ij (dO . v_j)`` would shift them; both are refused with a ``ValueError``.
    Scores or gradients beyond the float range are refused; ``lse`` holding NaN or ``+inf`` is
    refused. As in ``attention_backward``, ``dP``, ``D`` and ``dS`` are worked in units of
    ``d_out``'s rows and ``v``'s heads (powers of two), so neither the gradients nor the check
    of ``out`` lose digits where ``dO V^T`` would leave the float range.

    A limit of reading ``rowsum(dP o P)`` from the saved output, ``D_i = dO_i . out_i``, as
    FlashAttention does: ``dS = P o (dP - D)`` carries the rounding of ``out`` (about
    ``eps |dO_i| |out_i|`` per entry), so where the ``dP`` of a row differ by little more than
    that (values that share their leading digits: ``1`` and ``1 + 2**-52``), ``dS`` has fewer
    digits than ``attention_backward``'s, which forms the differences exactly. For float16
    inputs that rounding is float16's (``out`` is float16, about 5e-4 of it), and the scores are
    recomputed in float16, as ``tiled_attention`` computed the ``lse`` they must match. The entry of a
    weight that holds nearly all of its row (above :data:`DOMINANT`) is computed from the
    others, summed over every tile first, so that one keeps its digits here too.

    Example: ``q = k = v = [[1, 0], [0, 1]]`` with ``scale=1``: row 0's scores are ``[1, 0]``,
    its ``lse = log(e + 1) = 1.3133`` and ``exp([1, 0] - 1.3133) = [0.7311, 0.2689]``, the
    weights the forward pass used.
    """
    q, k_all, v_all, scale, causal, n_rep = _inputs(q, k, v, causal, scale)
    block_q = _checks.positive_int(block_q, "block_q")
    block_k = _checks.positive_int(block_k, "block_k")
    lead = np.broadcast_shapes(q.shape[:-2], k_all.shape[:-2], v_all.shape[:-2])
    T, S, d, d_v = q.shape[-2], k_all.shape[-2], q.shape[-1], v_all.shape[-1]
    mask, lead = _tile_mask(mask, lead, T, S)
    d_out = _gradient_like(d_out, "d_out", lead + (T, d_v), "the output")  # (..., T, d_v)
    out = _gradient_like(out, "out", lead + (T, d_v), "the output")  # (..., T, d_v)
    lse = _saved_lse(lse, lead + (T,))  # (..., T)
    dtype = np.result_type(q, k_all, v_all, d_out, out)  # the gradients' type: the inputs', not lse's
    wide = np.result_type(dtype, lse, np.float32)  # worked in: float16 is summed in float32, as forward
    u = _units(v_all, d_out, scale, wide)
    row = u.row  # (..., T, 1): dP, D and dS are worked in units of 2**row per query row
    D = np.zeros(lead + (T,), wide)  # (..., T): rowsum(dP o P) = dO . out
    g_norm = np.zeros(lead + (T,), wide)  # (..., T): |dO_i| in its row's units
    for i0 in range(0, T, block_q):
        i1 = min(i0 + block_q, T)
        g_i = u.g(d_out[..., i0:i1, :], slice(i0, i1))  # (..., bq, d_v)
        D[..., i0:i1] = np.einsum("...k,...k->...", g_i, u.v(out[..., i0:i1, :]))
        g_norm[..., i0:i1] = _norms(g_i)
    v_reach = np.zeros(lead + (T,), wide)  # (..., T): sum_j P_ij |v_j| times 2**b, over the keys row i sees
    has_key = np.zeros(lead + (T,), bool)  # (..., T): row i may attend to some key
    lse_shift = np.where(np.isfinite(lse), lse, 0.0)  # (..., T); a row with no key (lse = -inf): every s is -inf
    dq = np.zeros(lead + (T, d), wide)  # (..., T, d), accumulated over key blocks
    dk = np.zeros(lead + (S, d), wide)  # (..., S, d)
    dv = np.zeros(lead + (S, d_v), wide)  # (..., S, d_v)
    row_mass = np.zeros(lead + (T,), wide)  # (..., T): sum_j P_ij, 1 when lse is the forward's
    row_d = np.zeros(lead + (T,), wide)  # (..., T): sum_j P_ij dP_ij = dO_i . O_i, D when out is the forward's
    reach = np.zeros(lead + (T,), wide)  # (..., T): sum_j P_ij sum_k |q_ik k_jk| |scale|, what the scores' rounding scales
    # A weight above 2/3 (one per row at most) gets its dS from the row's other weights, summed
    # over every tile first: P_m (dP_m sum_{j != m} P_j - sum_{j != m} P_j dP_j), as in
    # backward.softmax_backward; P_m (dP_m - D_i) lost every digit where P_m rounds to 1.
    rest = np.zeros(lead + (T,), wide)  # (..., T): sum of the other weights
    rest_dp = np.zeros(lead + (T,), wide)  # (..., T): sum of P_ij dP_ij over them
    top_p = np.zeros(lead + (T,), wide)  # (..., T): the weight above 2/3, and its dP
    top_dp = np.zeros(lead + (T,), wide)
    top_at = np.full(lead + (T,), -1)  # (..., T): its key, -1 where no weight is above 2/3
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused at the end
        for j0 in range(0, S, block_k):
            j1 = min(j0 + block_k, S)
            k_j = k_all[..., j0:j1, :]  # (..., bk, d)
            v_u = u.v(v_all[..., j0:j1, :])  # (..., bk, d_v)
            v_n = _norms(v_u)  # (..., bk)
            dk_j = np.zeros(lead + (j1 - j0, d), wide)  # (..., bk, d)
            dv_j = np.zeros(lead + (j1 - j0, d_v), wide)  # (..., bk, d_v)
            for i0 in range(0, T, block_q):
                i1 = min(i0 + block_q, T)
                if causal and j0 > i1 - 1:  # a tile wholly above the diagonal holds no allowed key
                    continue
                q_i, do_i = q[..., i0:i1, :], d_out[..., i0:i1, :]  # (..., bq, d), (..., bq, d_v)
                allowed = _tile_allowed(mask, causal, i0, i1, j0, j1)  # (..., bq, bk) or None
                has_key[..., i0:i1] |= True if allowed is None else allowed.any(axis=-1)
                p = _tile_weights(q_i, k_j, scale, allowed, lse_shift[..., i0:i1])  # (..., bq, bk)
                v_reach[..., i0:i1] += np.einsum("...qk,...k->...q", p, v_n)  # (..., bq)
                row_mass[..., i0:i1] += p.sum(axis=-1)  # (..., bq, bk) -> (..., bq)
                reach[..., i0:i1] += np.einsum("...qd,...qd->...q", p @ np.abs(np.asarray(k_j, wide)),
                                               np.abs(np.asarray(q_i, wide))) * abs(scale)  # (..., bq)
                dv_j += np.swapaxes(p, -1, -2) @ do_i  # (..., bk, bq) @ (..., bq, d_v) -> (..., bk, d_v)
                # dP in the type worked in, as the forward pass's P V, in units of 2**row
                dp = u.g(do_i, slice(i0, i1)) @ np.swapaxes(v_u, -1, -2)  # (..., bq, d_v) @ (..., d_v, bk) -> (..., bq, bk)
                p_dp = p * dp  # (..., bq, bk)
                row_d[..., i0:i1] += p_dp.sum(axis=-1)  # (..., bq, bk) -> (..., bq)
                ds = p_dp - p * D[..., i0:i1, None]  # (..., bq, bk): P o (dP - D_i)
                top = p > DOMINANT  # (..., bq, bk): at most one per row
                if top.any():  # that entry's dS comes after every tile, from the rest of the row
                    hit, at = top.any(axis=-1), top.argmax(axis=-1)[..., None]  # (..., bq), (..., bq, 1)
                    top_p[..., i0:i1] = np.where(hit, np.take_along_axis(p, at, -1)[..., 0], top_p[..., i0:i1])
                    top_dp[..., i0:i1] = np.where(hit, np.take_along_axis(dp, at, -1)[..., 0], top_dp[..., i0:i1])
                    top_at[..., i0:i1] = np.where(hit, j0 + at[..., 0], top_at[..., i0:i1])
                    ds, p, p_dp = np.where(top, 0, ds), np.where(top, 0, p), np.where(top, 0, p_dp)
                rest[..., i0:i1] += p.sum(axis=-1)  # (..., bq)
                rest_dp[..., i0:i1] += p_dp.sum(axis=-1)  # (..., bq)
                row_i = row[..., i0:i1, :]  # (..., bq, 1)
                dq[..., i0:i1, :] += _dq(ds, k_j, u, row_i)  # (..., bq, d)
                dk_j += _dk(ds, q_i, u, row_i)  # (..., bk, d)
            dk[..., j0:j1, :], dv[..., j0:j1, :] = dk_j, dv_j
        if (top_at >= 0).any():
            ds_top = top_p * (top_dp * rest - rest_dp)  # (..., T), in units of 2**row
            _add_top(dq, dk, ds_top, top_at, q, k_all, u, row, block_q, block_k)
    _check_saved(row_mass, row_d, D, lse, out, reach, g_norm, v_reach, has_key, row[..., 0], u, S=S, d=d, d_v=d_v)
    return _stored(_gradients(dq, dk, dv, q, k_all, v_all, n_rep), dtype)  # worked in wide, stored as dtype


def _add_top(dq, dk, ds_top, top_at, q, k_all, u, row, block_q: int, block_k: int) -> None:
    """Add to ``dq`` and ``dk`` the terms of the weights above 2/3: ``ds_top (..., T)``, row
    ``i``'s at key ``top_at[..., i]`` (-1: none), tile by tile as the main pass."""
    T, S = ds_top.shape[-1], k_all.shape[-2]
    for j0 in range(0, S, block_k):
        j1 = min(j0 + block_k, S)
        for i0 in range(0, T, block_q):
            i1 = min(i0 + block_q, T)
            at = top_at[..., i0:i1]  # (..., bq)
            here = (at >= j0) & (at < j1)
            if not here.any():
                continue
            ds = np.zeros(at.shape + (j1 - j0,), ds_top.dtype)  # (..., bq, bk): one entry per row at most
            np.put_along_axis(ds, np.clip(at - j0, 0, j1 - j0 - 1)[..., None],
                              np.where(here, ds_top[..., i0:i1], 0)[..., None], axis=-1)
            row_i = row[..., i0:i1, :]  # (..., bq, 1)
            dq[..., i0:i1, :] += _dq(ds, k_all[..., j0:j1, :], u, row_i)  # (..., bq, d)
            dk[..., j0:j1, :] += _dk(ds, q[..., i0:i1, :], u, row_i)  # (..., bk, d)


def _check_saved(row_mass, row_d, D, lse, out, reach, g_norm, v_reach, has_key, row, u, *, S: int, d: int,
                 d_v: int) -> None:
    """Refuse an ``lse`` or ``out`` that is not the forward pass's, and one the tiles cannot check.

    The tolerances are the rounding the forward and backward passes may differ by, per row:
    the scores recomputed in other tiles (another summation order, about ``sqrt(d) eps`` times
    ``sum_k |q_ik k_jk| |scale|``, weighted by ``P``: ``reach``), ``lse`` in its own type, and
    the sums over ``S`` keys (a fixed ``4 sqrt(eps)`` let an ``lse`` 5e-8 off pass in float64,
    ``d |q| |k|`` one 0.3 off in float32: passes thirty-one and thirty-two). ``out`` is held to
    that and to its own rounding, relative to ``|dO_i| sum_j P_ij |v_j|`` (``g_norm * v_reach``, in
    units of ``2**row``: over the keys the row sees, so a padded key's large value widens no row's
    tolerance, as ``max_j |v_j|`` over all keys did: a negated ``out`` passed beside a padded
    value of 300 in float16, pass thirty-three), and absolute where the values are subnormal.
    An ``lse`` of -inf (no key) for a row that has keys is refused. So ``out`` is checked to
    about ``16 eps`` of its type and the type worked in: a wrong ``out`` closer than that is
    within the rounding the check itself makes. Where the scores' rounding reaches the weights
    themselves (scores near 1e15 in float64 differ by more than 1 between tile shapes), or
    ``out``'s rounding is as large as what it must tell apart (values near float32's smallest
    subnormal, 1.4e-45), the tiled pass cannot use them: refused, naming ``attention_backward``
    (it gave gradients of the wrong sign there)."""
    eps = np.finfo(u.wide).eps
    _refuse_where(has_key & np.isneginf(lse), lambda w: (
        f"lse is not the log-sum-exp of the forward pass on these inputs: it is -inf (no key to attend to) for "
        f"row {w}, which has keys"), "pass the lse that tiled_attention(q, k, v, ..., return_lse=True) returned "
                                     "with the same mask, causal and scale")
    lse_abs = np.where(np.isfinite(lse), np.abs(lse), 0.0)  # (..., T)
    spread = 4 * np.sqrt(d) * eps * reach + 4 * np.finfo(lse.dtype).eps * lse_abs + eps * (4 * np.sqrt(S) + 8)
    _refuse_where(~(spread < 1 / 16), lambda w: (  # (NaN or inf too)
        f"the scores of row {w} are too large for their weights to be recomputed in tiles: their rounding in "
        f"{u.wide} moves exp(s - lse) by about {float(spread[w]):.2g}"))
    _lse_matches(row_mass, lse, spread)  # 11 times the largest gap of 300 random correct calls
    size = g_norm * v_reach  # (..., T): bounds |D_i| and the sum of |P_ij dP_ij|, in units of 2**row
    tiny = np.finfo(out.dtype).smallest_subnormal + S * np.finfo(u.wide).smallest_subnormal  # out's absolute rounding
    sub = np.sqrt(d_v) * g_norm * np.ldexp(tiny, u.b[..., 0])  # (..., T): what that moves D by, in the same units
    coarse = np.sqrt(max(eps, np.finfo(out.dtype).eps))  # out's rounding may be this large, relative to size
    _refuse_where((v_reach > 0) & ~(sub <= coarse * size), lambda w: (
        f"the values are too close to 0 in {out.dtype} for row {w}: out's rounding to subnormal numbers moves "
        f"d_out . out by {float(sub[w] / size[w]):.2g} of its size"))
    tol = (4 * np.finfo(out.dtype).eps + eps * (4 * np.sqrt(S) + 8) + spread) * size + 2 * sub
    _out_matches(row_d, D, tol, row)


def _refuse_where(bad: np.ndarray, why, way: str = "compute these gradients with attention_backward (it keeps "
                                                  "the weights)") -> None:
    """A ``ValueError`` naming the first row where ``bad`` holds: ``why(row)``, then ``way`` out."""
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{why(where)}; {way}")


def _saved_lse(lse, shape: tuple[int, ...]) -> np.ndarray:
    """``lse`` as a float array of ``shape`` ``(..., T)``: finite or ``-inf`` (a row with no key)."""
    lse = _checks.float_array(lse, "lse", finite=False)
    if np.isnan(lse).any() or np.isposinf(lse).any():
        raise ValueError("lse must not hold NaN or +inf (-inf marks a row with no key to attend to); "
                         f"got {int(np.isnan(lse).sum())} NaN and {int(np.isposinf(lse).sum())} +inf")
    if lse.shape != shape:
        raise ValueError(f"lse must have shape {shape} (..., T), one log-sum-exp per query row; got {lse.shape}")
    return lse


def _lse_matches(row_mass: np.ndarray, lse: np.ndarray, tol: np.ndarray) -> None:
    """Refuse an ``lse`` that is not the forward pass's: its weights ``exp(s - lse)`` must sum to 1
    in each row (0 in a row with no key, lse = -inf), within ``tol`` (``(..., T)``: the rounding
    of the scores and of ``lse``, from their sizes). Any other ``lse`` scales every gradient of its
    row by a wrong factor. (A fixed ``4 sqrt(eps)``, 6e-8 in float64, let an ``lse`` 5e-8 off pass
    and refused a correct one whose scores were near 1e10: pass thirty-one.)"""
    want = np.where(np.isfinite(lse), 1.0, 0.0)  # (..., T)
    off = np.abs(row_mass - want)  # (..., T)
    if not (off <= tol).all():  # (a NaN mass is refused too)
        where = tuple(int(i) for i in np.argwhere(~(off <= tol))[0])
        mass, one = _apart(float(row_mass[where]), float(want[where]))
        raise ValueError(f"lse is not the log-sum-exp of the forward pass on these inputs: the weights "
                         f"exp(s - lse) of row {where} sum to {mass}, not {one}; pass the lse that "
                         "tiled_attention(q, k, v, ..., return_lse=True) returned with the same mask, causal and scale")


def _apart(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` to the fewest significant digits, from 6 up to 17, that tell them apart (an
    error said the weights "sum to 1, not 1" for 0.9999994)."""
    for digits in range(6, 18):
        shown = format(a, f".{digits}g"), format(b, f".{digits}g")
        if shown[0] != shown[1]:
            break
    return shown


def _norms(a: np.ndarray) -> np.ndarray:
    """The Euclidean norm of each row of ``a`` (``(..., n, k) -> (..., n)``), taken on the row
    divided by its largest power of two (exact), so the squares neither overflow nor underflow
    (``_Units`` leaves rows near 2**960 and near 1)."""
    e = largest_exponent(a, -1)  # (..., n, 1)
    scaled = np.ldexp(a, -e)  # (..., n, k)
    return np.ldexp(np.sqrt(np.einsum("...k,...k->...", scaled, scaled)), e[..., 0])


def _out_matches(row_d: np.ndarray, D: np.ndarray, tol: np.ndarray, row: np.ndarray) -> None:
    """Refuse an ``out`` whose ``D_i = dO_i . out_i`` is not what the weights give, ``sum_j P_ij
    (dO_i . v_j) = dO_i . O_i`` (``row_d``, accumulated over the tiles from ``dP``, which the
    gradient computes anyway: no extra matmul). ``out`` enters the gradients only through ``D``,
    so this refuses exactly the outputs that would make them wrong (another input's, another
    mask's, a stale one). Both are in units of ``2**row`` (``(..., T)``); ``tol`` allows the
    rounding of ``out`` in its own type (float16 from a float16 forward pass, even beside a
    float64 ``d_out``), of ``dP`` and the sums in the type worked in, and of the weights, each
    times ``|dO_i| max_j |v_j|``, which bounds every ``|dP_ij|`` and ``|dO_i . out_i|``
    (Cauchy-Schwarz: an output is a weighted mean of values); and subnormal values' absolute
    rounding. In the inputs' own units a tolerance for subnormal sums, ``+ tiny``, had let a
    negated ``out`` pass wherever ``|dO| |v|`` was below float64's smallest normal number."""
    off = np.abs(row_d - D)  # (..., T)
    if not (off <= tol).all():  # (a NaN is refused too)
        where = tuple(int(i) for i in np.argwhere(~(off <= tol))[0])
        e = int(np.broadcast_to(row, off.shape)[where])
        with np.errstate(over="ignore", under="ignore"):  # past the float range: written with the power below
            given, weights = _apart(float(np.ldexp(D[where], e)), float(np.ldexp(row_d[where], e)))
        if given == weights:  # both past the float range in the inputs' units
            given, weights = (f"{t} x 2**{e}" for t in _apart(float(D[where]), float(row_d[where])))
        raise ValueError(f"out is not the forward pass's output on these inputs: in row {where}, d_out . out "
                         f"= {given}, but the weights exp(s - lse) give d_out . O = {weights}; pass the output "
                         "that tiled_attention(q, k, v, ..., return_lse=True) returned with this lse")


def _tile_weights(q_i, k_j, scale, allowed, lse_i) -> np.ndarray:
    """The tile's weights ``P = exp(q_i k_j^T * scale - lse_i)``, 0 where masked, ``(..., bq, bk)``."""
    s = (q_i @ np.swapaxes(k_j, -1, -2)) * scale  # (..., bq, d) @ (..., d, bk) -> (..., bq, bk)
    _checks.no_overflow(s, "the scores (q @ k^T) * scale of a tile",
                        "q, k or scale is too large for tiled attention; attention_backward "
                        "computes the gradients of scores beyond the float range")
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)  # (..., bq, bk); exp gives 0
    return np.exp(s - lse_i[..., None])  # (..., bq, bk); 0 where masked
