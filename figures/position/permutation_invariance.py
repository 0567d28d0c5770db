"""Permutation invariance: attention of "The cat sat down" and of "sat The down cat" hold the same numbers, permuted.

Single head, W_Q = W_K = I, tau = sqrt(2), no positions. Page: position matters.
"""
from __future__ import annotations

import math

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style


def data(order: tuple[int, ...] = (2, 0, 3, 1)) -> dict:
    ex = examples.the_cat_sat_down()
    X = ex["X"]
    perm = np.array(order)
    v = X
    _, w = mhalib.scaled_dot_product_attention(X, X, v, scale=1 / math.sqrt(2))
    _, wp = mhalib.scaled_dot_product_attention(X[perm], X[perm], v[perm], scale=1 / math.sqrt(2))
    return dict(tokens=ex["tokens"], permuted_tokens=[ex["tokens"][i] for i in perm], order=list(order),
                weights=w, permuted_weights=wp,
                max_difference=float(np.abs(wp - w[perm][:, perm]).max()))


def draw(d: dict):
    fig, axes = style.new_figure(8.0, 3.4, ncols=2)
    vmax = max(np.max(d["weights"]), np.max(d["permuted_weights"]))
    style.heatmap(d["weights"], d["tokens"], d["tokens"], ax=axes[0], vmin=0, vmax=vmax, annotate="{:.2f}",
                   title=" ".join(d["tokens"]), xlabel="key", ylabel="query")
    style.heatmap(d["permuted_weights"], d["permuted_tokens"], d["permuted_tokens"], ax=axes[1], vmin=0, vmax=vmax,
                   annotate="{:.2f}", title=" ".join(d["permuted_tokens"]), xlabel="key")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
