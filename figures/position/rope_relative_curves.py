"""Score against offset for several absolute query positions: with RoPE the curves coincide, with additive sinusoidal PE they do not.

Random q, k (seeded) with d = 64. RoPE: (R(m) q) . (R(m + o) k). Additive: (q + PE(m)) .
(k + PE(m + o)). Page: RoPE.
"""
from __future__ import annotations

import itertools
from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(d_head: Annotated[int, Range(2, 1024)] = 64,
         starts: Annotated[tuple[int, ...], Range(0, 10_000)] = (0, 20, 200, 2000),
         max_offset: Annotated[int, Range(1, 1000)] = 30, seed: Annotated[int, Range(0, None)] = 1) -> dict:
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE rotates pairs of dimensions), got {d_head}")
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d_head), rng.normal(size=d_head)
    offsets = np.arange(-max_offset, max_offset + 1)
    rope, added = [], []
    for m in starts:
        n = m + offsets
        keep = n >= 0
        rq = mhalib.apply_rope(q[None], np.array([m]))[0]
        rk = mhalib.apply_rope(np.tile(k, (keep.sum(), 1)), n[keep])
        rope.append(dict(start=int(m), offsets=offsets[keep], scores=rk @ rq))
        pe = mhalib.sinusoidal_encoding(int(n[keep].max()) + 1, d_head)
        added.append(dict(start=int(m), offsets=offsets[keep], scores=(k + pe[n[keep]]) @ (q + pe[m])))
    def spread(curves):
        common = [c for c in curves if c["start"] >= max_offset]
        if common:  # curves with every offset
            return float(np.ptp(np.array([c["scores"] for c in common]), axis=0).max())
        low = -min(c["start"] for c in curves)  # else the offsets that every curve has
        return float(np.ptp(np.array([c["scores"][c["offsets"] >= low] for c in curves]), axis=0).max())
    return dict(d_head=d_head, rope=rope, additive=added, rope_spread=spread(rope), additive_spread=spread(added))


def draw(data: dict):
    # one above the other, sharing the offset axis: each panel gets the full width of a phone
    fig, axes = style.new_figure(5.8, 6.2, nrows=2, sharex=True)
    styles = ("-", "--", ":", "-.")
    for ax, key, title in ((axes[0], "rope", "RoPE: the curves coincide"),
                           (axes[1], "additive", "added sinusoidal PE: they do not")):
        for c, ls in zip(data[key], itertools.cycle(styles)):
            ax.plot(c["offsets"], c["scores"], ls=ls, lw=2, label=f"m = {c['start']}")
        ax.set(ylabel="score", title=title)
        ax.grid(alpha=0.4)
    axes[1].set_xlabel("offset n − m")
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncols=len(data["additive"]),
               fontsize=11, title="query position", title_fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
