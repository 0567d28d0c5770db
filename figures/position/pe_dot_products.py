"""PE(p) . PE(q) against the offset q - p, for several starting positions p: the curves coincide.

The dot product is sum_i cos((q - p) omega_i): a function of the offset alone, and even in
it (it cannot tell left from right). Page: sinusoidal positional encoding.
"""
from __future__ import annotations

import itertools
from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(d_model: Annotated[int, Range(2, 2048)] = 128, starts: Annotated[tuple[int, ...], Range(0, 10_000)] = (0, 50, 200),
         max_offset: Annotated[int, Range(1, 1000)] = 50) -> dict:
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    pe = mhalib.sinusoidal_encoding(max(starts) + 2 * max_offset + 1, d_model)
    offsets = np.arange(-max_offset, max_offset + 1)
    curves = []
    for p in starts:
        qs = p + offsets
        valid = qs >= 0
        curves.append(dict(start=int(p), offsets=offsets[valid], dots=pe[qs[valid]] @ pe[p]))
    closed = np.cos(np.outer(offsets, mhalib.sinusoidal_frequencies(d_model))).sum(axis=1)
    spread = max(float(np.abs(c["dots"] - closed[offsets >= -c["start"]]).max()) for c in curves)
    return dict(d_model=d_model, curves=curves, offsets=offsets, closed_form=closed, max_deviation=spread,
                at_zero=float(d_model / 2))


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(5.8, 3.4)
    for c, ls in zip(data["curves"], itertools.cycle(("-", "--", ":"))):
        ax.plot(c["offsets"], c["dots"], ls=ls, lw=2, label=f"p = {c['start']}")
    ax.set(xlabel="offset q − p", ylabel="PE(p) · PE(q)", title=f"d_model = {data['d_model']}: depends on q − p only")
    style.whole_ticks(ax, "x")
    ax.grid(alpha=0.4)
    ax.legend()
    return ax.figure



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
