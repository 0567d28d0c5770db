"""The cat/sat/mat attention weights, softmax of the scores, without and with the causal mask.

Each row is a probability distribution over the keys. Page: attention.
"""
from __future__ import annotations

import mhalib
from mhalib import examples
from figures._kit import cli, style


def data(scale: float = 1.0) -> dict:
    ex = examples.cat_sat_mat()
    q, k, v = ex["X"] @ ex["W_Q"], ex["X"] @ ex["W_K"], ex["X"] @ ex["W_V"]
    _, full = mhalib.scaled_dot_product_attention(q, k, v, scale=scale)
    _, causal = mhalib.scaled_dot_product_attention(q, k, v, scale=scale, causal=True)
    return dict(tokens=ex["tokens"], scale=scale, weights=full, causal_weights=causal)


def draw(d: dict):
    fig, axes = style.new_figure(7.6, 3.3, ncols=2)
    for ax, key, title in ((axes[0], "weights", "softmax(q kᵀ)"), (axes[1], "causal_weights", "causal: future keys masked")):
        style.heatmap(d[key], d["tokens"], d["tokens"], ax=ax, vmin=0, vmax=1, annotate="{:.2f}",
                       xlabel="key", ylabel="query", title=title, fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
