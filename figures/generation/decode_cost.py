"""Cost of generating token t with and without a KV cache: attention FLOPs and projection FLOPs per step.

Without a cache, step t runs the whole prefix again: projections for t tokens and causal
attention over t x t scores. With a cache it projects one token and attends one query to
t keys. Counts from mhalib.attention_flops (the two attention products) and 2 x D x
(width of Q, K and V) per projected token, for one layer of a LLaMA-2-7B-sized model
(D = 4096, 32 heads of 128). Page: the KV cache.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(d_model: Annotated[int, Range(2, 65536)] = 4096, n_heads: Annotated[int, Range(1, 1024)] = 32,
         max_tokens: Annotated[int, Range(2, 1_000_000)] = 4096,
         points: Annotated[int, Range(2, 200)] = 40) -> dict:
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}")
    d = d_model // n_heads
    steps = np.unique(np.geomspace(1, max_tokens, points).round().astype(int))
    proj = 2 * d_model * 3 * d_model  # FLOPs to project one token to q, k and v (multiply-add = 2)
    with_cache, without = [], []
    for t in steps:
        t = int(t)
        with_cache.append(proj + mhalib.attention_flops(1, t, d, n_heads=n_heads))
        # without a cache the whole prefix is recomputed; only the last row is new, but all are computed
        without.append(t * proj + (mhalib.attention_flops(t, t, d, n_heads=n_heads, causal=True) if t > 1
                                   else mhalib.attention_flops(1, 1, d, n_heads=n_heads)))
    with_cache, without = np.array(with_cache, dtype=float), np.array(without, dtype=float)
    # the causal attention of t tokens, 2 H d t^2 FLOPs, outgrows t projections when t > proj / (2 H d)
    attention_dominates_after = proj // (2 * n_heads * d)
    return dict(d_model=d_model, n_heads=n_heads, d_head=d, steps=steps, with_cache=with_cache, without=without,
                projection_flops=proj, ratio_at_max=float(without[-1] / with_cache[-1]), max_tokens=int(steps[-1]),
                attention_dominates_after=int(attention_dominates_after))


def draw(data: dict, ax=None):
    fig, ax = style.new_figure(5.8, 3.8) if ax is None else (ax.figure, ax)
    ax.loglog(data["steps"], data["without"], "o-", ms=3, label="no cache: recompute the prefix")
    ax.loglog(data["steps"], data["with_cache"], "s-", ms=3, label="KV cache: one new token")
    ax.set(xlabel="position t of the generated token", ylabel="FLOPs for that step (Q, K, V and attention)",
           title=f"d_model = {data['d_model']}, {style.counted(data['n_heads'], 'head')} of {data['d_head']}")
    ax.grid(alpha=0.4, which="both")
    ax.legend(fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
