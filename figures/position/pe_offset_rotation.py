"""PE(p + k) is PE(p) times a block rotation M(k): the rotation, and how exactly it maps every position to the one k later.

Left: M_k for a small model (d = 8, k = 3): 2x2 rotation blocks on the diagonal. Right:
the largest error |PE(p) M_k^T - PE(p + k)| over 500 positions, for several k, at d = 512.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

MAX_SHIFTS = 20
#: Drawn twice: matrix and bars side by side (a page), or stacked (a phone, style.narrow()).
NARROW = True


#: The widest M_k drawn (the Range of d_show): its cells hold up to seven characters ("0.99996", "≈1.00", "-0.003") at
#: a readable size; at 10 and 16 they ran into each other ("0.990.03").
MAX_D_SHOW = 8


def data(k_show: Annotated[int, Range(-1000, 1000)] = 3, d_show: Annotated[int, Range(2, 8)] = 8,
         d_model: Annotated[int, Range(2, 2048)] = 512,
         ks: Annotated[tuple[int, ...], Range(-100, 100)] = (1, 2, 5, 10, 50, 100, -7)) -> dict:
    """The error is measured at positions p = 100 .. 599 of a 700-row table, so |k| <= 100."""
    for name, value in (("d_show", d_show), ("d_model", d_model)):
        if value % 2:
            raise ValueError(f"{name} must be even (PE comes in sin/cos pairs), got {value}")
    if len(ks) > MAX_SHIFTS:
        raise ValueError(f"ks may hold at most {MAX_SHIFTS} shifts, got {len(ks)}")
    if len(set(ks)) != len(ks):  # one bar per shift: a repeated one was drawn under a single label
        raise ValueError(f"ks must be distinct shifts, got {', '.join(map(str, ks))}")

    pe = mhalib.sinusoidal_encoding(700, d_model)
    p = np.arange(100, 600)
    errors = [float(np.abs(pe[p] @ mhalib.offset_matrix(k, d_model).T - pe[p + k]).max()) for k in ks]
    return dict(M=mhalib.offset_matrix(k_show, d_show), k_show=k_show, d_show=d_show, d_model=d_model,
                ks=list(ks), errors=errors, max_error=max(errors), n_positions_measured=int(p.size))


def draw(data: dict):
    if style.narrow():  # a phone: the matrix above the bar chart
        fig, (a, b) = style.new_figure(5.8, 7.8, nrows=2, height_ratios=(1.3, 1))
    else:
        fig, (a, b) = style.new_figure(8.8, 4.6, ncols=2, width_ratios=(1.25, 1))  # cells hold "≈-1.00"
    M = np.asarray(data["M"])
    _, texts = style.heatmap(M, ax=a, cmap=style.DIVERGING, vmin=-1, vmax=1, annotate="{:.2f}", fontsize=11,
                             title=f"$M_k$ for $d_{{\\mathrm{{model}}}}$ = {data['d_show']}, $k$ = {data['k_show']}")
    for t, value in zip(texts, M.flat):
        if value == 0:  # exactly zero outside the 2x2 blocks: a bare 0 lets the blocks stand out
            t.set_text("0")
        else:  # at most one more digit than two: "0.99995" ran over its neighbour, "≈1.00" fits
            t.set_text(style.cell_text(value, "{:.2f}", more=1))  # bare format: cell_text's own spec
    a.set_xticks([]), a.set_yticks([])
    b.bar([str(k) for k in data["ks"]], data["errors"], color=style.palette()[0])
    b.set_yscale("log")
    # whole decades from well below the smallest error to above the largest: a log axis cut off
    # just under the data would make 8.6e-14 look like nothing next to 1e-13
    errors = np.asarray(data["errors"])
    low = 10.0 ** np.floor(np.log10(errors[errors > 0].min(initial=1e-13))) / 100
    b.set_ylim(low, 10.0 ** np.ceil(np.log10(max(3 * errors.max(), 10 * low))))
    for i, e in enumerate(errors):
        if e == 0:  # (k = 0: exact) no bar on a log axis; say so where it would stand
            b.text(i, 1.5 * low, "0", ha="center", va="bottom", fontsize=11, color=style.colors()["fg"])
    b.set(xlabel="shift $k$", ylabel="max |PE(p)M_kᵀ − PE(p+k)|",
          title=f"Error at $d_{{\\mathrm{{model}}}}$ = {data['d_model']} (float64)")
    b.grid(alpha=0.4, axis="y")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
