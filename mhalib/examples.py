"""The canonical inputs every page shares (pages: all).

Each function returns a plain dict of numpy arrays and token labels, so that a page, a
figure and a test all start from the same numbers. The docstrings say where each example
comes from; where the course material printed rounded or wrong values, the page that uses
the example shows the exact ones next to them.
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .attention import attention_scores, scaled_dot_product_attention
from .masks import causal_mask, padding_mask
from .mha import mha_trace, multi_head_attention, per_head_output

#: Names of the heads-in-action presets, in the order the pages show them.
HEADS_PRESETS = ("Identity", "Swap K blocks", "Head 2 flipped", "Random")


def cat_sat_mat() -> dict:
    """The lecture's three-token example: X is 3x4, W_Q, W_K, W_V are 4x2 (page: attention).

    The lecture notes give X and the resulting q, k, v table but not the weights; these
    0/1 matrices are the simplest that reproduce that table exactly:
    ``q = x[0:2]``, ``k = x[2:4]``, ``v = x[0:2] + x[2:4]``. The lecture computes
    ``softmax(q k^T)`` without the 1/sqrt(d_head) factor, so ``scale = 1``.
    """
    X = np.array([[1.0, 0.0, 1.0, 0.0],    # cat
                  [0.0, 1.0, 0.0, 1.0],    # sat
                  [1.0, 0.0, 0.5, 0.5]])   # mat
    e = np.eye(2)
    z = np.zeros((2, 2))
    return dict(tokens=["cat", "sat", "mat"], X=X,
                W_Q=np.vstack([e, z]), W_K=np.vstack([z, e]), W_V=np.vstack([e, e]),
                scale=1.0)


def the_cat_sat_down() -> dict:
    """"The cat sat down" with d_model = 4 and 2 heads (pages: heads in action; position).

    Designed for the course (the source notebook shows the picture, not the numbers):
    dims 0-1 carry a feature that "cat" and "sat" share and "The"/"down" lack; dims 2-3
    carry one that "The" and "down" share. With ``W_Q = W_K = I`` head 1 (dims 0-1)
    therefore links cat and sat, head 2 (dims 2-3) links The and down.
    """
    X = np.array([[0.1, 0.0, 1.0, 0.6],    # The
                  [1.0, 0.5, 0.0, 0.1],    # cat
                  [0.9, 0.7, 0.1, 0.0],    # sat
                  [0.0, 0.1, 0.8, 0.9]])   # down
    return dict(tokens=["The", "cat", "sat", "down"], X=X, n_heads=2, tau=math.sqrt(2.0))


def dog_bites_man() -> dict:
    """Embeddings for "dog", "bites", "man" (d_model = 4), designed for the course (page: position).

    Used to show that, without positions, "dog bites man" and "man bites dog" give each
    word the very same attention output.
    """
    E = {"dog": np.array([1.0, 0.2, 0.0, 0.5]),
         "bites": np.array([0.0, 1.0, 0.7, 0.0]),
         "man": np.array([0.8, 0.0, 0.3, 0.9])}
    return dict(embeddings=E, sentences=(["dog", "bites", "man"], ["man", "bites", "dog"]))


def i_like_tea() -> dict:
    """"I like tea": token embeddings E, invented positions P, and X = E + P (page: position)."""
    E = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    P = np.array([[0.1, 0.0], [0.0, 0.1], [0.1, 0.1]])
    return dict(tokens=["I", "like", "tea"], E=E, P=P, X=E + P)


def split_heads_identity() -> dict:
    """Q = K = V = I_2 with 2 heads, the split/combine walk-through (page: multi-head attention).

    Each head gets one column (d_head = 1), so the scale 1/sqrt(1) is 1; the output is
    ``[[e/(e+1), 1/2], [1/2, e/(e+1)]] = [[0.7311, 0.5], [0.5, 0.7311]]``.
    """
    eye = np.eye(2)
    return dict(Q=eye.copy(), K=eye.copy(), V=eye.copy(), n_heads=2)


def six_by_three(seed: int = 6) -> dict:
    """The lecture's d_model = 6, H = 3 example (d_head = 2), with seeded weights (page: multi-head attention).

    The lecture names only the shapes; the four tokens and N(0, 1/D) weights are ours.
    """
    seed = _checks.nonnegative_int(seed, "seed")
    rng = np.random.default_rng(seed)
    D = 6
    X = rng.normal(size=(4, D))
    W = {name: rng.normal(scale=1 / math.sqrt(D), size=(D, D)) for name in ("W_Q", "W_K", "W_V", "W_O")}
    return dict(tokens=["the", "cat", "sat", "down"], X=X, n_heads=3, **W)


def heads_preset(name: str, *, seed: int = 0) -> dict:
    """``W_Q`` and ``W_K`` (4x4) of a heads-in-action preset (page: heads in action).

    * Identity: ``W_Q = W_K = I``; head 1 compares dims 0-1, head 2 dims 2-3.
    * Swap K blocks: ``W_K`` swaps dims 0-1 with 2-3, so head 1's queries meet the keys'
      dims 2-3 and vice versa.
    * Head 2 flipped: ``W_K = diag(1, 1, -1, -1)``; head 2's scores change sign.
    * Random: ``W_Q, W_K`` with N(0, 1/4) entries from ``seed``.
    """
    _checks.choice(name, "name", HEADS_PRESETS)
    eye = np.eye(4)
    if name == "Identity":
        return dict(W_Q=eye, W_K=eye.copy())
    if name == "Swap K blocks":
        return dict(W_Q=eye, W_K=eye[[2, 3, 0, 1]])
    if name == "Head 2 flipped":
        return dict(W_Q=eye, W_K=np.diag([1.0, 1.0, -1.0, -1.0]))
    rng = np.random.default_rng(_checks.nonnegative_int(seed, "seed"))
    return dict(W_Q=rng.normal(scale=0.5, size=(4, 4)), W_K=rng.normal(scale=0.5, size=(4, 4)))


def heads_in_action(preset: str = "Identity", tau: float = math.sqrt(2.0), *, seed: int = 0) -> dict:
    """Attention maps of "The cat sat down" for a preset at temperature ``tau``.

        single = softmax(Q K^T / tau),  head_h = softmax(Q_h K_h^T / tau)   (Q = X W_Q, K = X W_K)

    ``Q_1, K_1`` are columns 0-1 and ``Q_2, K_2`` columns 2-3. Returns ``single``, ``head1``,
    ``head2`` (each 4x4) with the tokens, preset and tau. A ``tau`` so small that ``1/tau``
    overflows (below about 5.6e-309) is refused.
    """
    tau = _checks.positive_float(tau, "tau")
    if not math.isfinite(1.0 / tau):
        raise ValueError(f"tau must be a number > 0 whose inverse 1/tau is finite, got tau={tau!r}")
    ex = the_cat_sat_down()
    w = heads_preset(preset, seed=seed)
    q, k = ex["X"] @ w["W_Q"], ex["X"] @ w["W_K"]  # (T, 4) each
    v = np.zeros((q.shape[0], 1))  # the maps need only the weights
    maps = {}
    for name, cols in (("single", slice(0, 4)), ("head1", slice(0, 2)), ("head2", slice(2, 4))):
        _, maps[name] = scaled_dot_product_attention(q[:, cols], k[:, cols], v, scale=1.0 / tau)
    return dict(tokens=ex["tokens"], preset=preset, tau=tau, **maps)


#: The columns of the embeddings in ``cat_quietly_sat``: one-hot word classes.
WORD_CLASSES = ("determiner", "noun", "adverb", "verb")
#: The four output dimensions of ``cat_quietly_sat``: head 1's slot ("who sat?") and head 2's ("how?").
ONE_HEAD_SLOTS = ("who: cat", "who: quietly", "how: cat", "how: quietly")


def cat_quietly_sat(strength: float = 3.0) -> dict:
    """"The cat quietly sat": one query that needs two different tokens (page: why one head is not enough).

    Designed for the course. To understand *sat*, a model needs two answers from two
    places: who sat (the subject, *cat*) and how (the word just before it, *quietly*).
    ``d_model = 4`` and ``H = 2`` heads of ``d_head = 2``; columns 0-1 of every projection
    belong to head 1 and columns 2-3 to head 2. Each embedding is the one-hot word class
    of its token (:data:`WORD_CLASSES`), so ``X = I`` and row ``i`` of a projection is
    what token ``i`` becomes (``s = strength``):

    * ``W_Q``: the verb's query is ``(s, 0 | s, 0)``: head 1 asks for a noun, head 2 for an adverb;
    * ``W_K``: the noun's key is ``(s, 0 | 0, 0)``, the adverb's ``(0, 0 | s, 0)``;
    * ``W_V``: a token hands over which word it is, in both heads' slices: *cat*
      ``(1, 0 | 1, 0)``, *quietly* ``(0, 1 | 0, 1)``; *The* and *sat* hand over zeros;
    * ``W_O = I``: head 1's answer becomes output dims 0-1 ("who"), head 2's dims 2-3
      ("how"), named in :data:`ONE_HEAD_SLOTS`.

    The target output for *sat* (``query = 3``) is ``(1, 0 | 0, 1)``: who = cat, how = quietly.
    """
    s = _checks.positive_float(strength, "strength")
    W_Q = np.zeros((4, 4))
    W_Q[3] = [s, 0.0, s, 0.0]  # verb -> head 1 asks for a noun, head 2 for an adverb
    W_K = np.zeros((4, 4))
    W_K[1] = [s, 0.0, 0.0, 0.0]  # noun -> head 1's key
    W_K[2] = [0.0, 0.0, s, 0.0]  # adverb -> head 2's key
    W_V = np.zeros((4, 4))
    W_V[1] = [1.0, 0.0, 1.0, 0.0]  # cat says "cat" in both slices
    W_V[2] = [0.0, 1.0, 0.0, 1.0]  # quietly says "quietly" in both slices
    return dict(tokens=["The", "cat", "quietly", "sat"], classes=list(WORD_CLASSES), X=np.eye(4),
                W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=np.eye(4), n_heads=2, strength=s, query=3,
                slots=list(ONE_HEAD_SLOTS),
                targets=np.array([[1.0, 0.0], [0.0, 1.0]]),  # head 1: cat's code, head 2: quietly's
                target=np.array([1.0, 0.0, 0.0, 1.0]))


def closest_weighted_average(values: ArrayLike, target: ArrayLike) -> tuple[np.ndarray, float]:
    """The best one attention distribution can do: the weights whose average of ``values`` is closest to ``target``.

    A head's output is ``sum_j a_j values[j]`` with ``a_j >= 0`` and ``sum_j a_j = 1``, a point
    of the convex hull of the rows of ``values (S, n)``. This returns the weights ``(S,)``
    of the hull's point nearest ``target (n,)`` and its distance: no choice of queries
    and keys can bring that head closer. Exact, by trying every subset of rows: the
    nearest point is the projection of ``target`` onto the affine hull of some affinely
    independent subset, with non-negative weights. ``S`` is at most 12 (4,095 subsets).

    Example: rows ``(1, 0)`` and ``(0, 1)`` and target ``(1, 1)`` give weights
    ``(0.5, 0.5)`` at distance ``sqrt(0.5) = 0.7071``.

    The search is exact: each subset's projection is solved in fractions from the values
    as given, in their own float type (no tolerance decides a rank or a tie; with
    tolerances of 1e-12, rows of 1e-13 beside a row of 1 were taken as one point, and a
    target inside the hull read a distance of 7e-15: passes fifty-six and fifty-seven;
    a longdouble target 2**-60 off a row read 0 when taken through float64: pass
    fifty-eight), and the distance is correctly rounded from its exact square. The
    weights are float64 and the distance a float, each rounded once from its exact value
    (a distance past float64's largest value is refused). Exactness costs time with many rows: 4
    rows (the one-head page) take milliseconds, 12 rows of 8 about 25 s on two slow cores.
    """
    values = _checks.float_array(values, "values", min_ndim=2)
    if values.ndim != 2 or not 1 <= values.shape[0] <= 12:
        raise ValueError(f"values must be a 2-D array (S, n) with 1 <= S <= 12 rows, got shape {values.shape}")
    target = _checks.float_array(target, "target", min_ndim=1)
    if target.shape != values.shape[1:]:
        raise ValueError(f"target must have shape ({values.shape[1]},), one entry per column of values, "
                         f"got {target.shape}")
    for name, a in (("values", values), ("target", target)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite, got {a[~np.isfinite(a)][0]!r} in it")
    S, n = values.shape
    # each entry exactly as given, in its own float type (a longdouble's bits past float64 count)
    V = [[Fraction(*x.as_integer_ratio()) for x in row] for row in values]  # (S, n)
    t = [Fraction(*x.as_integer_ratio()) for x in target]  # (n,)
    best_w, best = None, None
    for subset in range(1, 2**S):
        rows = [j for j in range(S) if subset >> j & 1]
        P = [V[j] for j in rows]  # (k, n)
        E = [[p[i] - P[0][i] for i in range(n)] for p in P[1:]]  # (k-1, n): the hull's directions
        r = [t[i] - P[0][i] for i in range(n)]  # (n,)
        c = _solve([[sum(a * b for a, b in zip(e, f)) for f in E] for e in E],  # (k-1, k-1) Gram matrix
                   [sum(a * b for a, b in zip(e, r)) for e in E])  # (k-1,)
        if c is None:
            continue  # affinely dependent: a smaller subset spans the same points
        w = [1 - sum(c)] + c  # (k,) barycentric weights of the projection
        if any(x < 0 for x in w):
            continue  # the projection lies outside this subset's hull
        gap = [sum(wj * p[i] for wj, p in zip(w, P)) - t[i] for i in range(n)]  # (n,)
        square = sum(x * x for x in gap)
        if best is None or square < best:
            best_w, best = np.zeros(S), square
            best_w[rows] = [float(x) for x in w]
    return best_w, _length_of_square(best, "the distance from target to the values' hull")


def _solve(A: list, b: list) -> list | None:
    """The solution of ``A c = b`` in fractions (Gauss-Jordan), or None where ``A`` is singular."""
    k = len(b)
    M = [row[:] + [b[i]] for i, row in enumerate(A)]  # (k, k+1)
    for col in range(k):
        pivot = next((i for i in range(col, k) if M[i][col] != 0), None)
        if pivot is None:
            return None
        M[col], M[pivot] = M[pivot], M[col]
        for i in range(k):
            if i != col and M[i][col] != 0:
                f = M[i][col] / M[col][col]
                M[i] = [a - f * p for a, p in zip(M[i], M[col])]
    return [M[i][k] / M[i][i] for i in range(k)]


def one_head_vs_two(strength: float = 3.0) -> dict:
    """*sat*'s output from one head and from two heads with the same weights, against the target.

    Both runs call ``mhalib.mha_trace`` on ``cat_quietly_sat`` with the same
    ``W_Q, W_K, W_V, W_O``: ``n_heads=1`` (one softmax over ``d_head = 4``, scale 1/2) and
    ``n_heads=2`` (a softmax per head of ``d_head = 2``, scale ``1/sqrt(2)``). For the query
    *sat* it returns the scaled scores and the weights (``single``, ``head1``, ``head2``),
    the two heads' outputs and each one through its own rows of ``W_O``
    (``mhalib.per_head_output``), the outputs ``out_single`` and ``out_two``, and the
    distances from the target, with ``best_single``: the weights and the distance of
    ``closest_weighted_average`` over the values through ``W_O`` (what any single
    distribution could give).

    Closed forms at the default ``strength = 3``: head 1's score for *cat* is
    ``9/sqrt(2)``, so it puts ``e^(9/sqrt 2) / (e^(9/sqrt 2) + 3) = 0.9949`` on *cat*; the one
    head scores *cat* and *quietly* both ``9/2`` and puts ``e^4.5 / (2 e^4.5 + 2) = 0.4945``
    on each. Any single distribution ``a`` gives ``(a_cat, a_quietly | a_cat, a_quietly)``,
    whose squared distance from ``(1, 0 | 0, 1)`` is
    ``(1 - a_cat)^2 + a_cat^2 + (1 - a_quietly)^2 + a_quietly^2 >= 1/2 + 1/2``: never below 1.
    """
    ex = cat_quietly_sat(strength)
    i = ex["query"]
    weights = (ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"])
    one = mha_trace(ex["X"], *weights, n_heads=1)
    two = mha_trace(ex["X"], *weights, n_heads=ex["n_heads"])
    score_one = attention_scores(one["q_heads"], one["k_heads"])  # (1, T, S), scale 1/sqrt(4)
    score_two = attention_scores(two["q_heads"], two["k_heads"])  # (2, T, S), scale 1/sqrt(2)
    heads_out = two["heads_out"][:, i]  # (H, d_head): each head's answer for sat
    per_head = per_head_output(two["heads_out"], ex["W_O"])[:, i]  # (H, D): through W_O's blocks
    target = ex["target"]
    out_one, out_two = one["out"][i], two["out"][i]
    best_w, best_d = closest_weighted_average(one["v"] @ ex["W_O"], target)

    # Each output's difference from its target from the weights, in exact fractions:
    # sum_j w_j (v_j - target) / sum_j w_j. That is out - target for the weights as computed
    # (normalised exactly), without the loss of out - target in floats, where the large weight
    # rounds to 1: at strength 8 the output entry 1 - 3e-20 is 1.0 and the distance read
    # sqrt(10) times too small, at 23 a sum of squares of 1e-163 read 0 (pass forty-nine); and a
    # distribution's output is never nearer the target than the bound, even by a rounding.
    r_one = _residual(one["weights"][0, i], one["v"] @ ex["W_O"], target)  # (D,) fractions
    r_heads = [_residual(two["weights"][h, i], two["v_heads"][h], ex["targets"][h])  # (d_head,) each
               for h in range(ex["n_heads"])]
    concat = [x for r in r_heads for x in r]  # (H*d_head,): the heads side by side
    r_two = [sum(c * Fraction(float(w)) for c, w in zip(concat, column)) for column in ex["W_O"].T]  # (D,)
    if not np.array_equal(ex["targets"].reshape(-1) @ ex["W_O"], target):
        raise AssertionError("the example's target must be its heads' targets through W_O")

    return dict(tokens=ex["tokens"], query=i, strength=ex["strength"], slots=ex["slots"],
                scores=dict(single=score_one[0, i], head1=score_two[0, i], head2=score_two[1, i]),
                weights=dict(single=one["weights"][0, i], head1=two["weights"][0, i], head2=two["weights"][1, i]),
                values=one["v"], heads_out=heads_out, per_head=per_head, concat_two=two["concat"][i],
                out_single=out_one, out_two=out_two, target=target, targets=ex["targets"],
                distance=dict(single=_length(r_one), two=_length(r_two), single_who=_length(r_one[:2]),
                              single_how=_length(r_one[2:]), head1=_length(r_heads[0]), head2=_length(r_heads[1])),
                best_single=dict(weights=best_w, distance=best_d))


def _residual(weights, values, target) -> list[Fraction]:
    """``sum_j w_j (v_j - target) / sum_j w_j`` in exact fractions: ``(D,)``."""
    w = [Fraction(float(x)) for x in weights]
    total = sum(w)
    return [sum(wj * (Fraction(float(row[k])) - Fraction(float(target[k]))) for wj, row in zip(w, values)) / total
            for k in range(len(target))]


def _length(r) -> float:
    """The Euclidean length of fractions ``r``, correctly rounded to a float (no underflow of a
    sum of squares: the squares are exact)."""
    return _length_of_square(sum(x * x for x in r))


def _length_of_square(square: Fraction, name: str = "the distance") -> float:
    """``sqrt(square)`` of an exact square, correctly rounded to a float (one rounding).

    The root's floor times ``2**k`` (at least 56 bits, from an integer square root: the root
    of a floor has the floor of the root) and whether anything follows it; ``float`` of that
    fraction then rounds once, as the exact root would (the first 55 bits and a sticky bit
    decide a float's rounding). A 40-digit decimal root rounded twice: ``2**53 + 1`` plus
    ``2**-80`` read one float low (pass fifty-eight). A root past float64 is refused, naming
    ``name``."""
    n, d = square.numerator, square.denominator
    if n == 0:
        return 0.0
    k = max(0, 57 - (n.bit_length() - d.bit_length()) // 2)  # sqrt(n / d) * 2**k >= 2**55
    scaled = n << (2 * k)
    root = math.isqrt(scaled // d)  # floor(sqrt(n / d) * 2**k)
    inexact = root * root * d != scaled
    try:
        return float(Fraction(2 * root + inexact, 2 ** (k + 1)))  # sticky: between the floor and the next
    except OverflowError:
        raise ValueError(f"{name} is past float64's largest value ({np.finfo(np.float64).max:.4g}); "
                         "a float cannot hold it") from None


#: The worked example of the cross-attention page: a source padded to 5 tokens, a target of 4.
SOURCE_TOKENS = ("the", "cat", "sleeps", "<pad>", "<pad>")
TARGET_TOKENS = ("<s>", "le", "chat", "dort")


def translation_pair(seed: int = 0) -> dict:
    """An English source and a French target for one encoder-decoder layer (page: cross-attention).

    The source *the cat sleeps* has 3 tokens, padded to ``S = 5`` (``SOURCE_TOKENS``)
    because it was batched with a longer sentence: ``src_lengths = [3]``. The decoder's
    input is the target shifted right, ``<s> le chat dort`` (``T = 4``,
    ``TARGET_TOKENS``), from which it learns to predict ``le chat dort </s>``.
    ``d_model = 8`` and ``H = 2`` heads of ``d_head = 4``. The rows of ``X_src (1, S, D)``
    and ``X_tgt (1, T, D)`` are drawn from N(0, 1) with ``seed`` and stand in for embeddings
    (the two padding positions share one row, as they share one token); each of the
    encoder's self-attention (``enc``), the decoder's self-attention (``dec``) and the
    cross-attention (``cross``) has its own ``(W_Q, W_K, W_V, W_O)``, drawn from N(0, 1/D).
    """
    seed = _checks.nonnegative_int(seed, "seed")
    rng = np.random.default_rng(seed)
    D, H, n_real = 8, 2, 3
    S, T = len(SOURCE_TOKENS), len(TARGET_TOKENS)
    X_src = rng.normal(size=(1, S, D))
    X_src[0, n_real:] = rng.normal(size=D)  # one embedding for the padding token
    X_tgt = rng.normal(size=(1, T, D))
    layers = {name: tuple(rng.normal(scale=1 / math.sqrt(D), size=(D, D)) for _ in range(4))
              for name in ("enc", "dec", "cross")}
    return dict(source=list(SOURCE_TOKENS), target=list(TARGET_TOKENS), src_lengths=np.array([n_real]),
                X_src=X_src, X_tgt=X_tgt, n_heads=H, **layers)


def encoder_decoder_attention(ex: dict) -> dict:
    """The three attentions of an encoder-decoder, each with its mask (page: cross-attention).

    ``ex`` is what ``translation_pair()`` returns. With ``pad`` the source's padding mask:

        memory = MHA(X_src, mask=pad)                        encoder self-attention (no residual), (B, S, D)
        h      = X_tgt + MHA(X_tgt, causal)                  decoder self-attention (with its residual)
        out    = MHA(h, context=memory, mask=pad)            cross-attention, (B, T, D)

    Layer norms, feed-forward networks and the encoder's residual are left out (none of them
    changes a mask); the decoder's residual stays, so that each query carries its own token.
    Returns the three boolean masks at full size (``encoder (S, S)``, ``decoder (T, T)``,
    ``cross (T, S)``, for batch item 0), the weights of each attention (``enc_weights
    (B, H, S, S)``, ``dec_weights (B, H, T, T)``, ``cross_weights (B, H, T, S)``),
    ``memory``, ``h`` and ``out``.
    """
    need = ("X_src", "X_tgt", "src_lengths", "n_heads", "enc", "dec", "cross")
    if not isinstance(ex, dict) or any(key not in ex for key in need):
        got = sorted(ex) if isinstance(ex, dict) else type(ex).__name__
        raise TypeError(f"ex must be a dict from translation_pair() with keys {', '.join(need)}; got {got}")
    H = ex["n_heads"]
    x_src, x_tgt, lengths = ex["X_src"], ex["X_tgt"], ex["src_lengths"]
    enc, dec, cross = ex["enc"], ex["dec"], ex["cross"]  # (W_Q, W_K, W_V, W_O) each
    S, T = x_src.shape[-2], x_tgt.shape[-2]
    # --8<-- [start:encoder-decoder]
    pad = padding_mask(lengths, S)  # (B, 1, 1, S): True on real source tokens
    # 1. encoder self-attention: every source token may read every real one
    #    (the encoder's residual, layer norms and feed-forward are left out)
    memory, enc_w = multi_head_attention(x_src, *enc, n_heads=H, mask=pad)
    # 2. decoder self-attention: target token i may read target tokens 0..i
    self_out, dec_w = multi_head_attention(x_tgt, *dec, n_heads=H, causal=True)
    h = x_tgt + self_out  # (B, T, D): the residual keeps each query's own token
    # 3. cross-attention: queries from the decoder (T rows), keys and values
    #    from the encoder's output (S rows), the padding masked as in step 1
    out, cross_w = multi_head_attention(h, *cross, n_heads=H,
                                        context=memory, mask=pad)
    # memory (B, S, D), out (B, T, D), cross_w (B, H, T, S)
    # --8<-- [end:encoder-decoder]
    masks = dict(encoder=np.broadcast_to(pad[0, 0], (S, S)).copy(), decoder=causal_mask(T),
                 cross=np.broadcast_to(pad[0, 0], (T, S)).copy())
    return dict(masks=masks, enc_weights=enc_w, dec_weights=dec_w, cross_weights=cross_w,
                memory=memory, h=h, out=out)


def rope_demo() -> dict:
    """The RoPE picture: q = [1, 0.3] at positions 0-3 with theta = 0.5 rad (page: RoPE)."""
    return dict(q=np.array([1.0, 0.3]), theta=0.5, positions=np.arange(4))


#: Sentences for the real-model page: varied length, punctuation and structure.
REAL_SENTENCES = (
    "The cat sat on the mat.",
    "The lawyer questioned the witness about the crime.",
    "When the committee met, the chair read the report aloud.",
    "She told him not to go, but he went anyway.",
    "Rotary embeddings rotate queries and keys; ALiBi adds a bias instead.",
    "A dog bites a man, and a man bites a dog.",
    "The elderly professor taught the enthusiastic students about quantum physics.",
    "Heads that attend to the previous token are easy to find in small models.",
)
