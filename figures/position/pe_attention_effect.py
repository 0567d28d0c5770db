"""How adding sinusoidal PE changes the attention of "The cat sat down" (single head, identity projections, τ = √2).

Left: weights from X alone. Right: from X + PE (d = 4). Page: sinusoidal positional encoding.

For each token the data also split its weights into three parts, without and with PE:
on itself (``self_weight``), on its immediate neighbours at positions i - 1 and i + 1
(``neighbour_weight``) and on tokens two or more positions away (``far_weight``). Adding
PE raises the self part for all four tokens and lowers the far part for all four; the
neighbour part rises for some tokens and falls for others.
"""
from __future__ import annotations

import math

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"X": ("tokens", None), "pe": ("tokens", None), "weights": ("tokens", "tokens"),
               "weights_pe": ("tokens", "tokens")}


def data() -> dict:
    ex = examples.the_cat_sat_down()
    X = ex["X"]
    pe = mhalib.sinusoidal_encoding(len(X), X.shape[1])
    _, w = mhalib.scaled_dot_product_attention(X, X, X, scale=1 / math.sqrt(2))
    _, w_pe = mhalib.scaled_dot_product_attention(X + pe, X + pe, X + pe, scale=1 / math.sqrt(2))
    T = len(X)
    offset = np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])  # |i - j|, (T, T)

    def part(select):  # each token's total weight on the keys that `select` picks, (no PE, with PE)
        return [(float(w[i][select[i]].sum()), float(w_pe[i][select[i]].sum())) for i in range(T)]

    return dict(tokens=ex["tokens"], X=X, pe=pe, weights=w, weights_pe=w_pe,
                the_to_cat=(float(w[0, 1]), float(w_pe[0, 1])), max_change=float(np.abs(w_pe - w).max()),
                self_weight=part(offset == 0), neighbour_weight=part(offset == 1), far_weight=part(offset >= 2))


def draw(data: dict):
    fig, axes = style.new_figure(5.8, 3.3, ncols=2)
    vmax = max(np.max(data["weights"]), np.max(data["weights_pe"]))
    labels = [f"{t} ({i})" for i, t in enumerate(data["tokens"])]
    style.heatmap(data["weights"], data["tokens"], data["tokens"], ax=axes[0], vmin=0, vmax=vmax, annotate="{:.2f}",
                  fontsize=11, title="X (no positions)", xlabel="key", ylabel="query")
    # the keys as two lines, token over position: upright and no wider than a cell
    style.heatmap(data["weights_pe"], labels, [label.replace(" ", "\n") for label in labels], ax=axes[1], vmin=0,
                  vmax=vmax, annotate="{:.2f}", fontsize=11, title="X + PE", xlabel="key")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
