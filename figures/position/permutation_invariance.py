"""Permutation invariance: attention of "The cat sat down" and of "sat The down cat" hold the same numbers, permuted.

Single head, W_Q = W_K = I, tau = sqrt(2), no positions. Page: position matters.
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"weights": ("tokens", "tokens"), "permuted_weights": ("permuted_tokens", "permuted_tokens")}


def data(order: Annotated[tuple[int, ...], Range(0, 3)] = (2, 0, 3, 1)) -> dict:
    ex = examples.the_cat_sat_down()
    X = ex["X"]
    if sorted(order) != list(range(len(X))):
        raise ValueError(f"order must be a permutation of 0..{len(X) - 1} (each token once), "
                         f"got {', '.join(map(str, order))}")

    perm = np.array(order)
    v = X
    _, w = mhalib.scaled_dot_product_attention(X, X, v, scale=1 / math.sqrt(2))
    _, wp = mhalib.scaled_dot_product_attention(X[perm], X[perm], v[perm], scale=1 / math.sqrt(2))
    return dict(tokens=ex["tokens"], permuted_tokens=[ex["tokens"][i] for i in perm], order=list(order),
                weights=w, permuted_weights=wp,
                max_difference=float(np.abs(wp - w[perm][:, perm]).max()))


def draw(data: dict):
    fig, axes = style.new_figure(5.8, 3.1, ncols=2)
    vmax = max(np.max(data["weights"]), np.max(data["permuted_weights"]))
    style.heatmap(data["weights"], data["tokens"], data["tokens"], ax=axes[0], vmin=0, vmax=vmax, annotate="{:.2f}",
                  fontsize=11, title=" ".join(data["tokens"]), xlabel="key", ylabel="query")
    style.heatmap(data["permuted_weights"], data["permuted_tokens"], data["permuted_tokens"], ax=axes[1], vmin=0,
                  vmax=vmax, annotate="{:.2f}", fontsize=11, title=" ".join(data["permuted_tokens"]), xlabel="key")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
