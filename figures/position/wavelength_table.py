"""Wavelength table of sinusoidal PE: dimension, angular frequency and wavelength 2π/ω.

For d_model = 512 at dimensions 0, 64, ..., 448, next to the values a widely copied
tutorial prints for the same rows. ``longest_wavelength`` is the last pair's (dims
d - 2, d - 1), and ``wavelength_limit`` = 2 pi base the bound it approaches as d grows.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated


import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: The column a popular tutorial prints as "wavelength" for d_model = 512, every 64 dims.
MISPRINTED = (1.00, 3.98, 15.85, 63.10, 251.19, 1000.00, 3981.07, 15848.93)


def data(d_model: Annotated[int, Range(2, 8192)] = 512, step: Annotated[int, Range(2, 8192)] = 64,
         base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0) -> dict:
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    if step < 2 or step % 2:
        raise ValueError(f"step must be an even number >= 2 (pairs start at even dims), got {step}")

    dims = np.arange(0, d_model, step)
    omega = mhalib.sinusoidal_frequencies(d_model, base)[dims // 2]
    lam = mhalib.wavelengths(d_model, base)[dims // 2]
    rows = [dict(dim=int(i), omega=float(w), wavelength=float(l), cycles_per_1000=float(1000 / l))
            for i, w, l in zip(dims, omega, lam)]
    all_lam = mhalib.wavelengths(d_model, base)
    # The slowest pair's wavelength, 2*pi * base^((d-2)/d), approaches 2*pi * base as d grows:
    # the base sets the longest wavelength, not a length the model can learn.
    d = dict(d_model=d_model, base=base, rows=rows, longest_wavelength=float(all_lam[-1]),
             wavelength_limit=float(2 * np.pi * base))
    if d_model == 512 and step == 64 and base == 10000.0:
        d["misprinted"] = list(MISPRINTED)
    return d


def table(data: dict) -> str:
    show_errata = "misprinted" in data
    header = ["dimension 2i", "angular frequency ω = base^(−2i/d)", "wavelength 2π/ω (positions)"]
    rows = [[r["dim"], style.sig(r['omega'], 6), style.fixed(r['wavelength'], 2, sep=True)] for r in data["rows"]]
    if show_errata:
        header.append("printed elsewhere (wrong)")
        for row, wrong in zip(rows, data["misprinted"]):
            row.append(f"~~{style.fixed(wrong, 2, sep=True)}~~")
    return markdown_table(header, rows, "r" * len(header))


main = cli.main_for(__name__)


if __name__ == "__main__":
    raise SystemExit(main())
