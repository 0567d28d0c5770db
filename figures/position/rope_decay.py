"""RoFormer's long-term decay bound: (1/(d/2)) sum_j |S_j| against the relative distance, S_j = sum_{k<j} e^{i r theta_k}.

The RoFormer paper (Su et al. 2021, section 3.4.3) bounds the RoPE score by a quantity
proportional to this average; it shrinks (with ripples) as the distance r grows. It is
a bound on the score, not the score itself. Page: RoPE.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style


def data(d_head: int = 128, base: float = 10000.0, max_distance: int = 256) -> dict:
    theta = mhalib.rope_frequencies(d_head, base)  # (d/2,)
    r = np.arange(max_distance + 1)
    phases = np.exp(1j * np.outer(r, theta))  # (R, d/2)
    partial = np.cumsum(phases, axis=1)  # S_1 .. S_{d/2}
    bound = np.abs(partial).mean(axis=1)
    return dict(d_head=d_head, base=base, distance=r, bound=bound, at_zero=float(bound[0]),
                at_max=float(bound[-1]))


def draw(d: dict):
    fig, ax = style.new_figure(6.8, 3.6)
    ax.plot(d["distance"], d["bound"], lw=2)
    ax.set(xlabel="relative distance |n − m|", ylabel="(1/(d/2)) Σⱼ |Sⱼ|",
           title=f"RoFormer's decay bound, d = {d['d_head']}, base = {d['base']:g}")
    ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
