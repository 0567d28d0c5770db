"""ALiBi bias matrices for a few heads of an 8-head model, causal and symmetric.

Top: the causal bias -m_h (i - j) for keys j <= i (future keys masked); bottom: the
symmetric -m_h |i - j| for encoders. Steeper heads (larger m_h) look more locally. Page: ALiBi.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

MAX_PANELS = 8


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'causal.*.*.*': '-inf: a key the causal mask hides from the query',
}


def data(T: Annotated[int, Range(1, 512)] = 8, n_heads: Annotated[int, Range(1, 128)] = 8,
         show: Annotated[tuple[int, ...], Range(0, 127)] = (0, 3, 7)) -> dict:
    """``show`` holds head indices counted from 0 (0 .. n_heads - 1); the titles name them from 1."""
    if max(show) >= n_heads:
        raise ValueError(f"show holds head indices 0..{n_heads - 1} for n_heads = {n_heads}; got {max(show)}")
    if len(show) > MAX_PANELS:
        raise ValueError(f"show may name at most {MAX_PANELS} heads (one column each), got {len(show)}")

    causal = mhalib.alibi_bias(T, n_heads)
    sym = mhalib.alibi_bias(T, n_heads, causal=False)
    slopes = mhalib.alibi_slopes(n_heads)
    return dict(T=T, n_heads=n_heads, show=list(show), slopes=slopes,
                causal=[causal[h] for h in show], symmetric=[sym[h] for h in show])


def draw(data: dict):
    n = len(data["show"])
    # square panels of 1.6 in: three heads and the colour bar fit the 6 in a phone can show
    fig, axes = style.new_figure(1.0 + 1.6 * n, 4.3, nrows=2, ncols=n, squeeze=False)
    # (at T = 1 every bias is 0: a scale from 0 to 0 drew the same 0 in two colours)
    vmin = min(float(np.min(s)) for s in data["symmetric"]) or -1.0
    for c, h in enumerate(data["show"]):
        for r, key in enumerate(("causal", "symmetric")):
            ax = axes[r][c]
            a = np.where(np.isfinite(data[key][c]), data[key][c], np.nan)
            im, _ = style.heatmap(a, ax=ax, cmap="viridis", vmin=vmin, vmax=0)
            ax.set_xticks([]), ax.set_yticks([])
        # m = 2^-k is 1/2^k exactly; a slope of a head count that is not a power of two is
        # 2^-(k + 1/2), whose inverse no label writes exactly: "≈ 1/1.41"
        axes[0][c].set_title(f"head {h + 1}\nm {style.equals(1 / data['slopes'][h], 3).replace(' ', ' 1/', 1)}",
                             fontsize=11)
    axes[0][0].set_ylabel("causal\nquery i")
    axes[1][0].set_ylabel("symmetric\nquery i")
    for ax in axes[1]:
        ax.set_xlabel("key j")
    cb = fig.colorbar(im, ax=axes, fraction=0.05, pad=0.03, shrink=0.9)
    cb.outline.set_visible(False)
    cb.set_label("bias")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
