"""Learned position embeddings of all-MiniLM-L6-v2 next to sinusoidal PE: cosine similarity and nearest neighbours.

Top: cosine similarity between the 512 learned position vectors (left) and between 512
sinusoidal vectors of the same width, 384 (right). Bottom: how often a position's most
similar other position sits at each offset. Page: what real heads learn.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib.models import bert
from figures._kit import cli, style
from figures._kit.contract import Range


def _cosine(M: np.ndarray) -> np.ndarray:
    U = M / np.linalg.norm(M, axis=1, keepdims=True)
    return U @ U.T


def _nearest_offsets(S: np.ndarray) -> np.ndarray:
    S = S.copy()
    np.fill_diagonal(S, -np.inf)
    return np.argmax(S, axis=1) - np.arange(S.shape[0])


def data(step: Annotated[int, Range(1, 512)] = 4) -> dict:

    """Similarity maps are kept at every ``step``-th position (the figure cannot show more);
    neighbours and summaries use all 512.

    ``learned_not_adjacent`` lists the positions whose most similar other position is not
    an immediate neighbour (only position 0, where ``[CLS]`` always sits); ``first_*``
    describe position 0: its most similar position, that cosine, its cosine with position
    1, and its norm next to the median norm of the others."""
    learned = bert.load_model()["weights"]["embeddings.position_embeddings.weight"].astype(np.float64)
    n, D = learned.shape
    sin = mhalib.sinusoidal_encoding(n, D)
    S_l, S_s = _cosine(learned), _cosine(sin)
    off_l, off_s = _nearest_offsets(S_l), _nearest_offsets(S_s)
    adjacent = np.abs(off_l) == 1
    first_nearest = int(off_l[0])  # position 0's offset is its nearest position
    norms = np.linalg.norm(learned, axis=1)
    return dict(n_positions=n, d_model=D, step=step, shown_positions=np.arange(0, n, step),
                learned=S_l[::step, ::step], sinusoidal=S_s[::step, ::step],
                nearest_learned=off_l, nearest_sinusoidal=off_s,
                learned_adjacent_share=float(np.mean(adjacent)),
                learned_adjacent_count=int(adjacent.sum()),
                learned_not_adjacent=[int(p) for p in np.flatnonzero(~adjacent)],
                first_nearest=first_nearest, first_nearest_cos=float(S_l[0, first_nearest]),
                first_next_cos=float(S_l[0, 1]), first_norm=float(norms[0]), median_norm=float(np.median(norms[1:])),
                sinusoidal_adjacent_share=float(np.mean(np.abs(off_s) == 1)),
                sinusoidal_adjacent_count=int((np.abs(off_s) == 1).sum()),
                learned_neighbour_cos=float(np.mean(np.diag(S_l, 1))), sinusoidal_neighbour_cos=float(np.mean(np.diag(S_s, 1))))


def draw(data: dict):
    """One layout for every screen, 6 in wide: the two similarity maps side by side sharing one
    colour bar, the nearest-neighbour bars under them."""
    fig = style.plt.figure(figsize=(5.9, 6.4), layout="constrained")
    g = fig.add_gridspec(2, 2, height_ratios=(1.25, 1))
    fig.get_layout_engine().set(wspace=0.06)  # room between the 512 of one map and the 0 of the next
    n = data["n_positions"]
    ticks = [0, n // 2, n]
    maps = []
    for c, (key, title) in enumerate((("learned", "learned\n(all-MiniLM-L6-v2)"), ("sinusoidal", "sinusoidal,\n$d_{\\mathrm{model}}$ = 384"))):
        ax = fig.add_subplot(g[0, c])
        ax.imshow(data[key], cmap=style.DIVERGING, vmin=-1, vmax=1, extent=(0, n, n, 0), interpolation="nearest")
        ax.set(xlabel="position", ylabel="position" if c == 0 else None, title=title)
        ax.set_xticks(ticks), ax.set_yticks(ticks, labels=None if c == 0 else [])
        maps.append(ax)
    cb = fig.colorbar(maps[1].images[0], ax=maps, fraction=0.046, pad=0.03, shrink=0.9)
    cb.set_label("cosine")
    cb.set_ticks([-1, 0, 1])
    ax = fig.add_subplot(g[1, :])
    offsets = np.arange(-5, 6)
    for shift, key, label in ((-0.2, "nearest_learned", "learned"), (0.2, "nearest_sinusoidal", "sinusoidal")):
        near = np.asarray(data[key])
        share = [np.mean(near == k) for k in offsets]
        ax.bar(offsets + shift, share, width=0.4, label=label)
    ax.set(xlabel="offset of the most similar other position", ylabel="share of positions",
           xticks=offsets)
    ax.grid(alpha=0.4, axis="y")
    ax.legend(fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
