"""Sinusoidal PE over 100 positions for three dimension pairs at d_model = 512: (0, 1), (64, 65), (256, 257).

The first pair turns once every 2*pi positions, the pair at 64 every 19.9, the pair at 256
every 628, so over 100 positions it barely starts its cycle. Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

MAX_PANELS = 8


def data(n_positions: Annotated[int, Range(1, 10_000)] = 100, d_model: Annotated[int, Range(2, 4096)] = 512,
         pairs: Annotated[tuple[int, ...], Range(0, 4094)] = (0, 64, 256),
         base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0) -> dict:
    """``pairs`` are the even dimensions 2i that start a (sin, cos) pair, below d_model."""
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    bad = [p for p in pairs if p % 2 or p >= d_model]
    if bad:
        raise ValueError(f"pairs must be even dimensions below d_model = {d_model} (each starts a sin/cos pair); "
                         f"got {', '.join(map(str, bad))}")
    if len(pairs) > MAX_PANELS:
        raise ValueError(f"pairs may name at most {MAX_PANELS} pairs (one panel each), got {len(pairs)}")

    pe = mhalib.sinusoidal_encoding(n_positions, d_model, base)
    lam = mhalib.wavelengths(d_model, base)
    return dict(positions=np.arange(n_positions), d_model=d_model,
                curves=[dict(dim=int(p), sin=pe[:, p], cos=pe[:, p + 1], wavelength=float(lam[p // 2]),
                             omega=float(2 * np.pi / lam[p // 2])) for p in pairs])


def draw(data: dict):
    n = len(data["curves"])
    fig, axes = style.new_figure(5.8, 1.9 * n + 0.9, nrows=n, sharex=True, squeeze=False)
    axes = axes[:, 0]
    for ax, c in zip(axes, data["curves"]):
        ax.plot(data["positions"], c["sin"], label="sin (even dimension)", lw=2)
        ax.plot(data["positions"], c["cos"], label="cos (odd dimension)", lw=2, ls="--")
        ax.set_title(f"dims {c['dim']}, {c['dim'] + 1}: ω {style.equals(c['omega'], 4)} rad/position, "
                     f"wavelength {style.fixed(c['wavelength'], 1, sep=True)}", fontsize=11)
        ax.set(ylim=(-1.15, 1.15), yticks=[-1, 0, 1])
        ax.grid(alpha=0.4)
    axes[-1].set_xlabel("position")
    style.whole_ticks(axes[-1], "x")  # (shared by every panel)
    # one legend for every panel (each panel's title names its two dimensions)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
