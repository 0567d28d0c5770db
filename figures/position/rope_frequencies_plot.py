"""RoPE's per-plane angular frequencies theta_i = base^(-2i/d) and wavelengths 2*pi/theta_i, for d_head = 128.

The first plane turns 1 rad per position (wavelength 2*pi); the last one barely turns.
Page: RoPE.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style


def data(d_head: int = 128, base: float = 10000.0) -> dict:
    theta = mhalib.rope_frequencies(d_head, base)
    return dict(d_head=d_head, base=base, plane=np.arange(theta.size), theta=theta, wavelength=2 * np.pi / theta,
                last_wavelength=float(2 * np.pi / theta[-1]))


def draw(d: dict):
    fig, ax = style.new_figure(6.8, 3.6)
    ax.semilogy(d["plane"], d["theta"], lw=2, label="θᵢ (rad / position)")
    ax.semilogy(d["plane"], d["wavelength"], lw=2, ls="--", label="wavelength 2π/θᵢ (positions)")
    ax.set(xlabel="plane i (dimensions 2i, 2i+1)", title=f"d_head = {d['d_head']}, base = {d['base']:g}")
    ax.grid(alpha=0.4, which="both")
    ax.legend(fontsize=9)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
