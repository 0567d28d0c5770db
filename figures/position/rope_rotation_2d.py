"""RoPE in two dimensions: q = [1, 0.3] rotated to positions 0-3 by omega = 0.5 rad, and the score against the offset.

Left: the rotated query R(m) q for m = 0..3. Right: the score (R(m) q) . (R(n) q) for
every pair of positions 0..7, plotted against the offset n - m: all pairs with the same
offset give the same score, |q|^2 cos((n - m) theta). Page: RoPE.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


def data(theta: float | None = None, n_positions: Annotated[int, Range(1, 64)] = 8,
         k: tuple[float, ...] = (0.8, -0.5)) -> dict:
    """``theta`` in radians per position; None takes the demo's 0.5 rad."""

    demo = examples.rope_demo()
    q = demo["q"]
    theta = demo["theta"] if theta is None else theta
    rotated = mhalib.apply_rope(np.tile(q, (len(demo["positions"]), 1)), demo["positions"] * theta)  # d = 2: theta_0 = 1
    pos = np.arange(n_positions)
    r = mhalib.apply_rope(np.tile(q, (n_positions, 1)), pos * theta)  # (n, 2)
    scores = r @ r.T  # [m, n] = (R(m) q) . (R(n) q)
    m, n = np.meshgrid(pos, pos, indexing="ij")
    if len(k) != 2:
        raise ValueError(f"k must be a 2-vector (the key the explorer rotates), got {len(k)} numbers")
    return dict(q=q, k=np.array(k, dtype=float), theta=theta, positions=demo["positions"], rotated=rotated,
                offsets=(n - m).ravel(), scores=scores.ravel(),
                closed_form_offsets=np.arange(-(n_positions - 1), n_positions),
                closed_form=float(q @ q) * np.cos(np.arange(-(n_positions - 1), n_positions) * theta))


def draw(data: dict):
    fig, (a, b) = style.new_figure(8.8, 3.9, ncols=2)
    c = style.colors()
    circle = np.linspace(0, 2 * np.pi, 200)
    radius = float(np.linalg.norm(data["q"]))
    a.plot(radius * np.cos(circle), radius * np.sin(circle), color=c["grid"], lw=1)
    for i, (p, v) in enumerate(zip(data["positions"], data["rotated"])):
        color = style.OKABE_ITO[i % len(style.OKABE_ITO)]
        a.annotate("", xy=v, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color=color, lw=2))
        a.text(v[0] * 1.15, v[1] * 1.15, f"m = {p}", color=color, ha="center", va="center", fontsize=10)
    a.set(xlim=(-1.4, 1.4), ylim=(-1.4, 1.4), aspect="equal", title=f"R(m) q, ω = {data['theta']:g} rad")
    a.axhline(0, color=c["grid"], lw=0.8), a.axvline(0, color=c["grid"], lw=0.8)
    b.plot(data["closed_form_offsets"], data["closed_form"], color=c["muted"], lw=1, label="|q|² cos((n−m)ω)")
    b.plot(data["offsets"], data["scores"], "o", ms=5, alpha=0.6, label="all pairs (m, n)")
    b.set(xlabel="offset n − m", ylabel="score", title="Same offset, same score")
    b.grid(alpha=0.4)
    b.legend(fontsize=9, loc="lower center")
    return fig


#: The interactive version of this figure (docs/javascripts/explorers.js, widget "rope").
EXPLORER = "rope"


def explorer(data: dict) -> dict:
    """What the RoPE explorer rotates: the query q, a key k, and the starting angle theta."""
    return dict(q=np.asarray(data["q"]).tolist(), k=np.asarray(data["k"]).tolist(), theta=data["theta"])


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
