"""The cat/sat/mat attention weights, softmax of the scores, without and with the causal mask.

Each row is a probability distribution over the keys. Page: attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"weights": ("tokens", "tokens"), "causal_weights": ("tokens", "tokens")}


def data(scale: Annotated[float, Range(0.01, 100)] = 1.0) -> dict:  # (attention refuses a scale of 0)
    ex = examples.cat_sat_mat()
    q, k, v = ex["X"] @ ex["W_Q"], ex["X"] @ ex["W_K"], ex["X"] @ ex["W_V"]
    _, full = mhalib.scaled_dot_product_attention(q, k, v, scale=scale)
    _, causal = mhalib.scaled_dot_product_attention(q, k, v, scale=scale, causal=True)
    return dict(tokens=ex["tokens"], scale=scale, weights=full, causal_weights=causal)


def draw(data: dict):
    # Two 3x3 maps in 6 in at 11 pt (the query labels once, on the left).
    fig, axes = style.new_figure(5.85, 3.2, ncols=2, sharey=True)
    scores = "q kᵀ" if data["scale"] == 1 else f"{style.exact(data['scale'])} · q kᵀ"
    for ax, key, title in ((axes[0], "weights", f"softmax({scores})"), (axes[1], "causal_weights", "causal: future keys masked")):
        style.heatmap(data[key], data["tokens"], data["tokens"], ax=ax, vmin=0, vmax=1, annotate="{:.2f}",
                      xlabel="key", ylabel="query" if ax is axes[0] else None, fontsize=11)
        ax.set_title(title, fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
