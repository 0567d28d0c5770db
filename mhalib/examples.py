"""The canonical inputs every page shares (pages: all).

Each function returns a plain dict of numpy arrays and token labels, so that a page, a
figure and a test all start from the same numbers. The docstrings say where each example
comes from; where the course material printed rounded or wrong values, the page that uses
the example shows the exact ones next to them.
"""
from __future__ import annotations

import math

import numpy as np

from . import _checks
from .attention import scaled_dot_product_attention

#: Names of the heads-in-action presets, in the order the pages show them.
HEADS_PRESETS = ("Identity", "Swap K blocks", "Head 2 flipped", "Random")


def cat_sat_mat() -> dict:
    """The lecture's three-token example: X is 3x4, W_Q, W_K, W_V are 4x2 (page: attention).

    The lecture notes give X and the resulting q, k, v table but not the weights; these
    0/1 matrices are the simplest that reproduce that table exactly:
    ``q = x[0:2]``, ``k = x[2:4]``, ``v = x[0:2] + x[2:4]``. The lecture computes
    ``softmax(q k^T)`` without the 1/sqrt(d_k) factor, so ``scale = 1``.
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
    """"The cat sat down" with d_model = 4 and 2 heads (pages: why one head; position).

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
    """The lecture's d = 6, h = 3 example (d_head = 2), with seeded weights (page: multi-head attention).

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
