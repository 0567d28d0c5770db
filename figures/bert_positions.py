"""Learned position embeddings of all-MiniLM-L6-v2 next to sinusoidal PE: cosine similarity and nearest neighbours.

Top: cosine similarity between the 512 learned position vectors (left) and between 512
sinusoidal vectors of the same width, 384 (right). Bottom: for each position, the offset
to its most similar other position. Page: what real heads learn.
"""
from __future__ import annotations

import numpy as np

import mhalib
from mhalib import bert
from figures import _cli, _style


def _cosine(M: np.ndarray) -> np.ndarray:
    U = M / np.linalg.norm(M, axis=1, keepdims=True)
    return U @ U.T


def _nearest_offsets(S: np.ndarray) -> np.ndarray:
    S = S.copy()
    np.fill_diagonal(S, -np.inf)
    return np.argmax(S, axis=1) - np.arange(S.shape[0])


def data() -> dict:
    learned = bert.load_model()["weights"]["embeddings.position_embeddings.weight"].astype(np.float64)
    n, D = learned.shape
    sin = mhalib.sinusoidal_encoding(n, D)
    S_l, S_s = _cosine(learned), _cosine(sin)
    off_l, off_s = _nearest_offsets(S_l), _nearest_offsets(S_s)
    return dict(n_positions=n, d_model=D, learned=S_l, sinusoidal=S_s, nearest_learned=off_l, nearest_sinusoidal=off_s,
                learned_adjacent_share=float(np.mean(np.abs(off_l) == 1)),
                sinusoidal_adjacent_share=float(np.mean(np.abs(off_s) == 1)),
                learned_neighbour_cos=float(np.mean(np.diag(S_l, 1))), sinusoidal_neighbour_cos=float(np.mean(np.diag(S_s, 1))))


def draw(d: dict):
    fig = _style.plt.figure(figsize=(10.0, 7.6), layout="constrained")
    g = fig.add_gridspec(2, 2, height_ratios=(2.2, 1))
    for c, (key, title) in enumerate((("learned", "learned (all-MiniLM-L6-v2)"), ("sinusoidal", "sinusoidal, d = 384"))):
        ax = fig.add_subplot(g[0, c])
        _style.heatmap(d[key], ax=ax, cmap=_style.DIVERGING, vmin=-1, vmax=1, colorbar="cosine" if c else False,
                       xlabel="position", ylabel="position" if c == 0 else None, title=title)
        ax.set_xticks([0, 128, 256, 384, 511]), ax.set_yticks([0, 128, 256, 384, 511])
    ax = fig.add_subplot(g[1, :])
    pos = np.arange(d["n_positions"])
    ax.plot(pos, d["nearest_learned"], ".", ms=3, label="learned")
    ax.plot(pos, d["nearest_sinusoidal"], ".", ms=3, label="sinusoidal")
    ax.set(xlabel="position p", ylabel="offset of the most similar position", ylim=(-12, 12))
    ax.grid(alpha=0.4)
    ax.legend(fontsize=9, markerscale=3)
    return fig


main = _cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
