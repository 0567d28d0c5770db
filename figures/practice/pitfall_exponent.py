"""Bug: i vs 2i in the sinusoidal exponent. Wavelengths per pair, correct and with the two usual slips.

Correct: omega_i = base^(-2i/d) for pair i. Slip 1: base^(-i/d) (the 2 forgotten): the
slowest wavelength stops near 2*pi*100. Slip 2: base^(-2j/d) with j the *dimension*
index (the 2 counted twice): the frequencies run down to base^-2. Page: numerics and pitfalls.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(d_model: Annotated[int, Range(2, 8192)] = 512,
         base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0) -> dict:
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    i = np.arange(d_model // 2)
    correct = mhalib.wavelengths(d_model, base)
    forgot_two = 2 * np.pi * base ** (i / d_model)
    twice = 2 * np.pi * base ** (2 * (2 * i) / d_model)
    return dict(d_model=d_model, pair=i, correct=correct, forgot_two=forgot_two, counted_twice=twice,
                longest=dict(correct=float(correct[-1]), forgot_two=float(forgot_two[-1]), counted_twice=float(twice[-1])))


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(5.85, 3.8)  # 6 in or less at 11 pt reads on a phone
    ax.semilogy(data["pair"], data["correct"], lw=2.5, label="correct: base^(2i/d_model)")
    ax.semilogy(data["pair"], data["forgot_two"], lw=2, ls="--", label="bug: base^(i/d_model)")
    ax.semilogy(data["pair"], data["counted_twice"], lw=2, ls=":", label="bug: base^(2·(2i)/d_model)")
    ax.set(xlabel="pair i", ylabel="wavelength 2π/ω (positions)")
    style.whole_ticks(ax, "x")
    ax.set_title(rf"$d_{{\mathrm{{model}}}}$ = {data['d_model']}", fontsize=11)
    ax.grid(alpha=0.4, which="both")
    ax.legend(fontsize=11)
    return ax.figure


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
