"""Content and position in one score: its four terms, the content or position of the query against the content or position of the key.

With W_QK = W_Q W_K^T (``A`` in the code), the score of query i and key j (before the
1/sqrt(d_head) scale) is x_i W_QK x_j^T + x_i W_QK p_j^T + p_i W_QK x_j^T + p_i W_QK p_j^T: content with content, content with
position, position with content, position with position. A small random example (seeded):
token vectors x_i with entries N(0, 1) (embeddings of variance 1/D already scaled by sqrt(D)),
W_Q and W_K with entries N(0, 1/D), p_i the sinusoidal encoding. Five panels: the four
terms and their sum. Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

TERMS = ("content_content", "content_position", "position_content", "position_position")
TITLES = {
    "content_content": ("content · content", r"$x_i W_{QK} x_j^\top$"),
    "content_position": ("content · position", r"$x_i W_{QK} p_j^\top$"),
    "position_content": ("position · content", r"$p_i W_{QK} x_j^\top$"),
    "position_position": ("position · position", r"$p_i W_{QK} p_j^\top$"),
    "total": ("the score (their sum)", r"$(x_i+p_i) W_{QK} (x_j+p_j)^\top$"),
}


def data(T: Annotated[int, Range(2, 64)] = 8, d_model: Annotated[int, Range(2, 512)] = 16,
         d_head: Annotated[int, Range(1, 512)] = 8, seed: Annotated[int, Range(0, 2_147_483_647)] = 0) -> dict:
    """Draws, in this order from ``np.random.default_rng(seed)``: X (T, D), W_Q (D, d), W_K (D, d)."""
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d_model))  # (T, D) token vectors, already scaled by sqrt(D)
    W_Q = rng.standard_normal((d_model, d_head)) / np.sqrt(d_model)  # (D, d)
    W_K = rng.standard_normal((d_model, d_head)) / np.sqrt(d_model)  # (D, d)
    P = mhalib.sinusoidal_encoding(T, d_model)  # (T, D)
    A = W_Q @ W_K.T  # (D, D): the bilinear form that compares a query row with a key row
    terms = dict(content_content=X @ A @ X.T, content_position=X @ A @ P.T,
                 position_content=P @ A @ X.T, position_position=P @ A @ P.T)  # each (T, T)
    total = (X + P) @ W_Q @ ((X + P) @ W_K).T  # (T, T) computed the usual way: Q K^T
    summed = sum(terms.values())
    pp = terms["position_position"]
    # how far the position-position term is from depending on j - i only: spread along each diagonal
    spread = max(float(np.ptp(np.diagonal(pp, offset))) for offset in range(-(T - 1), T))
    pc = terms["position_content"]
    # share of the position-content term's variance that is one value per key column (a key-only bias)
    key_share = float(np.var(pc.mean(axis=0)) / np.var(pc))
    pe_gram = P @ P.T  # with A = I it would be PE(i)·PE(j), a function of j - i
    pe_spread = max(float(np.ptp(np.diagonal(pe_gram, offset))) for offset in range(-(T - 1), T))
    return dict(T=T, d_model=d_model, d_head=d_head, seed=seed, X=X, W_Q=W_Q, W_K=W_K, P=P, **terms,
                total=total, max_sum_error=float(np.abs(summed - total).max()),
                rms={name: float(np.sqrt(np.mean(terms[name] ** 2))) for name in TERMS},
                rms_total=float(np.sqrt(np.mean(total ** 2))),
                pp_diagonal_spread=spread, position_content_key_share=key_share, pe_gram_diagonal_spread=pe_spread)


def draw(data: dict):
    fig, axes = style.new_figure(5.8, 5.2, nrows=2, ncols=3)
    names = (*TERMS, "total")
    vmax = max(float(np.abs(data[name]).max()) for name in names)
    ticks = [str(i) for i in range(data["T"])] if data["T"] <= 12 else None
    for n, (ax, name) in enumerate(zip(axes.flat, names)):
        im, _ = style.heatmap(data[name], ticks, ticks, ax=ax, cmap=style.DIVERGING, vmin=-vmax, vmax=vmax)
        ax.set_title("\n".join(TITLES[name]), fontsize=11)
        if ticks is None:
            ax.set_xticks([]), ax.set_yticks([])
        elif n % 3:  # rows are labelled once, on the left; five panels of 1.6 in fit a phone's 6 in
            ax.set_yticklabels([])
    for ax in axes[:, 0]:
        ax.set_ylabel("query i")
    for ax in axes[1, :2]:
        ax.set_xlabel("key j")
    info = axes[1, 2]
    info.axis("off")
    cb = fig.colorbar(im, cax=info.inset_axes([0.05, 0.0, 0.1, 1.0]))
    cb.outline.set_visible(False)
    cb.set_label("score contribution")
    # the model's sizes on one line below the panels (the sixth panel has room for the colour bar only)
    fig.supxlabel(f"$W_{{QK}} = W_Q W_K^\\top$,  d_model = {data['d_model']},  d_head = {data['d_head']},  "
                  f"seed = {data['seed']}", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
