"""Bug: calling a frequency a wavelength. Angular frequency, cycles per position, 1/ω and the wavelength 2π/ω.

For d_model = 512 at a few dimensions. 1/omega = base^(2i/d) is neither: it is the
wavelength divided by 2*pi. Page: numerics and pitfalls.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(d_model: Annotated[int, Range(2, 8192)] = 512,
         dims: Annotated[tuple[int, ...], Range(0, 8191)] = (0, 64, 128, 256, 448)) -> dict:
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    bad = [i for i in dims if i >= d_model]
    if bad:
        raise ValueError(f"dims must be dimensions below d_model = {d_model}, got {', '.join(map(str, bad))}")

    omega = mhalib.sinusoidal_frequencies(d_model)
    lam = mhalib.wavelengths(d_model)
    rows = [dict(dim=int(i), omega=float(omega[i // 2]), cycles=float(omega[i // 2] / (2 * np.pi)),
                 inverse=float(1 / omega[i // 2]), wavelength=float(lam[i // 2])) for i in dims]
    return dict(d_model=d_model, rows=rows)


def table(data: dict) -> str:
    rows = [[r["dim"], style.sig(r['omega'], 4), style.sig(r['cycles'], 4), style.sig(r['inverse'], 4, sep=True), f"**{style.fixed(r['wavelength'], 2, sep=True)}**"]
            for r in data["rows"]]
    return markdown_table(["dimension", "ω, rad / position", "f = ω/2π, cycles / position", "1/ω",
                           "wavelength 2π/ω = 1/f"], rows, "rrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
