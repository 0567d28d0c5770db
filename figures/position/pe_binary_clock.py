"""A counter made of clocks: binary digits of positions 0-15 next to the hands of sinusoidal PE pairs.

Top: the binary digits of each position (bit 0 flips every position, bit 1 every two, ...).
Bottom: each (sin, cos) pair of ``sinusoidal_encoding`` drawn as a clock hand at
(x, y) = (PE[p, 2i], PE[p, 2i+1]): it starts at 12 o'clock and turns clockwise by omega_i
per position. With base = 2^n_pairs each pair turns half as fast as the one before, like
the digits of a binary counter. Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(n_positions: Annotated[int, Range(2, 16)] = 16, n_pairs: Annotated[int, Range(1, 6)] = 4,
         base: Annotated[float, Range(1.01, 1_000_000_000)] = 16.0,
         real_d_model: Annotated[int, Range(4, 8192)] = 512) -> dict:
    """``base = 16`` with 4 pairs (d_model = 8) makes omega_i = 2^-i: each clock half the speed of the last.
    At most 16 positions: the clocks share the column's width, and past 16 their position labels
    and the rows' two-line labels ran into each other.

    ``real_d_model`` only sets the comparison with the usual base 10000 (the speed ratio of
    neighbouring pairs there), so it has at least two pairs: 4 or more.
    """
    if real_d_model % 2:
        raise ValueError(f"real_d_model must be even (PE comes in sin/cos pairs), got {real_d_model}")
    D = 2 * n_pairs
    pe = mhalib.sinusoidal_encoding(n_positions, D, base)  # (n, D)
    x, y = pe[:, 0::2], pe[:, 1::2]  # (n, D/2): the hand's tip, sin across, cos up
    turns = np.mod(np.arctan2(x, y), 2 * np.pi) / (2 * np.pi)  # clockwise from 12 o'clock, in turns
    p = np.arange(n_positions)
    bits = (p[:, None] >> np.arange(n_pairs)[None, :]) & 1  # (n, n_pairs): bit b of position p
    omega = mhalib.sinusoidal_frequencies(D, base)
    real_omega = mhalib.sinusoidal_frequencies(real_d_model)
    return dict(n_positions=n_positions, n_pairs=n_pairs, d_model=D, base=base, pe=pe, hand_x=x, hand_y=y,
                turns=turns, bits=bits, omega=omega, wavelengths=mhalib.wavelengths(D, base),
                speed_ratio=float(omega[0] / omega[1]) if n_pairs > 1 else 1.0,
                real_d_model=real_d_model, real_n_pairs=real_d_model // 2, real_speed_ratio=float(real_omega[0] / real_omega[1]),
                real_slowdown_percent=float(100 * (1 - real_omega[1] / real_omega[0])))


def draw(data: dict):
    n, m = data["n_positions"], data["n_pairs"]
    fig, (top, bottom) = style.new_figure(5.8, 1.5 + 0.95 * m, nrows=2, height_ratios=(1, 1.45))
    bits = np.asarray(data["bits"]).T  # (n_pairs, n): one row per digit
    style.heatmap(bits, [f"bit {b} (×{2 ** b})" for b in range(m)], [str(p) for p in range(n)], ax=top,
                  cmap="Greys", vmin=-0.15, vmax=1.3, annotate="{:.0f}", fontsize=11,
                  title="Binary counter: bit j flips every $2^j$ positions")
    top.xaxis.tick_top()
    c = style.colors()
    omega = data["omega"]
    theta = np.linspace(0, 2 * np.pi, 60)
    hand = style.palette()[5]
    r = 0.42
    pitch = 1.45  # rows further apart than columns: each row's label has two lines
    for i in range(m):
        for p in range(n):
            cx, cy = p, -i * pitch
            bottom.plot(cx + r * np.cos(theta), cy + r * np.sin(theta), color=c["muted"], lw=0.8)
            bottom.plot([cx, cx], [cy + r, cy + r * 1.18], color=c["muted"], lw=0.8)  # 12 o'clock mark
            hx, hy = data["hand_x"][p][i], data["hand_y"][p][i]
            bottom.plot([cx, cx + 0.9 * r * hx], [cy, cy + 0.9 * r * hy], color=hand, lw=2.0,
                        solid_capstyle="round")
    bottom.set_aspect("equal")
    bottom.set_xlim(-0.6, n - 0.4)
    bottom.set_ylim(-(m - 1) * pitch - 0.6, 0.6)
    bottom.set_xticks(range(n), labels=[str(p) for p in range(n)])
    bottom.set_yticks([-i * pitch for i in range(m)],
                      labels=[f"dims {2 * i}–{2 * i + 1}\nω {style.stated(omega[i], '.3g')}" for i in range(m)])  # bare format: stated's spec, it writes = or ≈
    bottom.tick_params(length=0)
    for side in bottom.spines.values():
        side.set_visible(False)
    bottom.set_xlabel("position p")
    bottom.set_title(f"Sinusoidal PE, d_model = {data['d_model']}, base = {style.exact(data['base'])}:\n"
                     "hand = (sin, cos) of one pair")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
