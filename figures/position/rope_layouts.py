"""Interleaved vs half-split RoPE: consistent layouts keep the score a function of the offset; mixing them breaks it.

Score at a fixed offset (n - m = 4) as the query position m moves, with random q, k and
d = 16: flat for interleaved/interleaved and half/half, wandering when q uses one layout
and k the other (a classic weight-porting bug). Page: RoPE.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

PAIRS = (("interleaved", "interleaved"), ("half", "half"), ("interleaved", "half"))
# d_head from 4: at 2 there is one pair, the two layouts are the same and the title's "only
# matching layouts are relative" was false; and two positions at least, a curve's two points


def data(d_head: Annotated[int, Range(4, 1024)] = 16, offset: Annotated[int, Range(-10_000, 10_000)] = 4,
         n_positions: Annotated[int, Range(2, 10_000)] = 60, seed: Annotated[int, Range(0, None)] = 2) -> dict:
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE rotates pairs of dimensions), got {d_head}")
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d_head), rng.normal(size=d_head)
    m = np.arange(n_positions)
    curves = []
    for lq, lk in PAIRS:
        rq = mhalib.apply_rope(np.tile(q, (n_positions, 1)), m, layout=lq)
        rk = mhalib.apply_rope(np.tile(k, (n_positions, 1)), m + offset, layout=lk)
        s = np.einsum("nd,nd->n", rq, rk)
        curves.append(dict(q_layout=lq, k_layout=lk, scores=s, spread=float(np.ptp(s))))
    perm = mhalib.layout_permutation(d_head)
    agree = float(np.abs(mhalib.apply_rope(np.tile(q, (5, 1))[:, perm], layout="half")
                         - mhalib.apply_rope(np.tile(q, (5, 1)), layout="interleaved")[:, perm]).max())
    return dict(d_head=d_head, offset=offset, positions=m, curves=curves, permutation=perm, permuted_agreement=agree)


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(5.8, 4.3)
    for c, ls in zip(data["curves"], ("-", "--", "-")):
        ax.plot(data["positions"], c["scores"], ls=ls, lw=2, label=f"q: {c['q_layout']}, k: {c['k_layout']}")
    ax.set(xlabel="query position m", ylabel=f"score at n − m = {data['offset']}",
           title=f"d_head = {data['d_head']}: only matching layouts are relative")
    style.whole_ticks(ax, "x")
    ax.grid(alpha=0.4)
    # below the axes: the wandering curve crosses every part of the plot
    ax.figure.legend(loc="outside lower center", fontsize=11)
    return ax.figure



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
