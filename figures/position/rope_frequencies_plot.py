"""RoPE's per-plane angular frequencies ω, falling geometrically from 1 rad per position, and their wavelengths 2π/ω, for d_head = 128.

The first plane turns 1 rad per position (wavelength 2*pi); the last one barely turns.
Page: RoPE.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(d_head: Annotated[int, Range(2, 4096)] = 128,
         base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0) -> dict:
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE rotates pairs of dimensions), got {d_head}")
    theta = mhalib.rope_frequencies(d_head, base)
    return dict(d_head=d_head, base=base, plane=np.arange(theta.size), theta=theta, wavelength=2 * np.pi / theta,
                last_wavelength=float(2 * np.pi / theta[-1]))


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(5.8, 3.6)
    ax.semilogy(data["plane"], data["theta"], lw=2, label="ωᵢ (rad / position)")
    ax.semilogy(data["plane"], data["wavelength"], lw=2, ls="--", label="wavelength 2π/ωᵢ (positions)")
    ax.set(xlabel="plane i (dimensions 2i, 2i+1)", title=f"d_head = {data['d_head']}, base = {style.exact(data['base'])}")
    style.whole_ticks(ax, "x")
    ax.grid(alpha=0.4, which="both")
    ax.legend(fontsize=11)
    return ax.figure


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
