"""Shaw et al.'s clipped relative positions: which of the 2k+1 learned vectors each (query, key) pair uses.

Left: the clipped distance clip(j - i, -k, k) for every query i and key j (the table row is
that plus k, from ``mhalib.shaw_relative_index``): one value per diagonal near the main
diagonal, and the two corners where every farther distance shares the end vectors.
Right: how many of the T*T pairs use each vector. Page: comparing the methods.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from matplotlib.ticker import MaxNLocator

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: Drawn twice: grid and bars side by side (a page), or stacked (a phone, style.narrow()).
NARROW = True


def data(T: Annotated[int, Range(1, 64)] = 12, k: Annotated[int, Range(1, 63)] = 4) -> dict:
    index = mhalib.shaw_relative_index(T, T, k)  # (T, T) table rows 0 .. 2k
    clipped = index - k  # (T, T) clipped distance -k .. k
    uses = np.bincount(index.ravel(), minlength=2 * k + 1)  # (2k+1,) pairs per table row
    inner = uses[1:-1]  # (2k-1,) the vectors between the two end ones, which gather every clipped pair
    return dict(T=T, k=k, n_vectors=2 * k + 1, n_pairs=T * T, index=index, clipped=clipped,
                distances=np.arange(-k, k + 1), uses=uses,
                inner_uses_min=int(inner.min()) if inner.size else None,  # None: k = 0, one vector only
                inner_uses_max=int(inner.max()) if inner.size else None,
                share_clipped=float((np.abs(mhalib.relative_positions(T, T)) > k).mean()))


def draw(data: dict):
    T, k = data["T"], data["k"]
    if style.narrow():  # a phone: the grid above the bar chart, each as wide as the column
        fig, (a, b) = style.new_figure(5.8, 7.6, nrows=2, height_ratios=(1.6, 1))
    else:
        fig, (a, b) = style.new_figure(7.6, 4.2, ncols=2, width_ratios=(1.35, 1))
    labels = [str(i) for i in range(T)]
    style.heatmap(data["clipped"], labels, labels, ax=a, cmap=style.DIVERGING, vmin=-k - 0.5, vmax=k + 0.5,
                  annotate="{:.0f}" if T <= 16 else False, fontsize=11, xlabel="key j", ylabel="query i",
                  title=f"clip(j − i, −{k}, {k}), T = {T}")
    if T > 16:  # no cell values, and fewer ticks
        a.xaxis.set_major_locator(MaxNLocator(8, integer=True)), a.yaxis.set_major_locator(MaxNLocator(8, integer=True))
    b.bar(data["distances"], data["uses"], color=style.palette()[0])
    if len(data["distances"]) <= 9:
        b.set_xticks(data["distances"])  # every distance, -k .. k
    else:  # a label on every bar ran together ("−10987654321" at k = 10): whole steps instead
        style.whole_ticks(b, "x")
    style.whole_ticks(b, "y")  # pairs are counted: no tick at 0.25 of a pair
    b.set(xlabel="clipped distance (table row − k)", ylabel="(query, key) pairs",
          title=f"{style.counted(data['n_vectors'], 'vector')}, {style.counted(T * T, 'pair')}")
    b.grid(alpha=0.4, axis="y")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
