"""How adding sinusoidal PE changes the attention of "The cat sat down" (single head, W_Q = W_K = I, tau = sqrt(2)).

Left: weights from X alone. Right: from X + PE (d = 4). Page: sinusoidal positional encoding.
"""
from __future__ import annotations

import math

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style


def data() -> dict:
    ex = examples.the_cat_sat_down()
    X = ex["X"]
    pe = mhalib.sinusoidal_encoding(len(X), X.shape[1])
    _, w = mhalib.scaled_dot_product_attention(X, X, X, scale=1 / math.sqrt(2))
    _, w_pe = mhalib.scaled_dot_product_attention(X + pe, X + pe, X + pe, scale=1 / math.sqrt(2))
    return dict(tokens=ex["tokens"], X=X, pe=pe, weights=w, weights_pe=w_pe,
                the_to_cat=(float(w[0, 1]), float(w_pe[0, 1])), max_change=float(np.abs(w_pe - w).max()))


def draw(data: dict):
    fig, axes = style.new_figure(8.0, 3.4, ncols=2)
    vmax = max(np.max(data["weights"]), np.max(data["weights_pe"]))
    labels = [f"{t} ({i})" for i, t in enumerate(data["tokens"])]
    style.heatmap(data["weights"], data["tokens"], data["tokens"], ax=axes[0], vmin=0, vmax=vmax, annotate="{:.2f}",
                   title="X (no positions)", xlabel="key", ylabel="query")
    style.heatmap(data["weights_pe"], labels, labels, ax=axes[1], vmin=0, vmax=vmax, annotate="{:.2f}",
                   title="X + PE", xlabel="key")
    axes[1].tick_params(axis="x", labelrotation=30)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
