"""Heads in action: single-head, head 1 and head 2 attention maps of "The cat sat down" for each preset.

Rows are the presets (Identity, Swap K blocks, Head 2 flipped, Random), columns the
single head over all four dims and the two 2-dim heads; all at temperature tau.
Page: heads in action (all presets, and the explorer).
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range

MAPS = (("single", "single head (dims 0–3)"), ("head1", "head 1 (dims 0–1)"), ("head2", "head 2 (dims 2–3)"))


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"X": ("tokens", None)}


def data(tau: Annotated[float, Range(0.01, 100)] = math.sqrt(2.0), presets: tuple[str, ...] = examples.HEADS_PRESETS,
         seed: Annotated[int, Range(0, None)] = 0) -> dict:
    unknown = [p for p in presets if p not in examples.HEADS_PRESETS]
    if unknown or len(set(presets)) != len(presets):
        raise ValueError(f"presets must be distinct names from {', '.join(map(repr, examples.HEADS_PRESETS))}; "
                         f"got {', '.join(map(repr, presets))}")
    out = {p: examples.heads_in_action(p, tau, seed=seed) for p in presets}

    example = examples.the_cat_sat_down()
    return dict(tau=tau, seed=seed, presets=list(presets), tokens=example["tokens"],
                maps={p: {k: out[p][k] for k, _ in MAPS} for p in presets},
                # the explorer's inputs: the embeddings and every preset's projections
                X=example["X"], weights={p: examples.heads_preset(p, seed=seed) for p in examples.HEADS_PRESETS})


#: The interactive version of this figure (docs/javascripts/explorers.js, widget "heads").
EXPLORER = "heads"


def explorer(data: dict) -> dict:
    """What the heads explorer recomputes from: tokens, X, each preset's W_Q/W_K/W_V, tau."""
    weights = {p: {k: np.asarray(w).tolist() for k, w in ws.items()} for p, ws in data["weights"].items()}
    return dict(tokens=list(data["tokens"]), X=np.asarray(data["X"]).tolist(), presets=weights, tau=data["tau"])


def draw(data: dict):
    # Twelve 4x4 maps with their values in 6 in: only the outer maps carry token labels, the
    # titles and row names break over two lines, and every text stays at 11 pt.
    n = len(data["presets"])
    vmax = max(max(max(row) for row in data["maps"][p][k]) for p in data["presets"] for k, _ in MAPS)
    fig, axes = style.new_figure(5.85, 1.75 * n + 1.25, nrows=n, ncols=3, squeeze=False)
    fig.get_layout_engine().set(w_pad=0.02, h_pad=0.04, wspace=0.04, hspace=0.02)
    for r, preset in enumerate(data["presets"]):
        for c, (key, title) in enumerate(MAPS):
            ax = axes[r][c]
            style.heatmap(data["maps"][preset][key], data["tokens"], data["tokens"], ax=ax, vmin=0, vmax=vmax,
                          annotate="{:.2f}", title=title.replace(" (", "\n(") if r == 0 else None, fontsize=11,
                          compact=True)  # "<0.01", ">0.99": "3e-53" and "0.99999" ran over their cells
            if c == 0:
                ax.set_ylabel(preset, fontweight="bold")
            else:
                ax.set_yticks([])
            if r == n - 1:
                ax.set_xlabel("key")
            else:
                ax.set_xticks([])
    fig.suptitle(f"τ {style.equals(data['tau'])}, one colour scale from 0 to {style.bounded(vmax, 2, 'up')}\n"
                 "rows: queries, columns: keys", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
