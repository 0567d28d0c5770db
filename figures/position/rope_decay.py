"""RoFormer's long-term decay bound on a RoPE score, against the relative distance.

The RoFormer paper (Su et al. 2021, section 3.4.3) bounds the RoPE score by a quantity
proportional to this average; it shrinks (with ripples) as the distance r grows. It is
a bound on the score, not the score itself. Page: RoPE.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(d_head: Annotated[int, Range(2, 1024)] = 128, base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0,
         max_distance: Annotated[int, Range(1, 20_000)] = 256) -> dict:
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE rotates pairs of dimensions), got {d_head}")
    theta = mhalib.rope_frequencies(d_head, base)  # (d/2,)
    r = np.arange(max_distance + 1)
    phases = np.exp(1j * np.outer(r, theta))  # (R, d/2)
    partial = np.cumsum(phases, axis=1)  # S_1 .. S_{d/2}
    bound = np.abs(partial).mean(axis=1)
    return dict(d_head=d_head, base=base, distance=r, bound=bound, at_zero=float(bound[0]),
                at_max=float(bound[-1]))


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(5.8, 3.4)
    ax.plot(data["distance"], data["bound"], lw=2)
    ax.set(xlabel="relative distance |n − m|", ylabel=r"mean of $|S_j|$, $j = 1 \dots d_{\mathrm{head}}/2$",
           title=f"RoFormer's decay bound, d_head = {data['d_head']}, base = {style.exact(data['base'])}")
    style.whole_ticks(ax, "x")
    ax.grid(alpha=0.4)
    return ax.figure



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
