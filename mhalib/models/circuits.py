"""A head's QK and OV circuits and how heads compose, read off the weights (page: An induction
head grows, section "The circuit"), after Elhage et al. (2021), "A Mathematical Framework for
Transformer Circuits".

mhalib multiplies row vectors from the left (``x @ W``). Head ``h`` of a layer uses columns
``h d .. (h+1) d - 1`` of ``W_Q``, ``W_K``, ``W_V`` (each ``(D, D)``) and the same rows of
``W_O``; call these slices ``W_Q^h``, ``W_K^h``, ``W_V^h`` ``(D, d)`` and ``W_O^h`` ``(d, D)``.
For residual vectors ``x_i`` (query) and ``x_j`` (key), before the softmax and its ``1/sqrt(d)``:

    score_ij   = x_i W_QK^h x_j^T          W_QK^h = W_Q^h (W_K^h)^T      (D, D)   the QK circuit
    added_i    = sum_j A_ij x_j W_OV^h     W_OV^h = W_V^h W_O^h          (D, D)   the OV circuit

In the paper's column-vector notation the same matrices are ``W_QK = W_Q^T W_K`` (equal to ours)
and ``W_OV = W_O W_V`` (the transpose of ours).

**Composition.** A head of layer 1 adds ``y W_OV^1`` to the residual stream, which a head of
layer 2 then reads as a query, a key or a value. The term it contributes there is

    Q-composition   (y W_OV^1) W_QK^2 x_j^T     matrix  W_OV^1 W_QK^2
    K-composition   x_i W_QK^2 (y W_OV^1)^T     matrix  W_QK^2 (W_OV^1)^T
    V-composition   (y W_OV^1) W_OV^2           matrix  W_OV^1 W_OV^2

and each is scored by ``composition_score``, ``||M_1 M_2||_F / (||M_1||_F ||M_2||_F)``: between
0 (what the first writes, the second never reads) and 1 (rank one, perfectly aligned). In the
paper's notation these are ``||W_QK^T W_OV||``, ``||W_QK W_OV||`` and ``||W_OV^2 W_OV^1||``. If
what the first head writes is turned by a uniformly random rotation ``R`` of ``R^D`` (``M_1 = B R``),
the expected *square* of the score is exactly ``1/D``, whatever ``B`` and ``M_2``: the baseline
of unrelated heads, about ``1/sqrt(D)``.

**LayerNorm.** The tiny decoders normalise each layer's input, ``LN(x) = g * (x - mean(x)) /
sigma(x) + b``, that is ``LN(x) = (x / sigma(x)) C diag(g) + b`` with the centring projection
``C = I - 1 1^T / D``. ``fold_layer_norm`` gives ``C diag(g)``; multiplied into the weights that
read the normalised vector (``W_Q``, ``W_K``, ``W_V`` of the next layer, ``W_U`` after the final
norm), the circuit matrices act on ``x / sigma(x)``. What is left out: the per-token
``1/sigma(x)`` (one positive number per token and position) and the bias ``b``, whose terms do
not depend on the token (``b W_V^h W_O^h``, for instance).

**Copying.** A head copies when attending to token ``t`` raises the logit of ``t`` itself. The
token-to-token matrix ``W_E W_OV^h W_U`` ``(V, V)`` (row: the token attended to, column: the
logit raised) then has a large diagonal. Two measures: ``eigenvalue_positivity``
(``sum λ / sum |λ|``, the paper's: 1 when every eigenvalue is positive) and
``diagonal_argmax_share`` (the share of rows whose largest entry is on the diagonal).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from .._scaled import by_largest
from .tiny_numpy import TinyConfig, checked_weights


def fold_layer_norm(g: ArrayLike) -> np.ndarray:
    """``C diag(g)``, ``(D, D)``: LayerNorm without its ``1/sigma`` and its bias, as a matrix.

        LN(x) = (x / sigma(x)) C diag(g) + b,      C = I - 1 1^T / D   (centring)

    ``g`` is the gain ``(D,)``. Example: ``g = [1, 1]`` gives ``[[0.5, -0.5], [-0.5, 0.5]]``.
    """
    g = _checks.float_array(g, "g")
    if g.ndim != 1 or g.shape[0] < 2:
        raise ValueError(f"g must be a LayerNorm gain of shape (D,) with D >= 2, got shape {g.shape}")
    D = g.shape[0]
    return (np.eye(D) - np.full((D, D), 1.0 / D)) * g[None, :]  # (D, D): C @ diag(g)


def _head_slices(w: np.ndarray, name: str, n_heads: int, *, rows: bool) -> np.ndarray:
    """``w (D, D)`` cut into heads: columns (``rows=False``) -> ``(H, D, d)``, rows -> ``(H, d, D)``."""
    if w.ndim != 2:
        raise ValueError(f"{name} must be a (D, D) projection matrix, got shape {w.shape}")
    H = _checks.positive_int(n_heads, "n_heads")
    D_in, D_out = w.shape
    if rows:
        d = _checks.divisible(D_in, H, f"rows of {name}", "n_heads")
        return w.reshape(H, d, D_out)  # (H*d, D) -> (H, d, D)
    d = _checks.divisible(D_out, H, f"columns of {name}", "n_heads")
    return np.swapaxes(w.reshape(D_in, H, d), 0, 1)  # (D, H*d) -> (D, H, d) -> (H, D, d)


def _folded(w: np.ndarray, ln_gain, name: str) -> np.ndarray:
    """``C diag(g) @ w`` when a LayerNorm gain is given, else ``w``."""
    if ln_gain is None:
        return w
    fold = fold_layer_norm(ln_gain)
    if fold.shape[0] != w.shape[0]:
        raise ValueError(f"ln_gain has {fold.shape[0]} entries but {name} has {w.shape[0]} rows (d_model)")
    return fold @ w  # (D, D) @ (D, D')


def qk_circuit(w_q: ArrayLike, w_k: ArrayLike, n_heads: int, *, ln_gain: ArrayLike | None = None) -> np.ndarray:
    """Each head's QK circuit ``W_QK^h = W_Q^h (W_K^h)^T`` in the residual basis: ``(H, D, D)``.

    ``score_ij = x_i W_QK^h x_j^T`` is head ``h``'s score before the scale ``1/sqrt(d)``.
    With ``ln_gain`` the layer's LayerNorm is folded in: ``(C diag g) W_Q^h (W_K^h)^T (C diag g)^T``.
    Example: with one head and ``W_Q = W_K = I``, ``W_QK = I`` (the score is ``x_i . x_j``).
    """
    w_q = _checks.float_array(w_q, "w_q", min_ndim=2)
    w_k = _checks.float_array(w_k, "w_k", min_ndim=2)
    if w_q.shape != w_k.shape:
        raise ValueError(f"w_q and w_k must have the same shape, got {w_q.shape} and {w_k.shape}")
    q = _head_slices(_folded(w_q, ln_gain, "w_q"), "w_q", n_heads, rows=False)  # (H, D, d)
    k = _head_slices(_folded(w_k, ln_gain, "w_k"), "w_k", n_heads, rows=False)  # (H, D, d)
    return q @ np.swapaxes(k, -1, -2)  # (H, D, d) @ (H, d, D) -> (H, D, D)


def ov_circuit(w_v: ArrayLike, w_o: ArrayLike, n_heads: int, *, ln_gain: ArrayLike | None = None) -> np.ndarray:
    """Each head's OV circuit ``W_OV^h = W_V^h W_O^h`` in the residual basis: ``(H, D, D)``.

    A head that puts weights ``A_ij`` on keys ``x_j`` adds ``sum_j A_ij x_j W_OV^h`` to the
    residual stream at ``i``. With ``ln_gain`` the layer's LayerNorm is folded in:
    ``(C diag g) W_V^h W_O^h``, which acts on ``x / sigma(x)``.
    """
    w_v = _checks.float_array(w_v, "w_v", min_ndim=2)
    w_o = _checks.float_array(w_o, "w_o", min_ndim=2)
    if w_v.ndim != 2 or w_o.ndim != 2 or w_v.shape[1] != w_o.shape[0]:
        raise ValueError(f"w_v (D, H*d) and w_o (H*d, D) must chain, got {w_v.shape} and {w_o.shape}")
    v = _head_slices(_folded(w_v, ln_gain, "w_v"), "w_v", n_heads, rows=False)  # (H, D, d)
    o = _head_slices(w_o, "w_o", n_heads, rows=True)  # (H, d, D)
    return v @ o  # (H, D, d) @ (H, d, D) -> (H, D, D)


def composition_score(a: ArrayLike, b: ArrayLike) -> float:
    """``||a b||_F / (||a||_F ||b||_F)``, between 0 and 1 (Elhage et al., 2021).

    0: ``b`` reads nothing of what ``a`` writes (``a``'s rows are orthogonal to ``b``'s
    columns); 1: both are rank one and ``a``'s row space is ``b``'s column space. A zero
    matrix has no direction to compare and is refused. Example: ``a = [[1, 0]]^T [[1, 0]]``,
    ``b = [[cos t, sin t]]^T [[1, 0]]`` scores ``|cos t|``.

    The score does not change when ``a`` or ``b`` is scaled, so each is divided by its largest
    entry and the rest runs in float64: float16 circuits of entries near 200, or float64 ones
    near 1e160, overflowed the sum of squares (inf / inf: NaN), and entries near 1e-170 made a
    nonzero matrix's norm 0.
    """
    a = _checks.float_array(a, "a", min_ndim=2)
    b = _checks.float_array(b, "b", min_ndim=2)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"a and b must be matrices that multiply, (m, n) and (n, p); got {a.shape} and {b.shape}")
    a, b = _unit_scaled(a), _unit_scaled(b)
    if a is None or b is None:
        raise ValueError("a and b must be nonzero: the composition score of a zero matrix is 0/0, undefined "
                         f"({'a' if a is None else 'b'} has no nonzero entry)")
    return float(np.linalg.norm(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def _unit_scaled(m: np.ndarray) -> np.ndarray | None:
    """``m`` in float64 divided by its largest absolute entry (entries in [-1, 1], the largest
    of magnitude 1: no norm of it overflows or underflows); None for a zero matrix."""
    scaled, top = by_largest(m.astype(np.float64))
    return None if top == 0 else scaled


def composition_scores(ov_first: ArrayLike, qk_second: ArrayLike, ov_second: ArrayLike) -> dict:
    """Q-, K- and V-composition of every head of an earlier layer with every head of a later one.

    ``ov_first (H1, D, D)``: the earlier layer's OV circuits; ``qk_second``, ``ov_second``
    ``(H2, D, D)``: the later layer's QK and OV circuits. Returns ``q``, ``k``, ``v``, each
    ``(H1, H2)`` (row: the earlier head, column: the later head):

        q[a, b] = score(W_OV^a,  W_QK^b)          the later head's queries read the earlier head
        k[a, b] = score(W_OV^a,  (W_QK^b)^T)      its keys (= ||W_QK^b (W_OV^a)^T|| / norms)
        v[a, b] = score(W_OV^a,  W_OV^b)          its values

    with ``score = composition_score``.
    """
    ov1 = _checks.float_array(ov_first, "ov_first", min_ndim=3)
    qk2 = _checks.float_array(qk_second, "qk_second", min_ndim=3)
    ov2 = _checks.float_array(ov_second, "ov_second", min_ndim=3)
    for name, m in (("ov_first", ov1), ("qk_second", qk2), ("ov_second", ov2)):
        if m.ndim != 3 or m.shape[1] != m.shape[2] or m.shape[1] != ov1.shape[1]:
            raise ValueError(f"{name} must be (heads, D, D) with the D of ov_first ({ov1.shape[1]}), got {m.shape}")
    if qk2.shape[0] != ov2.shape[0]:
        raise ValueError(f"qk_second and ov_second must have the same heads, got {qk2.shape[0]} and {ov2.shape[0]}")
    out = {key: np.zeros((ov1.shape[0], qk2.shape[0])) for key in "qkv"}
    for a in range(ov1.shape[0]):
        for b in range(qk2.shape[0]):
            out["q"][a, b] = composition_score(ov1[a], qk2[b])
            out["k"][a, b] = composition_score(ov1[a], qk2[b].T)
            out["v"][a, b] = composition_score(ov1[a], ov2[b])
    return out


def eigenvalue_positivity(m: ArrayLike) -> float:
    """``sum_i λ_i / sum_i |λ_i|`` over the eigenvalues of a square matrix (Elhage et al., 2021).

    The numerator is the trace, a real number; ``|λ|`` is the complex modulus. 1: every
    eigenvalue is real and positive (the matrix maps each eigenvector onto itself, enlarged: copying);
    -1: all real and negative; near 0 for a random matrix, whose eigenvalues spread evenly
    around 0. A rotation by 90 degrees (eigenvalues ``±i``) gives 0. The zero matrix has no
    eigenvalue to measure and is refused. The ratio does not change when ``m`` is scaled: it is
    computed on ``m`` divided by its largest entry, in float64 (numpy's eigvals takes no float16,
    and float64 entries near 1e300 overflowed).
    """
    m = _checks.float_array(m, "m", min_ndim=2)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(f"m must be a square matrix, got shape {m.shape}")
    scaled = _unit_scaled(m)
    lam = np.linalg.eigvals(scaled if scaled is not None else m.astype(np.float64))
    total = float(np.abs(lam).sum())
    if total == 0:
        raise ValueError("m has only zero eigenvalues (it is nilpotent, e.g. the zero matrix): "
                         "sum λ / sum |λ| is 0/0, undefined")
    return float(lam.sum().real / total)


def diagonal_argmax_share(m: ArrayLike) -> float:
    """The share of rows whose largest entry lies on the diagonal: ``mean_t [argmax_s m[t, s] = t]``.

    For ``W_E W_OV W_U``: the share of tokens that, attended to, raise their own logit more than
    any other. Unchanged when each row is scaled by its own positive number (such as the
    ``1/sigma`` that ``fold_layer_norm`` leaves out). Ties count for the first maximum.
    Chance for a random matrix: ``1/V``.
    """
    m = _checks.float_array(m, "m", min_ndim=2)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(f"m must be a square matrix, got shape {m.shape}")
    return float(np.mean(m.argmax(axis=1) == np.arange(m.shape[0])))


def tiny_decoder_circuits(weights: dict, config: TinyConfig) -> dict:
    """Every head's circuits of a tiny decoder (``mhalib.models.tiny_numpy``), LayerNorms folded.

    Returns ``qk`` and ``ov``, each ``(L, H, D, D)`` (layer ``l``'s LayerNorm gain folded in, as
    in ``qk_circuit`` and ``ov_circuit``), ``w_e`` ``(V, D)`` the token embeddings, ``w_pos``
    ``(max_len, D)`` the learned position table (``None`` for other methods) and ``w_u`` ``(D, V)``
    the unembedding with the final LayerNorm's gain folded in (``C diag(g_f) W_U``). Then
    ``w_e @ ov[l, h] @ w_u`` is head ``(l, h)``'s token-to-token OV circuit.

    A RoPE model has no fixed QK circuit (its queries and keys turn with their positions) and is
    refused; with ALiBi the circuits leave out the distance bias.
    """
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    if config.method == "rope":
        raise ValueError("method='rope' rotates queries and keys by their positions, so a head has no single "
                         "W_QK matrix; tiny_decoder_circuits takes the methods 'none', 'sinusoidal', "
                         "'learned' and 'alibi'")
    w = {name: a.astype(np.float64) for name, a in checked_weights(weights, config).items()}
    H = config.n_heads
    qk, ov = [], []
    for l in range(config.n_layers):
        g = w[f"{l}.ln1.g"]
        qk.append(qk_circuit(w[f"{l}.w_q"], w[f"{l}.w_k"], H, ln_gain=g))
        ov.append(ov_circuit(w[f"{l}.w_v"], w[f"{l}.w_o"], H, ln_gain=g))
    return dict(qk=np.stack(qk), ov=np.stack(ov),  # L x (H, D, D) -> (L, H, D, D)
                w_e=w["tok_emb"], w_pos=w.get("pos_emb"),
                w_u=fold_layer_norm(w["ln_f.g"]) @ w["w_u"])  # (D, D) @ (D, V)
