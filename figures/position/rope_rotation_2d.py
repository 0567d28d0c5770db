"""RoPE in two dimensions: q = [1, 0.3] rotated to positions 0–3 by ω = 0.5 rad, and the score against the offset.

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


#: The largest |theta|: 63 positions turn at most 6,300 rad, whose float64 spacing (1e-12 rad)
#: leaves every score's digits (pass seventy-six: 1e14 rad turned the points of one offset apart).
MAX_THETA = 100


def data(theta: float | None = None, n_positions: Annotated[int, Range(1, 64)] = 8,
         k: tuple[float, ...] = (0.8, -0.5)) -> dict:
    """``theta`` in radians per position, from -100 to 100; None takes the demo's 0.5 rad."""

    demo = examples.rope_demo()
    q = demo["q"]
    theta = demo["theta"] if theta is None else theta
    if not -MAX_THETA <= theta <= MAX_THETA:  # (pos * theta rounded in float64: 1e14 moved each angle by 0.5 rad)
        raise ValueError(f"theta must be from {-MAX_THETA} to {MAX_THETA} rad per position (past that an angle is "
                         f"a smaller one plus whole turns, and position x theta loses its digits); got {theta!r}")
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
    fig, (a, b) = style.new_figure(5.8, 3.6, ncols=2, width_ratios=(1, 1.05))
    c = style.colors()
    lines = style.palette()
    circle = np.linspace(0, 2 * np.pi, 200)
    radius = float(np.linalg.norm(data["q"]))
    a.axhline(0, color=c["muted"], lw=0.6), a.axvline(0, color=c["muted"], lw=0.6)
    a.plot(radius * np.cos(circle), radius * np.sin(circle), color=c["muted"], lw=0.8, ls=(0, (4, 3)))
    for i, (p, v) in enumerate(zip(data["positions"], data["rotated"])):
        color = lines[i % len(lines)]
        a.annotate("", xy=v, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color=color, lw=2))
        # the value of m alone at each tip (the title names m): arrows 0.5 rad apart leave no room for "m = 3"
        a.text(v[0] * 1.17, v[1] * 1.17, f"{p}", color=style.ink(color), ha="center", va="center", fontsize=11)
    a.set(xlim=(-1.45, 1.45), ylim=(-1.45, 1.45), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1],
          title=f"R(m) q for m = {data['positions'][0]}–{data['positions'][-1]}\nω = {style.exact(data['theta'])} rad")
    b.plot(data["closed_form_offsets"], data["closed_form"], color=c["muted"], lw=1, label="|q|² cos((n−m)ω)")
    b.plot(data["offsets"], data["scores"], "o", ms=5, alpha=0.6, color=lines[0], label="all pairs (m, n)")
    b.set(xlabel="offset n − m", ylabel="score", title="Every pair of positions:\nsame offset, same score")
    style.whole_ticks(b, "x")  # an offset is a whole number of positions: no tick at -0.5
    b.grid(alpha=0.4)
    fig.legend(*b.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=11)
    return fig


#: The interactive version of this figure (docs/javascripts/explorers.js, widget "rope").
EXPLORER = "rope"


def explorer(data: dict) -> dict:
    """What the RoPE explorer rotates: the query q, a key k, and the starting angle theta."""
    return dict(q=np.asarray(data["q"]).tolist(), k=np.asarray(data["k"]).tolist(), theta=data["theta"])


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
