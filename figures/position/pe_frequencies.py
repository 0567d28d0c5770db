"""Sinusoidal PE over 100 positions for three dimension pairs at d_model = 512: (0, 1), (64, 65), (256, 257).

The first pair turns once every 2*pi positions, the pair at 64 every 19.9, the pair at 256
every 628, so over 100 positions it barely starts its cycle. Page: sinusoidal positional encoding.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style


def data(n_positions: int = 100, d_model: int = 512, pairs: tuple[int, ...] = (0, 64, 256), base: float = 10000.0) -> dict:
    pe = mhalib.sinusoidal_encoding(n_positions, d_model, base)
    lam = mhalib.wavelengths(d_model, base)
    return dict(positions=np.arange(n_positions), d_model=d_model,
                curves=[dict(dim=int(p), sin=pe[:, p], cos=pe[:, p + 1], wavelength=float(lam[p // 2]),
                             omega=float(2 * np.pi / lam[p // 2])) for p in pairs])


def draw(d: dict):
    n = len(d["curves"])
    fig, axes = style.new_figure(7.6, 2.0 * n + 0.4, nrows=n, sharex=True)
    for ax, c in zip(np.atleast_1d(axes), d["curves"]):
        ax.plot(d["positions"], c["sin"], label=f"dim {c['dim']} (sin)", lw=2)
        ax.plot(d["positions"], c["cos"], label=f"dim {c['dim'] + 1} (cos)", lw=2, ls="--")
        ax.set_title(f"ω = {c['omega']:.4g} rad/position, wavelength {c['wavelength']:,.1f} positions", fontsize=10)
        ax.set_ylim(-1.15, 1.15)
        ax.grid(alpha=0.4)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=9)
    np.atleast_1d(axes)[-1].set_xlabel("position")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
