"""Sliding-window attention: the mask of one layer, and how far back the last token reaches after each layer.

Left: mhalib.sliding_window_mask(T, window), True where a query may attend. Right: which
input positions can influence the last position's output after 1, 2, ... layers, found by
composing the masks: position i reaches j through L layers when the boolean matrix product
M M ... M (L factors) is True at (i, j). The data also compose masks for a grid of windows
and depths and compare the reach with L (window - 1) + 1 positions.
Page: long context.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from matplotlib.colors import ListedColormap

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: A phone gets the two panels one under the other (style.narrow()).
NARROW = True

#: Mistral 7B (Jiang et al. 2023, Table 1): a window of 4,096 tokens in each of 32 layers.
MISTRAL = dict(window=4096, layers=32)
#: The composition is checked for every window 1..GRID[0] and depth 1..GRID[1].
GRID = (8, 6)


def compose(mask: np.ndarray, layers: int) -> list[np.ndarray]:
    """``[M, M M, M M M, ...]`` as boolean matrix products: entry (i, j) of the L-th is True when
    a chain of L allowed steps leads from query i back to key j."""
    M = mask.astype(np.int64)
    out, R = [], M
    for _ in range(layers):
        out.append(R > 0)
        R = np.minimum((R > 0).astype(np.int64) @ M, 1)  # keep 0/1: paths are counted once
    return out


def data(T: Annotated[int, Range(2, 64)] = 16, window: Annotated[int, Range(1, 64)] = 4,
         layers: Annotated[int, Range(1, 12)] = 5) -> dict:
    mask = mhalib.sliding_window_mask(T, window)  # (T, T)
    reached = [R[T - 1] for R in compose(mask, layers)]  # what the last position sees after L layers
    first = [int(np.argmax(row)) for row in reached]
    # the same composition for a grid of windows and depths, against L (W - 1) + 1
    grid = []
    for W in range(1, GRID[0] + 1):
        for L in range(1, GRID[1] + 1):
            n = L * (W - 1) + 6  # long enough that the reach never hits position 0
            span = int(compose(mhalib.sliding_window_mask(n, W), L)[-1][n - 1].sum())
            grid.append(dict(window=W, layers=L, composed=span, formula=L * (W - 1) + 1))
    return dict(T=T, window=window, layers=layers, mask=mask, reached=reached, first_reached=first,
                span=[int(row.sum()) for row in reached], grid=grid,
                formula_holds=all(g["composed"] == g["formula"] for g in grid), n_grid=len(grid),
                grid_max_window=GRID[0], grid_max_layers=GRID[1],
                mistral_window=MISTRAL["window"], mistral_layers=MISTRAL["layers"],
                mistral_reach=MISTRAL["layers"] * (MISTRAL["window"] - 1) + 1,
                mistral_product=MISTRAL["layers"] * MISTRAL["window"])


def draw(data: dict):
    if style.narrow():
        # the lower panel's share of the height: its rows as tall as the mask's, and at least
        # 0.2 in each (of about 5.7 in for the two panels), so 12 layers' labels stay apart
        share = max(1.4 * data["layers"] / (data["T"] + 1.4 * data["layers"]), 0.2 * data["layers"] / 5.7)
        fig, (a, b) = style.new_figure(4.6, 7.0, nrows=2, height_ratios=[1 - share, share])
    else:
        fig, (a, b) = style.new_figure(5.9, 3.4, ncols=2, width_ratios=[1, 1.25])
    T = data["T"]
    col = style.colors()
    two = ListedColormap([col["grid"], style.palette()[0]])  # masked / allowed
    ticks = style.position_labels(T)  # every 5th or 10th position and the last, apart
    style.heatmap(np.asarray(data["mask"], float), ticks, ticks, ax=a, vmin=0, vmax=1, cmap=two,
                  xlabel="key position", ylabel="query position",
                  title=f"one layer, window {data['window']}")
    reached = np.asarray(data["reached"], float)  # (layers, T)
    style.heatmap(reached, [str(L + 1) for L in range(data["layers"])], ticks, ax=b, vmin=0, vmax=1, cmap=two,
                  xlabel="input position", ylabel="layers",
                  title=f"what position {T - 1} sees")
    for L, n in enumerate(data["span"]):  # how many positions, right of each row
        b.text(T - 0.2, L, f" {n}", ha="left", va="center", fontsize=11, color=col["fg"])
    b.text(T - 0.2, -0.75, " seen", ha="left", va="bottom", fontsize=11, color=col["fg"])
    b.set_aspect("auto")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
